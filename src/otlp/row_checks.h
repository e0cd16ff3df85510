#pragma once

// Row-level checks shared by the protobuf and JSON decoders: the rules that
// make a well-formed row semantically invalid (docs/otlp.md, "Rejected
// rows"), and the marks that let a decoder take back a row it has already
// appended, with every child row (attributes, events, links, nested values,
// exemplars, buckets) that came with it; and the rule that clears a log
// record's invalid ids while keeping the record ("Cleared log record ids").
//
// Both decoders call the same functions with what they read, so they agree
// on which rows they reject and on the message, which the differential tests
// check.
//
// Rolling back relies on decoding being append-only: everything a row adds
// to any table is added after its mark was taken and before the row is
// checked, so shrinking each table to its mark removes exactly that row's
// rows. Arena bytes the row used stay allocated until the batch is freed.
//
// Thread-safety: plain functions over a batch with a single owner.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "otlp/batch.h"

namespace strata::otlp::internal {

// What a decoder read of an id field: its length in bytes, 0 when absent or
// empty. The id itself is copied only when the length is the right one.
// `not_hex` is the JSON decoder's: the text was not an even number of hex
// digits (for log record ids, which are cleared rather than refused).
struct IdLength {
  uint32_t bytes = 0;
  bool not_hex = false;
};

// Table sizes before a span was decoded.
struct SpanMark {
  size_t span_attributes = 0;
  size_t events = 0;
  size_t event_attributes = 0;
  size_t links = 0;
  size_t link_attributes = 0;
  size_t nested_values = 0;
  size_t nested_attributes = 0;
};

SpanMark MarkSpan(const TraceBatch& b);

// The first problem with a link's ids, recorded by the decoder while it
// keeps going (the link is still appended; the span is rejected later).
struct LinkProblem {
  bool found = false;
  uint32_t link_index = 0;  // within the span
  std::string_view field;   // "trace_id" or "span_id"
  uint32_t bytes = 0;
};

// Checks a link's id lengths and records the first problem in `problem`.
void CheckLinkIds(uint32_t link_index, IdLength trace_id, IdLength span_id, LinkProblem* problem);

// Decides a decoded span. When its ids are valid, returns true and the
// decoder appends `row`. Otherwise rolls back everything the span appended
// since `mark`, records the rejection in b->rejected, and returns false.
bool AcceptSpan(TraceBatch* b, const SpanMark& mark, const SpanRow& row, IdLength trace_id,
                IdLength span_id, IdLength parent_span_id, const LinkProblem& link);

// Decides a decoded log record's ids, each on its own (logs.proto: a
// receiver treats an absent or invalid trace_id or span_id as "not
// associated with a trace"). An id of the right length and not all zero is
// kept (has_* set); an empty one is absent; any other is stored as absent
// (zeroed, has_* 0) and counted in b->cleared_ids. The record is always
// kept, so nothing is rejected.
void CheckLogIds(LogBatch* b, IdLength trace_id, IdLength span_id, LogRecordRow* row);

// Table sizes before a data point was decoded.
struct PointMark {
  size_t point_attributes = 0;
  size_t exemplars = 0;
  size_t exemplar_attributes = 0;
  size_t bucket_counts = 0;
  size_t explicit_bounds = 0;
  size_t quantiles = 0;
  size_t nested_values = 0;
  size_t nested_attributes = 0;
};

PointMark MarkPoint(const MetricBatch& b);

// Decides a decoded histogram point (its bucket_counts and explicit_bounds
// ranges set). Valid: returns true and the decoder appends it. Otherwise
// rolls back its child rows, records the rejection, and returns false. The
// message names the metric by its row (its position in the request).
bool AcceptHistogramPoint(MetricBatch* b, const PointMark& mark, const HistogramPointRow& row);

}  // namespace strata::otlp::internal
