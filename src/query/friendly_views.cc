#include "query/friendly_views.h"

#include <utility>
#include <vector>

#include "fmt/format.h"

namespace strata::query {

namespace {

// A u64 of Unix nanoseconds as TIMESTAMP_NS; NULL past what TIMESTAMP_NS
// holds (2262-04-11) and, with `zero_is_null`, for 0 (OTLP's "unknown").
std::string Timestamp(std::string_view column, bool zero_is_null = false) {
  return fmt::format(
      "CASE WHEN {0} < 9223372036854775807{1} THEN make_timestamp_ns({0}::BIGINT) END", column,
      zero_is_null ? fmt::format(" AND {} <> 0", column) : "");
}

// The seven lists of attribute family `prefix` (attr, resource_attr, ...)
// as function arguments.
std::string FamilyArguments(std::string_view prefix) {
  std::string args;
  for (const char* list : {"keys", "types", "str", "int", "double", "bool", "bytes"}) {
    args += fmt::format("{}{}_{}", args.empty() ? "" : ", ", prefix, list);
  }
  return args;
}

std::string AttributesJson(std::string_view prefix) {
  return fmt::format("otlp_attributes_json({})", FamilyArguments(prefix));
}

// The repeated elements of a row (events, links, exemplars) through the
// adapter's elements function `function` over the element lists `fields`,
// the per-element counts and the flat family of `prefix` (docs/format/
// attributes.md, "Sets that belong to repeated elements"). One function
// call rather than SQL lambdas: a query binds every column of a view it
// names, and lambdas made that binding several times slower.
std::string ElementsJson(std::string_view function, std::string_view fields,
                         std::string_view prefix) {
  return fmt::format("{}({}, {}_attr_count, {})", function, fields, prefix,
                     FamilyArguments(fmt::format("{}_attr", prefix)));
}

std::string KindName(std::string_view column) {
  return fmt::format(
      "CASE {} WHEN 0 THEN 'UNSPECIFIED' WHEN 1 THEN 'INTERNAL' WHEN 2 THEN 'SERVER' "
      "WHEN 3 THEN 'CLIENT' WHEN 4 THEN 'PRODUCER' WHEN 5 THEN 'CONSUMER' END",
      column);
}

std::string HexOf(std::string_view column) { return fmt::format("lower(hex({}))", column); }

// The span keys that spans promote to a column of their own (sql_helpers.cc
// folds attr_str() on them into the column); logs and metrics compute the
// same columns from their attribute lists.
constexpr std::pair<const char*, const char*> kSpanKeyColumns[] = {
    {"http.route", "http_route"},
    {"rpc.service", "rpc_service"},
    {"rpc.method", "rpc_method"},
    {"peer.service", "peer_service"},
    {"messaging.system", "messaging_system"},
    {"messaging.destination.name", "messaging_destination"},
};

std::string Common() {
  return fmt::format(", {} AS attributes, {} AS resource_attributes, {} AS scope_attributes",
                     AttributesJson("attr"), AttributesJson("resource_attr"),
                     AttributesJson("scope_attr"));
}

std::string ComputedSpanKeyColumns() {
  std::string out;
  for (const auto& [key, column] : kSpanKeyColumns) {
    out += fmt::format(", attr_str[list_position(attr_keys, '{}')] AS {}", key, column);
  }
  return out;
}

std::string SpansColumns() {
  const std::string end_nano =
      "((start_time_unix_nano::HUGEINT + duration_nano::HUGEINT + 18446744073709551616) % "
      "18446744073709551616)::UBIGINT";
  const std::string events =
      ElementsJson("otlp_events_json",
                   "event_time_unix_nano, event_name, event_dropped_attributes_count", "event");
  const std::string links = ElementsJson(
      "otlp_links_json",
      "link_trace_id, link_span_id, link_trace_state, link_flags, link_dropped_attributes_count",
      "link");
  return fmt::format(
      ", {} AS trace_id_hex, {} AS span_id_hex, {} AS parent_span_id_hex, {} AS start_time, "
      "{} AS end_time_unix_nano, {} AS end_time, duration_nano / 1e6 AS duration_ms, "
      "{} AS kind_name, CASE status_code WHEN 0 THEN 'UNSET' WHEN 1 THEN 'OK' WHEN 2 THEN 'ERROR' "
      "END "
      "AS status_name{}, {} AS events, {} AS links",
      HexOf("trace_id"), HexOf("span_id"), HexOf("parent_span_id"),
      Timestamp("start_time_unix_nano"), end_nano, Timestamp(end_nano), KindName("kind"), Common(),
      events, links);
}

std::string LogsColumns() {
  const std::string body = "body_type, body_str, body_int, body_double, body_bool, body_bytes";
  return fmt::format(
      ", {} AS trace_id_hex, {} AS span_id_hex, {} AS time, {} AS observed_time, "
      "CASE WHEN time_unix_nano <> 0 THEN {} ELSE {} END AS event_time, "
      "CASE WHEN severity_number BETWEEN 1 AND 24 THEN ['TRACE', 'DEBUG', 'INFO', 'WARN', "
      "'ERROR', 'FATAL'][(severity_number - 1) // 4 + 1] END AS severity_level, "
      "otlp_value_json({}) AS body_json, otlp_value_text({}) AS body_text{}{}",
      HexOf("trace_id"), HexOf("span_id"), Timestamp("time_unix_nano", true),
      Timestamp("observed_time_unix_nano", true), Timestamp("time_unix_nano"),
      Timestamp("observed_time_unix_nano"), body, body, Common(), ComputedSpanKeyColumns());
}

std::string MetricsColumns() {
  const std::string exemplars = ElementsJson(
      "otlp_exemplars_json",
      "exemplar_time_unix_nano, exemplar_value_type, exemplar_value_double, exemplar_value_int, "
      "exemplar_trace_id, exemplar_span_id",
      "exemplar");
  return fmt::format(
      ", {} AS time, {} AS start_time, CASE metric_type WHEN 5 THEN 'GAUGE' WHEN 7 THEN 'SUM' "
      "WHEN 9 THEN 'HISTOGRAM' WHEN 10 THEN 'EXPONENTIAL_HISTOGRAM' WHEN 11 THEN 'SUMMARY' END "
      "AS metric_type_name, CASE aggregation_temporality WHEN 1 THEN 'DELTA' WHEN 2 THEN "
      "'CUMULATIVE' END AS temporality_name, CASE value_type WHEN 1 THEN value_double WHEN 2 "
      "THEN value_int::DOUBLE END AS value, {} AS metadata{}, {} AS exemplars{}",
      Timestamp("time_unix_nano", true), Timestamp("start_time_unix_nano", true),
      AttributesJson("metric_metadata"), Common(), exemplars, ComputedSpanKeyColumns());
}

std::string RollupsColumns() {
  return fmt::format(
      ", {} AS minute_time, CASE rollup WHEN 1 THEN 'operation' WHEN 2 THEN 'endpoint' WHEN 3 "
      "THEN 'log_severity' WHEN 4 THEN 'metric_points' END AS rollup_name, {} AS "
      "span_kind_name, CASE endpoint_type WHEN 1 THEN 'http' WHEN 2 THEN 'rpc' WHEN 3 THEN "
      "'messaging' END AS endpoint_type_name, ['unset', 'trace', 'debug', 'info', 'warn', "
      "'error', 'fatal'][severity_class + 1] AS severity_name",
      Timestamp("minute"), KindName("span_kind"));
}

}  // namespace

std::string RollupMacrosSql() {
  // Buckets below 128 are their own duration; bucket i above is 2^s wide
  // (s = i // 128 - 1) from (128 + i % 128) << s, reported at its middle.
  return "CREATE OR REPLACE TEMP MACRO rollup_bucket_value(i) AS CASE WHEN i < 128 THEN "
         "i::BIGINT ELSE ((128 + i % 128)::BIGINT << (i // 128 - 1)::INTEGER) + CASE WHEN "
         "i < 256 THEN 0 ELSE 1::BIGINT << (i // 128 - 2)::INTEGER END END;\n"
         "CREATE OR REPLACE TEMP MACRO rollup_quantile(indexes, counts, q) AS (SELECT "
         "rollup_bucket_value(min(i)) FROM (SELECT i, sum(c) OVER (ORDER BY i) AS seen, "
         "sum(c) OVER () AS total FROM (SELECT i, sum(c) AS c FROM (SELECT unnest(indexes) AS "
         "i, unnest(counts) AS c) GROUP BY i)) WHERE seen > greatest((round(least(greatest(q, "
         "0), 1) * 1000)::HUGEINT * total + 999) // 1000 - 1, 0));\n";
}

std::string RollupsResolvedSql(std::string_view stored) {
  // measures_row numbers a row of the same file (0-based, as
  // file_row_number); its measures replace the nulls of the row that
  // points at it.
  constexpr std::string_view kMeasures[] = {"errors",       "duration_sum", "duration_min",
                                            "duration_max", "hist_first",   "hist_nonzero",
                                            "hist_count"};
  std::string measures;
  for (std::string_view column : kMeasures) {
    measures += fmt::format(", coalesce(m.{0}, r.{0}) AS {0}", column);
  }
  return fmt::format(
      "SELECT rollup, minute, service_namespace, service_name, span_name, span_kind, "
      "endpoint_type, endpoint_a, endpoint_b, severity_class, count, errors, duration_sum, "
      "duration_min, duration_max, list_filter(range(hist_first, hist_first + "
      "len(hist_nonzero)), (x, i) -> hist_nonzero[i])::UINTEGER[] AS hist_index, hist_count "
      "FROM (SELECT r.rollup, r.minute, r.service_namespace, r.service_name, r.span_name, "
      "r.span_kind, r.endpoint_type, r.endpoint_a, r.endpoint_b, r.severity_class, r.count{} "
      "FROM {} AS r LEFT JOIN {} AS m ON m.filename = r.filename AND m.file_row_number = "
      "r.measures_row)",
      measures, stored, stored);
}

std::string FriendlyColumnsSql(std::string_view view) {
  if (view == "spans") return SpansColumns();
  if (view == "logs") return LogsColumns();
  if (view == "metrics") return MetricsColumns();
  if (view == "rollups") return RollupsColumns();
  return "";
}

}  // namespace strata::query
