// The MCP tools (docs/mcp.md, "Tools"): each parses its arguments with the
// REST endpoints' parameter parsers (mcp_endpoint.cc hands them over as
// query parameters), calls the same search and rollup code as those
// endpoints, and writes a compact JSON answer held to kMcpOutputBudgetBytes:
// times RFC 3339 UTC, durations in ms, and "truncated" plus "notes" saying
// what was left out and how to ask for more.

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "api/api_server.h"
#include "api/json_output.h"
#include "api/log_filter.h"
#include "api/mcp_output.h"
#include "api/mcp_trace_summary.h"
#include "api/search.h"
#include "api/service_health_json.h"
#include "api/service_map.h"
#include "api/traceql_search.h"
#include "common/status_macros.h"
#include "otlp/json_writer.h"
#include "simdjson.h"
#include "storage/storage.h"
#include "storage/trace_lookup.h"

namespace strata::api {
namespace {

absl::Status TakeString(QueryParams& params, std::string_view name,
                        std::optional<std::string>* out) {
  STRATA_ASSIGN_OR_RETURN(*out, params.Take(name));
  return absl::OkStatus();
}

// The window of a tool: TakeWindow's (default: the last hour).
void WriteWindow(otlp::JsonWriter& w, const TimeWindow& window) {
  w.Key("window");
  w.BeginObject();
  w.Key("start");
  w.String(Rfc3339Utc(window.start));
  w.Key("end");
  w.String(Rfc3339Utc(window.end));
  w.EndObject();
}

void WriteOptionalMs(otlp::JsonWriter& w, std::string_view key, std::optional<int64_t> ns) {
  w.Key(key);
  if (ns.has_value()) {
    w.Double(Milliseconds(*ns));
  } else {
    w.Null();
  }
}

// {"count","errors","error_rate","rate_per_s","mean_ms","p50_ms","p95_ms","p99_ms","max_ms"}
void WriteRed(otlp::JsonWriter& w, const Red& red, double seconds) {
  w.BeginObject();
  w.Key("count");
  w.Int(red.count());
  w.Key("errors");
  w.Int(red.errors());
  w.Key("error_rate");
  w.Double(red.count() > 0 ? static_cast<double>(red.errors()) / red.count() : 0.0);
  w.Key("rate_per_s");
  w.Double(seconds > 0 ? std::round(red.count() / seconds * 1000) / 1000 : 0.0);
  WriteOptionalMs(w, "mean_ms",
                  red.count() > 0 ? std::optional<int64_t>(
                                        static_cast<int64_t>(red.duration_sum() / red.count()))
                                  : std::nullopt);
  WriteOptionalMs(w, "p50_ms", red.Quantile(500));
  WriteOptionalMs(w, "p95_ms", red.Quantile(950));
  WriteOptionalMs(w, "p99_ms", red.Quantile(990));
  WriteOptionalMs(w, "max_ms",
                  red.count() > 0 ? std::optional<int64_t>(red.duration_max()) : std::nullopt);
  w.EndObject();
}

std::string TraceHitJson(const TraceSummary& t) {
  std::string out;
  otlp::JsonWriter w(&out);
  w.BeginObject();
  w.Key("trace_id");
  w.String(t.trace_id);
  w.Key("root_service");
  w.String(t.root_service);
  w.Key("root_name");
  w.String(t.root_name);
  w.Key("start");
  w.String(Rfc3339Utc(t.start));
  w.Key("duration_ms");
  w.Double(Milliseconds(t.duration));
  w.Key("span_count");
  w.Int(t.span_count);
  w.Key("error_span_count");
  w.Int(t.error_count);
  w.Key("services");
  w.BeginArray();
  for (const std::string& s : t.services) w.String(s);
  w.EndArray();
  w.EndObject();
  return out;
}

// The end of an answer: "truncated" and "notes".
void WriteNotes(otlp::JsonWriter& w, const std::vector<std::string>& notes, bool truncated) {
  w.Key("truncated");
  w.Bool(truncated);
  w.Key("notes");
  w.BeginArray();
  for (const std::string& note : notes) w.String(note);
  w.EndArray();
}

// A list under `key` held to what is left of the budget; a note when cut.
void WriteList(otlp::JsonWriter& w, std::string* out, std::string_view key,
               const std::vector<std::string>& items, size_t share, std::string_view more,
               std::vector<std::string>* notes, bool* truncated) {
  size_t shown = 0;
  w.Key(key);
  AppendJsonValue(w, out, BoundedArray(items, share, &shown));
  if (shown < items.size()) {
    *truncated = true;
    notes->push_back(absl::StrCat(std::string(key), ": ", shown, " of ", items.size(),
                                  " shown to stay within the output budget; ", std::string(more)));
  }
}

size_t Left(const std::string& out, size_t reserve = 800) {
  return kMcpOutputBudgetBytes > out.size() + reserve ? kMcpOutputBudgetBytes - out.size() - reserve
                                                      : 0;
}

std::string LogJson(const LogPage& page, const LogEntry& e) {
  std::string body;
  const otlp::ValueColumns& bodies = page.values.bodies;
  if (bodies.type[e.body] == otlp::ValueType::kString) {
    body = std::string(bodies.str[e.body]);
  } else {
    // Structured bodies as the REST API writes them, minified.
    const std::string entry = LogEntryJson(page.values, e);
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    if (parser.parse(entry).get(doc) == simdjson::SUCCESS) {
      simdjson::dom::element value;
      if (doc["body"].get(value) == simdjson::SUCCESS) body = simdjson::minify(value);
    }
  }
  constexpr size_t kMaxBodyBytes = 2000;
  if (body.size() > kMaxBodyBytes) {
    size_t cut = kMaxBodyBytes;
    while (cut > 0 && (static_cast<unsigned char>(body[cut]) & 0xc0) == 0x80) --cut;
    body = absl::StrCat(body.substr(0, cut), " …(cut at 2000 bytes)");
  }
  std::string out;
  otlp::JsonWriter w(&out);
  w.BeginObject();
  w.Key("time");
  w.String(Rfc3339Utc(e.time));
  w.Key("severity");
  w.String(e.severity_text);
  w.Key("severity_number");
  w.Int(e.severity_number);
  w.Key("service");
  w.String(e.service);
  w.Key("body");
  w.String(body);
  if (!e.trace_id.empty()) {
    w.Key("trace_id");
    w.String(e.trace_id);
  }
  if (!e.span_id.empty()) {
    w.Key("span_id");
    w.String(e.span_id);
  }
  w.EndObject();
  return out;
}

}  // namespace

absl::StatusOr<std::string> Api::McpCallTool(std::string_view name, QueryParams& args,
                                             const storage::Snapshot& snapshot) {
  if (name == "services_overview") return McpServicesOverview(args, snapshot);
  if (name == "get_trace") return McpGetTrace(args, snapshot);
  if (name == "find_traces") return McpFindTraces(args, snapshot);
  if (name == "search_logs") return McpSearchLogs(args, snapshot);
  if (name == "run_sql") return McpRunSql(args, snapshot);
  if (name == "service_map") return McpServiceMap(args, snapshot);
  if (name == "service_performance") return McpServicePerformance(args, snapshot);
  if (name == "query_metrics") return McpQueryMetrics(args, snapshot);
  if (name == "investigate_error") return McpInvestigateError(args, snapshot);
  return absl::NotFoundError(absl::StrCat("no such tool: ", std::string(name)));
}

absl::StatusOr<std::string> Api::McpServicesOverview(QueryParams& args,
                                                     const storage::Snapshot& snapshot) {
  STRATA_ASSIGN_OR_RETURN(TimeWindow window, TakeWindow(args, options_.now));
  STRATA_ASSIGN_OR_RETURN(int64_t limit, TakeLimit(args, Limit{100, 1000}));
  STRATA_RETURN_IF_ERROR(args.Finish());
  const MinuteWindow minutes = MinutesOf(window.start, window.end);
  STRATA_ASSIGN_OR_RETURN(RollupSet rows, rollups_->ForWindow(*options_.fs, snapshot, minutes));
  std::vector<ServiceRed> services = ServicesRed(rows, minutes);
  const size_t total = services.size();
  // Most requests first: the services an agent most likely asks about.
  std::stable_sort(services.begin(), services.end(), [](const ServiceRed& a, const ServiceRed& b) {
    return a.requests.count() + a.spans.count() > b.requests.count() + b.spans.count();
  });
  if (services.size() > static_cast<size_t>(limit)) services.resize(limit);
  std::vector<std::string> items;
  for (const ServiceRed& s : services) {
    std::string item;
    otlp::JsonWriter w(&item);
    w.BeginObject();
    w.Key("name");
    w.String(s.name);
    if (!s.ns.empty()) {
      w.Key("namespace");
      w.String(s.ns);
    }
    w.Key("requests");
    WriteRed(w, s.requests, minutes.seconds());
    w.Key("spans");
    w.Int(s.spans.count());
    w.Key("span_errors");
    w.Int(s.spans.errors());
    w.Key("error_logs");
    w.Int(s.logs[5] + s.logs[6]);
    w.Key("logs");
    int64_t logs = 0;
    for (int64_t n : s.logs) logs += n;
    w.Int(logs);
    w.EndObject();
    items.push_back(std::move(item));
  }
  std::string out;
  otlp::JsonWriter w(&out);
  w.BeginObject();
  WriteWindow(w,
              TimeWindow{static_cast<int64_t>(minutes.first), static_cast<int64_t>(minutes.end)});
  w.Key("service_count");
  w.Uint(total);
  std::vector<std::string> notes{
      "requests are SERVER and CONSUMER spans; durations in ms; window rounded to whole minutes"};
  bool truncated = services.size() < total;
  if (truncated) {
    notes.push_back(absl::StrCat("services: the ", services.size(), " busiest of ", total,
                                 " shown; raise limit (at most 1000)"));
  }
  WriteList(w, &out, "services", items, Left(out), "narrow the window or lower limit", &notes,
            &truncated);
  WriteNotes(w, notes, truncated);
  w.EndObject();
  return out;
}

absl::StatusOr<std::string> Api::McpGetTrace(QueryParams& args, const storage::Snapshot& snapshot) {
  std::optional<std::string> text;
  STRATA_RETURN_IF_ERROR(TakeString(args, "trace_id", &text));
  if (!text.has_value()) return absl::InvalidArgumentError("trace_id: required");
  STRATA_ASSIGN_OR_RETURN(const otlp::TraceId trace_id, ParseTraceId("trace_id", *text));
  TraceSummaryOptions summary;
  STRATA_RETURN_IF_ERROR(TakeString(args, "include_spans", &text));
  if (text.has_value()) {
    if (*text != "true" && *text != "false") {
      return absl::InvalidArgumentError("include_spans: must be true or false");
    }
    summary.include_spans = *text == "true";
  }
  STRATA_RETURN_IF_ERROR(TakeString(args, "span_offset", &text));
  if (text.has_value()) {
    STRATA_ASSIGN_OR_RETURN(int64_t offset,
                            ParseInteger("span_offset", *text, 0, int64_t{1} << 40));
    summary.span_offset = static_cast<size_t>(offset);
  }
  STRATA_RETURN_IF_ERROR(TakeString(args, "span_limit", &text));
  if (text.has_value()) {
    STRATA_ASSIGN_OR_RETURN(int64_t limit,
                            ParseInteger("span_limit", *text, 1, kMaxSummarySpanLimit));
    summary.span_limit = static_cast<size_t>(limit);
  }
  STRATA_RETURN_IF_ERROR(args.Finish());
  STRATA_ASSIGN_OR_RETURN(
      std::optional<otlp::TraceBatch> batch,
      storage::LookupTrace(*options_.fs, options_.data_dir, snapshot, trace_id));
  if (!batch.has_value() || batch->spans.size() == 0) {
    return absl::NotFoundError(absl::StrCat("trace ", TraceIdHex(trace_id), " not found"));
  }
  return TraceSummaryJson(*batch, summary);
}

absl::StatusOr<std::string> Api::McpFindTraces(QueryParams& args,
                                               const storage::Snapshot& snapshot) {
  TraceSearch search;
  STRATA_ASSIGN_OR_RETURN(TimeWindow window, TakeWindow(args, options_.now));
  search.start = window.start;
  search.end = window.end;
  std::optional<std::string> traceql;
  STRATA_RETURN_IF_ERROR(TakeString(args, "traceql", &traceql));
  if (traceql.has_value()) return McpFindTracesByTraceQL(*traceql, window, args, snapshot);
  STRATA_RETURN_IF_ERROR(TakeString(args, "service", &search.service));
  STRATA_RETURN_IF_ERROR(TakeString(args, "operation", &search.operation));
  std::optional<std::string> text;
  STRATA_RETURN_IF_ERROR(TakeString(args, "min_duration", &text));
  if (text.has_value()) {
    STRATA_ASSIGN_OR_RETURN(search.min_duration, ParseDuration("min_duration", *text));
  }
  STRATA_RETURN_IF_ERROR(TakeString(args, "max_duration", &text));
  if (text.has_value()) {
    STRATA_ASSIGN_OR_RETURN(search.max_duration, ParseDuration("max_duration", *text));
  }
  STRATA_RETURN_IF_ERROR(TakeString(args, "status", &text));
  if (text.has_value()) {
    STRATA_ASSIGN_OR_RETURN(search.status, ParseStatus("status", *text));
  }
  STRATA_ASSIGN_OR_RETURN(search.attributes, args.TakeAttributes());
  STRATA_ASSIGN_OR_RETURN(search.limit, TakeLimit(args, Limit{kTraceLimitDefault, 100}));
  STRATA_RETURN_IF_ERROR(args.Finish());
  STRATA_ASSIGN_OR_RETURN(std::vector<TraceSummary> traces,
                          SearchTraces(*options_.pool, snapshot, options_.data_dir, search,
                                       CallOptions{options_.query_deadline}));
  std::vector<std::string> items;
  for (const TraceSummary& t : traces) items.push_back(TraceHitJson(t));
  std::string out;
  otlp::JsonWriter w(&out);
  w.BeginObject();
  WriteWindow(w, window);
  std::vector<std::string> notes;
  bool truncated = false;
  if (static_cast<int64_t>(traces.size()) == search.limit) {
    notes.push_back(absl::StrCat("limit=", search.limit,
                                 " traces reached; there may be more: narrow the window or the "
                                 "filters, or raise limit"));
  }
  WriteList(w, &out, "traces", items, Left(out), "lower limit or narrow the filters", &notes,
            &truncated);
  WriteNotes(w, notes, truncated);
  w.EndObject();
  return out;
}

absl::StatusOr<std::string> Api::McpFindTracesByTraceQL(const std::string& traceql,
                                                        const TimeWindow& window, QueryParams& args,
                                                        const storage::Snapshot& snapshot) {
  TraceQLSearch search{.start = window.start, .end = window.end, .query = traceql};
  STRATA_ASSIGN_OR_RETURN(search.limit, TakeLimit(args, Limit{kTraceLimitDefault, 100}));
  // The other filters are TraceQL's to say: refuse them rather than drop them.
  if (absl::Status left = args.Finish(); !left.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        left.message(), " (with traceql, say every filter in the query: { ... && ... })"));
  }
  STRATA_ASSIGN_OR_RETURN(std::vector<TraceQLTrace> traces,
                          SearchTraceQL(*options_.pool, snapshot, options_.data_dir, search,
                                        CallOptions{options_.query_deadline}));
  std::vector<std::string> items;
  for (const TraceQLTrace& t : traces) {
    std::string item = TraceHitJson(t.summary);
    item.pop_back();  // the closing brace
    absl::StrAppend(&item, R"(,"matched_spans":)", t.matched, "}");
    items.push_back(std::move(item));
  }
  std::string out;
  otlp::JsonWriter w(&out);
  w.BeginObject();
  WriteWindow(w, window);
  w.Key("traceql");
  w.String(traceql);
  std::vector<std::string> notes;
  bool truncated = false;
  if (static_cast<int64_t>(traces.size()) == search.limit) {
    notes.push_back(absl::StrCat("limit=", search.limit,
                                 " traces reached; there may be more: narrow the window or the "
                                 "query, or raise limit"));
  }
  WriteList(w, &out, "traces", items, Left(out), "lower limit or narrow the query", &notes,
            &truncated);
  WriteNotes(w, notes, truncated);
  w.EndObject();
  return out;
}

