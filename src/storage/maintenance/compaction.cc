#include "storage/maintenance/compaction.h"

#include <algorithm>
#include <map>
#include <utility>

#include "common/path.h"
#include "common/runbook.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "rollups/rollup_rows.h"
#include "storage/commit/batch_committer.h"
#include "storage/format/batch_meta.h"
#include "storage/index/trace_index.h"
#include "storage/table/rollups_table.h"

namespace strata::storage {
namespace {

uint64_t FileBytes(const std::optional<FileMeta>& file) {
  return file.has_value() ? file->bytes : 0;
}

// Whether `inputs[begin, end)` may be merged now.
bool Eligible(size_t begin, size_t end, uint64_t bytes, const CompactionPolicy& policy,
              bool closed_day) {
  const size_t count = end - begin;
  if (count < 2) return false;
  return closed_day || count >= policy.min_inputs || bytes >= policy.min_bytes;
}

// The oldest run of `level` (sorted by id) that fits the caps and is
// eligible, as [begin, end), or nullopt.
std::optional<std::pair<size_t, size_t>> PickRun(const std::vector<const LiveBatch*>& level,
                                                 const CompactionPolicy& policy, bool closed_day) {
  size_t begin = 0;
  while (begin + 1 < level.size()) {
    size_t end = begin;
    uint64_t rows = 0, bytes = 0;
    while (end < level.size() && end - begin < policy.max_inputs) {
      const uint64_t r = BatchRows(level[end]->meta());
      const uint64_t b = BatchBytes(level[end]->meta());
      if (end > begin && (rows + r > policy.max_rows || bytes + b > policy.max_bytes)) break;
      rows += r;
      bytes += b;
      ++end;
    }
    if (Eligible(begin, end, bytes, policy, closed_day)) return std::make_pair(begin, end);
    if (end == level.size()) return std::nullopt;  // the rest is too little
    // Capped before becoming eligible: start after the batch that stopped
    // it only if the run held one batch (a batch too big to pair).
    begin = end - begin <= 1 ? begin + 1 : end - 1;
  }
  return std::nullopt;
}

MergeInput InputOf(const LiveBatch& batch, std::string path, uint64_t file_rows) {
  MergeInput input;
  input.path = std::move(path);
  input.batch_id = batch.meta().id;
  input.file_rows = file_rows;
  return input;
}

// An input's data file where the merge reads it, checked against the size
// and xxh3-64 its meta.json declares (the batch directory's own files are
// checked whole by CheckBatchFiles instead).
absl::StatusOr<InputFile> RemoteInputFile(FileSystem& fs, const InputFileResolver& resolver,
                                          const LiveBatch& batch, const char* name,
                                          const FileMeta& declared) {
  absl::StatusOr<InputFile> file = resolver.resolve(batch, name);
  if (!file.ok()) {
    return absl::Status(file.status().code(),
                        fmt::format("compaction input {} ({}, read from the object store): {}",
                                    batch.meta().id, name, std::string(file.status().message())));
  }
  STRATA_ASSIGN_OR_RETURN(const FileChecksum sum, ChecksumFile(fs, file->path));
  if (sum.bytes != declared.bytes || sum.xxh3_64 != declared.xxh3_64) {
    return absl::DataLossError(fmt::format(
        "compaction input {} ({}, read from the object store): {} bytes with xxh3-64 {}, but its "
        "meta.json declares {} bytes with {}",
        batch.meta().id, name, sum.bytes, FormatXxh3_64(sum.xxh3_64), declared.bytes,
        FormatXxh3_64(declared.xxh3_64)));
  }
  return file;
}

}  // namespace

uint64_t BatchRows(const BatchMeta& meta) {
  return meta.spans.file_rows + meta.logs.file_rows + meta.metrics.file_rows;
}

uint64_t BatchBytes(const BatchMeta& meta) {
  return FileBytes(meta.spans_parquet) + FileBytes(meta.spans_tidx) + FileBytes(meta.logs_parquet) +
         FileBytes(meta.metrics_parquet);
}

std::optional<CompactionGroup> PlanCompaction(const Snapshot& snapshot,
                                              const CompactionPolicy& policy,
                                              std::string_view today) {
  // (day, generation) -> batches, sorted by id (the Snapshot's order).
  std::map<std::pair<std::string, int>, std::vector<const LiveBatch*>> levels;
  std::map<std::pair<std::string, int>, std::vector<std::shared_ptr<const LiveBatch>>> owners;
  for (const std::shared_ptr<const LiveBatch>& batch : snapshot.batches()) {
    const int generation = batch->id().generation();
    if (generation >= kMaxGeneration) continue;
    if (policy.keep_out && policy.keep_out(*batch)) continue;
    levels[{batch->day(), generation}].push_back(batch.get());
    owners[{batch->day(), generation}].push_back(batch);
  }
  for (const auto& [key, level] : levels) {
    const bool closed_day = key.first < today;
    std::optional<std::pair<size_t, size_t>> run = PickRun(level, policy, closed_day);
    if (!run.has_value()) continue;
    CompactionGroup group{.day = key.first, .generation = key.second, .inputs = {}};
    const auto& batches = owners[key];
    group.inputs.assign(batches.begin() + static_cast<std::ptrdiff_t>(run->first),
                        batches.begin() + static_cast<std::ptrdiff_t>(run->second));
    return group;
  }
  return std::nullopt;
}

// ---- marker ----

absl::Status WriteCompactionMarker(FileSystem& fs, const DataDirPaths& paths,
                                   const CompactionMarker& marker) {
  STRATA_ASSIGN_OR_RETURN(bool present, fs.Exists(paths.CompactionMarker()));
  if (present) {
    return absl::AlreadyExistsError(
        fmt::format("{} exists: a compaction is still being published", paths.CompactionMarker()));
  }
  const std::string temp = paths.CompactionMarkerTemp();
  (void)fs.RemoveFile(temp);  // a leftover of a failed attempt
  {
    STRATA_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file,
                            fs.NewWritableFile(temp, WriteMode::kCreateExclusive));
    STRATA_RETURN_IF_ERROR(file->Append(SerializeCompactionMarker(marker)));
    STRATA_RETURN_IF_ERROR(file->Sync());
    STRATA_RETURN_IF_ERROR(file->Close());
  }
  STRATA_RETURN_IF_ERROR(fs.RenameFile(temp, paths.CompactionMarker()));
  return fs.SyncDir(paths.Telemetry());
}

