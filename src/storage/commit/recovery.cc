#include "storage/commit/recovery.h"

#include <simdjson.h>

#include <algorithm>
#include <map>
#include <utility>

#include "common/path.h"
#include "common/runbook.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "storage/format/evicted_marker.h"

namespace strata::storage {
namespace {

// A meta.json or marker larger than these is not one strata wrote; it is
// refused without being read into memory.
constexpr uint64_t kMaxMetaJsonBytes = uint64_t{1} << 20;
constexpr uint64_t kMaxMarkerBytes = uint64_t{64} << 10;

// I/O that failed, as opposed to bytes that are wrong.
bool IsIoError(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsPermissionDenied(status);
}

absl::Status CorruptBatch(const DataDirPaths& paths, const std::string& batch_dir,
                          const BatchId& id, const absl::Status& check) {
  return absl::DataLossError(fmt::format(
      "data directory {}: batch {} failed validation: {}; a crash cannot leave a batch like "
      "this, so boot stops rather than serve or delete it; run `strata verify --deep` to list "
      "every corrupt batch, then `strata quarantine {}` to set this one aside; {}",
      paths.data_dir(), batch_dir, std::string(check.message()), id.ToString(),
      RunbookRef("corrupt-batch")));
}

absl::Status UnresolvedMarker(const DataDirPaths& paths, std::string_view what) {
  return absl::FailedPreconditionError(fmt::format(
      "data directory {}: {}: {}; a crash cannot leave this, so boot deletes nothing and stops; {}",
      paths.data_dir(), paths.CompactionMarker(), what,
      RunbookRef("unresolved-compaction-marker")));
}

// Step 1.
absl::Status EmptyStaging(FileSystem& fs, const DataDirPaths& paths, RecoveredTelemetry& out) {
  const std::string staging = paths.Staging();
  absl::StatusOr<std::vector<std::string>> names = fs.ListDir(staging);
  if (!names.ok()) return InDataDir(paths, "list staging", names.status());
  for (const std::string& name : *names) {
    std::string_view id = name;
    if (id.ends_with(kRetiredDirSuffix))
      id.remove_suffix(std::string_view(kRetiredDirSuffix).size());
    if (absl::StatusOr<BatchId> parsed = BatchId::Parse(id); parsed.ok()) {
      out.seen_ids.push_back(*parsed);
    }
    absl::Status removed = fs.RemoveAll(JoinPath(staging, name));
    if (!removed.ok() && !absl::IsNotFound(removed)) {
      return InDataDir(paths, "empty staging", removed);
    }
    out.report.removed_staging.push_back(name);
  }
  if (absl::Status synced = fs.SyncDir(staging); !synced.ok()) {
    return InDataDir(paths, "sync staging", synced);
  }
  return absl::OkStatus();
}

absl::Status RemoveFileDurably(FileSystem& fs, const DataDirPaths& paths, const std::string& path) {
  if (absl::Status removed = fs.RemoveFile(path); !removed.ok()) {
    return InDataDir(paths, "remove compaction marker", removed);
  }
  if (absl::Status synced = fs.SyncDir(paths.Telemetry()); !synced.ok()) {
    return InDataDir(paths, "sync telemetry", synced);
  }
  return absl::OkStatus();
}

// A marker whose output is in days/: roll forward if the output is valid
// and is what the marker says, else refuse.
absl::Status RollForward(FileSystem& fs, const DataDirPaths& paths, const RecoveryOptions& options,
                         const CompactionMarker& marker, RecoveryReport& report) {
  absl::StatusOr<BatchRecord> output =
      ValidateBatchDir(fs, paths, marker.day, marker.output, options);
  if (!output.ok()) {
    if (IsIoError(output.status())) return output.status();
    return UnresolvedMarker(paths, fmt::format("its output {} is in days/ but invalid ({})",
                                               paths.Batch(marker.day, marker.output),
                                               std::string(output.status().message())));
  }
  std::vector<std::string> inputs;
  for (const BatchId& input : marker.inputs) inputs.push_back(input.ToString());
  std::sort(inputs.begin(), inputs.end());
  if (output->meta.sources != inputs) {
    return UnresolvedMarker(
        paths, fmt::format("its inputs differ from the sources in {}'s meta.json", output->dir));
  }
  int deleted = 0;
  for (const BatchId& input : marker.inputs) {
    absl::StatusOr<bool> present = fs.Exists(paths.Batch(marker.day, input));
    if (!present.ok()) return InDataDir(paths, "roll compaction forward", present.status());
    if (!*present) continue;
    if (absl::Status gone = DeleteBatch(fs, paths, marker.day, input); !gone.ok()) {
      return InDataDir(paths, "roll compaction forward", gone);
    }
    ++deleted;
  }
  STRATA_RETURN_IF_ERROR(RemoveFileDurably(fs, paths, paths.CompactionMarker()));
  report.compaction = fmt::format("rolled forward compaction into {}: deleted {} of {} inputs",
                                  marker.output.ToString(), deleted, marker.inputs.size());
  return absl::OkStatus();
}

// Step 2.
absl::Status ResolveCompaction(FileSystem& fs, const DataDirPaths& paths,
                               const RecoveryOptions& options, RecoveryReport& report) {
  const std::string marker_path = paths.CompactionMarker();
  const std::string temp_path = paths.CompactionMarkerTemp();
  absl::StatusOr<bool> has_marker = fs.Exists(marker_path);
  if (!has_marker.ok())
    return InDataDir(paths, "look for the compaction marker", has_marker.status());
  absl::StatusOr<bool> has_temp = fs.Exists(temp_path);
  if (!has_temp.ok()) return InDataDir(paths, "look for the compaction marker", has_temp.status());
  if (!*has_marker && !*has_temp) return absl::OkStatus();
  if (*has_marker && *has_temp) {
    return UnresolvedMarker(paths, "COMPACTION.json.tmp exists beside it");
  }
  if (*has_temp) {
    absl::StatusOr<bool> is_dir = fs.IsDirectory(temp_path);
    if (!is_dir.ok()) return InDataDir(paths, "look for the compaction marker", is_dir.status());
    if (*is_dir) return UnresolvedMarker(paths, fmt::format("{} is a directory", temp_path));
    STRATA_RETURN_IF_ERROR(RemoveFileDurably(fs, paths, temp_path));
    report.compaction = "removed COMPACTION.json.tmp (a compaction that never published)";
    return absl::OkStatus();
  }
  absl::StatusOr<std::optional<CompactionMarker>> marker = ReadCompactionMarker(fs, paths);
  if (absl::IsInvalidArgument(marker.status())) {
    return UnresolvedMarker(paths, std::string(marker.status().message()));
  }
  if (!marker.ok()) return marker.status();
  if (!marker->has_value()) return absl::OkStatus();  // cannot happen: LOCK is held
  const CompactionMarker& found = **marker;
  absl::StatusOr<bool> output_present = fs.Exists(paths.Batch(found.day, found.output));
  if (!output_present.ok()) {
    return InDataDir(paths, "look for the compaction output", output_present.status());
  }
  if (*output_present) return RollForward(fs, paths, options, found, report);
  STRATA_RETURN_IF_ERROR(RemoveFileDurably(fs, paths, marker_path));
  report.compaction = fmt::format("rolled back compaction into {}: kept its {} inputs",
                                  found.output.ToString(), found.inputs.size());
  return absl::OkStatus();
}

// quarantine/stray-<today>-<n>, the first n not taken.
absl::StatusOr<std::string> StrayFolder(FileSystem& fs, const DataDirPaths& paths,
                                        const std::string& today) {
  for (int n = 1; n <= 1000; ++n) {
    std::string folder = JoinPath(paths.Quarantine(), fmt::format("stray-{}-{}", today, n));
    STRATA_ASSIGN_OR_RETURN(const bool taken, fs.Exists(folder));
    if (!taken) return folder;
  }
  return absl::ResourceExhaustedError(
      fmt::format("{} holds 1000 stray folders of {}", paths.Quarantine(), today));
}

// Step 3's first half: moves every stray entry into one new folder of
// quarantine/, keeping its path relative to telemetry/, then syncs every
// directory a move changed. A crash midway leaves each entry in one of its
// two places; the next boot moves what is left.
absl::Status SetStraysAside(FileSystem& fs, const DataDirPaths& paths,
                            const RecoveryOptions& options, const std::vector<StrayEntry>& strays,
                            RecoveryReport& report) {
  if (strays.empty()) return absl::OkStatus();
  absl::StatusOr<std::string> folder = StrayFolder(fs, paths, options.today);
  if (!folder.ok()) return InDataDir(paths, "set stray entries aside", folder.status());
  std::vector<std::string> to_sync = {paths.Quarantine(), *folder};
  for (const StrayEntry& stray : strays) {
    const std::string from = JoinPath(paths.Telemetry(), stray.path);
    const std::string to = JoinPath(*folder, stray.path);
    absl::Status moved = fs.CreateDirs(ParentPath(to));
    if (moved.ok()) moved = fs.RenameFile(from, to);
    if (!moved.ok()) {
      return InDataDir(paths, fmt::format("set {} aside into {}", from, to), moved);
    }
    for (std::string dir = ParentPath(to); dir != *folder; dir = ParentPath(dir)) {
      to_sync.push_back(dir);
    }
    to_sync.push_back(ParentPath(from));
    report.set_aside.push_back({.from = from, .to = to});
  }
  // Children before parents: each new directory is durable before its
  // parent's entry for it is.
  std::sort(to_sync.begin(), to_sync.end(), std::greater<>());
  to_sync.erase(std::unique(to_sync.begin(), to_sync.end()), to_sync.end());
  for (const std::string& dir : to_sync) {
    if (absl::Status synced = fs.SyncDir(dir); !synced.ok()) {
      return InDataDir(paths, "sync after setting stray entries aside", synced);
    }
  }
  return absl::OkStatus();
}

// Step 3: stray entries set aside, then the removal of empty past days and
// the sync.
absl::Status TidyDays(FileSystem& fs, const DataDirPaths& paths, const RecoveryOptions& options,
                      const DaysListing& listing, RecoveredTelemetry& out) {
  // Before anything in days/ is removed, so a day that held only strays is
  // empty by then.
  STRATA_RETURN_IF_ERROR(SetStraysAside(fs, paths, options, listing.strays, out.report));
  std::vector<std::string> empty_past_days;
  for (const ListedDay& day : listing.days) {
    if (day.batches.empty() && day.day < options.today) {
      empty_past_days.push_back(day.day);
    } else {
      out.days.push_back(day.day);
    }
  }
  for (const std::string& day : empty_past_days) {
    if (absl::Status removed = fs.RemoveDir(paths.Day(day)); !removed.ok()) {
      return InDataDir(paths, "remove an empty day", removed);
    }
    out.report.removed_days.push_back(day);
  }
  // Also makes the day directories left durable, so commits into them can
  // skip step 5.
  if (absl::Status synced = fs.SyncDir(paths.Days()); !synced.ok()) {
    return InDataDir(paths, "sync days", synced);
  }
  return absl::OkStatus();
}

// Quarantined batches are not served, but their ids count for uniqueness.
// Entries that are not batches are ignored: quarantine/ is the operator's.
absl::Status ObserveQuarantine(FileSystem& fs, const DataDirPaths& paths,
                               std::vector<BatchId>& seen) {
  const std::string quarantine = paths.Quarantine();
  absl::StatusOr<bool> exists = fs.Exists(quarantine);
  if (!exists.ok()) return InDataDir(paths, "list quarantine", exists.status());
  if (!*exists) return absl::OkStatus();
  absl::StatusOr<std::vector<std::string>> days = fs.ListDir(quarantine);
  if (!days.ok()) return InDataDir(paths, "list quarantine", days.status());
  for (const std::string& day : *days) {
    const std::string day_dir = JoinPath(quarantine, day);
    absl::StatusOr<bool> is_dir = fs.IsDirectory(day_dir);
    if (!is_dir.ok()) return InDataDir(paths, "list quarantine", is_dir.status());
    if (!*is_dir) continue;
    absl::StatusOr<std::vector<std::string>> names = fs.ListDir(day_dir);
    if (!names.ok()) return InDataDir(paths, "list quarantine", names.status());
    for (std::string_view name : *names) {
      if (!name.ends_with(kBatchDirSuffix)) continue;
      name.remove_suffix(std::string_view(kBatchDirSuffix).size());
      if (absl::StatusOr<BatchId> id = BatchId::Parse(name); id.ok()) seen.push_back(*id);
    }
  }
  return absl::OkStatus();
}

// The checks of step 4, without the context ValidateBatchDir() adds.
absl::StatusOr<BatchRecord> CheckBatch(FileSystem& fs, const std::string& dir,
                                       const std::string& day, const BatchId& id,
                                       const RecoveryOptions& options) {
  STRATA_ASSIGN_OR_RETURN(BatchMeta meta, ReadBatchMeta(fs, dir, day, id));
  // An eviction that crashed before its rename left the batch whole.
  STRATA_RETURN_IF_ERROR(RemoveEvictedMarkerTemp(fs, dir));
  STRATA_ASSIGN_OR_RETURN(const bool evicted, HasEvictedMarker(fs, dir));
  if (evicted) {
    // Rule 11: the Parquet files may be gone or partial; their footers
    // were checked before eviction and their objects are in the store.
    STRATA_RETURN_IF_ERROR(CheckEvictedBatchFiles(fs, dir, meta));
  } else {
    STRATA_RETURN_IF_ERROR(CheckBatchFiles(fs, dir, meta));
    if (options.validate_batch) STRATA_RETURN_IF_ERROR(options.validate_batch(fs, dir, meta));
  }
  std::shared_ptr<const void> attachment;
  if (options.load_attachment) {
    STRATA_ASSIGN_OR_RETURN(attachment, options.load_attachment(fs, dir, meta));
  }
  return BatchRecord{
      .id = id, .day = day, .dir = dir, .meta = std::move(meta), .attachment = attachment};
}

// The stray entries at telemetry/'s top: anything but the three folders,
// the compaction marker (and its temporary file), which step 2 resolves,
// and the restore marker, which the cluster member resolves.
absl::Status ListTopLevelStrays(FileSystem& fs, const DataDirPaths& paths,
                                std::vector<StrayEntry>& strays) {
  absl::StatusOr<std::vector<std::string>> names = fs.ListDir(paths.Telemetry());
  if (!names.ok()) return InDataDir(paths, "list telemetry", names.status());
  for (const std::string& name : *names) {
    if (name == kCompactionMarkerFileName || name == kCompactionMarkerTempFileName ||
        name == kRestoreMarkerFileName ||
        std::find(kTelemetryDirNames.begin(), kTelemetryDirNames.end(), name) !=
            kTelemetryDirNames.end()) {
      continue;
    }
    strays.push_back(
        {.path = name,
         .expected = "staging/, days/, quarantine/, the compaction or the restore marker"});
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DaysListing> ListDays(FileSystem& fs, const DataDirPaths& paths, bool concurrent) {
  // A name that vanished after ListDir(): left out when a server may be
  // changing days/, else an I/O error.
  const auto vanished = [concurrent](const absl::Status& status) {
    return concurrent && absl::IsNotFound(status);
  };
  DaysListing listing;
  STRATA_RETURN_IF_ERROR(ListTopLevelStrays(fs, paths, listing.strays));
  const std::string days = paths.Days();
  absl::StatusOr<std::vector<std::string>> day_names = fs.ListDir(days);
  if (!day_names.ok()) return InDataDir(paths, "list days", day_names.status());
  for (const std::string& day : *day_names) {
    const std::string day_dir = JoinPath(days, day);
    bool is_dir = false;
    const bool is_day = ValidateDay(day).ok();
    if (is_day) {
      absl::StatusOr<bool> dir = fs.IsDirectory(day_dir);
      if (vanished(dir.status())) continue;
      if (!dir.ok()) return InDataDir(paths, "list days", dir.status());
      is_dir = *dir;
    }
    if (!is_day || !is_dir) {
      listing.strays.push_back(
          {.path = JoinPath(kDaysDirName, day), .expected = "a day directory (YYYY-MM-DD)"});
      continue;
    }
    absl::StatusOr<std::vector<std::string>> names = fs.ListDir(day_dir);
    if (vanished(names.status())) continue;
    if (!names.ok()) return InDataDir(paths, "list day", names.status());
    ListedDay listed{.day = day, .batches = {}};
    for (const std::string& name : *names) {
      std::string_view id = name;
      absl::StatusOr<BatchId> parsed = absl::InvalidArgumentError("no .batch suffix");
      if (id.ends_with(kBatchDirSuffix)) {
        id.remove_suffix(std::string_view(kBatchDirSuffix).size());
        parsed = BatchId::Parse(id);
      }
      bool is_batch_dir = false;
      if (parsed.ok()) {
        absl::StatusOr<bool> dir = fs.IsDirectory(JoinPath(day_dir, name));
        if (vanished(dir.status())) continue;
        if (!dir.ok()) return InDataDir(paths, "list day", dir.status());
        is_batch_dir = *dir;
      }
      if (!parsed.ok() || !is_batch_dir) {
        listing.strays.push_back({.path = JoinPath(JoinPath(kDaysDirName, day), name),
                                  .expected = "a batch directory (<id>.batch)"});
        continue;
      }
      listed.batches.push_back(*parsed);
    }
    listing.days.push_back(std::move(listed));
  }
  return listing;
}

absl::StatusOr<BatchMeta> ReadBatchMeta(FileSystem& fs, const std::string& dir,
                                        const std::string& day, const BatchId& id) {
  const std::string meta_path = JoinPath(dir, kBatchMetaFileName);
  absl::StatusOr<uint64_t> size = fs.FileSize(meta_path);
  if (absl::IsNotFound(size.status())) return absl::DataLossError("meta.json is missing");
  if (!size.ok()) return size.status();
  if (*size > kMaxMetaJsonBytes) {
    return absl::DataLossError(fmt::format("meta.json is {} bytes long", *size));
  }
  STRATA_ASSIGN_OR_RETURN(const std::string json, fs.ReadFile(meta_path));
  const std::string id_text = id.ToString();
  STRATA_ASSIGN_OR_RETURN(BatchMeta meta, ParseBatchMeta(json, id_text));
  STRATA_RETURN_IF_ERROR(CheckBatchMetaLocation(meta, id_text, day));
  return meta;
}

absl::StatusOr<std::optional<CompactionMarker>> ReadCompactionMarker(FileSystem& fs,
                                                                     const DataDirPaths& paths) {
  const std::optional<CompactionMarker> none;
  const std::string marker_path = paths.CompactionMarker();
  absl::StatusOr<bool> is_dir = fs.IsDirectory(marker_path);
  if (absl::IsNotFound(is_dir.status())) return none;
  if (!is_dir.ok()) return InDataDir(paths, "look for the compaction marker", is_dir.status());
  if (*is_dir) return absl::InvalidArgumentError(fmt::format("{} is a directory", marker_path));
  absl::StatusOr<uint64_t> size = fs.FileSize(marker_path);
  if (absl::IsNotFound(size.status())) return none;
  if (!size.ok()) return InDataDir(paths, "read the compaction marker", size.status());
  if (*size > kMaxMarkerBytes) {
    return absl::InvalidArgumentError(fmt::format("it is {} bytes long", *size));
  }
  absl::StatusOr<std::string> json = fs.ReadFile(marker_path);
  if (absl::IsNotFound(json.status())) return none;
  if (!json.ok()) return InDataDir(paths, "read the compaction marker", json.status());
  absl::StatusOr<CompactionMarker> marker = ParseCompactionMarker(*json);
  if (!marker.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("unreadable: {}", std::string(marker.status().message())));
  }
  return std::optional<CompactionMarker>(*std::move(marker));
}

absl::StatusOr<BatchRecord> ValidateBatchDir(FileSystem& fs, const DataDirPaths& paths,
                                             const std::string& day, const BatchId& id,
                                             const RecoveryOptions& options) {
  const std::string dir = paths.Batch(day, id);
  absl::StatusOr<BatchRecord> record = CheckBatch(fs, dir, day, id, options);
  if (record.ok()) return record;
  if (IsIoError(record.status())) {
    return InDataDir(paths, fmt::format("validate batch {}", dir), record.status());
  }
  return CorruptBatch(paths, dir, id, record.status());
}

absl::StatusOr<RecoveredTelemetry> RecoverTelemetry(FileSystem& fs, const DataDirPaths& paths,
                                                    const RecoveryOptions& options) {
  RecoveredTelemetry out;
  STRATA_RETURN_IF_ERROR(EmptyStaging(fs, paths, out));
  STRATA_RETURN_IF_ERROR(ResolveCompaction(fs, paths, options, out.report));
  STRATA_ASSIGN_OR_RETURN(const DaysListing listing, ListDays(fs, paths, /*concurrent=*/false));
  STRATA_RETURN_IF_ERROR(TidyDays(fs, paths, options, listing, out));
  STRATA_RETURN_IF_ERROR(ObserveQuarantine(fs, paths, out.seen_ids));
  for (const ListedDay& day : listing.days) {
    for (const BatchId& id : day.batches) {
      STRATA_ASSIGN_OR_RETURN(BatchRecord record,
                              ValidateBatchDir(fs, paths, day.day, id, options));
      out.seen_ids.push_back(id);
      out.batches.push_back(std::move(record));
    }
  }
  std::sort(out.batches.begin(), out.batches.end(),
            [](const BatchRecord& a, const BatchRecord& b) { return a.id < b.id; });
  return out;
}

// ---- COMPACTION.json ----

namespace {

absl::Status MarkerError(std::string_view what) {
  return absl::InvalidArgumentError(fmt::format("COMPACTION.json: {}", what));
}

absl::StatusOr<BatchId> MarkerId(simdjson::dom::element value, std::string_view member) {
  std::string_view text;
  if (value.get_string().get(text) != simdjson::SUCCESS) {
    return MarkerError(fmt::format("{} is not a string", member));
  }
  absl::StatusOr<BatchId> id = BatchId::Parse(text);
  if (!id.ok())
    return MarkerError(fmt::format("{}: {}", member, std::string(id.status().message())));
  return id;
}

}  // namespace

absl::StatusOr<CompactionMarker> ParseCompactionMarker(std::string_view json) {
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(json.data(), json.size());
  simdjson::dom::element root;
  if (parser.parse(padded).get(root) != simdjson::SUCCESS) return MarkerError("not JSON");
  simdjson::dom::object object;
  if (root.get(object) != simdjson::SUCCESS) return MarkerError("not a JSON object");
  std::map<std::string_view, simdjson::dom::element> members;
  for (simdjson::dom::key_value_pair member : object) {
    if (member.key != "format" && member.key != "day" && member.key != "output" &&
        member.key != "inputs") {
      return MarkerError(fmt::format("unknown member {}", QuoteForError(member.key)));
    }
    if (!members.emplace(member.key, member.value).second) {
      return MarkerError(fmt::format("member {} repeated", member.key));
    }
  }
  if (members.size() != 4) return MarkerError("needs exactly format, day, output and inputs");
  uint64_t format = 0;
  if (members["format"].get_uint64().get(format) != simdjson::SUCCESS || format != 1) {
    return MarkerError("format is not 1");
  }
  std::string_view day;
  if (members["day"].get_string().get(day) != simdjson::SUCCESS || !ValidateDay(day).ok()) {
    return MarkerError("day is not a valid YYYY-MM-DD string");
  }
  STRATA_ASSIGN_OR_RETURN(const BatchId output, MarkerId(members["output"], "output"));
  if (output.generation() == 0) return MarkerError("output has generation 0");
  simdjson::dom::array inputs;
  if (members["inputs"].get_array().get(inputs) != simdjson::SUCCESS) {
    return MarkerError("inputs is not an array");
  }
  CompactionMarker marker{.day = std::string(day), .output = output, .inputs = {}};
  for (simdjson::dom::element input : inputs) {
    STRATA_ASSIGN_OR_RETURN(const BatchId id, MarkerId(input, "inputs"));
    if (id == output) return MarkerError("an input is the output");
    marker.inputs.push_back(id);
  }
  if (marker.inputs.empty()) return MarkerError("inputs is empty");
  std::vector<BatchId> sorted = marker.inputs;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    return MarkerError("an input is listed twice");
  }
  return marker;
}

std::string SerializeCompactionMarker(const CompactionMarker& marker) {
  std::string inputs;
  for (const BatchId& id : marker.inputs) {
    if (!inputs.empty()) inputs += ",";
    inputs += fmt::format("\"{}\"", id.ToString());
  }
  return fmt::format("{{\"format\":1,\"day\":\"{}\",\"output\":\"{}\",\"inputs\":[{}]}}\n",
                     marker.day, marker.output.ToString(), inputs);
}

}  // namespace strata::storage