absl::StatusOr<std::string> Api::McpSearchLogs(QueryParams& args,
                                               const storage::Snapshot& snapshot) {
  LogSearch search;
  STRATA_RETURN_IF_ERROR(TakeLogFilters(args, options_.now, &search));
  std::optional<std::string> text;
  STRATA_RETURN_IF_ERROR(TakeString(args, "cursor", &text));
  if (text.has_value()) search.cursor = *text;
  STRATA_ASSIGN_OR_RETURN(search.limit, TakeLimit(args, Limit{50, 200}));
  STRATA_RETURN_IF_ERROR(args.Finish());
  STRATA_ASSIGN_OR_RETURN(
      LogPage page, SearchLogs(*options_.pool, *options_.fs, snapshot, options_.data_dir, search,
                               CallOptions{options_.query_deadline}));
  std::vector<std::string> items;
  for (const LogEntry& e : page.logs) items.push_back(LogJson(page, e));
  std::string out;
  otlp::JsonWriter w(&out);
  w.BeginObject();
  WriteWindow(w, TimeWindow{search.start, search.end});
  std::vector<std::string> notes;
  bool truncated = false;
  size_t shown = 0;
  w.Key("logs");
  AppendJsonValue(w, &out, BoundedArray(items, Left(out, 1200), &shown));
  // The next page starts after the last record shown: when the budget cut
  // the page, the cursor of the page would skip records, so say so.
  w.Key("next_cursor");
  if (shown < items.size()) {
    truncated = true;
    w.Null();
    notes.push_back(absl::StrCat(
        "logs: ", shown, " of ", items.size(),
        " records of this page shown to stay within the output budget; ask again with a lower "
        "limit (",
        std::max<size_t>(1, shown), ") or narrower filters to page through them"));
  } else if (!page.next_cursor.empty()) {
    truncated = true;
    w.String(page.next_cursor);
    notes.push_back("more records match: call search_logs again with cursor=next_cursor");
  } else {
    w.Null();
  }
  WriteNotes(w, notes, truncated);
  w.EndObject();
  return out;
}

