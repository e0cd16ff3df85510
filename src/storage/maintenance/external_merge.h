#pragma once

// The external merge sort behind MergeLogsTables and MergeMetricsTables
// (table_merge.h; docs/format/compaction.md "Merging logs and metrics"):
// the rows of several table files become one file in the table's merge
// order, holding a bounded number of decoded rows at any time.
//
//   1. Per input, in input order: the footer is checked (schema, batch id,
//      num_rows == MergeInput::file_rows); one pass over row_kind and the
//      index columns finds where the placeholder rows end and how many
//      resources, scopes (and metrics) the file numbers; the placeholder
//      rows are copied to the output, chunk by chunk, with their indexes
//      moved past those of the inputs before it.
//   2. An input whose footer declares the merge order (a compaction output)
//      is a source as it is. Any other input (an ingest batch) is read in
//      runs of fan_in * chunk_rows data rows, each sorted in memory
//      (stably) and written to scratch_dir as a sorted run: a table file of
//      the same schema, through the same writer, whose indexes are already
//      the output's (so a run's indexes need not be dense; only this merge
//      reads runs).
//   3. While there are more than fan_in sources, runs of consecutive
//      sources are merged into longer runs (a pass merges only as many
//      groups as needed to get down to fan_in).
//   4. A k-way merge of the sources, each read chunk_rows rows at a time,
//      writes the data rows to the output; ties go to the earlier source,
//      and sources are in input order, so equal keys keep input order.
//
// Every source is checked to really be in merge order as it is read
// (DataLoss naming its file), because the merge relies on it.
//
// Memory: at most (fan_in + 2) * chunk_rows decoded rows (fan_in chunks or
// one run being sorted, the chunk being read, the rows buffered in the
// writer), plus the raw columns of the chunk being decoded and the writer's
// open row group and pages. On src/workload/ traffic a decoded row takes
// about 420 bytes (logs) / 610 bytes (metrics) and a raw row while it is
// decoded 2.2 / 3 KB (every row repeats its resource's attribute lists),
// so peak RSS ~ rows_held * 0.42 KB + chunk_rows * 2.2 KB + ~15 MB for
// logs. merge_bench measured, merging 4 ingest files of 500k rows (2M
// rows), with the defaults (chunk_rows 16384, fan_in 16): logs 167 MiB
// (ingest inputs) / 138 MiB (sorted inputs), metrics 240 / 184 MiB; with
// chunk_rows 8192: logs 135 / 99 MiB, metrics 180 / 109 MiB, for the same
// CPU. The peak does not grow with the inputs (merge tests check the row
// count). Disk: runs take about the compressed size of the unsorted inputs
// in scratch_dir (zstd level 1); merged runs are removed as soon as they
// are consumed.
//
// Table (LogsMergeTable in logs_merge.cc, MetricsMergeTable in
// metrics_merge.cc) supplies:
//   using Rows, Writer, Key;       a chunk (LogRows/MetricRows), the table
//                                  writer, the merge key (operator<)
//   kSchema, Columns(), kKindColumn, kIndexColumns (resource, scope[,
//   metric]), IsDataKind(kind), kOrderColumns (named in order errors)
//   InMergeOrder(FileMetaData)     the footer declares the merge order
//   Read(reader, file, begin, end) -> StatusOr<Rows>
//   DataBegin(rows), RowCount(rows), KeyOf(rows, row)
//   InputOrderKey(rows, row)       what the table's every file is sorted by
//                                  (metric names; empty for logs), checked
//                                  across the chunks of an input sorted in
//                                  runs
//   Open(batch_id, TableOptions, sink) -> StatusOr<unique_ptr<Writer>>
//                                  a writer in merge order
//   Register(writer, rows, base) -> batch number; AppendPlaceholder /
//   AppendData(writer, number, rows, row)
//
// Thread-safety: single use, single owner. Errors: as table_merge.h.

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "io/file_system.h"
#include "parquet/file_reader.h"
#include "parquet/file_writer.h"
#include "storage/format/batch_meta.h"
#include "storage/maintenance/table_merge.h"
#include "storage/table/file_source.h"
#include "storage/table/table_file.h"

