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
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "otlp/batch.h"
#include "parquet/column_vector.h"
#include "parquet/file_reader.h"
#include "storage/batch_meta.h"
#include "storage/table_common.h"
#include "storage/trace_run.h"

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

// Boot's check: the footer parses, the schema and key-value metadata are
// spans.parquet's for `batch_id`, and num_rows equals `file_rows`.
[[nodiscard]] absl::Status CheckSpansTableFooter(parquet::RandomAccessSource* source,
                                                 std::string_view batch_id, uint64_t file_rows,
                                                 std::string_view file_name);

}  // namespace strata::storage