absl::StatusOr<std::string> Api::McpRunSql(QueryParams& args, const storage::Snapshot& snapshot) {
  std::optional<std::string> sql;
  STRATA_RETURN_IF_ERROR(TakeString(args, "sql", &sql));
  if (!sql.has_value() || absl::StripAsciiWhitespace(absl::string_view(*sql)).empty()) {
    return absl::InvalidArgumentError("sql: required");
  }
  STRATA_ASSIGN_OR_RETURN(int64_t limit, TakeLimit(args, Limit{100, 1000}));
  STRATA_RETURN_IF_ERROR(args.Finish());
  query::QueryOptions query_options;
  query_options.deadline = options_.query_deadline;
  query_options.max_rows = static_cast<size_t>(limit);
  // The values' bytes: what the answer's JSON is mostly made of.
  query_options.max_bytes = std::min<size_t>(kMcpOutputBudgetBytes / 2,
                                             static_cast<size_t>(options_.sql_max_answer_bytes));
  query_options.user_sql = true;
  STRATA_ASSIGN_OR_RETURN(query::QueryResult result,
                          options_.pool->Run(FilesOf(snapshot), *sql, query_options));
  std::string reason;
  if (result.truncated && result.truncated_by == query::QueryResult::TruncatedBy::kBytes) {
    reason = absl::StrCat("the values reached the tool's cap of ", query_options.max_bytes,
                          " bytes: select fewer or narrower columns, aggregate, or page with "
                          "LIMIT/OFFSET");
  } else if (result.truncated) {
    reason = absl::StrCat("the query has more than limit=", limit,
                          " rows: aggregate, or page with LIMIT/OFFSET");
  }
  std::string answer = SqlResultJson(result, reason);
  if (answer.size() > kMcpOutputBudgetBytes) {
    // JSON escaping can grow the values past the cap: drop whole rows.
    while (!result.rows.empty() && answer.size() > kMcpOutputBudgetBytes) {
      result.rows.resize(result.rows.size() * 3 / 4);
      result.truncated = true;
      answer = SqlResultJson(result,
                             "the answer passed the output budget; select fewer rows or "
                             "columns, or page with LIMIT/OFFSET");
    }
  }
  return answer;
}