namespace strata::storage::merge_internal {

// What is added to a source's resource, scope and metric indexes to make
// them the output's.
struct IndexBase {
  std::array<uint32_t, 3> offsets = {0, 0, 0};
};

// The index map a writer's AddBatch wants: file index + base per row.
inline std::vector<uint32_t> Shifted(const std::vector<uint32_t>& indexes, uint32_t base) {
  std::vector<uint32_t> out(indexes.size());
  for (size_t i = 0; i < indexes.size(); ++i) out[i] = indexes[i] + base;
  return out;
}

// A stream of data rows in merge order: the data rows of a sorted input,
// or a run.
struct Source {
  std::string path;
  std::string batch_id;  // the id its footer names
  uint64_t row_begin = 0;
  uint64_t row_end = 0;
  IndexBase base;
  bool is_run = false;  // a file in scratch_dir, removed once merged
};

// An open table file.
struct OpenFile {
  std::unique_ptr<FileSource> source;
  std::unique_ptr<parquet::FileReader> reader;
};

// Counts decoded rows held, for MergeStats::rows_held_peak.
class HeldRows {
 public:
  void Add(uint64_t rows) { held_ += rows; }
  void Remove(uint64_t rows) { held_ -= rows; }
  // Notes the current total plus rows buffered in a writer.
  void Sample(uint64_t writer_rows) { peak_ = std::max(peak_, held_ + writer_rows); }
  uint64_t peak() const { return peak_; }

 private:
  uint64_t held_ = 0;
  uint64_t peak_ = 0;
};

template <typename Table>
class ExternalMerge {
 public:
  using Rows = typename Table::Rows;
  using Writer = typename Table::Writer;
  using Key = typename Table::Key;

  ExternalMerge(FileSystem& fs, std::string_view output_batch_id, const MergeOptions& options)
      : fs_(fs), output_batch_id_(output_batch_id), options_(options) {}

  absl::StatusOr<SignalMeta> Run(std::span<const MergeInput> inputs, parquet::ByteSink* out);

 private:
  // A source being merged: its file, the chunk in hand and the row in it.
  struct Cursor {
    Source source;
    OpenFile file;
    std::unique_ptr<Rows> chunk;
    size_t row = 0;            // current data row of `chunk`
    uint64_t chunk_begin = 0;  // file row of the chunk's row 0
    uint64_t next_row = 0;     // file row the next chunk starts at
    int64_t registered = -1;   // the chunk's batch number in the writer, this flush
  };

  absl::Status CheckArguments(std::span<const MergeInput> inputs) const;
  TableOptions WriterOptions(bool run) const;
  absl::StatusOr<OpenFile> Open(const std::string& path, const std::string& batch_id);
  // Row_kind and the index columns, read in chunks: where the data rows
  // start (DataLoss for a placeholder after them) and the index counts.
  absl::Status Scan(const MergeInput& input, parquet::FileReader& reader, uint64_t* data_begin,
                    std::array<uint32_t, 3>* counts);
  absl::StatusOr<std::unique_ptr<Rows>> ReadChunk(parquet::FileReader& reader,
                                                  const std::string& path, uint64_t begin,
                                                  uint64_t end);
  // A chunk of data rows: DataLoss if it holds a placeholder.
  absl::StatusOr<std::unique_ptr<Rows>> ReadDataChunk(parquet::FileReader& reader,
                                                      const std::string& path, uint64_t begin,
                                                      uint64_t end);
  void Release(std::unique_ptr<Rows>& chunk);
  absl::Status CopyPlaceholders(const MergeInput& input, parquet::FileReader& reader, uint64_t end,
                                const IndexBase& base, Writer& writer);
  absl::Status WriteRuns(const MergeInput& input, parquet::FileReader& reader, uint64_t begin,
                         const IndexBase& base);
  // A run file in scratch_dir, written by `fill`.
  template <typename Fill>
  absl::StatusOr<Source> WriteRun(Fill fill);
  absl::Status Reduce();
  // The k-way merge of `sources` into `writer`.
  absl::Status MergeInto(std::span<const Source> sources, Writer& writer);
  absl::Status Advance(Cursor& cursor);
  absl::Status FlushIfFull(Writer& writer, std::span<Cursor> cursors);

