#pragma once

// spans.parquet (docs/format/spans-parquet.md): the writer that turns the
// TraceBatches of one group commit into one Parquet file, the readers that
// turn a whole file, or a range of its span rows (trace lookup), back into
// a TraceBatch, and the footer check boot runs without reading pages.
//
// WriteSpansTable renumbers resources and scopes consecutively across its
// inputs, writes placeholder rows for resources and scopes without spans
// first, then every span sorted by (trace id bytewise, start time), ties in
// input order, and derives the promoted columns, the meta.json `spans`
// member and the trace runs spans.tidx is built from. It sorts an array of
// compact keys, never the batches, and shares each resource's and scope's
// list elements between its rows.
//
// ReadSpansTable checks the footer (schema, key-value metadata) and the
// rules listed under "Validation" in the format page, and rebuilds a batch
// whose string views point into buffers the batch retains. ReadSpansRows
// does the same for a range of span rows, reading only the pages that
// cover it, through the same code; it can check only what the range
// shows (the sort order inside it, not across the file).
//
// Errors: WriteSpansTable returns Internal for a batch that breaks batch.h's
// invariants it relies on (checked with otlp::ValidateBatch first) and the
// Parquet writer's errors. The readers return DataLoss naming the file and
// the check for anything wrong with the bytes, and the source's own error
// when reading fails.
//
// Thread-safety: reentrant; batches are only read.

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "otlp/batch.h"
#include "parquet/column_vector.h"
#include "parquet/file_reader.h"
#include "parquet/file_writer.h"
#include "storage/format/batch_meta.h"
#include "storage/table/attribute_family.h"
#include "storage/table/owner_numbering.h"
#include "storage/table/promotion.h"
#include "storage/table/resource_scope_columns.h"
#include "storage/table/table_file.h"
#include "storage/table/trace_run.h"

namespace strata::storage {

// strata.schema of spans.parquet.
inline constexpr char kSpansSchema[] = "spans";

// Column positions in spans.parquet (the order of spans-parquet.md).
enum SpansColumn : int {
  kSpansRowKind = 0,
  kSpansResourceScope = 1,  // kResourceScopeColumns columns
  kSpansTraceId = kSpansResourceScope + kResourceScopeColumns,
  kSpansSpanId,
  kSpansParentSpanId,
  kSpansTraceState,
  kSpansFlags,
  kSpansName,
  kSpansKind,
  kSpansStartTime,
  kSpansDuration,
  kSpansAttributes,  // family
  kSpansDroppedAttributes = kSpansAttributes + kAttributeFamilyColumns,
  kSpansEventTime,
  kSpansEventName,
  kSpansEventDroppedAttributes,
  kSpansEventAttributeCount,
  kSpansEventAttributes,  // family
  kSpansDroppedEvents = kSpansEventAttributes + kAttributeFamilyColumns,
  kSpansLinkTraceId,
  kSpansLinkSpanId,
  kSpansLinkTraceState,
  kSpansLinkFlags,
  kSpansLinkDroppedAttributes,
  kSpansLinkAttributeCount,
  kSpansLinkAttributes,  // family
  kSpansDroppedLinks = kSpansLinkAttributes + kAttributeFamilyColumns,
  kSpansStatusCode,
  kSpansStatusMessage,
  kSpansPromoted,  // kResourcePromotedColumns, then the span promoted columns
  kSpansColumnCount = kSpansPromoted + kResourcePromotedColumns + 11,
};

// The schema of spans.parquet, in file order.
const std::vector<parquet::ColumnSpec>& SpansTableColumns();

// A written spans.parquet and what the batch's other files need from it.
struct SpansTable {
  std::string file;  // the Parquet file's bytes
  SignalMeta meta;   // meta.json `signals.spans`
  // One per distinct trace id, in file order (ids strictly increasing).
  std::vector<TraceRun> trace_runs;
  // Row of the first span (the number of placeholder rows).
  uint32_t first_span_row = 0;
};

namespace spans_internal {
// A span's place in the sort: trace id (as two big-endian words, so integer
// order is bytewise order), start time, then input position.
struct SortKey {
  uint64_t trace_hi;
  uint64_t trace_lo;
  uint64_t start;
  uint32_t batch;
  uint32_t row;