absl::StatusOr<std::string> Api::McpServiceMap(QueryParams& args,
                                               const storage::Snapshot& snapshot) {
  STRATA_ASSIGN_OR_RETURN(TimeWindow window, TakeWindow(args, options_.now));
  STRATA_ASSIGN_OR_RETURN(int64_t limit, TakeLimit(args, Limit{100, 1000}));
  STRATA_RETURN_IF_ERROR(args.Finish());
  const MinuteWindow minutes = MinutesOf(window.start, window.end);
  STRATA_ASSIGN_OR_RETURN(RollupSet rows, rollups_->ForWindow(*options_.fs, snapshot, minutes));
  const ServiceMapAnswer map =
      service_map_->Answer(*options_.fs, snapshot, minutes, rows, static_cast<size_t>(limit));
  std::vector<const MapEdge*> edges;
  for (const MapEdge& e : map.edges) edges.push_back(&e);
  std::stable_sort(edges.begin(), edges.end(), [](const MapEdge* a, const MapEdge* b) {
    return a->measures.calls > b->measures.calls;
  });
  std::vector<std::string> items;
  for (const MapEdge* e : edges) {
    std::string item;
    otlp::JsonWriter w(&item);
    w.BeginObject();
    w.Key("edge");
    w.String(EdgeName(map, *e));
    w.Key("calls");
    w.Int(e->measures.calls);
    w.Key("errors");
    w.Int(e->measures.errors);
    WriteOptionalMs(w, "p95_ms", e->measures.Quantile(950));
    w.EndObject();
    items.push_back(std::move(item));
  }
  std::string out;
  otlp::JsonWriter w(&out);
  w.BeginObject();
  WriteWindow(w,
              TimeWindow{static_cast<int64_t>(minutes.first), static_cast<int64_t>(minutes.end)});
  w.Key("node_count");
  w.Uint(map.nodes.size());
  std::vector<std::string> notes{
      "edge: \"<caller> -> <callee> <type>\"; a node is service:<namespace>/<name> or "
      "<type>:<name> for databases and other uninstrumented peers"};
  bool truncated = map.truncated;
  if (map.truncated) {
    notes.push_back(absl::StrCat("edges: the ", limit, " most called kept; raise limit"));
  }
  if (map.pending_batches > 0) {
    notes.push_back(
        absl::StrCat(map.pending_batches, " recent batches are not resolved into edges yet"));
  }
  WriteList(w, &out, "edges", items, Left(out), "lower limit", &notes, &truncated);
  WriteNotes(w, notes, truncated);
  w.EndObject();
  return out;
}