  FileSystem& fs_;
  const std::string output_batch_id_;
  const MergeOptions options_;
  std::vector<Source> sources_;
  uint64_t runs_ = 0;
  HeldRows held_;
};

// ------------------------------------------------------------ arguments

template <typename Table>
absl::Status ExternalMerge<Table>::CheckArguments(std::span<const MergeInput> inputs) const {
  if (inputs.empty()) return absl::InternalError("merge: no inputs");
  if (options_.chunk_rows == 0 || options_.fan_in < 2) {
    return absl::InternalError("merge: chunk_rows must be at least 1 and fan_in at least 2");
  }
  uint64_t rows = 0;
  for (const MergeInput& input : inputs) {
    if (input.file_rows == 0) {
      return absl::InternalError(fmt::format("merge: input {} has no rows", input.path));
    }
    rows += input.file_rows;
  }
  if (rows >= std::numeric_limits<uint32_t>::max()) {
    return absl::InternalError(fmt::format("merge: {} rows do not fit one file", rows));
  }
  return absl::OkStatus();
}

template <typename Table>
TableOptions ExternalMerge<Table>::WriterOptions(bool run) const {
  TableOptions tables = options_.tables;
  tables.row_group_bytes = std::min(tables.row_group_bytes, options_.row_group_bytes_limit);
  if (run) {
    // Runs are read once and removed: cheap compression, and pages no
    // longer than a chunk, so reading a chunk decompresses little more.
    tables.zstd_level = 1;
    tables.fast_zstd_level = 1;
    tables.page_rows =
        std::max<size_t>(1, std::min<uint64_t>(tables.page_rows, options_.chunk_rows));
  }
  return tables;
}

template <typename Table>
absl::StatusOr<OpenFile> ExternalMerge<Table>::Open(const std::string& path,
                                                    const std::string& batch_id) {
  OpenFile file;
  STRATA_ASSIGN_OR_RETURN(file.source, OpenFileSource(fs_, path));
  STRATA_ASSIGN_OR_RETURN(
      file.reader, OpenTable(file.source.get(), Table::Columns(), Table::kSchema, batch_id, path));
  return file;
}

// ------------------------------------------------------------ reading

template <typename Table>
absl::Status ExternalMerge<Table>::Scan(const MergeInput& input, parquet::FileReader& reader,
                                        uint64_t* data_begin, std::array<uint32_t, 3>* counts) {
  const uint64_t rows = input.file_rows;
  std::vector<int> columns = {Table::kKindColumn};
  for (int c : Table::kIndexColumns) columns.push_back(c);
  *data_begin = rows;
  std::array<int64_t, 3> max = {-1, -1, -1};
  // Four small integer columns: a scan chunk can be larger than a row chunk.
  const uint64_t step = options_.chunk_rows * 4;
  for (uint64_t begin = 0; begin < rows; begin += step) {
    const uint64_t end = std::min(rows, begin + step);
    absl::StatusOr<std::vector<parquet::ColumnVector>> read =
        reader.Read(columns, static_cast<int64_t>(begin), static_cast<int64_t>(end));
    if (!read.ok()) {
      if (absl::IsDataLoss(read.status())) return read.status();
      if (absl::IsInvalidArgument(read.status()) || absl::IsUnimplemented(read.status()) ||
          absl::IsOutOfRange(read.status())) {
        return absl::DataLossError(
            fmt::format("{}: {}", input.path, std::string(read.status().message())));
      }
      return read.status();
    }
    const parquet::ColumnVector& kinds = (*read)[0];
    for (size_t r = 0; r < kinds.size(); ++r) {
      const bool data = Table::IsDataKind(kinds.int32s[r]);
      if (data && *data_begin == rows) *data_begin = begin + r;
      if (!data && *data_begin < rows) {
        return ColumnDataLoss(input.path, "row_kind", begin + r,
                              "a placeholder row after the data rows");
      }
    }
    for (size_t k = 1; k < read->size(); ++k) {
      const parquet::ColumnVector& index = (*read)[k];
      for (size_t r = 0; r < index.size(); ++r) {
        if (index.is_null(r)) continue;
        // Dense indexes stay below the row count; a larger one would push
        // the next input's indexes out of range.
        const auto value = static_cast<uint32_t>(index.int32s[r]);
        if (value >= rows) {
          return ColumnDataLoss(input.path, Table::Columns()[columns[k]].name, begin + r,
                                fmt::format("index {} is not below the row count {}", value, rows));
        }
        max[k - 1] = std::max<int64_t>(max[k - 1], value);
      }
    }
  }
  for (size_t k = 0; k < counts->size(); ++k) (*counts)[k] = static_cast<uint32_t>(max[k] + 1);
  return absl::OkStatus();
}

template <typename Table>
absl::StatusOr<std::unique_ptr<typename Table::Rows>> ExternalMerge<Table>::ReadChunk(
    parquet::FileReader& reader, const std::string& path, uint64_t begin, uint64_t end) {
  STRATA_ASSIGN_OR_RETURN(Rows rows, Table::Read(reader, path, begin, end));
  held_.Add(end - begin);
  return std::make_unique<Rows>(std::move(rows));
}

template <typename Table>
absl::StatusOr<std::unique_ptr<typename Table::Rows>> ExternalMerge<Table>::ReadDataChunk(
    parquet::FileReader& reader, const std::string& path, uint64_t begin, uint64_t end) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Rows> chunk, ReadChunk(reader, path, begin, end));
  if (Table::DataBegin(*chunk) != 0) {
    Release(chunk);
    return ColumnDataLoss(path, "row_kind", begin, "a placeholder row among the data rows");
  }
  return chunk;
}

