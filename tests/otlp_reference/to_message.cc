#include "otlp_reference/to_message.h"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "otlp_reference/batch_converter.h"

namespace strata::otlp_reference {
namespace {

namespace trace = opentelemetry::proto::trace::v1;
namespace logs = opentelemetry::proto::logs::v1;

using absl::Status;
using internal::BaseConverter;
using internal::CheckAttributeColumns;
using internal::CheckRange;
using internal::CheckSizes;
using internal::CheckValueColumns;
using internal::IdBytes;
using internal::OptionalId;
using internal::Unsupported;
using otlp::Range;

// ---------------------------------------------------------------- traces

Status CheckTraceColumns(const otlp::TraceBatch& b) {
  const otlp::SpanColumns& s = b.spans;
  Status st =
      CheckSizes("spans", s.size(),
                 {s.scope.size(), s.trace_id.size(), s.span_id.size(), s.trace_state.size(),
                  s.parent_span_id.size(), s.has_parent_span_id.size(), s.flags.size(),
                  s.kind.size(), s.start_time_unix_nano.size(), s.end_time_unix_nano.size(),
                  s.attributes.size(), s.dropped_attributes_count.size(), s.events.size(),
                  s.dropped_events_count.size(), s.links.size(), s.dropped_links_count.size(),
                  s.status_message.size(), s.status_code.size()});
  if (!st.ok()) return st;
  const otlp::EventColumns& e = b.events;
  st =
      CheckSizes("events", e.size(),
                 {e.time_unix_nano.size(), e.attributes.size(), e.dropped_attributes_count.size()});
  if (!st.ok()) return st;
  const otlp::LinkColumns& l = b.links;
  st = CheckSizes("links", l.size(),
                  {l.span_id.size(), l.trace_state.size(), l.attributes.size(),
                   l.dropped_attributes_count.size(), l.flags.size()});
  if (!st.ok()) return st;
  for (const auto& [name, table] : {std::pair{"span_attributes", &b.span_attributes},
                                    std::pair{"event_attributes", &b.event_attributes},
                                    std::pair{"link_attributes", &b.link_attributes}}) {
    st = CheckAttributeColumns(name, *table);
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

Status ConvertEvents(const BaseConverter& c, const otlp::TraceBatch& b, size_t span,
                     trace::Span* out) {
  Range range = b.spans.events[span];
  Status s = CheckRange(range, b.events.size(), "spans.events", span);
  for (uint32_t i = range.begin; s.ok() && i < range.end(); ++i) {
    trace::Span::Event* event = out->add_events();
    event->set_time_unix_nano(b.events.time_unix_nano[i]);
    event->set_name(std::string(b.events.name[i]));
    s = c.Attributes(b.event_attributes, b.events.attributes[i], "events.attributes", i,
                     event->mutable_attributes());
    event->set_dropped_attributes_count(b.events.dropped_attributes_count[i]);
  }
  return s;
}

Status ConvertLinks(const BaseConverter& c, const otlp::TraceBatch& b, size_t span,
                    trace::Span* out) {
  Range range = b.spans.links[span];
  Status s = CheckRange(range, b.links.size(), "spans.links", span);
  for (uint32_t i = range.begin; s.ok() && i < range.end(); ++i) {
    if (b.links.flags[i] != 0) return Unsupported("links.flags", i);
    trace::Span::Link* link = out->add_links();
    link->set_trace_id(IdBytes(b.links.trace_id[i]));
    link->set_span_id(IdBytes(b.links.span_id[i]));
    link->set_trace_state(std::string(b.links.trace_state[i]));
    s = c.Attributes(b.link_attributes, b.links.attributes[i], "links.attributes", i,
                     link->mutable_attributes());
    link->set_dropped_attributes_count(b.links.dropped_attributes_count[i]);
  }
  return s;
}

Status ConvertSpan(const BaseConverter& c, const otlp::TraceBatch& b, size_t i, trace::Span* out) {
  const otlp::SpanColumns& s = b.spans;
  if (s.flags[i] != 0) return Unsupported("spans.flags", i);
  out->set_trace_id(IdBytes(s.trace_id[i]));
  out->set_span_id(IdBytes(s.span_id[i]));
  out->set_trace_state(std::string(s.trace_state[i]));
  Status st = OptionalId(s.parent_span_id[i], s.has_parent_span_id[i], "spans.parent_span_id", i,
                         out->mutable_parent_span_id());
  if (!st.ok()) return st;
  out->set_name(std::string(s.name[i]));
  out->set_kind(static_cast<trace::Span::SpanKind>(s.kind[i]));
  out->set_start_time_unix_nano(s.start_time_unix_nano[i]);
  out->set_end_time_unix_nano(s.end_time_unix_nano[i]);
  st = c.Attributes(b.span_attributes, s.attributes[i], "spans.attributes", i,
                    out->mutable_attributes());
  if (!st.ok()) return st;
  out->set_dropped_attributes_count(s.dropped_attributes_count[i]);
  st = ConvertEvents(c, b, i, out);
  if (!st.ok()) return st;
  out->set_dropped_events_count(s.dropped_events_count[i]);
  st = ConvertLinks(c, b, i, out);
  if (!st.ok()) return st;
  out->set_dropped_links_count(s.dropped_links_count[i]);
  out->mutable_status()->set_message(std::string(s.status_message[i]));
  out->mutable_status()->set_code(static_cast<trace::Status::StatusCode>(s.status_code[i]));
  return absl::OkStatus();
}

// ------------------------------------------------------------------ logs

Status CheckLogColumns(const otlp::LogBatch& b) {
  const otlp::LogRecordColumns& l = b.logs;
  Status s = CheckSizes(
      "logs", l.size(),
      {l.scope.size(), l.observed_time_unix_nano.size(), l.severity_number.size(),
       l.severity_text.size(), l.body.size(), l.attributes.size(),
       l.dropped_attributes_count.size(), l.flags.size(), l.trace_id.size(), l.has_trace_id.size(),
       l.span_id.size(), l.has_span_id.size(), l.event_name.size()});
  if (!s.ok()) return s;
  s = CheckValueColumns("logs.body", l.body, l.size());
  if (!s.ok()) return s;
  return CheckAttributeColumns("log_attributes", b.log_attributes);
}

Status ConvertLogRecord(const BaseConverter& c, const otlp::LogBatch& b, size_t i,
                        logs::LogRecord* out) {
  const otlp::LogRecordColumns& l = b.logs;
  if (!l.event_name[i].empty()) return Unsupported("logs.event_name", i);
  out->set_time_unix_nano(l.time_unix_nano[i]);
  out->set_observed_time_unix_nano(l.observed_time_unix_nano[i]);
  out->set_severity_number(static_cast<logs::SeverityNumber>(l.severity_number[i]));
  out->set_severity_text(std::string(l.severity_text[i]));
  Status s = c.Value(l.body, i, out->mutable_body(), 0);
  if (!s.ok()) return s;
  s = c.Attributes(b.log_attributes, l.attributes[i], "logs.attributes", i,
                   out->mutable_attributes());
  if (!s.ok()) return s;
  out->set_dropped_attributes_count(l.dropped_attributes_count[i]);
  out->set_flags(l.flags[i]);
  s = OptionalId(l.trace_id[i], l.has_trace_id[i], "logs.trace_id", i, out->mutable_trace_id());
  if (!s.ok()) return s;
  return OptionalId(l.span_id[i], l.has_span_id[i], "logs.span_id", i, out->mutable_span_id());
}

}  // namespace

absl::StatusOr<TraceRequest> ToTraceRequest(const otlp::TraceBatch& batch) {
  BaseConverter c(batch);
  Status s = c.Check();
  if (s.ok()) s = CheckTraceColumns(batch);
  if (!s.ok()) return s;
  absl::StatusOr<std::vector<std::vector<uint32_t>>> rows =
      c.RowsByScope(batch.spans.scope, "spans");
  if (!rows.ok()) return rows.status();
  std::vector<std::vector<uint32_t>> scopes = c.ScopesByResource();
  TraceRequest request;
  for (size_t r = 0; r < scopes.size(); ++r) {
    trace::ResourceSpans* rs = request.add_resource_spans();
    s = c.Resource(r, rs->mutable_resource(), rs->mutable_schema_url());
    for (size_t k = 0; s.ok() && k < scopes[r].size(); ++k) {
      uint32_t scope = scopes[r][k];
      trace::ScopeSpans* ss = rs->add_scope_spans();
      s = c.Scope(scope, ss->mutable_scope(), ss->mutable_schema_url());
      for (size_t j = 0; s.ok() && j < (*rows)[scope].size(); ++j) {
        s = ConvertSpan(c, batch, (*rows)[scope][j], ss->add_spans());
      }
    }
    if (!s.ok()) return s;
  }
  return request;
}

absl::StatusOr<LogsRequest> ToLogsRequest(const otlp::LogBatch& batch) {
  BaseConverter c(batch);
  Status s = c.Check();
  if (s.ok()) s = CheckLogColumns(batch);
  if (!s.ok()) return s;
  absl::StatusOr<std::vector<std::vector<uint32_t>>> rows = c.RowsByScope(batch.logs.scope, "logs");
  if (!rows.ok()) return rows.status();
  std::vector<std::vector<uint32_t>> scopes = c.ScopesByResource();
  LogsRequest request;
  for (size_t r = 0; r < scopes.size(); ++r) {
    logs::ResourceLogs* rl = request.add_resource_logs();
    s = c.Resource(r, rl->mutable_resource(), rl->mutable_schema_url());
    for (size_t k = 0; s.ok() && k < scopes[r].size(); ++k) {
      uint32_t scope = scopes[r][k];
      logs::ScopeLogs* sl = rl->add_scope_logs();
      s = c.Scope(scope, sl->mutable_scope(), sl->mutable_schema_url());
      for (size_t j = 0; s.ok() && j < (*rows)[scope].size(); ++j) {
        s = ConvertLogRecord(c, batch, (*rows)[scope][j], sl->add_log_records());
      }
    }
    if (!s.ok()) return s;
  }
  return request;
}

}  // namespace strata::otlp_reference
