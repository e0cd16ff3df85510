#pragma once

// Boot recovery of telemetry/ (docs/format/commit.md, "Boot"), run by
// OpenDataDir() once it holds LOCK and FORMAT has been checked:
//
//   1. Note the ids under staging/, remove everything there, sync staging/.
//   2. Resolve telemetry/COMPACTION.json (commit.md, "Compaction"): remove a
//      lone COMPACTION.json.tmp; roll back a marker whose output is not in
//      days/; roll forward one whose output is there and valid (delete the
//      inputs still present, then the marker); refuse anything else,
//      deleting nothing.
//   3. List telemetry/ and days/ strictly by the grammar; set every stray
//      entry (one strata never writes, StrayEntry) aside into
//      quarantine/stray-<today>-<n>/ under its path relative to telemetry/,
//      deleting nothing; remove empty day directories older than today;
//      sync days/, so every day directory left is durable.
//   4. Validate every batch: meta.json (ParseBatchMeta,
//      CheckBatchMetaLocation), its files (CheckBatchFiles), then the
//      caller's validator (Parquet footers, spans.tidx), and load its
//      attachment.
//   5. Report the live batches and every id seen (days/, staging/ before
//      removal, quarantine/) so the caller can seed the id issuer.
//
// Nothing a crash can leave stops boot; a batch failing validation is
// corruption and does (the table in commit.md says why).
//
// Errors: FailedPrecondition for a compaction marker boot must not resolve
// (#unresolved-compaction-marker); DataLoss for a corrupt batch,
// naming the batch directory and the failed check (#corrupt-batch);
// Unavailable or PermissionDenied, with the path, when I/O fails. All name
// the data directory. Stateless; the caller holds LOCK.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "io/file_system.h"
#include "storage/commit/batch_committer.h"
#include "storage/commit/catalog.h"
#include "storage/format/batch_id.h"
#include "storage/format/batch_meta.h"

namespace strata::storage {

// Checks a batch beyond meta.json and its checksums (meta-json.md rule 10:
// Parquet footers, spans.tidx). DataLoss (or any code but Unavailable and
// PermissionDenied) marks the batch corrupt.
using BatchValidator = std::function<absl::Status(FileSystem& fs, const std::string& batch_dir,
                                                  const BatchMeta& meta)>;
// Builds a batch's in-memory attachment (its trace filter) at boot. Errors
// count as the validator's.
using BatchAttachmentLoader = std::function<absl::StatusOr<std::shared_ptr<const void>>(
    FileSystem& fs, const std::string& batch_dir, const BatchMeta& meta)>;

struct RecoveryOptions {
  // "YYYY-MM-DD": empty day directories before it are removed.
  std::string today;
  BatchValidator validate_batch;          // empty: none
  BatchAttachmentLoader load_attachment;  // empty: no attachments
};

// An entry of telemetry/ that strata never writes (docs/format/layout.md):
// at telemetry/'s top anything but staging/, days/, quarantine/ and the
// compaction marker; in days/ anything but a day directory (YYYY-MM-DD); in
// a day anything but a batch directory (<id>.batch). Boot sets it aside
// (runbook #stray-entry-set-aside); verify reports it.
struct StrayEntry {
  std::string path;      // relative to telemetry/, e.g. "days/2026-12-01/notes.txt"
  std::string expected;  // what belongs there, e.g. "a batch directory (<id>.batch)"
};

// A stray entry boot moved: from and to, both full paths.
struct SetAsideEntry {
  std::string from;
  std::string to;
};

// What boot found and did, for the log and for tests.
struct RecoveryReport {
  std::vector<SetAsideEntry> set_aside;      // stray entries moved into quarantine/
  std::vector<std::string> removed_staging;  // names removed from staging/
  std::vector<std::string> removed_days;     // empty past day directories removed
  // "" when there was no marker; else what boot did with it ("removed
  // COMPACTION.json.tmp", "rolled back ...", "rolled forward ...").
  std::string compaction;
};

struct RecoveredTelemetry {
  std::vector<BatchRecord> batches;  // the valid live batches, sorted by id
  std::vector<BatchId> seen_ids;     // every id found in days/, staging/ and quarantine/
  std::vector<std::string> days;     // the day directories left, all durable
  RecoveryReport report;
};

[[nodiscard]] absl::StatusOr<RecoveredTelemetry> RecoverTelemetry(FileSystem& fs,
                                                                  const DataDirPaths& paths,
                                                                  const RecoveryOptions& options);

// Step 4 for one batch at days/<day>/<name>: the batch's record, or the
// first failed check (DataLoss naming `batch_dir` and the check, with the
// runbook anchor, unless I/O failed).
[[nodiscard]] absl::StatusOr<BatchRecord> ValidateBatchDir(FileSystem& fs,
                                                           const DataDirPaths& paths,
                                                           const std::string& day,
                                                           const BatchId& id,
                                                           const RecoveryOptions& options);

// Step 3's listing of telemetry/, which changes nothing: every day
// directory and the batches in it, in name order, and every stray entry.
struct ListedDay {
  std::string day;
  std::vector<BatchId> batches;
};
struct DaysListing {
  std::vector<ListedDay> days;
  // In listing order: telemetry/'s top, then days/ and each day.
  std::vector<StrayEntry> strays;
};
// Lists telemetry/ and days/ strictly by the grammar (layout.md). With `concurrent` (a
// server may be changing days/ meanwhile: `strata verify`), a day or batch
// directory that disappears between being listed and being looked at is
// left out; otherwise that is an I/O error like any other. Errors: the
// FileSystem's, in context.
[[nodiscard]] absl::StatusOr<DaysListing> ListDays(FileSystem& fs, const DataDirPaths& paths,
                                                   bool concurrent);

// The first checks of step 4 for the batch directory `dir`, found as
// days/<day>/<id>.batch: meta.json exists and is at most 1 MiB, parses
// strictly (ParseBatchMeta) and names this id and day
// (CheckBatchMetaLocation). DataLoss, without context, for a meta.json that
// breaks a rule (a missing one included); the FileSystem's errors otherwise.
[[nodiscard]] absl::StatusOr<BatchMeta> ReadBatchMeta(FileSystem& fs, const std::string& dir,
                                                      const std::string& day, const BatchId& id);

// The contents of telemetry/COMPACTION.json (commit.md, "Compaction").
struct CompactionMarker {
  std::string day;
  BatchId output;
  std::vector<BatchId> inputs;
};
// Reads telemetry/COMPACTION.json as boot does: nullopt when there is
// none; InvalidArgument saying why when it is not a marker (a directory,
// longer than 64 KiB, or refused by ParseCompactionMarker); the
// FileSystem's errors, in context, when I/O fails.
[[nodiscard]] absl::StatusOr<std::optional<CompactionMarker>> ReadCompactionMarker(
    FileSystem& fs, const DataDirPaths& paths);
// Parses a marker strictly: one object with exactly `format` (1), `day` (a
// valid day), `output` (an id of generation 1 or more) and `inputs` (a
// non-empty array of distinct ids, none equal to the output).
// InvalidArgument saying what is wrong.
[[nodiscard]] absl::StatusOr<CompactionMarker> ParseCompactionMarker(std::string_view json);
// The marker's JSON (one line), which ParseCompactionMarker accepts.
std::string SerializeCompactionMarker(const CompactionMarker& marker);

}  // namespace strata::storage
