#include "api/mcp_tools.h"

#include "absl/strings/str_cat.h"

namespace strata::api {
namespace {

// Shared pieces of the input schemas.
#define STRATA_MCP_WINDOW                                                                       \
  R"j("start":{"type":"string","description":"Window start: RFC 3339 (2026-12-04T10:00:00Z) )j" \
  R"j(or unix nanoseconds. Default: end minus 1 hour."},)j"                                     \
  R"j("end":{"type":"string","description":"Window end (exclusive): RFC 3339 or unix )j"        \
  R"j(nanoseconds. Default: now."})j"

constexpr std::string_view kTools =
    R"j({"tools":[)j"
    R"j({"name":"services_overview","title":"Services overview",)j"
    R"j("description":"Rate, errors and duration (RED) of every service in a time window, from )j"
    R"j(the per-minute rollups: requests (SERVER and CONSUMER spans), error rate, p50/p95/p99 )j"
    R"j(in ms, spans and error logs. Start here to see which service is unhealthy.",)j"
    R"j("inputSchema":{"type":"object","properties":{)j" STRATA_MCP_WINDOW
    R"j(,"limit":{"type":"integer","minimum":1,"maximum":1000,"description":"Most services (default 100)."}},)j"
    R"j("additionalProperties":false}},)j"
    R"j({"name":"service_map","title":"Service map",)j"
    R"j("description":"Which service calls which in a window: edges with call counts, errors )j"
    R"j(and p95 in ms.",)j"
    R"j("inputSchema":{"type":"object","properties":{)j" STRATA_MCP_WINDOW
    R"j(,"limit":{"type":"integer","minimum":1,"maximum":1000,"description":"Most edges (default 100)."}},)j"
    R"j("additionalProperties":false}},)j"
    R"j({"name":"service_performance","title":"Service performance",)j"
    R"j("description":"One service in a window: its operations and endpoints with RED (p50/p95/)j"
    R"j(p99 in ms), slowest first, and its slowest and failed traces.",)j"
    R"j("inputSchema":{"type":"object","properties":{"service":{"type":"string","description":"service.name"},)j"
    R"j("namespace":{"type":"string","description":"service.namespace (default: any)"},)j" STRATA_MCP_WINDOW
    R"j(,"limit":{"type":"integer","minimum":1,"maximum":100,"description":"Most rows per list (default 10)."}},)j"
    R"j("required":["service"],"additionalProperties":false}},)j"
    R"j({"name":"find_traces","title":"Find traces",)j"
    R"j("description":"Search traces: by service, operation (span name), duration, status and )j"
    R"j(span attributes, newest first. Each hit: trace_id, root, start, duration_ms, spans, errors.",)j"
    R"j("inputSchema":{"type":"object","properties":{)j" STRATA_MCP_WINDOW
    R"j(,"traceql":{"type":"string","description":"A TraceQL query, e.g. { resource.service.name = \"checkout\" && duration > 500ms && status = error }. When given, the other filters are not allowed: say them in the query. Each hit then has matched_spans."},)j"
    R"j("service":{"type":"string"},"operation":{"type":"string","description":"A span name"},)j"
    R"j("min_duration":{"type":"string","description":"e.g. 250ms, 1.5s"},)j"
    R"j("max_duration":{"type":"string","description":"e.g. 2s"},)j"
    R"j("status":{"type":"string","enum":["unset","ok","error"]},)j"
    R"j("attributes":{"type":"object","additionalProperties":{"type":"string"},"description":"Span or resource attributes that must equal these values"},)j"
    R"j("limit":{"type":"integer","minimum":1,"maximum":100,"description":"Most traces (default 20)."}},)j"
    R"j("additionalProperties":false}},)j"
    R"j({"name":"get_trace","title":"Get a trace",)j"
    R"j("description":"A readable summary of one trace: root span, critical path, error spans )j"
    R"j(with status messages and exceptions, slowest spans, span count by service. The full span )j"
    R"j(list only with include_spans, paged by span_offset and span_limit.",)j"
    R"j("inputSchema":{"type":"object","properties":{"trace_id":{"type":"string","pattern":"^[0-9a-fA-F]{32}$"},)j"
    R"j("include_spans":{"type":"boolean","description":"Add one page of the span list (default false)"},)j"
    R"j("span_offset":{"type":"integer","minimum":0,"description":"First span of the page, by start time"},)j"
    R"j("span_limit":{"type":"integer","minimum":1,"maximum":500,"description":"Spans per page (default 100)"}},)j"
    R"j("required":["trace_id"],"additionalProperties":false}},)j"
    R"j({"name":"search_logs","title":"Search logs",)j"
    R"j("description":"Log records newest first, filtered by service, minimum severity, text )j"
    R"j((case-insensitive substring of the body), trace id and attributes. Paged by cursor.",)j"
    R"j("inputSchema":{"type":"object","properties":{)j" STRATA_MCP_WINDOW
    R"j(,"service":{"type":"string"},"severity_min":{"type":"string","description":"TRACE, DEBUG, INFO, WARN, ERROR, FATAL or 1..24"},)j"
    R"j("q":{"type":"string","description":"Text the body contains"},)j"
    R"j("trace_id":{"type":"string","pattern":"^[0-9a-fA-F]{32}$"},)j"
    R"j("attributes":{"type":"object","additionalProperties":{"type":"string"}},)j"
    R"j("limit":{"type":"integer","minimum":1,"maximum":200,"description":"Most records (default 50)"},)j"
    R"j("cursor":{"type":"string","description":"next_cursor of the previous page"}},)j"
    R"j("additionalProperties":false}},)j"
    R"j({"name":"query_metrics","title":"Query a metric",)j"
    R"j("description":"One metric's series over a window, aggregated per step.",)j"
    R"j("inputSchema":{"type":"object","properties":{"name":{"type":"string"},)j" STRATA_MCP_WINDOW
    R"j(,"step":{"type":"string","description":"Bucket width, e.g. 1m (default: about 100 buckets)"},)j"
    R"j("agg":{"type":"string","enum":["sum","avg","min","max","rate","p50","p90","p95","p99"]},)j"
    R"j("attributes":{"type":"object","additionalProperties":{"type":"string"}}},)j"
    R"j("required":["name"],"additionalProperties":false}},)j"
    R"j({"name":"run_sql","title":"Run read-only SQL",)j"
    R"j("description":"One read-only DuckDB SQL query over the views spans, logs, metrics and )j"
    R"j(rollups (see the resource strata://docs/sql). Rows and bytes are capped.",)j"
    R"j("inputSchema":{"type":"object","properties":{"sql":{"type":"string"},)j"
    R"j("limit":{"type":"integer","minimum":1,"maximum":1000,"description":"Most rows (default 100)"}},)j"
    R"j("required":["sql"],"additionalProperties":false}},)j"
    R"j({"name":"investigate_error","title":"Investigate errors",)j"
    R"j("description":"For one trace (trace_id) or one service in a window: the error spans )j"
    R"j(with messages and exceptions, the logs of those traces, and the service's RED.",)j"
    R"j("inputSchema":{"type":"object","properties":{"trace_id":{"type":"string","pattern":"^[0-9a-fA-F]{32}$"},)j"
    R"j("service":{"type":"string"},)j" STRATA_MCP_WINDOW R"j(},"additionalProperties":false}})j"
    R"j(]})j";