absl::Status RemoveCompactionMarker(FileSystem& fs, const DataDirPaths& paths) {
  absl::Status removed = fs.RemoveFile(paths.CompactionMarker());
  if (!removed.ok() && !absl::IsNotFound(removed)) return removed;
  return fs.SyncDir(paths.Telemetry());
}

// ---- Compactor ----

Compactor::Compactor(const DataDir& dir, CompactorOptions options)
    : dir_(dir), options_(std::move(options)) {}

DataFileOpener Compactor::OpenerOf(const LiveBatch& batch,
                                   std::vector<std::shared_ptr<const void>>* holds) const {
  FileSystem& fs = dir_.fs();
  if (!options_.input_file.remote || !options_.input_file.remote(batch)) {
    return LocalDataFiles(fs, batch.dir());
  }
  return
      [this, &fs, &batch, holds](
          std::string_view file) -> absl::StatusOr<std::unique_ptr<parquet::RandomAccessSource>> {
        STRATA_ASSIGN_OR_RETURN(InputFile input, options_.input_file.resolve(batch, file));
        holds->push_back(std::move(input.hold));
        STRATA_ASSIGN_OR_RETURN(std::unique_ptr<FileSource> source, OpenFileSource(fs, input.path));
        return source;
      };
}

absl::StatusOr<BatchMeta> Compactor::WriteOutput(const CompactionGroup& group, const BatchId& id) {
  FileSystem& fs = dir_.fs();
  const DataDirPaths& paths = dir_.paths();
  const std::string staging = paths.StagingBatch(id);
  const std::string scratch = paths.ScratchFor(id);
  STRATA_RETURN_IF_ERROR(fs.CreateDir(staging));
  STRATA_RETURN_IF_ERROR(fs.CreateDir(scratch));
  const std::string id_text = id.ToString();

  std::vector<MergeInput> spans, logs, metrics;
  EncodedBatch planned{.id = id};
  NanosRange ingest{UINT64_MAX, 0};
  // Holds the read cache's copies of remote inputs' files until the merge
  // is done.
  std::vector<std::shared_ptr<const void>> holds;
  for (const std::shared_ptr<const LiveBatch>& batch : group.inputs) {
    const BatchMeta& meta = batch->meta();
    const bool remote = options_.input_file.remote && options_.input_file.remote(*batch);
    // The inputs are deleted once the output is published: check now that
    // every file still has the size and xxh3-64 meta.json declares, so a
    // file damaged since boot (or in the store) fails the merge instead of
    // the output.
    if (!remote) {
      if (absl::Status files = CheckBatchFiles(fs, batch->dir(), meta); !files.ok()) {
        return absl::Status(files.code(), fmt::format("compaction input {}: {}", batch->dir(),
                                                      std::string(files.message())));
      }
    }
    // The path of `name`: the batch directory's file, or a remote batch's
    // in the read cache (its spans.tidx is always local).
    auto path_of = [&](const char* name,
                       const std::optional<FileMeta>& declared) -> absl::StatusOr<std::string> {
      if (!remote) return JoinPath(batch->dir(), name);
      STRATA_ASSIGN_OR_RETURN(InputFile file,
                              RemoteInputFile(fs, options_.input_file, *batch, name, *declared));
      holds.push_back(std::move(file.hold));
      return std::move(file.path);
    };
    if (meta.spans_parquet.has_value()) {
      STRATA_ASSIGN_OR_RETURN(std::string path, path_of(kSpansFileName, meta.spans_parquet));
      spans.push_back(InputOf(*batch, std::move(path), meta.spans.file_rows));
      if (meta.spans_tidx.has_value())
        spans.back().tidx_path = JoinPath(batch->dir(), kTraceIndexFileName);
    }
    if (meta.logs_parquet.has_value()) {
      STRATA_ASSIGN_OR_RETURN(std::string path, path_of(kLogsFileName, meta.logs_parquet));
      logs.push_back(InputOf(*batch, std::move(path), meta.logs.file_rows));
    }
    if (meta.metrics_parquet.has_value()) {
      STRATA_ASSIGN_OR_RETURN(std::string path, path_of(kMetricsFileName, meta.metrics_parquet));
      metrics.push_back(InputOf(*batch, std::move(path), meta.metrics.file_rows));
    }
    ingest.min = std::min(ingest.min, meta.ingest_time.min);
    ingest.max = std::max(ingest.max, meta.ingest_time.max);
    planned.sources.push_back(meta.id);
  }
  std::sort(planned.sources.begin(), planned.sources.end());
  planned.ingest_time = ingest;
  planned.spans.traces = 0;

  std::map<std::string, FileMeta> written;
  // Streams one merged file into staging/<id>/<name>.
  auto write_file = [&](const char* name, const std::string& scratch_dir,
                        const std::function<absl::Status(MergeOptions&, parquet::ByteSink*)>& merge)
      -> absl::Status {
    STRATA_ASSIGN_OR_RETURN(std::unique_ptr<HashingFileSink> sink,
                            HashingFileSink::Create(fs, JoinPath(staging, name)));
    if (options_.check_stop) sink->set_before_append(options_.check_stop);
    MergeOptions merge_options = options_.merge;
    merge_options.scratch_dir = scratch_dir;
    merge_options.check_stop = options_.check_stop;
    if (!scratch_dir.empty()) STRATA_RETURN_IF_ERROR(fs.CreateDir(scratch_dir));
    STRATA_RETURN_IF_ERROR(merge(merge_options, sink.get()));
    STRATA_ASSIGN_OR_RETURN(written[name], sink->Finish());
    planned.files.push_back({name, ""});
    return absl::OkStatus();
  };

  if (!spans.empty()) {
    std::string trace_index;
    STRATA_RETURN_IF_ERROR(write_file(
        kSpansFileName, "", [&](MergeOptions& o, parquet::ByteSink* sink) -> absl::Status {
          STRATA_ASSIGN_OR_RETURN(MergedSpans merged,
                                  MergeSpansTables(fs, spans, id_text, o, sink));
          planned.spans = std::move(merged.meta);
          trace_index = std::move(merged.trace_index);
          return absl::OkStatus();
        }));
    if (!trace_index.empty()) {
      STRATA_ASSIGN_OR_RETURN(std::unique_ptr<HashingFileSink> sink,
                              HashingFileSink::Create(fs, JoinPath(staging, kTraceIndexFileName)));
      STRATA_RETURN_IF_ERROR(sink->Append(trace_index));
      STRATA_ASSIGN_OR_RETURN(written[kTraceIndexFileName], sink->Finish());
      planned.files.push_back({kTraceIndexFileName, ""});
    }
  }
  if (!logs.empty()) {
    STRATA_RETURN_IF_ERROR(write_file(
        kLogsFileName, JoinPath(scratch, "logs"),
        [&](MergeOptions& o, parquet::ByteSink* sink) -> absl::Status {
          STRATA_ASSIGN_OR_RETURN(planned.logs, MergeLogsTables(fs, logs, id_text, o, sink));
          return absl::OkStatus();
        }));
  }
  if (!metrics.empty()) {
    STRATA_RETURN_IF_ERROR(
        write_file(kMetricsFileName, JoinPath(scratch, "metrics"),
                   [&](MergeOptions& o, parquet::ByteSink* sink) -> absl::Status {
                     STRATA_ASSIGN_OR_RETURN(planned.metrics,
                                             MergeMetricsTables(fs, metrics, id_text, o, sink));
                     return absl::OkStatus();
                   }));
  }
  (void)fs.RemoveAll(scratch);
  // The output's rollups: the inputs' merged (rollups-parquet.md,
  // "Merging"), so no span is read again and none counts twice.
  std::vector<rollups::RollupRows> input_rollups;
  for (const std::shared_ptr<const LiveBatch>& batch : group.inputs) {
    if (options_.check_stop) STRATA_RETURN_IF_ERROR(options_.check_stop());
    const DataFileOpener open = OpenerOf(*batch, &holds);
    STRATA_ASSIGN_OR_RETURN(input_rollups.emplace_back(),
                            options_.recompute_rollups ? ComputeBatchRollups(open, batch->meta())
                                                       : ReadBatchRollups(open, batch->meta()));
  }
  std::vector<const rollups::RollupRows*> rollup_inputs;
  for (const rollups::RollupRows& rows : input_rollups) rollup_inputs.push_back(&rows);
  const rollups::RollupRows merged_rollups = rollups::MergeRollups(rollup_inputs);
  input_rollups.clear();
  if (!merged_rollups.empty()) {
    STRATA_ASSIGN_OR_RETURN(std::string bytes,
                            WriteRollupsTable(merged_rollups, id_text, options_.merge.tables));
    STRATA_ASSIGN_OR_RETURN(std::unique_ptr<HashingFileSink> sink,
                            HashingFileSink::Create(fs, JoinPath(staging, kRollupsFileName)));
    STRATA_RETURN_IF_ERROR(sink->Append(bytes));
    STRATA_ASSIGN_OR_RETURN(written[kRollupsFileName], sink->Finish());
    planned.files.push_back({kRollupsFileName, ""});
  }

  STRATA_ASSIGN_OR_RETURN(BatchMeta meta, PlanBatchMeta(planned));
  if (meta.day != group.day) {
    return absl::InternalError(
        fmt::format("compaction {}: inputs of day {} give day {}", id_text, group.day, meta.day));
  }
  for (auto& [name, file] : written) {
    if (name == kSpansFileName) meta.spans_parquet = file;
    if (name == kTraceIndexFileName) meta.spans_tidx = file;
    if (name == kLogsFileName) meta.logs_parquet = file;
    if (name == kMetricsFileName) meta.metrics_parquet = file;
    if (name == kRollupsFileName) meta.rollups_parquet = file;
  }
  STRATA_RETURN_IF_ERROR(dir_.committer().SealStaged(id, meta));
  return meta;
}