  bool operator<(const SortKey& o) const {
    if (trace_hi != o.trace_hi) return trace_hi < o.trace_hi;
    if (trace_lo != o.trace_lo) return trace_lo < o.trace_lo;
    if (start != o.start) return start < o.start;
    if (batch != o.batch) return batch < o.batch;
    return row < o.row;
  }
};
}  // namespace spans_internal

// Streams one spans.parquet to a sink: Append any number of times, then
// Finish. WriteSpansTable is Open + one Append + Finish; compaction's merge
// appends one trace-id range at a time. Single owner.
class SpansTableWriter : public TableFileWriter {
 public:
  // Writes the leading magic to `sink`, which must outlive the writer.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SpansTableWriter>> Open(
      std::string_view batch_id, const TableOptions& options, parquet::ByteSink* sink);
  ~SpansTableWriter();

  // Appends the placeholder rows of `batches` (resources and scopes that no
  // other row of the file names), then their spans sorted by (trace id,
  // start time), ties in input order. Resources and scopes are numbered by
  // content across the file's calls (OwnerNumbering): equal ones share an
  // index. The batches must pass otlp::ValidateBatch (not checked here)
  // and need to live only until Append returns. Internal for placeholder
  // rows after span rows, or a first span that sorts before the last one
  // written (an equal trace id continues its run); InvalidArgument past
  // the file's row, resource or scope limits; the sink's errors.
  [[nodiscard]] absl::Status Append(std::span<const otlp::TraceBatch* const> batches);

  // Writes the footer and returns what the file holds (`file` stays empty:
  // the bytes went to the sink). Internal when no row was appended.
  [[nodiscard]] absl::StatusOr<SpansTable> Finish();

 private:
  explicit SpansTableWriter(std::unique_ptr<parquet::FileWriter> file);
  void Summarize(std::span<const otlp::TraceBatch* const> batches,
                 const std::vector<spans_internal::SortKey>& keys, uint32_t first_span_row);

  struct Placeholder {
    uint32_t batch;
    uint32_t resource;
    std::optional<uint32_t> scope;  // nullopt: a resource without scopes
  };
  // The placeholder rows `batches` need, in batch order (resources without
  // scopes, then scopes without spans): one per file resource or scope
  // index that no span row or earlier placeholder of the file names.
  std::vector<Placeholder> Placeholders(std::span<const otlp::TraceBatch* const> batches,
                                        const std::vector<OwnerNumbering::Assigned>& owners);

  SpansTable table_;  // trace_runs and first_span_row; meta() holds the rest
  OwnerNumbering numbering_;
  // Per file resource / scope index: whether a row of the file names it.
  std::vector<bool> resource_named_;
  std::vector<bool> scope_named_;
  uint64_t min_time_ = std::numeric_limits<uint64_t>::max();
  uint64_t max_time_ = 0;
  spans_internal::SortKey last_{};
  bool has_last_ = false;
};

// Writes the spans of `batches` (in this order) into one file for batch
// `batch_id`. Batches with no resources contribute nothing; when there is no
// row at all the result has file_rows 0 and an empty `file` (the signal's
// files are then absent, meta-json.md).
[[nodiscard]] absl::StatusOr<SpansTable> WriteSpansTable(
    std::span<const otlp::TraceBatch* const> batches, std::string_view batch_id,
    const TableOptions& options = {});

// Reads a whole spans.parquet back into one batch (views point into buffers
// the batch retains). `file_name` names the file in errors.
[[nodiscard]] absl::StatusOr<otlp::TraceBatch> ReadSpansTable(parquet::RandomAccessSource* source,
                                                              std::string_view batch_id,
                                                              std::string_view file_name);

// Reads span rows [row_begin, row_end) (file row numbers; every one must be
// a span row, row_kind 0) and appends them to *batch, with a resource and a
// scope row for each resource and scope they name (appended after the
// batch's existing rows, with the attributes stored on the rows read). The
// batch retains the buffers its new views point into. DataLoss when the
// range is empty, passes the file's rows or holds a placeholder row. On
// error *batch may hold part of the rows; discard it. Row numbers in
// messages are file rows, except in resource and scope checks, where they
// count from row_begin.
[[nodiscard]] absl::Status ReadSpansRows(parquet::RandomAccessSource* source,
                                         std::string_view batch_id, std::string_view file_name,
                                         uint64_t row_begin, uint64_t row_end,
                                         otlp::TraceBatch* batch);
