#include "storage/check/quarantine.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "common/path.h"
#include "common/runbook.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "storage/commit/batch_committer.h"
#include "storage/commit/data_dir.h"
#include "storage/commit/recovery.h"
#include "storage/format/format_file.h"

namespace strata::storage {
namespace {

std::string QuarantinedDir(const DataDirPaths& paths, std::string_view day, const BatchId& id) {
  return fmt::format("{}/{}/{}{}", paths.Quarantine(), day, id.ToString(), kBatchDirSuffix);
}

// The day directory of days/ that holds `id`, or NotFound (naming the
// quarantined copy when there is one).
absl::StatusOr<std::string> FindBatch(FileSystem& fs, const DataDirPaths& paths,
                                      const BatchId& id) {
  STRATA_ASSIGN_OR_RETURN(const DaysListing listing, ListDays(fs, paths, /*concurrent=*/false));
  for (const ListedDay& day : listing.days) {
    if (std::find(day.batches.begin(), day.batches.end(), id) != day.batches.end()) {
      return day.day;
    }
  }
  // Already set aside? quarantine/ is the operator's, so look, don't list
  // strictly.
  absl::StatusOr<std::vector<std::string>> days = fs.ListDir(paths.Quarantine());
  if (days.ok()) {
    for (const std::string& day : *days) {
      const std::string dir = QuarantinedDir(paths, day, id);
      absl::StatusOr<bool> there = fs.Exists(dir);
      if (there.ok() && *there) {
        return absl::NotFoundError(fmt::format(
            "data directory {}: batch {} is not in {}: it is already quarantined, at {}",
            paths.data_dir(), id.ToString(), paths.Days(), dir));
      }
    }
  }
  return absl::NotFoundError(fmt::format("data directory {}: no batch {} in {}", paths.data_dir(),
                                         id.ToString(), paths.Days()));
}

// Step 3.
absl::Status CheckNotInCompaction(FileSystem& fs, const DataDirPaths& paths, const BatchId& id) {
  absl::StatusOr<std::optional<CompactionMarker>> marker = ReadCompactionMarker(fs, paths);
  if (absl::IsInvalidArgument(marker.status())) {
    return absl::FailedPreconditionError(fmt::format(
        "data directory {}: {} cannot be read ({}), so it is unknown which batches it names; "
        "quarantine moves nothing while it is there; {}",
        paths.data_dir(), paths.CompactionMarker(), std::string(marker.status().message()),
        RunbookRef("unresolved-compaction-marker")));
  }
  if (!marker.ok()) return marker.status();
  if (!marker->has_value()) return absl::OkStatus();
  const CompactionMarker& found = **marker;
  std::string role;
  if (found.output == id) role = "the output";
  if (std::find(found.inputs.begin(), found.inputs.end(), id) != found.inputs.end()) {
    role = "an input";
  }
  if (role.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(fmt::format(
      "data directory {}: batch {} is {} of the compaction into {} that {} names; boot resolves "
      "that marker before it looks at batches, so quarantine leaves its batches alone: start "
      "strata to let boot resolve it, and if boot refuses, {}",
      paths.data_dir(), id.ToString(), role, found.output.ToString(), paths.CompactionMarker(),
      RunbookRef("unresolved-compaction-marker")));
}

// Creates `dir` if it is missing and makes its entry in `parent` durable.
absl::Status EnsureDurableDir(FileSystem& fs, const std::string& parent, const std::string& dir) {
  STRATA_ASSIGN_OR_RETURN(const bool exists, fs.Exists(dir));
  if (exists) return absl::OkStatus();
  STRATA_RETURN_IF_ERROR(fs.CreateDir(dir));
  return fs.SyncDir(parent);
}

// Step 5.
absl::Status Move(FileSystem& fs, const DataDirPaths& paths, const std::string& day,
                  const std::string& from, const std::string& to) {
  const std::string quarantine_day = JoinPath(paths.Quarantine(), day);
  STRATA_RETURN_IF_ERROR(EnsureDurableDir(fs, paths.Telemetry(), paths.Quarantine()));
  STRATA_RETURN_IF_ERROR(EnsureDurableDir(fs, paths.Quarantine(), quarantine_day));
  STRATA_ASSIGN_OR_RETURN(const bool taken, fs.Exists(to));
  if (taken) {
    return absl::AlreadyExistsError(fmt::format(
        "{} already exists; batch ids are unique, so it is this batch, set aside before (a "
        "crash during an earlier quarantine can leave both): compare the two and remove one by "
        "hand",
        to));
  }
  STRATA_RETURN_IF_ERROR(fs.RenameFile(from, to));
  STRATA_RETURN_IF_ERROR(fs.SyncDir(quarantine_day));
  return fs.SyncDir(paths.Day(day));
}

}  // namespace

absl::StatusOr<QuarantinedBatch> QuarantineBatch(FileSystem& fs, const std::string& data_dir,
                                                 const BatchId& id, const VerifyOptions& options) {
  STRATA_RETURN_IF_ERROR(CheckExistingDataDir(fs, data_dir));
  const DataDirPaths paths(data_dir);
  STRATA_ASSIGN_OR_RETURN(const std::unique_ptr<FileLock> lock, LockDataDir(fs, paths));
  STRATA_ASSIGN_OR_RETURN(const std::string day, FindBatch(fs, paths, id));
  STRATA_RETURN_IF_ERROR(CheckNotInCompaction(fs, paths, id));

  VerifyOptions deep = options;
  deep.deep = true;
  deep.on_batch = nullptr;
  QuarantinedBatch result{.from = paths.Batch(day, id),
                          .to = QuarantinedDir(paths, day, id),
                          .verdict = VerifyBatch(fs, paths, day, id, deep)};
  switch (result.verdict.status) {
    case BatchStatus::kCorrupt:
      break;
    case BatchStatus::kOk:
      return absl::FailedPreconditionError(fmt::format(
          "data directory {}: batch {} passed every check of `strata verify --deep`; quarantine "
          "moves only a batch that verify proves corrupt",
          data_dir, id.ToString()));
    case BatchStatus::kUnreadable:
      return absl::UnavailableError(fmt::format(
          "data directory {}: batch {} could not be checked to the end, so nothing was moved: "
          "check \"{}\" on {}: {}",
          data_dir, id.ToString(), result.verdict.check, result.verdict.file,
          result.verdict.message));
    case BatchStatus::kGone:  // cannot happen while LOCK is held
      return absl::UnavailableError(fmt::format(
          "data directory {}: batch {} disappeared while it was checked", data_dir, id.ToString()));
  }
  if (absl::Status moved = Move(fs, paths, day, result.from, result.to); !moved.ok()) {
    return InDataDir(paths, fmt::format("move {} to {}", result.from, result.to), moved);
  }
  return result;
}

}  // namespace strata::storage