template <typename Table>
void ExternalMerge<Table>::Release(std::unique_ptr<Rows>& chunk) {
  if (chunk == nullptr) return;
  held_.Remove(Table::RowCount(*chunk));
  chunk.reset();
}

// ------------------------------------------------------------ phase 1

template <typename Table>
absl::Status ExternalMerge<Table>::CopyPlaceholders(const MergeInput& input,
                                                    parquet::FileReader& reader, uint64_t end,
                                                    const IndexBase& base, Writer& writer) {
  for (uint64_t begin = 0; begin < end; begin += options_.chunk_rows) {
    STRATA_ASSIGN_OR_RETURN(
        std::unique_ptr<Rows> chunk,
        ReadChunk(reader, input.path, begin, std::min(end, begin + options_.chunk_rows)));
    if (Table::DataBegin(*chunk) != Table::RowCount(*chunk)) {
      Release(chunk);
      return ColumnDataLoss(input.path, "row_kind", begin, "a data row among the placeholders");
    }
    const uint32_t batch = Table::Register(writer, *chunk, base);
    for (size_t r = 0; r < Table::RowCount(*chunk); ++r) {
      Table::AppendPlaceholder(writer, batch, *chunk, r);
    }
    held_.Sample(writer.buffered_rows());
    // The writer forgets the chunk's batch on Flush.
    absl::Status flushed = writer.Flush();
    Release(chunk);
    STRATA_RETURN_IF_ERROR(flushed);
  }
  return absl::OkStatus();
}

