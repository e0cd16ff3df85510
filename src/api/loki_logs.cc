// ScanLoki and the Loki mapping of log records (loki_logs.h).

#include "api/loki_logs.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "api/loki_http.h"
#include "common/status_macros.h"
#include "query/duckdb_engine.h"
#include "simdjson.h"

namespace strata::api {

const LokiStreamAttribute kLokiStreamAttributes[18] = {
    {"service.name", "service_name"},
    {"service.namespace", "service_namespace"},
    {"service.instance.id", "service_instance_id"},
    {"deployment.environment", "deployment_environment"},
    {"deployment.environment.name", "deployment_environment_name"},
    {"cloud.region", "cloud_region"},
    {"cloud.availability_zone", "cloud_availability_zone"},
    {"k8s.cluster.name", "k8s_cluster_name"},
    {"k8s.namespace.name", "k8s_namespace_name"},
    {"k8s.pod.name", "k8s_pod_name"},
    {"k8s.container.name", "k8s_container_name"},
    {"container.name", "container_name"},
    {"k8s.replicaset.name", "k8s_replicaset_name"},
    {"k8s.deployment.name", "k8s_deployment_name"},
    {"k8s.statefulset.name", "k8s_statefulset_name"},
    {"k8s.daemonset.name", "k8s_daemonset_name"},
    {"k8s.cronjob.name", "k8s_cronjob_name"},
    {"k8s.job.name", "k8s_job_name"},
};

namespace {

using compat::logql::LineFilterOp;
using compat::logql::LogLine;
using compat::logql::Matcher;
using compat::logql::MatchOp;
using compat::logql::SanitizeLabelName;
using compat::logql::Stage;
using internal::CellInt;
using internal::CellString;
using internal::NextParam;

constexpr std::string_view kUnknownService = "unknown_service";

// A record's line in SQL: the text of the view's body_text, written over
// the stored columns alone, so that a condition on it binds over the
// logs_stored view too.
constexpr std::string_view kLineSql =
    "(CASE WHEN body_type = 1 THEN body_str ELSE coalesce(otlp_value_text(body_type, body_str, "
    "body_int, body_double, body_bool, body_bytes), '') END)";

// The columns ScanLoki selects, in order.
enum Column : size_t {
  kTime,
  kObservedTime,
  kBody,
  kService,
  kResource,
  kScopeName,
  kScopeVersion,
  kScopeAttributes,
  kAttributes,
  kTraceId,
  kSpanId,
  kSeverityText,
  kSeverityNumber,
  kFlags,
  kColumnCount,
};

constexpr std::string_view kColumns =
    "time_unix_nano, observed_time_unix_nano, coalesce(body_text, ''), service_name, "
    "resource_attributes, scope_name, scope_version, scope_attributes, attributes, trace_id_hex, "
    "span_id_hex, severity_text, severity_number, flags";

// An attribute value as a label value: a string as it is, anything else
// its JSON text.
std::string LabelValue(simdjson::dom::element value) {
  std::string_view text;
  if (value.get_string().get(text) == simdjson::SUCCESS) return std::string(text);
  return simdjson::minify(value);
}

// Adds the members of a JSON object (otlp_attributes_json's rendering) as
// labels; with `stream`, the members that are stream attributes go there.
void AddAttributes(std::string_view json, simdjson::dom::parser* parser,
                   compat::logql::Labels* stream, compat::logql::Labels* metadata) {
  if (json.empty()) return;
  simdjson::dom::object object;
  if (parser->parse(json.data(), json.size()).get_object().get(object) != simdjson::SUCCESS) {
    return;
  }
  for (auto field : object) {
    std::string_view label;
    if (stream != nullptr) {
      for (const LokiStreamAttribute& a : kLokiStreamAttributes) {
        if (a.attribute == field.key) label = a.label;
      }
    }
    if (!label.empty()) {
      stream->emplace(std::string(label), LabelValue(field.value));
    } else {
      metadata->emplace(SanitizeLabelName(field.key), LabelValue(field.value));
    }
  }
}

absl::StatusOr<LogLine> LineOfRow(const std::vector<std::optional<std::string>>& row,
                                  simdjson::dom::parser* parser) {
  LogLine line;
  STRATA_ASSIGN_OR_RETURN(line.time, CellInt(row[kTime]));
  line.line = CellString(row[kBody]);
  AddAttributes(CellString(row[kResource]), parser, &line.stream, &line.metadata);
  // service_name is the promoted column (a string service.name), so the
  // label is what the SQL matched.
  line.stream["service_name"] =
      row[kService].has_value() ? *row[kService] : std::string(kUnknownService);
  const std::string scope_name = CellString(row[kScopeName]);
  if (!scope_name.empty()) line.metadata["scope_name"] = scope_name;
  const std::string scope_version = CellString(row[kScopeVersion]);
  if (!scope_version.empty()) line.metadata["scope_version"] = scope_version;
  AddAttributes(CellString(row[kScopeAttributes]), parser, nullptr, &line.metadata);
  AddAttributes(CellString(row[kAttributes]), parser, nullptr, &line.metadata);
  if (row[kTraceId].has_value()) line.metadata["trace_id"] = *row[kTraceId];
  if (row[kSpanId].has_value()) line.metadata["span_id"] = *row[kSpanId];
  const std::string severity_text = CellString(row[kSeverityText]);
  if (!severity_text.empty()) line.metadata["severity_text"] = severity_text;
  int64_t severity_number = 0;
  if (row[kSeverityNumber].has_value()) {
    STRATA_ASSIGN_OR_RETURN(severity_number, CellInt(row[kSeverityNumber]));
    if (severity_number != 0) line.metadata["severity_number"] = *row[kSeverityNumber];
  }
  if (row[kFlags].has_value() && *row[kFlags] != "0") line.metadata["flags"] = *row[kFlags];
  if (row[kObservedTime].has_value() && *row[kObservedTime] != "0") {
    line.metadata["observed_timestamp"] = *row[kObservedTime];
  }
  line.metadata["detected_level"] = LokiDetectedLevel(severity_number, severity_text);
  return line;
}

// Whether stage `stage` leaves the line as it found it (so a line filter
// after it still filters the stored body).
bool KeepsLine(const Stage& stage) {
  return stage.kind != Stage::Kind::kLineFormat && stage.kind != Stage::Kind::kDecolorize &&
         stage.kind != Stage::Kind::kUnpack;
}

// Appends the SQL of the line filters that can run there; returns the
// index of the first stage left for C++. Line filters after stages that
// keep the line move ahead of them (filters commute); only the stages
// before the first C++-only one are skipped in C++, so the moved ones run
// twice, which is harmless.
size_t AppendLineFilterSql(const std::vector<Stage>& stages, std::string* sql,
                           std::vector<query::QueryParam>* params) {
  size_t first_left = 0;
  bool prefix = true;
  for (const Stage& stage : stages) {
    if (!KeepsLine(stage)) break;
    const bool pushable = stage.kind == Stage::Kind::kLineFilter && !stage.line_filter.ip &&
                          stage.line_filter.op != LineFilterOp::kPattern &&
                          stage.line_filter.op != LineFilterOp::kNotPattern;
    if (!pushable) {
      prefix = false;
      continue;
    }
    const LineFilterOp op = stage.line_filter.op;
    const bool regex = op == LineFilterOp::kRegex || op == LineFilterOp::kNotRegex;
    const bool negated = op == LineFilterOp::kNotContains || op == LineFilterOp::kNotRegex;
    std::string any;
    for (const std::string& value : stage.line_filter.values) {
      // A string body is its own text: the stored column, not the view's
      // rendering of every body type, which costs a function call a row.
      const std::string param = NextParam(*params);
      if (regex) {
        absl::StrAppend(&any, any.empty() ? "" : " OR ", "regexp_matches(",
                        absl::string_view(kLineSql.data(), kLineSql.size()), ", ", param, ")");
      } else {
        // Any other body is searched token by token, without writing its
        // JSON text (the same answer as contains() on kLineSql).
        absl::StrAppend(&any, any.empty() ? "" : " OR ", "(CASE WHEN body_type = 1 THEN contains(",
                        "body_str, ", param,
                        ") ELSE otlp_value_text_contains(body_type, body_str, ",
                        "body_int, body_double, body_bool, body_bytes, ", param, ") END)");
      }
      params->emplace_back(value);
    }
    absl::StrAppend(sql, negated ? " AND NOT (" : " AND (", any, ")");
    if (prefix) ++first_left;
  }
  return first_left;
}

bool MatcherPasses(const Matcher& matcher, const compat::logql::Labels& stream) {
  auto it = stream.find(matcher.name);
  const std::string value = it == stream.end() ? "" : it->second;
  // The SQL already applied the matcher; equality is rechecked here for
  // labels whose SQL value may be rendered differently.
  switch (matcher.op) {
    case MatchOp::kEq:
      return value == matcher.value;
    case MatchOp::kNe:
      return value != matcher.value;
    default:
      return true;
  }
}

}  // namespace

std::string LokiLineFiltersSql(const std::vector<Stage>& stages,
                               std::vector<query::QueryParam>* params) {
  std::string sql;
  AppendLineFilterSql(stages, &sql, params);
  return sql;
}

std::string_view LokiLineSql() { return kLineSql; }

absl::StatusOr<std::unique_ptr<LokiRowFilter>> LokiRowFilter::Compile(
    const std::vector<Matcher>& matchers, const std::vector<Stage>& stages) {
  std::vector<query::QueryParam> params;
  std::string condition;
  const size_t first_left = AppendLineFilterSql(stages, &condition, &params);
  STRATA_ASSIGN_OR_RETURN(compat::logql::LogPipeline pipeline,
                          compat::logql::LogPipeline::Compile(stages, first_left));
  return std::unique_ptr<LokiRowFilter>(new LokiRowFilter(matchers, stages, std::move(pipeline)));
}

LokiRowFilter::LokiRowFilter(const std::vector<Matcher>& matchers, const std::vector<Stage>& stages,
                             compat::logql::LogPipeline pipeline)
    : matchers_(matchers),
      stages_(stages),
      pipeline_(std::move(pipeline)),
      parser_(std::make_unique<simdjson::dom::parser>()) {}

LokiRowFilter::~LokiRowFilter() = default;

std::string_view LokiRowFilter::ColumnsSql() { return kColumns; }

std::string LokiRowFilter::ConditionSql(std::vector<query::QueryParam>* params) const {
  std::string sql = LokiMatchersSql(matchers_, params);
  AppendLineFilterSql(stages_, &sql, params);
  return sql;
}

absl::StatusOr<std::optional<LogLine>> LokiRowFilter::Read(
    const std::vector<std::optional<std::string>>& row) {
  if (row.size() < kColumnCount) return absl::InternalError("a Loki row has too few columns");
  STRATA_ASSIGN_OR_RETURN(LogLine line, LineOfRow(row, parser_.get()));
  for (const Matcher& matcher : matchers_) {
    if (!MatcherPasses(matcher, line.stream)) return std::nullopt;
  }
  if (!pipeline_.Process(&line)) return std::nullopt;
  return line;
}

bool IsLokiStreamLabel(std::string_view label) {
  for (const LokiStreamAttribute& a : kLokiStreamAttributes) {
    if (a.label == label) return true;
  }
  return false;
}

std::string LokiStreamLabelSql(std::string_view label) {
  if (label == "service_name") {
    return absl::StrCat("coalesce(service_name, ", query::SqlLiteral(kUnknownService), ")");
  }
  for (const LokiStreamAttribute& a : kLokiStreamAttributes) {
    if (a.label != label) continue;
    const std::string at =
        absl::StrCat("[list_position(resource_attr_keys, ", query::SqlLiteral(a.attribute), ")]");
    return absl::StrCat("coalesce(resource_attr_str", at, ", CAST(resource_attr_int", at,
                        " AS VARCHAR), CAST(resource_attr_bool", at,
                        " AS VARCHAR), CAST(resource_attr_double", at, " AS VARCHAR), '')");
  }
  return "''";
}

std::string LokiMatchersSql(const std::vector<Matcher>& matchers,
                            std::vector<query::QueryParam>* params) {
  std::string sql;
  for (const Matcher& matcher : matchers) {
    const std::string value = LokiStreamLabelSql(matcher.name);
    const std::string param = NextParam(*params);
    params->emplace_back(matcher.op == MatchOp::kRegex || matcher.op == MatchOp::kNotRegex
                             ? absl::StrCat("(?s:", matcher.value, ")")
                             : matcher.value);
    std::string condition;
    switch (matcher.op) {
      case MatchOp::kEq:
        // The stored column itself where it gives the same answer, so that
        // DuckDB prunes with its statistics and dictionaries.
        condition = matcher.name == "service_name" && matcher.value != kUnknownService
                        ? absl::StrCat("service_name = ", param)
                        : absl::StrCat(value, " = ", param);
        break;
      case MatchOp::kNe:
        condition = absl::StrCat(value, " <> ", param);
        break;
      case MatchOp::kRegex:
        condition = absl::StrCat("regexp_full_match(", value, ", ", param, ")");
        break;
      case MatchOp::kNotRegex:
        condition = absl::StrCat("NOT regexp_full_match(", value, ", ", param, ")");
        break;
    }
    absl::StrAppend(&sql, sql.empty() ? "" : " AND ", condition);
  }
  return sql.empty() ? "true" : sql;
}

std::string LokiDetectedLevel(int64_t severity_number, std::string_view severity_text) {
  static constexpr std::string_view kLevels[] = {"trace", "debug", "info",
                                                 "warn",  "error", "fatal"};
  if (severity_number >= 1 && severity_number <= 24) {
    return std::string(kLevels[(severity_number - 1) / 4]);
  }
  if (!severity_text.empty()) {
    std::string lower = absl::AsciiStrToLower(std::string(severity_text));
    if (lower == "warning") return "warn";
    if (lower == "err") return "error";
    return lower;
  }
  return "unknown";
}

namespace {

// The times of the records in `window` meeting `condition`, taken in
// `order` (with its limit): the least and the greatest, as a window that
// holds them all; nullopt when no record matches. The condition names
// stored columns only (LokiMatchersSql, AppendLineFilterSql), so it reads
// logs_stored, which binds faster than the view with the friendly columns:
// a scan with few matches runs this query once per slice.
absl::StatusOr<std::optional<LokiWindow>> ChunkTimes(
    query::QueryPool& pool, const storage::Snapshot& snapshot, const std::string& data_dir,
    const std::string& condition, const std::vector<query::QueryParam>& base_params,
    const LokiWindow& window, const std::string& order, const CallOptions& call,
    LokiScanStats* stats) {
  const query::ViewFiles files = LokiLogFiles(snapshot, data_dir, window);
  if (files.logs.empty()) return std::nullopt;
  std::vector<query::QueryParam> params = base_params;
  const std::string sql = absl::StrCat(
      "SELECT min(time_unix_nano), max(time_unix_nano), count(*) FROM (SELECT time_unix_nano"
      " FROM logs_stored WHERE ",
      LokiWindowSql(window, &params), " AND ", condition, order, ")");
  ++stats->queries;
  STRATA_ASSIGN_OR_RETURN(query::QueryResult result,
                          pool.Run(files, sql, internal::Options(call, std::move(params), 1)));
  STRATA_RETURN_IF_ERROR(internal::CheckShape(result, 3, "Loki log scan"));
  if (result.rows.size() != 1) return absl::InternalError("Loki log scan: no row of times");
  STRATA_ASSIGN_OR_RETURN(const int64_t count, CellInt(result.rows[0][2]));
  if (count == 0) return std::nullopt;
  STRATA_ASSIGN_OR_RETURN(const int64_t first, CellInt(result.rows[0][0]));
  STRATA_ASSIGN_OR_RETURN(const int64_t last, CellInt(result.rows[0][1]));
  return LokiWindow{first, last + 1};
}

}  // namespace

compat::logql::Labels LokiAllLabels(const compat::logql::LogLine& line) {
  compat::logql::Labels labels = line.stream;
  for (const auto& [k, v] : line.metadata) labels[k] = v;
  for (const auto& [k, v] : line.parsed) labels[k] = v;
  return labels;
}

absl::Status ScanLoki(query::QueryPool& pool, const storage::Snapshot& snapshot,
                      const std::string& data_dir, const LokiScan& scan, const CallOptions& call,
                      const LokiVisitor& visit, LokiScanStats* stats) {
  const std::chrono::steady_clock::time_point began = std::chrono::steady_clock::now();
  static const std::vector<Stage> kNoStages;
  const std::vector<Stage>& stages = scan.stages != nullptr ? *scan.stages : kNoStages;
  // The fixed part of every slice's SQL: matchers and line filters.
  std::vector<query::QueryParam> base_params;
  std::string condition = LokiMatchersSql(*scan.matchers, &base_params);
  const size_t first_left = AppendLineFilterSql(stages, &condition, &base_params);
  STRATA_ASSIGN_OR_RETURN(const compat::logql::LogPipeline pipeline,
                          compat::logql::LogPipeline::Compile(stages, first_left));
  const bool all_in_sql = pipeline.empty();
  simdjson::dom::parser parser;
  int64_t slice = 60'000'000'000;  // one minute, growing eightfold
  // The part of the window still to read: [low, high).
  int64_t low = scan.start;
  int64_t high = scan.end;
  int64_t taken = 0;
  while (low < high) {
    const int64_t slice_low = scan.forward ? low : std::max(low, high - slice);
    const int64_t slice_high = scan.forward ? std::min(high, low + slice) : high;
    // Chunks of the slice, each continuing where the last stopped.
    int64_t chunk_low = slice_low;
    int64_t chunk_high = slice_high;
    while (chunk_low < chunk_high) {
      int64_t chunk = kLokiScanChunkRows;
      if (all_in_sql && scan.wanted > 0) chunk = std::max<int64_t>(1, scan.wanted - taken);
      // First the times of the chunk's records, from only the columns the
      // conditions read; then the records themselves, from only those
      // times. The wide columns (attribute lists, structured bodies) cost
      // far more to read than the conditions do, and a chunk where nothing
      // matches needs none of them.
      const std::string order = absl::StrCat(" ORDER BY time_unix_nano ",
                                             scan.forward ? "ASC" : "DESC", " LIMIT ", chunk);
      STRATA_ASSIGN_OR_RETURN(
          const std::optional<LokiWindow> times,
          ChunkTimes(pool, snapshot, data_dir, condition, base_params,
                     {std::max<int64_t>(0, chunk_low), std::max<int64_t>(0, chunk_high)}, order,
                     internal::RemainingCall(call, began), stats));
      if (!times.has_value()) break;
      std::vector<query::QueryParam> params = base_params;
      std::string sql = absl::StrCat("SELECT ", absl::string_view(kColumns.data(), kColumns.size()),
                                     " FROM logs WHERE ", LokiWindowSql(*times, &params), " AND ",
                                     condition, order);
      ++stats->queries;
      STRATA_ASSIGN_OR_RETURN(
          query::QueryResult result,
          pool.Run(LokiLogFiles(snapshot, data_dir, *times), sql,
                   internal::Options(internal::RemainingCall(call, began), std::move(params),
                                     static_cast<size_t>(chunk))));
      STRATA_RETURN_IF_ERROR(internal::CheckShape(result, kColumnCount, "Loki log scan"));
      stats->rows_read += static_cast<int64_t>(result.rows.size());
      if (stats->rows_read > kLokiScanRowsMax) {
        return absl::ResourceExhaustedError(
            absl::StrCat("the query reads more than ", kLokiScanRowsMax,
                         " log records; narrow the time range or the stream selector"));
      }
      const bool full = static_cast<int64_t>(result.rows.size()) >= chunk && !all_in_sql;
      // A full chunk may stop in the middle of a timestamp: its last
      // timestamp's rows are left to the next chunk, which reads them all.
      int64_t boundary = 0;
      if (full) {
        STRATA_ASSIGN_OR_RETURN(boundary, CellInt(result.rows.back()[kTime]));
        STRATA_ASSIGN_OR_RETURN(const int64_t first, CellInt(result.rows.front()[kTime]));
        if (first == boundary) {
          return absl::FailedPreconditionError(
              absl::StrCat("more than ", chunk, " log records share the timestamp ", boundary));
        }
      }
      for (const auto& row : result.rows) {
        STRATA_ASSIGN_OR_RETURN(LogLine line, LineOfRow(row, &parser));
        if (full && line.time == boundary) break;
        bool selected = true;
        for (const Matcher& matcher : *scan.matchers) {
          if (!MatcherPasses(matcher, line.stream)) selected = false;
        }
        if (!selected || !pipeline.Process(&line)) continue;
        ++taken;
        if (!visit(std::move(line))) return absl::OkStatus();
      }
      if (!full) break;
      if (scan.forward) {
        chunk_low = boundary;
      } else {
        chunk_high = boundary + 1;
      }
    }
    if (scan.forward) {
      low = slice_high;
    } else {
      high = slice_low;
    }
    slice = slice > (high - low) / 8 ? high - low : slice * 8;
  }
  return absl::OkStatus();
}

}  // namespace strata::api