constexpr std::string_view kResources =
    R"j({"resources":[)j"
    R"j({"uri":"strata://docs/sql","name":"sql-help","title":"SQL views and helpers",)j"
    R"j("description":"The views run_sql reads, their main columns, and example queries.",)j"
    R"j("mimeType":"text/markdown"},)j"
    R"j({"uri":"strata://services","name":"services","title":"Services",)j"
    R"j("description":"The services that sent telemetry in the last hour.",)j"
    R"j("mimeType":"application/json"}]})j";

constexpr std::string_view kPrompts =
    R"j({"prompts":[)j"
    R"j({"name":"why_is_service_slow","title":"Why is this service slow?",)j"
    R"j("description":"Walk from a slow service to the span and logs that explain it.",)j"
    R"j("arguments":[{"name":"service","description":"service.name","required":true}]},)j"
    R"j({"name":"why_is_service_failing","title":"Why is this service failing?",)j"
    R"j("description":"Walk from a service's errors to their exceptions and logs.",)j"
    R"j("arguments":[{"name":"service","description":"service.name","required":true}]}]})j";

constexpr std::string_view kSqlHelp = R"(# strata SQL (the run_sql tool)

One read-only DuckDB SELECT over four views. Times are TIMESTAMP_NS in UTC.

- `spans`: trace_id_hex, span_id_hex, parent_span_id_hex, name, kind_name
  (SERVER, CLIENT, ...), service_name, start_time, end_time, duration_ms,
  duration_nano, status_name (UNSET, OK, ERROR), status_message,
  http_route, http_status_code, db_system, peer_service, exception_type,
  exception_message, attributes (JSON), events (JSON).