template <typename Table>
template <typename Fill>
absl::StatusOr<Source> ExternalMerge<Table>::WriteRun(Fill fill) {
  if (options_.scratch_dir.empty()) {
    return absl::InternalError("merge: an input needs sorting and no scratch_dir was given");
  }
  Source run;
  run.path = fmt::format("{}/{}-run-{:06}.parquet", options_.scratch_dir, Table::kSchema, runs_++);
  run.batch_id = output_batch_id_;
  run.is_run = true;
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file,
                          fs_.NewWritableFile(run.path, WriteMode::kCreateExclusive));
  parquet::CallbackSink sink([&file](std::string_view bytes) { return file->Append(bytes); });
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Writer> writer,
                          Table::Open(output_batch_id_, WriterOptions(/*run=*/true), &sink));
  STRATA_RETURN_IF_ERROR(fill(*writer));
  STRATA_ASSIGN_OR_RETURN(const SignalMeta meta, writer->Finish());
  STRATA_RETURN_IF_ERROR(file->Close());
  run.row_end = meta.file_rows;
  if (options_.stats != nullptr) ++options_.stats->runs_written;
  return run;
}

template <typename Table>
absl::Status ExternalMerge<Table>::WriteRuns(const MergeInput& input, parquet::FileReader& reader,
                                             uint64_t begin, const IndexBase& base) {
  const uint64_t end = input.file_rows;
  const uint64_t run_rows = options_.chunk_rows * options_.fan_in;
  // The reader checks the file's own order inside a chunk; this carries the
  // check across chunks.
  std::string last_key;
  for (uint64_t run_begin = begin; run_begin < end; run_begin += run_rows) {
    if (options_.check_stop) STRATA_RETURN_IF_ERROR(options_.check_stop());
    const uint64_t run_end = std::min(end, run_begin + run_rows);
    std::vector<std::unique_ptr<Rows>> chunks;
    // (chunk, row) of every data row, then sorted stably by key.
    std::vector<std::pair<uint32_t, uint32_t>> order;
    order.reserve(run_end - run_begin);
    absl::Status status;
    for (uint64_t at = run_begin; at < run_end && status.ok(); at += options_.chunk_rows) {
      absl::StatusOr<std::unique_ptr<Rows>> chunk =
          ReadDataChunk(reader, input.path, at, std::min(run_end, at + options_.chunk_rows));
      if (!chunk.ok()) {
        status = chunk.status();
        break;
      }
      const size_t rows = Table::RowCount(**chunk);
      if (Table::InputOrderKey(**chunk, 0) < last_key) {
        status = ColumnDataLoss(input.path, Table::kOrderColumns, at,
                                "rows are not in the order the file declares");
        Release(*chunk);
        break;
      }
      last_key = Table::InputOrderKey(**chunk, rows - 1);
      const auto c = static_cast<uint32_t>(chunks.size());
      for (size_t r = 0; r < rows; ++r) {
        order.emplace_back(c, static_cast<uint32_t>(r));
      }
      chunks.push_back(*std::move(chunk));
    }
    held_.Sample(0);
    if (status.ok()) {
      std::stable_sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
        return Table::KeyOf(*chunks[a.first], a.second) < Table::KeyOf(*chunks[b.first], b.second);
      });
      absl::StatusOr<Source> run = WriteRun([&](Writer& writer) -> absl::Status {
        std::vector<int64_t> registered(chunks.size(), -1);
        for (const auto& [c, r] : order) {
          if (registered[c] < 0) registered[c] = Table::Register(writer, *chunks[c], base);
          Table::AppendData(writer, static_cast<uint32_t>(registered[c]), *chunks[c], r);
          if (writer.buffered_rows() >= options_.chunk_rows) {
            held_.Sample(writer.buffered_rows());
            STRATA_RETURN_IF_ERROR(writer.Flush());
            std::fill(registered.begin(), registered.end(), -1);
          }
        }
        held_.Sample(writer.buffered_rows());
        return absl::OkStatus();
      });
      if (run.ok()) {
        sources_.push_back(*std::move(run));
      } else {
        status = run.status();
      }
    }
    for (std::unique_ptr<Rows>& chunk : chunks) Release(chunk);
    STRATA_RETURN_IF_ERROR(status);
  }
  return absl::OkStatus();
}

// ------------------------------------------------------------ phase 2

