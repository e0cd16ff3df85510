#include "api/mcp_trace_summary.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "api/mcp_output.h"
#include "api/trace_columns.h"
#include "otlp/json_writer.h"

namespace strata::api {
namespace {

constexpr size_t kMaxCriticalPath = 40;
constexpr size_t kMaxErrorSpans = 20;
constexpr size_t kMaxSlowestSpans = 10;
constexpr size_t kMaxExceptionsPerSpan = 3;

std::string_view StatusName(int32_t code) {
  switch (code) {
    case 1:
      return "ok";
    case 2:
      return "error";
    default:
      return "unset";
  }
}

struct SpanView {
  const otlp::TraceBatch& trace;
  std::vector<std::string_view> service;  // per span row

  explicit SpanView(const otlp::TraceBatch& t) : trace(t) {
    service.reserve(t.spans.size());
    for (size_t i = 0; i < t.spans.size(); ++i) {
      service.push_back(ResourceServiceName(t, t.scopes.resource[t.spans.scope[i]]));
    }
  }
  int64_t Start(size_t i) const {
    return static_cast<int64_t>(trace.spans.start_time_unix_nano[i]);
  }
  int64_t End(size_t i) const { return static_cast<int64_t>(trace.spans.end_time_unix_nano[i]); }
  int64_t Duration(size_t i) const { return std::max<int64_t>(0, End(i) - Start(i)); }

  // {"span_id","service","name","start","duration_ms","status"} plus extra.
  void WriteSpan(otlp::JsonWriter& w, size_t i, bool with_parent) const {
    const otlp::SpanColumns& s = trace.spans;
    w.Key("span_id");
    w.HexString(s.span_id[i].data(), s.span_id[i].size());
    if (with_parent) {
      w.Key("parent_span_id");
      if (s.has_parent_span_id[i]) {
        w.HexString(s.parent_span_id[i].data(), s.parent_span_id[i].size());
      } else {
        w.Null();
      }
    }
    w.Key("service");
    w.String(service[i]);
    w.Key("name");
    w.String(s.name[i]);
    w.Key("start");
    w.String(Rfc3339Utc(Start(i)));
    w.Key("duration_ms");
    w.Double(Milliseconds(Duration(i)));
    w.Key("status");
    w.String(StatusName(s.status_code[i]));
  }

  std::string SpanJson(size_t i, bool with_parent = false) const {
    std::string out;
    otlp::JsonWriter w(&out);
    w.BeginObject();
    WriteSpan(w, i, with_parent);
    w.EndObject();
    return out;
  }

  std::string StringAttribute(const otlp::AttributeColumns& attributes, otlp::Range range,
                              std::string_view key) const {
    for (uint32_t a = range.begin; a < range.end(); ++a) {
      if (attributes.key[a] == key && attributes.value.type[a] == otlp::ValueType::kString) {
        return std::string(attributes.value.str[a]);
      }
    }
    return "";
  }