- `logs`: event_time, severity_level (TRACE .. FATAL), severity_number,
  service_name, body_text, trace_id_hex, span_id_hex, attributes (JSON).
- `metrics`: metric_name, metric_type_name, time, value, service_name,
  attributes (JSON).
- `rollups`: per-minute RED per service, operation and endpoint
  (minute_time, rollup_name, span_kind_name, ...), with the macro
  rollup_quantile(hist_index, counts, q).

Helpers on every view: attr_str('key'), attr_int, attr_double, attr_bool,
attr_json, has_attr, resource_attr_str('service.name').

Examples:

    SELECT service_name, count(*) AS spans,
           round(quantile_cont(duration_ms, 0.95), 3) AS p95_ms
    FROM spans WHERE start_time > now() - INTERVAL 1 HOUR
    GROUP BY 1 ORDER BY p95_ms DESC LIMIT 10;

    SELECT event_time, severity_level, body_text FROM logs
    WHERE trace_id_hex = '<32 hex digits>' ORDER BY event_time;

The full reference is docs/sql.md in strata's documentation.
)";

}  // namespace

bool IsMcpProtocolVersion(std::string_view version) {
  for (std::string_view known : kMcpProtocolVersions) {
    if (known == version) return true;
  }
  return false;
}

bool IsMcpTool(std::string_view name) {
  for (std::string_view tool :
       {"services_overview", "service_map", "service_performance", "find_traces", "get_trace",
        "search_logs", "query_metrics", "run_sql", "investigate_error"}) {
    if (tool == name) return true;
  }
  return false;
}

std::string_view McpToolsListJson() { return kTools; }
std::string_view McpResourcesListJson() { return kResources; }
std::string_view McpPromptsListJson() { return kPrompts; }
std::string_view McpSqlHelpText() { return kSqlHelp; }

std::string McpPromptText(std::string_view name, std::string_view service) {
  if (name == "why_is_service_slow") {
    return absl::StrCat(
        "The service \"", std::string(service),
        "\" is slow. Find out why with strata's tools: 1) services_overview for the last hour, "
        "to compare its p95 with before and with other services; 2) service_performance for \"",
        std::string(service),
        "\" to find the slowest operation; 3) find_traces with that service and operation and a "
        "min_duration near the p95; 4) get_trace on the slowest trace and read its critical "
        "path; 5) search_logs with that trace_id. Report the span that takes the time and the "
        "evidence.");
  }
  if (name == "why_is_service_failing") {
    return absl::StrCat(
        "The service \"", std::string(service),
        "\" returns errors. Use investigate_error with service=\"", std::string(service),
        "\" for the last hour, then get_trace on one failed trace and search_logs with its "
        "trace_id. Report the first failing span, its exception, and the logs around it.");
  }
  return "";
}

}  // namespace strata::api