// The same into a new batch.
[[nodiscard]] absl::StatusOr<otlp::TraceBatch> ReadSpansRows(parquet::RandomAccessSource* source,
                                                             std::string_view batch_id,
                                                             std::string_view file_name,
                                                             uint64_t row_begin, uint64_t row_end);

// The layout of a spans.parquet (its footer, checked as SpansRangeReader::
// Open checks it, and every chunk's OffsetIndex), for SpansRangeReader::
// Open to reuse: trace lookups keep one per batch (trace_lookup.h).
// DataLoss naming the file for anything wrong with its bytes.
[[nodiscard]] absl::StatusOr<std::shared_ptr<const parquet::FileLayout>> ReadSpansLayout(
    parquet::RandomAccessSource* source, std::string_view batch_id, std::string_view file_name);

// A spans.parquet opened once for reading many row ranges (compaction's
// merge): ReadSpans is ReadSpansRows without parsing the footer again.
// Range reads skip the promoted columns (spans-parquet.md: they are derived
// and ignored on read-back). A range of more than 4,096 span rows reads the
// resource and scope columns other than the two indexes only up to the
// last row that first names one of its resources or scopes: the rows
// after it repeat those (a big trace's spans name a few resources many
// times), so they are neither decoded nor checked there.
class SpansRangeReader {
 public:
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SpansRangeReader>> Open(
      parquet::RandomAccessSource* source, std::string_view batch_id, std::string_view file_name);
  // Opens the file `layout` was read from (ReadSpansLayout) without reading
  // its footer; DataLoss if its size differs from the layout's. Dictionary
  // pages come from `dictionary_cache` (optional; a cache of this file only,
  // outliving the reader) when it holds them, and are offered to it.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SpansRangeReader>> Open(
      parquet::RandomAccessSource* source, std::shared_ptr<const parquet::FileLayout> layout,
      std::string_view file_name, const parquet::DictionaryPageCache* dictionary_cache = nullptr);
  ~SpansRangeReader();
  SpansRangeReader(const SpansRangeReader&) = delete;
  SpansRangeReader& operator=(const SpansRangeReader&) = delete;

  uint64_t file_rows() const;
  // Range reads then also decode the promoted columns' pages (values
  // unused), so every page of the file is decoded (verify --deep).
  void ReadEveryColumn() { every_column_ = true; }
  // Range reads then leave out each span's attributes, events and links:
  // their columns are not read, and the spans come back with empty ranges
  // (dropped counts kept). For answers that show only what every span has
  // (the REST API's compact trace form). ReadEveryColumn overrides it.
  void SkipSpanDetails() { skip_details_ = true; }
  // As ReadSpansRows. With `owners`, also the file's index of each resource
  // and scope appended (verify checks them across ranges).
  [[nodiscard]] absl::Status ReadSpans(uint64_t row_begin, uint64_t row_end,
                                       otlp::TraceBatch* batch, FileOwnerIndexes* owners = nullptr);
  // Rows [0, row_end), which must all be placeholder rows: appends their
  // resources and scopes (without spans). DataLoss otherwise.
  [[nodiscard]] absl::Status ReadPlaceholders(uint64_t row_end, otlp::TraceBatch* batch,
                                              FileOwnerIndexes* owners = nullptr);

 private:
  SpansRangeReader(std::unique_ptr<parquet::FileReader> reader, std::string_view file_name);
  absl::Status ReadRange(uint64_t row_begin, uint64_t row_end, bool placeholders,
                         otlp::TraceBatch* batch, FileOwnerIndexes* owners);

  std::unique_ptr<parquet::FileReader> reader_;
  std::string file_name_;
  bool every_column_ = false;
  bool skip_details_ = false;
};

// Boot's check: the footer parses, the schema and key-value metadata are
// spans.parquet's for `batch_id`, and num_rows equals `file_rows`.
[[nodiscard]] absl::Status CheckSpansTableFooter(parquet::RandomAccessSource* source,
                                                 std::string_view batch_id, uint64_t file_rows,
                                                 std::string_view file_name);

}  // namespace strata::storage