template <typename Table>
absl::Status ExternalMerge<Table>::Reduce() {
  const size_t fan_in = options_.fan_in;
  while (sources_.size() > fan_in) {
    // Each merge of fan_in sources removes fan_in - 1 of them.
    const size_t excess = sources_.size() - fan_in;
    const size_t merges = std::min((excess + fan_in - 2) / (fan_in - 1), sources_.size() / fan_in);
    std::vector<Source> next;
    for (size_t g = 0; g < merges; ++g) {
      const std::span<const Source> group(sources_.data() + g * fan_in, fan_in);
      STRATA_ASSIGN_OR_RETURN(Source run,
                              WriteRun([&](Writer& writer) { return MergeInto(group, writer); }));
      next.push_back(std::move(run));
    }
    next.insert(next.end(), sources_.begin() + static_cast<std::ptrdiff_t>(merges * fan_in),
                sources_.end());
    sources_ = std::move(next);
    if (options_.stats != nullptr) ++options_.stats->merge_passes;
  }
  return absl::OkStatus();
}

template <typename Table>
absl::Status ExternalMerge<Table>::FlushIfFull(Writer& writer, std::span<Cursor> cursors) {
  held_.Sample(writer.buffered_rows());
  if (writer.buffered_rows() < options_.chunk_rows) return absl::OkStatus();
  STRATA_RETURN_IF_ERROR(writer.Flush());
  for (Cursor& cursor : cursors) cursor.registered = -1;
  return absl::OkStatus();
}

// Moves a cursor to its next data row, reading its next chunk when the one
// in hand is used up (then chunk is null at the end). DataLoss when the
// next row's key is below the current one: the source is not in order.
template <typename Table>
absl::Status ExternalMerge<Table>::Advance(Cursor& cursor) {
  const Key previous = Table::KeyOf(*cursor.chunk, cursor.row);
  if (cursor.row + 1 < Table::RowCount(*cursor.chunk)) {
    ++cursor.row;
  } else {
    std::unique_ptr<Rows> next;
    if (cursor.next_row < cursor.source.row_end) {
      const uint64_t end = std::min(cursor.source.row_end, cursor.next_row + options_.chunk_rows);
      STRATA_ASSIGN_OR_RETURN(
          next, ReadDataChunk(*cursor.file.reader, cursor.source.path, cursor.next_row, end));
      held_.Sample(0);
      if (Table::KeyOf(*next, 0) < previous) {
        Release(next);
        return ColumnDataLoss(cursor.source.path, Table::kOrderColumns, cursor.next_row,
                              "rows are not in the merge order the file declares");
      }
      cursor.chunk_begin = cursor.next_row;
      cursor.next_row = end;
    }
    // The writer may still hold the old chunk's batch registered: forget it.
    Release(cursor.chunk);
    cursor.chunk = std::move(next);
    cursor.row = 0;
    cursor.registered = -1;
    return absl::OkStatus();
  }
  if (Table::KeyOf(*cursor.chunk, cursor.row) < previous) {
    return ColumnDataLoss(cursor.source.path, Table::kOrderColumns, cursor.chunk_begin + cursor.row,
                          "rows are not in the merge order the file declares");
  }
  return absl::OkStatus();
}