absl::StatusOr<std::string> Api::McpServicePerformance(QueryParams& args,
                                                       const storage::Snapshot& snapshot) {
  ServiceSelector service;
  std::optional<std::string> text;
  STRATA_RETURN_IF_ERROR(TakeString(args, "service", &text));
  if (!text.has_value() || text->empty()) return absl::InvalidArgumentError("service: required");
  service.name = *text;
  STRATA_RETURN_IF_ERROR(TakeString(args, "namespace", &service.ns));
  STRATA_ASSIGN_OR_RETURN(TimeWindow window, TakeWindow(args, options_.now));
  STRATA_ASSIGN_OR_RETURN(int64_t limit, TakeLimit(args, Limit{10, 100}));
  STRATA_RETURN_IF_ERROR(args.Finish());
  const MinuteWindow minutes = MinutesOf(window.start, window.end);
  STRATA_ASSIGN_OR_RETURN(RollupSet rows, rollups_->ForWindow(*options_.fs, snapshot, minutes));
  std::vector<OperationRed> operations = OperationsRed(rows, minutes, service);
  std::vector<EndpointRed> endpoints = EndpointsRed(rows, minutes, service);
  auto slower = [](const Red& a, const Red& b) {
    return a.Quantile(950).value_or(0) > b.Quantile(950).value_or(0);
  };
  std::stable_sort(
      operations.begin(), operations.end(),
      [&](const OperationRed& a, const OperationRed& b) { return slower(a.red, b.red); });
  std::stable_sort(
      endpoints.begin(), endpoints.end(),
      [&](const EndpointRed& a, const EndpointRed& b) { return slower(a.red, b.red); });
  std::vector<std::string> operation_items;
  for (const OperationRed& o : operations) {
    if (operation_items.size() >= static_cast<size_t>(limit)) break;
    std::string item;
    otlp::JsonWriter w(&item);
    w.BeginObject();
    w.Key("name");
    w.String(o.name);
    w.Key("kind");
    w.String(SpanKindName(o.kind));
    w.Key("red");
    WriteRed(w, o.red, minutes.seconds());
    w.EndObject();
    operation_items.push_back(std::move(item));
  }
  std::vector<std::string> endpoint_items;
  for (const EndpointRed& e : endpoints) {
    if (endpoint_items.size() >= static_cast<size_t>(limit)) break;
    std::string item;
    otlp::JsonWriter w(&item);
    w.BeginObject();
    w.Key("endpoint");
    w.String(e.b.empty() ? e.a : absl::StrCat(e.a, " ", e.b));
    w.Key("kind");
    w.String(SpanKindName(e.kind));
    w.Key("red");
    WriteRed(w, e.red, minutes.seconds());
    w.EndObject();
    endpoint_items.push_back(std::move(item));
  }
  TraceSearch search;
  search.start = window.start;
  search.end = window.end;
  search.service = service.name;
  search.limit = 100;
  STRATA_ASSIGN_OR_RETURN(std::vector<TraceSummary> recent,
                          SearchTraces(*options_.pool, snapshot, options_.data_dir, search,
                                       CallOptions{options_.query_deadline}));
  std::stable_sort(recent.begin(), recent.end(), [](const TraceSummary& a, const TraceSummary& b) {
    return a.duration > b.duration;
  });
  std::vector<std::string> slow_items;
  for (const TraceSummary& t : recent) {
    if (slow_items.size() >= 5) break;
    slow_items.push_back(TraceHitJson(t));
  }
  search.status = 2;
  search.limit = 5;
  STRATA_ASSIGN_OR_RETURN(std::vector<TraceSummary> failed,
                          SearchTraces(*options_.pool, snapshot, options_.data_dir, search,
                                       CallOptions{options_.query_deadline}));
  std::vector<std::string> failed_items;
  for (const TraceSummary& t : failed) failed_items.push_back(TraceHitJson(t));

  std::string out;
  otlp::JsonWriter w(&out);
  w.BeginObject();
  w.Key("service");
  w.String(service.name);
  WriteWindow(w,
              TimeWindow{static_cast<int64_t>(minutes.first), static_cast<int64_t>(minutes.end)});
  std::vector<std::string> notes{"lists sorted by p95, slowest first; durations in ms",
                                 "slowest_traces: the slowest of the service's 100 most recent "
                                 "traces; use find_traces with min_duration for a full search"};
  bool truncated = false;
  if (operations.size() > operation_items.size() || endpoints.size() > endpoint_items.size()) {
    truncated = true;
    notes.push_back(absl::StrCat("operations: ", operation_items.size(), " of ", operations.size(),
                                 ", endpoints: ", endpoint_items.size(), " of ", endpoints.size(),
                                 " shown; raise limit (at most 100)"));
  }
  WriteList(w, &out, "operations", operation_items, Left(out) / 3, "lower limit", &notes,
            &truncated);
  WriteList(w, &out, "endpoints", endpoint_items, Left(out) / 3, "lower limit", &notes, &truncated);
  WriteList(w, &out, "slowest_traces", slow_items, Left(out) / 2, "use find_traces", &notes,
            &truncated);
  WriteList(w, &out, "error_traces", failed_items, Left(out), "use find_traces status=error",
            &notes, &truncated);
  WriteNotes(w, notes, truncated);
  w.EndObject();
  return out;
}