absl::Status Compactor::Undo(const CompactionMarker& marker, const absl::Status& cause) {
  FileSystem& fs = dir_.fs();
  const DataDirPaths& paths = dir_.paths();
  auto aborted = [&](std::string_view step, const absl::Status& why) {
    return absl::AbortedError(fmt::format(
        "compaction into {} failed ({}) and could not be undone: {}: {}; compaction stops until "
        "a restart resolves {}; {}",
        marker.output.ToString(), std::string(cause.message()), step, std::string(why.message()),
        paths.CompactionMarker(), RunbookRef("compaction-halted")));
  };
  absl::StatusOr<bool> in_days = fs.Exists(paths.Batch(marker.day, marker.output));
  if (!in_days.ok()) return aborted("look for the output", in_days.status());
  if (*in_days) {
    if (absl::Status deleted = DeleteBatch(fs, paths, marker.day, marker.output); !deleted.ok()) {
      return aborted("move the output out of days", deleted);
    }
  }
  if (absl::Status removed = RemoveCompactionMarker(fs, paths); !removed.ok()) {
    return aborted("remove the marker", removed);
  }
  (void)fs.RemoveAll(paths.StagingBatch(marker.output));
  return cause;
}

absl::StatusOr<CompactionResult> Compactor::Run(const CompactionGroup& group) {
  const size_t least_inputs = options_.recompute_rollups ? 1 : 2;
  if (group.inputs.size() < least_inputs || group.generation >= kMaxGeneration) {
    return absl::InternalError(
        fmt::format("compaction: a group needs {} inputs below the last generation", least_inputs));
  }
  FileSystem& fs = dir_.fs();
  const DataDirPaths& paths = dir_.paths();
  STRATA_ASSIGN_OR_RETURN(const BatchId id, dir_.issuer().Issue(group.generation + 1));

  CompactionResult result{.marker = {.day = group.day, .output = id, .inputs = {}}, .output = {}};
  std::vector<BatchId> remove;
  for (const std::shared_ptr<const LiveBatch>& batch : group.inputs) {
    if (batch->day() != group.day || batch->id().generation() != group.generation) {
      return absl::InternalError(fmt::format("compaction: batch {} is not of day {} level {}",
                                             batch->meta().id, group.day, group.generation));
    }
    result.marker.inputs.push_back(batch->id());
    remove.push_back(batch->id());
    result.input_rows +=
        batch->meta().spans.rows + batch->meta().logs.rows + batch->meta().metrics.rows;
    result.input_bytes += BatchBytes(batch->meta());
  }

  absl::StatusOr<BatchMeta> meta = WriteOutput(group, id);
  if (!meta.ok()) {
    (void)fs.RemoveAll(paths.StagingBatch(id));
    (void)fs.RemoveAll(paths.ScratchFor(id));
    return meta.status();
  }
  if (absl::Status marked = WriteCompactionMarker(fs, paths, result.marker); !marked.ok()) {
    if (absl::IsAlreadyExists(marked)) {
      (void)fs.RemoveAll(paths.StagingBatch(id));
      return marked;
    }
    // The rename may or may not have happened: undo both ways.
    return Undo(result.marker, marked);
  }
  absl::StatusOr<CommittedBatch> committed = dir_.committer().PromoteStaged(id, *meta);
  if (!committed.ok()) return Undo(result.marker, committed.status());

  BatchRecord record{.id = id,
                     .day = committed->meta.day,
                     .dir = committed->dir,
                     .meta = committed->meta,
                     .attachment = nullptr};
  if (options_.load_attachment) {
    absl::StatusOr<std::shared_ptr<const void>> attachment =
        options_.load_attachment(fs, committed->dir, committed->meta);
    if (!attachment.ok()) return Undo(result.marker, attachment.status());
    record.attachment = *std::move(attachment);
  }
  std::vector<BatchRecord> add;
  add.push_back(std::move(record));
  absl::StatusOr<std::shared_ptr<const Snapshot>> published =
      dir_.catalog().Publish(std::move(add), remove);
  if (!published.ok()) return Undo(result.marker, published.status());
  result.output = std::move(committed->meta);
  return result;
}

}  // namespace strata::storage
