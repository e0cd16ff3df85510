// MergeSpansTables (table_merge.h): a k-way merge of spans.parquet files by
// (trace id, start time), one trace-id range at a time.
//
// Each input is sorted by trace id and its spans.tidx lists its traces in
// that order with their rows. A round gives each of the k active inputs a
// share R = chunk_rows / k of rows: for every input, the cut candidate is
// the trace id of its first trace that starts R or more rows past its
// cursor (none when the rest of the input is shorter). The round's bound B
// is the smallest candidate; every input then contributes its traces with
// ids below B (one row range, read with the page index), and the writer
// sorts the round's spans. Every id of a later round is at least B, so the
// output is in order, and no trace is ever split between rounds. The input
// that set B contributes at least one trace, so rounds always progress. A
// round holds at most about chunk_rows plus k times the longest trace.

#include <algorithm>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "common/status_macros.h"
#include "fmt/format.h"
#include "storage/index/trace_index.h"
#include "storage/maintenance/table_merge.h"
#include "storage/table/file_source.h"
#include "storage/table/spans_table.h"

namespace strata::storage {
namespace {

// Index entries read from one spans.tidx at a time.
constexpr uint64_t kEntryBlock = 4096;

// One input being merged: its reader and a window of its index entries
// from the cursor on.
struct SpansInput {
  const MergeInput* input = nullptr;
  std::unique_ptr<parquet::RandomAccessSource> source;
  std::unique_ptr<SpansRangeReader> reader;
  std::unique_ptr<RandomAccessFile> tidx;
  std::optional<TraceFilter> filter;
  uint64_t placeholder_rows = 0;
  // Entries [next, next + ahead.size()) of the index, with their end rows.
  uint64_t next = 0;
  uint64_t loaded = 0;  // entries read so far
  std::deque<TraceIndexEntry> ahead;
  std::deque<uint64_t> ahead_ends;