absl::StatusOr<std::string> Api::McpQueryMetrics(QueryParams& args,
                                                 const storage::Snapshot& snapshot) {
  MetricQuery q;
  std::optional<std::string> text;
  STRATA_RETURN_IF_ERROR(TakeString(args, "name", &text));
  if (!text.has_value() || text->empty()) return absl::InvalidArgumentError("name: required");
  q.name = *text;
  STRATA_ASSIGN_OR_RETURN(TimeWindow window, TakeWindow(args, options_.now));
  q.start = window.start;
  q.end = window.end;
  STRATA_RETURN_IF_ERROR(TakeString(args, "step", &text));
  if (text.has_value()) {
    STRATA_ASSIGN_OR_RETURN(q.step, ParseDuration("step", *text));
    if (q.step <= 0) return absl::InvalidArgumentError("step: must be positive");
  } else {
    q.step = DefaultStep(q.start, q.end);
  }
  std::string aggregation = "sum";
  STRATA_RETURN_IF_ERROR(TakeString(args, "agg", &text));
  if (text.has_value()) aggregation = *text;
  STRATA_ASSIGN_OR_RETURN(q.aggregation, ParseAggregation("agg", aggregation));
  STRATA_ASSIGN_OR_RETURN(q.attributes, args.TakeAttributes());
  STRATA_RETURN_IF_ERROR(args.Finish());
  STRATA_ASSIGN_OR_RETURN(
      std::vector<MetricSeries> series,
      QueryMetric(*options_.pool, FilesOf(snapshot), q, CallOptions{options_.query_deadline}));
  std::vector<std::string> items;
  for (const MetricSeries& s : series) {
    std::string item;
    otlp::JsonWriter w(&item);
    w.BeginObject();
    w.Key("labels");
    w.BeginObject();
    for (const auto& [key, value] : s.labels) {
      std::string escaped;
      otlp::JsonWriter::AppendEscaped(key, &escaped);
      w.Key(escaped);
      w.String(value);
    }
    w.EndObject();
    w.Key("points");
    w.BeginArray();
    for (const auto& [time, value] : s.points) {
      w.BeginArray();
      w.String(Rfc3339Utc(time));
      w.Double(value);
      w.EndArray();
    }
    w.EndArray();
    w.EndObject();
    items.push_back(std::move(item));
  }
  std::string out;
  otlp::JsonWriter w(&out);
  w.BeginObject();
  w.Key("name");
  w.String(q.name);
  w.Key("aggregation");
  w.String(aggregation);
  w.Key("step_ms");
  w.Double(Milliseconds(q.step));
  WriteWindow(w, window);
  std::vector<std::string> notes{"points: [bucket start, value] in the metric's own unit"};
  bool truncated = false;
  WriteList(w, &out, "series", items, Left(out),
            "filter with attributes, or widen step for fewer points", &notes, &truncated);
  WriteNotes(w, notes, truncated);
  w.EndObject();
  return out;
}