  std::string ErrorJson(size_t i) const {
    const otlp::SpanColumns& s = trace.spans;
    std::string out;
    otlp::JsonWriter w(&out);
    w.BeginObject();
    WriteSpan(w, i, false);
    w.Key("message");
    w.String(s.status_message[i]);
    w.Key("exceptions");
    w.BeginArray();
    size_t written = 0;
    const otlp::Range events = s.events[i];
    for (uint32_t e = events.begin; e < events.end() && written < kMaxExceptionsPerSpan; ++e) {
      if (trace.events.name[e] != "exception") continue;
      const otlp::Range attributes = trace.events.attributes[e];
      w.BeginObject();
      w.Key("type");
      w.String(StringAttribute(trace.event_attributes, attributes, "exception.type"));
      w.Key("message");
      w.String(StringAttribute(trace.event_attributes, attributes, "exception.message"));
      std::string stack =
          StringAttribute(trace.event_attributes, attributes, "exception.stacktrace");
      if (stack.size() > 1000) stack = stack.substr(0, 1000) + " …(cut)";
      w.Key("stacktrace");
      w.String(stack);
      w.EndObject();
      ++written;
    }
    w.EndArray();
    w.EndObject();
    return out;
  }
};

}  // namespace

std::string TraceSummaryJson(const otlp::TraceBatch& trace, const TraceSummaryOptions& options) {
  const size_t budget = options.budget_bytes > 0 ? options.budget_bytes : kMcpOutputBudgetBytes;
  const SpanView view(trace);
  const otlp::SpanColumns& s = trace.spans;
  const size_t n = s.size();

  // Children by parent span id; a span whose parent is absent from the
  // trace is a root candidate.
  absl::flat_hash_map<std::string, size_t> row_of;
  for (size_t i = 0; i < n; ++i) {
    row_of.emplace(std::string(reinterpret_cast<const char*>(s.span_id[i].data()), 8), i);
  }
  std::vector<std::vector<size_t>> children(n);
  std::vector<size_t> roots;
  for (size_t i = 0; i < n; ++i) {
    auto parent =
        s.has_parent_span_id[i]
            ? row_of.find(std::string(reinterpret_cast<const char*>(s.parent_span_id[i].data()), 8))
            : row_of.end();
    if (parent == row_of.end() || parent->second == i) {
      roots.push_back(i);
    } else {
      children[parent->second].push_back(i);
    }
  }
  std::vector<size_t> by_start(n);
  std::iota(by_start.begin(), by_start.end(), 0);
  std::stable_sort(by_start.begin(), by_start.end(),
                   [&](size_t a, size_t b) { return view.Start(a) < view.Start(b); });
  size_t root = by_start.front();
  for (size_t r : roots) {
    if (!s.has_parent_span_id[r] &&
        (s.has_parent_span_id[root] || view.Start(r) < view.Start(root))) {
      root = r;
    }
  }
  int64_t trace_start = view.Start(by_start.front());
  int64_t trace_end = trace_start;
  int64_t errors = 0;
  std::map<std::string_view, int64_t> per_service;
  for (size_t i = 0; i < n; ++i) {
    trace_end = std::max(trace_end, view.End(i));
    if (s.status_code[i] == 2) ++errors;
    ++per_service[view.service[i]];
  }

  std::vector<std::string> path;
  for (size_t at = root; path.size() < kMaxCriticalPath;) {
    path.push_back(view.SpanJson(at));
    if (children[at].empty()) break;
    at = *std::max_element(children[at].begin(), children[at].end(),
                           [&](size_t a, size_t b) { return view.End(a) < view.End(b); });
  }
  std::vector<std::string> error_spans;
  for (size_t i : by_start) {
    if (s.status_code[i] == 2) error_spans.push_back(view.ErrorJson(i));
    if (error_spans.size() >= kMaxErrorSpans) break;
  }
  std::vector<size_t> slowest(n);
  std::iota(slowest.begin(), slowest.end(), 0);
  const size_t slow_count = std::min(n, kMaxSlowestSpans);
  std::partial_sort(slowest.begin(), slowest.begin() + static_cast<std::ptrdiff_t>(slow_count),
                    slowest.end(),
                    [&](size_t a, size_t b) { return view.Duration(a) > view.Duration(b); });
  std::vector<std::string> slow_spans;
  for (size_t k = 0; k < slow_count; ++k) slow_spans.push_back(view.SpanJson(slowest[k]));

  std::string out;
  otlp::JsonWriter w(&out);
  w.BeginObject();
  w.Key("trace_id");
  w.HexString(s.trace_id[0].data(), s.trace_id[0].size());
  w.Key("start");
  w.String(Rfc3339Utc(trace_start));
  w.Key("duration_ms");
  w.Double(Milliseconds(trace_end - trace_start));
  w.Key("span_count");
  w.Uint(n);
  w.Key("error_span_count");
  w.Int(errors);
  w.Key("root");
  AppendJsonValue(w, &out, view.SpanJson(root));
  w.Key("spans_by_service");
  w.BeginObject();
  for (const auto& [name, count] : per_service) {
    std::string key;
    otlp::JsonWriter::AppendEscaped(name, &key);
    w.Key(key);
    w.Int(count);
  }
  w.EndObject();
  std::vector<std::string> notes;
  bool truncated = false;
  // The lists share what is left of the budget: the critical path and the
  // errors first, then the slowest spans, then the page of spans.
  const size_t reserve = 600;
  auto remaining = [&] {
    return budget > out.size() + reserve ? budget - out.size() - reserve : 0;
  };
  size_t shown = 0;
  w.Key("critical_path");
  AppendJsonValue(w, &out, BoundedArray(path, remaining() / 3, &shown));
  if (shown < path.size()) truncated = true;
  if (shown < path.size())
    notes.push_back(absl::StrCat("critical_path: first ", shown, " of ", path.size(), " spans"));
  w.Key("error_spans");
  AppendJsonValue(w, &out, BoundedArray(error_spans, remaining() / 2, &shown));
  if (shown < error_spans.size() || errors > static_cast<int64_t>(shown)) {
    truncated = true;
    notes.push_back(absl::StrCat("error_spans: ", shown, " of ", errors,
                                 " shown; find the rest with run_sql on the spans view "
                                 "(status_code = 2) or include_spans"));
  }
  w.Key("slowest_spans");
  AppendJsonValue(
      w, &out,
      BoundedArray(slow_spans, options.include_spans ? remaining() / 3 : remaining(), &shown));
  if (options.include_spans) {
    std::vector<std::string> page;
    const size_t limit = std::clamp<size_t>(options.span_limit, 1, kMaxSummarySpanLimit);
    for (size_t k = options.span_offset; k < n && page.size() < limit; ++k) {
      page.push_back(view.SpanJson(by_start[k], /*with_parent=*/true));
    }
    w.Key("spans");
    AppendJsonValue(w, &out, BoundedArray(page, remaining(), &shown));
    w.Key("span_offset");
    w.Uint(options.span_offset);
    const size_t next = options.span_offset + shown;
    if (next < n) {
      truncated = true;
      notes.push_back(absl::StrCat("spans: ", shown,
                                   " shown from span_offset=", options.span_offset, " of ", n,
                                   "; call get_trace again with include_spans=true and "
                                   "span_offset=",
                                   next));
      w.Key("next_span_offset");
      w.Uint(next);
    }
  } else if (n > 0) {
    notes.push_back(absl::StrCat("the full span list (", n,
                                 " spans) is left out; call get_trace with include_spans=true "
                                 "(paged by span_offset and span_limit)"));
  }
  w.Key("truncated");
  w.Bool(truncated);
  w.Key("notes");
  w.BeginArray();
  for (const std::string& note : notes) w.String(note);
  w.EndArray();
  w.EndObject();
  return out;
}

}  // namespace strata::api