  uint64_t trace_count() const { return filter.has_value() ? filter->trace_count() : 0; }
  bool done() const { return next >= trace_count(); }
};

absl::Status OpenInput(FileSystem& fs, const MergeInput& input, SpansInput* out) {
  out->input = &input;
  STRATA_ASSIGN_OR_RETURN(out->source, OpenFileSource(fs, input.path));
  STRATA_ASSIGN_OR_RETURN(out->reader,
                          SpansRangeReader::Open(out->source.get(), input.batch_id, input.path));
  if (out->reader->file_rows() != input.file_rows) {
    return absl::DataLossError(fmt::format("{}: holds {} rows, meta.json says {}", input.path,
                                           out->reader->file_rows(), input.file_rows));
  }
  uint64_t span_rows = 0;
  if (!input.tidx_path.empty()) {
    STRATA_ASSIGN_OR_RETURN(out->tidx, fs.NewRandomAccessFile(input.tidx_path));
    STRATA_ASSIGN_OR_RETURN(TraceFilter filter, TraceFilter::Open(*out->tidx));
    out->filter.emplace(std::move(filter));
    span_rows = out->filter->span_rows();
    if (out->filter->first_covered_row() + span_rows != input.file_rows) {
      return absl::DataLossError(fmt::format("{}: covers rows [{}, {}), {} has {} rows",
                                             input.tidx_path, out->filter->first_covered_row(),
                                             out->filter->first_covered_row() + span_rows,
                                             input.path, input.file_rows));
    }
  }
  out->placeholder_rows = input.file_rows - span_rows;
  return absl::OkStatus();
}

// Reads entries until the window reaches past `row` or the index ends.
absl::Status LoadUntilRow(SpansInput& in, uint64_t row) {
  while (in.loaded < in.trace_count() && (in.ahead.empty() || in.ahead.back().first_row < row)) {
    const uint64_t count = std::min(kEntryBlock, in.trace_count() - in.loaded);
    std::vector<TraceIndexEntry> entries;
    std::vector<uint64_t> ends;
    STRATA_RETURN_IF_ERROR(in.filter->ReadEntries(*in.tidx, in.loaded, count, &entries, &ends));
    if (!in.ahead.empty() &&
        std::memcmp(in.ahead.back().trace_id.data(), entries.front().trace_id.data(), 16) >= 0) {
      return absl::DataLossError(
          fmt::format("{}: entry {} is out of order", in.input->tidx_path, in.loaded));
    }
    in.ahead.insert(in.ahead.end(), entries.begin(), entries.end());
    in.ahead_ends.insert(in.ahead_ends.end(), ends.begin(), ends.end());
    in.loaded += count;
  }
  return absl::OkStatus();
}

// The trace id of the input's first trace that starts `share` or more rows
// past its cursor, or nullopt when there is none.
absl::StatusOr<std::optional<otlp::TraceId>> Candidate(SpansInput& in, uint64_t share) {
  STRATA_RETURN_IF_ERROR(LoadUntilRow(in, in.ahead.front().first_row + share));
  const uint64_t target = in.ahead.front().first_row + share;
  for (size_t j = 1; j < in.ahead.size(); ++j) {
    if (in.ahead[j].first_row >= target) return std::optional<otlp::TraceId>(in.ahead[j].trace_id);
  }
  return std::optional<otlp::TraceId>();
}

bool Below(const otlp::TraceId& id, const std::optional<otlp::TraceId>& bound) {
  return !bound.has_value() || std::memcmp(id.data(), bound->data(), id.size()) < 0;
}

// Reads the input's traces with ids below `bound` into *batch and moves
// its cursor past them. Returns the rows read.
absl::StatusOr<uint64_t> TakeBelow(SpansInput& in, const std::optional<otlp::TraceId>& bound,
                                   otlp::TraceBatch* batch) {
  size_t count = 0;
  while (count < in.ahead.size() && Below(in.ahead[count].trace_id, bound)) ++count;
  if (count == 0) return 0;
  const uint64_t begin = in.ahead.front().first_row;
  const uint64_t end = in.ahead_ends[count - 1];
  STRATA_RETURN_IF_ERROR(in.reader->ReadSpans(begin, end, batch));
  // Every row must carry a trace the index put in the range: a mismatch
  // means index and data disagree, and merging would misplace rows.
  const otlp::SpanColumns& spans = batch->spans;
  for (size_t i = spans.size() - (end - begin); i < spans.size(); ++i) {
    if (!Below(spans.trace_id[i], bound) ||
        std::memcmp(spans.trace_id[i].data(), in.ahead.front().trace_id.data(), 16) < 0) {
      return absl::DataLossError(
          fmt::format("{}: row {} holds a trace id outside the range {} says", in.input->path,
                      begin + (i - (spans.size() - (end - begin))), in.input->tidx_path));
    }
  }
  in.ahead.erase(in.ahead.begin(), in.ahead.begin() + static_cast<std::ptrdiff_t>(count));
  in.ahead_ends.erase(in.ahead_ends.begin(),
                      in.ahead_ends.begin() + static_cast<std::ptrdiff_t>(count));
  in.next += count;
  return end - begin;
}

}  // namespace

absl::StatusOr<MergedSpans> MergeSpansTables(FileSystem& fs, std::span<const MergeInput> inputs,
                                             std::string_view output_batch_id,
                                             const MergeOptions& options, parquet::ByteSink* out) {
  if (inputs.empty()) return absl::InternalError("merge spans: no inputs");
  std::vector<SpansInput> in(inputs.size());
  uint64_t span_rows = 0, placeholder_rows = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].file_rows == 0) {
      return absl::InternalError(fmt::format("merge spans: {} has no rows", inputs[i].path));
    }
    STRATA_RETURN_IF_ERROR(OpenInput(fs, inputs[i], &in[i]));
    placeholder_rows += in[i].placeholder_rows;
    span_rows += inputs[i].file_rows - in[i].placeholder_rows;
  }
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<SpansTableWriter> writer,
                          SpansTableWriter::Open(output_batch_id, options.tables, out));

  // Placeholder rows first, as the format requires.
  {
    std::vector<otlp::TraceBatch> placeholders;
    placeholders.reserve(in.size());
    for (SpansInput& input : in) {
      if (input.placeholder_rows == 0) continue;
      placeholders.emplace_back();
      STRATA_RETURN_IF_ERROR(
          input.reader->ReadPlaceholders(input.placeholder_rows, &placeholders.back()));
    }
    std::vector<const otlp::TraceBatch*> pointers;
    for (const otlp::TraceBatch& b : placeholders) pointers.push_back(&b);
    STRATA_RETURN_IF_ERROR(writer->Append(pointers));
  }

  const uint64_t chunk_rows = std::max<uint64_t>(options.chunk_rows, 1);
  uint64_t rounds = 0, max_round_rows = 0;
  while (true) {
    if (options.check_stop) STRATA_RETURN_IF_ERROR(options.check_stop());
    std::vector<SpansInput*> active;
    for (SpansInput& input : in) {
      if (input.done()) continue;
      STRATA_RETURN_IF_ERROR(LoadUntilRow(input, 0));  // at least the cursor's entry
      active.push_back(&input);
    }
    if (active.empty()) break;
    const uint64_t share = std::max<uint64_t>(chunk_rows / active.size(), 1);
    std::optional<otlp::TraceId> bound;
    for (SpansInput* input : active) {
      STRATA_ASSIGN_OR_RETURN(std::optional<otlp::TraceId> candidate, Candidate(*input, share));
      if (candidate.has_value() && Below(*candidate, bound)) bound = candidate;
    }
    std::vector<otlp::TraceBatch> round(active.size());
    std::vector<const otlp::TraceBatch*> pointers;
    uint64_t round_rows = 0;
    for (size_t i = 0; i < active.size(); ++i) {
      STRATA_ASSIGN_OR_RETURN(uint64_t rows, TakeBelow(*active[i], bound, &round[i]));
      if (rows > 0) pointers.push_back(&round[i]);
      round_rows += rows;
    }
    STRATA_RETURN_IF_ERROR(writer->Append(pointers));
    ++rounds;
    max_round_rows = std::max(max_round_rows, round_rows);
  }

  STRATA_ASSIGN_OR_RETURN(SpansTable table, writer->Finish());
  // Every span row is written once; placeholder rows of equal owners from
  // several inputs become one (or none, when a span row names the owner).
  if (table.meta.rows != span_rows || table.meta.file_rows - table.meta.rows > placeholder_rows) {
    return absl::InternalError(fmt::format(
        "merge spans: wrote {} span rows and {} placeholder rows, the inputs hold {} and {}",
        table.meta.rows, table.meta.file_rows - table.meta.rows, span_rows, placeholder_rows));
  }
  MergedSpans merged;
  if (table.meta.rows > 0) {
    STRATA_ASSIGN_OR_RETURN(merged.trace_index, BuildTraceIndex(table.trace_runs, table.meta.rows,
                                                                table.first_span_row));
  }
  merged.meta = std::move(table.meta);
  merged.rounds = rounds;
  merged.max_round_rows = max_round_rows;
  return merged;
}

}  // namespace strata::storage