absl::StatusOr<std::string> Api::McpInvestigateError(QueryParams& args,
                                                     const storage::Snapshot& snapshot) {
  std::optional<std::string> trace_text;
  std::optional<std::string> service;
  STRATA_RETURN_IF_ERROR(TakeString(args, "trace_id", &trace_text));
  STRATA_RETURN_IF_ERROR(TakeString(args, "service", &service));
  STRATA_ASSIGN_OR_RETURN(TimeWindow window, TakeWindow(args, options_.now));
  STRATA_RETURN_IF_ERROR(args.Finish());
  if (trace_text.has_value() == service.has_value()) {
    return absl::InvalidArgumentError("give exactly one of trace_id and service");
  }
  std::string out;
  otlp::JsonWriter w(&out);
  w.BeginObject();
  std::vector<std::string> notes;
  bool truncated = false;
  LogSearch logs;
  logs.limit = 20;
  if (trace_text.has_value()) {
    STRATA_ASSIGN_OR_RETURN(const otlp::TraceId trace_id, ParseTraceId("trace_id", *trace_text));
    STRATA_ASSIGN_OR_RETURN(
        std::optional<otlp::TraceBatch> batch,
        storage::LookupTrace(*options_.fs, options_.data_dir, snapshot, trace_id));
    if (!batch.has_value() || batch->spans.size() == 0) {
      return absl::NotFoundError(absl::StrCat("trace ", TraceIdHex(trace_id), " not found"));
    }
    TraceSummaryOptions summary;
    summary.budget_bytes = kMcpOutputBudgetBytes / 2;
    w.Key("trace");
    AppendJsonValue(w, &out, TraceSummaryJson(*batch, summary));
    int64_t first = INT64_MAX;
    int64_t last = 0;
    for (size_t i = 0; i < batch->spans.size(); ++i) {
      first = std::min<int64_t>(first, batch->spans.start_time_unix_nano[i]);
      last = std::max<int64_t>(last, batch->spans.end_time_unix_nano[i]);
    }
    // Logs of a trace are written around its spans: a minute either side.
    logs.start = std::max<int64_t>(0, first - 60 * kNanosPerSecond);
    logs.end = last + 60 * kNanosPerSecond;
    logs.trace_id = trace_id;
  } else {
    const MinuteWindow minutes = MinutesOf(window.start, window.end);
    STRATA_ASSIGN_OR_RETURN(RollupSet rows, rollups_->ForWindow(*options_.fs, snapshot, minutes));
    w.Key("service");
    w.String(*service);
    WriteWindow(w, window);
    w.Key("requests");
    bool found = false;
    for (const ServiceRed& s : ServicesRed(rows, minutes)) {
      if (s.name != *service) continue;
      WriteRed(w, s.requests, minutes.seconds());
      found = true;
      break;
    }
    if (!found) w.Null();
    TraceSearch search;
    search.start = window.start;
    search.end = window.end;
    search.service = *service;
    search.status = 2;
    search.limit = 10;
    STRATA_ASSIGN_OR_RETURN(std::vector<TraceSummary> failed,
                            SearchTraces(*options_.pool, snapshot, options_.data_dir, search,
                                         CallOptions{options_.query_deadline}));
    std::vector<std::string> items;
    for (const TraceSummary& t : failed) items.push_back(TraceHitJson(t));
    WriteList(w, &out, "error_traces", items, Left(out) / 2, "use find_traces status=error", &notes,
              &truncated);
    notes.push_back("get_trace or investigate_error with a trace_id shows one failure in detail");
    logs.start = window.start;
    logs.end = window.end;
    logs.service = *service;
    logs.severity_min = 17;  // ERROR and above
  }
  STRATA_ASSIGN_OR_RETURN(
      LogPage page, SearchLogs(*options_.pool, *options_.fs, snapshot, options_.data_dir, logs,
                               CallOptions{options_.query_deadline}));
  std::vector<std::string> items;
  for (const LogEntry& e : page.logs) items.push_back(LogJson(page, e));
  WriteList(w, &out, "logs", items, Left(out), "use search_logs", &notes, &truncated);
  if (!page.next_cursor.empty()) {
    truncated = true;
    notes.push_back("logs: the newest 20 shown; search_logs pages through the rest");
  }
  WriteNotes(w, notes, truncated);
  w.EndObject();
  return out;
}

}  // namespace strata::api
