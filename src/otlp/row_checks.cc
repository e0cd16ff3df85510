#include "otlp/row_checks.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/absl_view.h"

namespace strata::otlp::internal {
namespace {

// absl::StrCat takes Debian's absl::string_view, not std::string_view.

template <size_t N>
bool AllZero(const std::array<uint8_t, N>& id) {
  return std::all_of(id.begin(), id.end(), [](uint8_t byte) { return byte == 0; });
}

// What is wrong with a required id, or "" when nothing is.
template <size_t N>
std::string RequiredIdProblem(std::string_view field, IdLength length,
                              const std::array<uint8_t, N>& id) {
  if (length.bytes == 0) return absl::StrCat(Absl(field), " is missing");
  if (length.bytes != N)
    return absl::StrCat(Absl(field), " has ", length.bytes, " bytes, want ", N);
  if (AllZero(id)) return absl::StrCat(Absl(field), " is all zero");
  return {};
}

// Whether an optional id is kept; an invalid one is zeroed and counted.
template <size_t N>
uint8_t KeepOptionalId(IdLength length, std::array<uint8_t, N>* id, uint64_t* cleared) {
  if (length.bytes == N && !length.not_hex && !AllZero(*id)) return 1;
  if (length.bytes != 0 || length.not_hex) ++*cleared;
  *id = {};
  return 0;
}

void RollBackNested(BatchBase* b, size_t nested_values, size_t nested_attributes) {
  b->nested_values.Resize(nested_values);
  b->nested_attributes.Resize(nested_attributes);
}

}  // namespace

SpanMark MarkSpan(const TraceBatch& b) {
  return SpanMark{.span_attributes = b.span_attributes.size(),
                  .events = b.events.size(),
                  .event_attributes = b.event_attributes.size(),
                  .links = b.links.size(),
                  .link_attributes = b.link_attributes.size(),
                  .nested_values = b.nested_values.size(),
                  .nested_attributes = b.nested_attributes.size()};
}

void CheckLinkIds(uint32_t link_index, IdLength trace_id, IdLength span_id, LinkProblem* problem) {
  if (problem->found) return;
  if (trace_id.bytes != 16) {
    *problem = LinkProblem{true, link_index, "trace_id", trace_id.bytes};
  } else if (span_id.bytes != 8) {
    *problem = LinkProblem{true, link_index, "span_id", span_id.bytes};
  }
}

bool AcceptSpan(TraceBatch* b, const SpanMark& mark, const SpanRow& row, IdLength trace_id,
                IdLength span_id, IdLength parent_span_id, const LinkProblem& link) {
  RowRejectReason reason;
  std::string problem = RequiredIdProblem("trace_id", trace_id, row.trace_id);
  if (!problem.empty()) {
    reason = RowRejectReason::kTraceId;
  } else if (problem = RequiredIdProblem("span_id", span_id, row.span_id); !problem.empty()) {
    reason = RowRejectReason::kSpanId;
  } else if (parent_span_id.bytes != 0 && parent_span_id.bytes != 8) {
    reason = RowRejectReason::kParentSpanId;
    problem = absl::StrCat("parent_span_id has ", parent_span_id.bytes, " bytes, want 0 or 8");
  } else if (link.found) {
    reason = RowRejectReason::kLinkId;
    problem = link.bytes == 0
                  ? absl::StrCat("links[", link.link_index, "].", Absl(link.field), " is missing")
                  : absl::StrCat("links[", link.link_index, "].", Absl(link.field), " has ",
                                 link.bytes, " bytes, want ", link.field == "trace_id" ? 16 : 8);
  } else {
    return true;
  }
  const uint64_t index = b->spans.size() + b->rejected.rows;
  b->span_attributes.Resize(mark.span_attributes);
  b->events.Truncate(mark.events);
  b->event_attributes.Resize(mark.event_attributes);
  b->links.Truncate(mark.links);
  b->link_attributes.Resize(mark.link_attributes);
  RollBackNested(b, mark.nested_values, mark.nested_attributes);
  b->rejected.Add(reason, 1, [&] { return absl::StrCat("span ", index, ": ", problem); });
  return false;
}

void CheckLogIds(LogBatch* b, IdLength trace_id, IdLength span_id, LogRecordRow* row) {
  row->has_trace_id = KeepOptionalId(trace_id, &row->trace_id, &b->cleared_ids.trace_id);
  row->has_span_id = KeepOptionalId(span_id, &row->span_id, &b->cleared_ids.span_id);
}

PointMark MarkPoint(const MetricBatch& b) {
  return PointMark{.point_attributes = b.point_attributes.size(),
                   .exemplars = b.exemplars.size(),
                   .exemplar_attributes = b.exemplar_attributes.size(),
                   .bucket_counts = b.bucket_counts.size(),
                   .explicit_bounds = b.explicit_bounds.size(),
                   .quantiles = b.quantiles.size(),
                   .nested_values = b.nested_values.size(),
                   .nested_attributes = b.nested_attributes.size()};
}

bool AcceptHistogramPoint(MetricBatch* b, const PointMark& mark, const HistogramPointRow& row) {
  const uint32_t counts = row.bucket_counts.count;
  const uint32_t bounds = row.explicit_bounds.count;
  if (counts == 0 || counts == uint64_t{bounds} + 1) return true;
  b->point_attributes.Resize(mark.point_attributes);
  b->exemplars.Truncate(mark.exemplars);
  b->exemplar_attributes.Resize(mark.exemplar_attributes);
  b->bucket_counts.resize(mark.bucket_counts);
  b->explicit_bounds.resize(mark.explicit_bounds);
  b->quantiles.Truncate(mark.quantiles);
  RollBackNested(b, mark.nested_values, mark.nested_attributes);
  b->rejected.Add(RowRejectReason::kHistogramBuckets, 1, [&] {
    return absl::StrCat("metric ", row.metric, ": a histogram data point has ", counts,
                        " bucket_counts and ", bounds,
                        " explicit_bounds; want no bucket_counts or explicit_bounds + 1");
  });
  return false;
}

}  // namespace strata::otlp::internal