template <typename Table>
absl::Status ExternalMerge<Table>::MergeInto(std::span<const Source> sources, Writer& writer) {
  std::vector<Cursor> cursors(sources.size());
  absl::Status status;
  // Cursors release their chunks on every exit.
  auto release_all = [&] {
    for (Cursor& cursor : cursors) Release(cursor.chunk);
  };
  for (size_t i = 0; i < sources.size() && status.ok(); ++i) {
    Cursor& cursor = cursors[i];
    cursor.source = sources[i];
    absl::StatusOr<OpenFile> file = Open(cursor.source.path, cursor.source.batch_id);
    if (!file.ok()) {
      status = file.status();
      break;
    }
    cursor.file = *std::move(file);
    const uint64_t end =
        std::min(cursor.source.row_end, cursor.source.row_begin + options_.chunk_rows);
    absl::StatusOr<std::unique_ptr<Rows>> chunk =
        ReadDataChunk(*cursor.file.reader, cursor.source.path, cursor.source.row_begin, end);
    if (!chunk.ok()) {
      status = chunk.status();
      break;
    }
    cursor.chunk = *std::move(chunk);
    cursor.chunk_begin = cursor.source.row_begin;
    cursor.next_row = end;
  }
  if (!status.ok()) {
    release_all();
    return status;
  }
  held_.Sample(writer.buffered_rows());
  // A min-heap of cursor numbers by (key, number): ties go to the earlier
  // source.
  auto after = [&](size_t a, size_t b) {
    const Key ka = Table::KeyOf(*cursors[a].chunk, cursors[a].row);
    const Key kb = Table::KeyOf(*cursors[b].chunk, cursors[b].row);
    if (kb < ka) return true;
    if (ka < kb) return false;
    return a > b;
  };
  std::vector<size_t> heap;
  for (size_t i = 0; i < cursors.size(); ++i) heap.push_back(i);
  std::make_heap(heap.begin(), heap.end(), after);
  while (!heap.empty() && status.ok()) {
    std::pop_heap(heap.begin(), heap.end(), after);
    Cursor& cursor = cursors[heap.back()];
    if (cursor.registered < 0) {
      cursor.registered = Table::Register(writer, *cursor.chunk, cursor.source.base);
    }
    Table::AppendData(writer, static_cast<uint32_t>(cursor.registered), *cursor.chunk, cursor.row);
    status = Advance(cursor);
    if (!status.ok()) break;
    if (cursor.chunk == nullptr || cursor.row == 0) {
      // A chunk boundary: a place to stop if the server is shutting down.
      if (options_.check_stop) status = options_.check_stop();
      if (!status.ok()) break;
    }
    if (cursor.chunk == nullptr) {
      heap.pop_back();
      cursor.file = OpenFile();
      if (cursor.source.is_run) status = fs_.RemoveFile(cursor.source.path);
    } else {
      std::push_heap(heap.begin(), heap.end(), after);
    }
    if (status.ok()) status = FlushIfFull(writer, std::span<Cursor>(cursors));
  }
  release_all();
  return status;
}

// ------------------------------------------------------------ the whole

template <typename Table>
absl::StatusOr<SignalMeta> ExternalMerge<Table>::Run(std::span<const MergeInput> inputs,
                                                     parquet::ByteSink* out) {
  STRATA_RETURN_IF_ERROR(CheckArguments(inputs));
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Writer> writer,
                          Table::Open(output_batch_id_, WriterOptions(/*run=*/false), out));
  IndexBase base;
  for (const MergeInput& input : inputs) {
    STRATA_ASSIGN_OR_RETURN(OpenFile file, Open(input.path, input.batch_id));
    parquet::FileReader& reader = *file.reader;
    if (reader.num_rows() < 0 || static_cast<uint64_t>(reader.num_rows()) != input.file_rows) {
      return absl::DataLossError(fmt::format("{}: footer num_rows {} differs from file_rows {}",
                                             input.path, reader.num_rows(), input.file_rows));
    }
    uint64_t data_begin = 0;
    std::array<uint32_t, 3> counts = {0, 0, 0};
    STRATA_RETURN_IF_ERROR(Scan(input, reader, &data_begin, &counts));
    STRATA_RETURN_IF_ERROR(CopyPlaceholders(input, reader, data_begin, base, *writer));
    if (data_begin < input.file_rows) {
      if (Table::InMergeOrder(reader.metadata())) {
        sources_.push_back({input.path, input.batch_id, data_begin, input.file_rows, base, false});
      } else {
        STRATA_RETURN_IF_ERROR(WriteRuns(input, reader, data_begin, base));
      }
    }
    for (size_t k = 0; k < counts.size(); ++k) base.offsets[k] += counts[k];
  }
  STRATA_RETURN_IF_ERROR(Reduce());
  STRATA_RETURN_IF_ERROR(MergeInto(sources_, *writer));
  STRATA_ASSIGN_OR_RETURN(SignalMeta meta, writer->Finish());
  if (options_.stats != nullptr) options_.stats->rows_held_peak = held_.peak();
  return meta;
}

}  // namespace strata::storage::merge_internal
