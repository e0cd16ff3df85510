// Loki's index endpoints (docs/loki.md): /loki/api/v1/index/stats,
// /index/volume and /index/volume_range. Loki answers them from its index
// of streams and chunks; strata has no separate index, so each is one
// aggregate query over the logs view of the window, with the stream
// matchers of the query in SQL (a pipeline after the selector is ignored,
// as Loki's index ignores it).
//
// What the numbers count in strata: streams are the distinct sets of
// stream labels, entries the records, bytes the bytes of their lines (the
// body as the query API shows it), and chunks the log batch files
// (Parquet) the window reads, 0 when no record matches. Volumes are bytes
// of lines, as Loki's are.

#include <algorithm>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/api_server.h"
#include "api/gzip_answer.h"
#include "api/loki_http.h"
#include "api/loki_logs.h"
#include "api/loki_query.h"
#include "common/status_macros.h"

namespace strata::api {
namespace {

using compat::logql::Expr;
using compat::logql::Labels;

// The most (series, step) rows a volume_range query may group into.
constexpr size_t kLokiVolumeRowsMax = 200'000;
// The most names targetLabels may list.
constexpr size_t kLokiTargetLabelsMax = 64;

std::string BytesSql() {
  const std::string_view line = LokiLineSql();
  return absl::StrCat("strlen(", absl::string_view(line.data(), line.size()), ")");
}

// The condition of a stats or volume query: the window and the stream
// matchers of `expr`.
std::string WhereSql(const LokiWindow& window, const Expr& expr,
                     std::vector<query::QueryParam>* params) {
  return absl::StrCat(LokiWindowSql(window, params), " AND ",
                      LokiMatchersSql(expr.log.matchers, params));
}

absl::StatusOr<std::unique_ptr<Expr>> TakeSelector(QueryParams& params) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Expr> expr, TakeLokiSelector(params, "query"));
  if (expr == nullptr) {
    return absl::InvalidArgumentError("parse error : syntax error: unexpected $end");
  }
  return expr;
}

struct VolumeRequest {
  std::unique_ptr<Expr> selector;
  LokiWindow window;
  int64_t limit = 0;
  bool by_labels = false;           // aggregateBy=labels
  std::vector<std::string> labels;  // the stream labels to aggregate into
  int64_t step = 0;                 // volume_range
};

// targetLabels, or the labels the selector names; only stream labels are
// in the index, so others are left out.
absl::StatusOr<std::vector<std::string>> TakeTargetLabels(QueryParams& params,
                                                          const Expr& selector) {
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> text, params.Take("targetLabels"));
  std::vector<std::string> names;
  if (text.has_value() && !text->empty()) {
    for (absl::string_view name : absl::StrSplit(*text, ',', absl::SkipWhitespace())) {
      names.emplace_back(absl::StripAsciiWhitespace(name));
    }
  } else {
    for (const compat::logql::Matcher& m : selector.log.matchers) names.push_back(m.name);
  }
  if (names.size() > kLokiTargetLabelsMax) {
    return absl::InvalidArgumentError("targetLabels: too many labels");
  }
  std::vector<std::string> labels;
  for (const std::string& name : names) {
    if (IsLokiStreamLabel(name) && std::find(labels.begin(), labels.end(), name) == labels.end()) {
      labels.push_back(name);
    }
  }
  return labels;
}

absl::StatusOr<VolumeRequest> TakeVolumeRequest(QueryParams& params, int64_t now, bool range) {
  VolumeRequest r;
  STRATA_ASSIGN_OR_RETURN(r.selector, TakeSelector(params));
  STRATA_ASSIGN_OR_RETURN(r.window, TakeLokiWindow(params, now));
  STRATA_ASSIGN_OR_RETURN(r.limit,
                          TakeLokiCount(params, "limit", kLokiLimitDefault, kLokiLabelValuesMax));
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> by, params.Take("aggregateBy"));
  if (by.has_value() && !by->empty() && *by != "series") {
    if (*by != "labels") {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid aggregateBy ", QuoteForError(*by), ": series or labels"));
    }
    r.by_labels = true;
  }
  STRATA_ASSIGN_OR_RETURN(r.labels, TakeTargetLabels(params, *r.selector));
  if (range) {
    STRATA_ASSIGN_OR_RETURN(std::optional<std::string> step, params.Take("step"));
    if (step.has_value() && !step->empty()) {
      STRATA_ASSIGN_OR_RETURN(r.step, ParseLokiDuration("step", *step));
    } else {
      r.step = std::max<int64_t>(kLokiNanos,
                                 (r.window.end - r.window.start) / 250 / kLokiNanos * kLokiNanos);
    }
    if (r.step <= 0) {
      return absl::InvalidArgumentError(
          "zero or negative query resolution step widths are not accepted. Try a positive "
          "integer");
    }
    if ((r.window.end - r.window.start) / r.step + 1 > kLokiPointsMax) {
      return absl::InvalidArgumentError(
          absl::StrCat("exceeded maximum resolution of ", kLokiPointsMax,
                       " points per timeseries. Try decreasing the query resolution (?step=XX)"));
    }
  }
  return r;
}

// One volume series: its labels and its (time ns, bytes) points.
struct VolumeSeries {
  Labels labels;
  std::map<int64_t, int64_t> points;
  int64_t total = 0;
};

// The vector or matrix answer of a volume query, in the order of
// `series`.
std::string VolumeJson(const std::vector<VolumeSeries>& series, bool matrix) {
  std::string out;
  otlp::JsonWriter json(&out);
  json.BeginObject();
  json.Key("status");
  json.String("success");
  json.Key("data");
  json.BeginObject();
  json.Key("resultType");
  json.String(matrix ? "matrix" : "vector");
  json.Key("result");
  json.BeginArray();
  for (const VolumeSeries& s : series) {
    json.BeginObject();
    json.Key("metric");
    WriteLokiLabels(s.labels, &json);
    json.Key(matrix ? "values" : "value");
    if (matrix) json.BeginArray();
    for (const auto& [time, bytes] : s.points) {
      json.BeginArray();
      json.Double(static_cast<double>(time) / 1e9);
      json.String(absl::StrCat(bytes));
      json.EndArray();
    }
    if (matrix) json.EndArray();
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
  json.EndObject();
  return out;
}

}  // namespace

server::HttpResponse Api::LokiIndexStatsEndpoint(const server::HttpRequest& request,
                                                 const storage::Snapshot& snapshot) {
  LOKI_ASSIGN_OR_RESPOND(QueryParams params, QueryParams::Parse(request.query()));
  LOKI_ASSIGN_OR_RESPOND(const std::unique_ptr<Expr> selector, TakeSelector(params));
  LOKI_ASSIGN_OR_RESPOND(const LokiWindow window, TakeLokiWindow(params, options_.now()));
  std::vector<query::QueryParam> sql_params;
  std::string streams = "[";
  for (size_t i = 0; i < std::size(kLokiStreamAttributes); ++i) {
    absl::StrAppend(&streams, i == 0 ? "" : ", ",
                    LokiStreamLabelSql(kLokiStreamAttributes[i].label));
  }
  const std::string sql =
      absl::StrCat("SELECT count(DISTINCT ", streams, "]), count(*), coalesce(sum(", BytesSql(),
                   "), 0) FROM logs WHERE ", WhereSql(window, *selector, &sql_params));
  const query::ViewFiles files = LokiLogFiles(snapshot, options_.data_dir, window);
  int64_t counts[3] = {0, 0, 0};
  if (!files.logs.empty()) {
    LOKI_ASSIGN_OR_RESPOND(
        const query::QueryResult result,
        options_.pool->Run(
            files, sql,
            internal::Options(CallOptions{options_.query_deadline}, std::move(sql_params), 1)));
    LOKI_RETURN_IF_ERROR(internal::CheckShape(result, 3, "Loki index stats"));
    for (size_t i = 0; i < 3 && !result.rows.empty(); ++i) {
      LOKI_ASSIGN_OR_RESPOND(counts[i], internal::CellInt(result.rows[0][i]));
    }
  }
  std::string out;
  otlp::JsonWriter json(&out);
  json.BeginObject();
  json.Key("streams");
  json.Int(counts[0]);
  json.Key("chunks");
  json.Int(counts[1] == 0 ? 0 : static_cast<int64_t>(files.logs.size()));
  json.Key("entries");
  json.Int(counts[1]);
  json.Key("bytes");
  json.Int(counts[2]);
  json.EndObject();
  return JsonAnswer(200, std::move(out));
}

server::HttpResponse Api::LokiVolumeEndpoint(const server::HttpRequest& request,
                                             const storage::Snapshot& snapshot) {
  const bool range = request.path() == "/loki/api/v1/index/volume_range";
  LOKI_ASSIGN_OR_RESPOND(QueryParams params, QueryParams::Parse(request.query()));
  LOKI_ASSIGN_OR_RESPOND(VolumeRequest r, TakeVolumeRequest(params, options_.now(), range));
  // A range query reads the samples of its steps as a metric query does:
  // the point at t holds the bytes of (t - step, t], for t from start by
  // step up to end.
  LokiWindow window = r.window;
  int64_t last = window.end;
  if (range) {
    last = window.start + (window.end - window.start) / r.step * r.step;
    window.start = std::max<int64_t>(0, window.start - r.step + 1);
    window.end = last + 1;
  }
  std::vector<query::QueryParam> sql_params;
  std::string select;
  std::vector<std::string> label_sql;
  for (const std::string& label : r.labels) label_sql.push_back(LokiStreamLabelSql(label));
  if (r.by_labels) {
    for (const std::string& value : label_sql) {
      absl::StrAppend(&select, "sum(CASE WHEN ", value, " <> '' THEN ", BytesSql(), " END), ");
    }
  } else {
    for (const std::string& value : label_sql) absl::StrAppend(&select, value, ", ");
    absl::StrAppend(&select, "sum(", BytesSql(), "), ");
  }
  std::string bucket = "0";
  if (range) {
    const std::string start = internal::NextParam(sql_params);
    sql_params.emplace_back(r.window.start);
    const std::string step = internal::NextParam(sql_params);
    sql_params.emplace_back(r.step);
    bucket = absl::StrCat("((CAST(time_unix_nano AS BIGINT) - ", start, " + ", step, " - 1) // ",
                          step, ")");
  }
  std::string sql = absl::StrCat("SELECT ", select, bucket, " AS bucket FROM logs WHERE ",
                                 WhereSql(window, *r.selector, &sql_params));
  if (!r.by_labels && !label_sql.empty()) {
    absl::StrAppend(&sql, " AND NOT (");
    for (size_t i = 0; i < label_sql.size(); ++i) {
      absl::StrAppend(&sql, i == 0 ? "" : " AND ", label_sql[i], " = ''");
    }
    absl::StrAppend(&sql, ")");
  }
  absl::StrAppend(&sql, r.by_labels ? " GROUP BY bucket" : " GROUP BY ALL", " LIMIT ",
                  kLokiVolumeRowsMax + 1);
  std::vector<VolumeSeries> series;
  const query::ViewFiles files = LokiLogFiles(snapshot, options_.data_dir, window);
  if (!files.logs.empty() && !label_sql.empty()) {
    LOKI_ASSIGN_OR_RESPOND(
        const query::QueryResult result,
        options_.pool->Run(files, sql,
                           internal::Options(CallOptions{options_.query_deadline},
                                             std::move(sql_params), kLokiVolumeRowsMax + 1)));
    if (result.rows.size() > kLokiVolumeRowsMax) {
      return LokiError(absl::ResourceExhaustedError(
          absl::StrCat("the volume query groups into more than ", kLokiVolumeRowsMax,
                       " series and steps; narrow the selector, the window or the labels")));
    }
    const size_t columns = r.by_labels ? label_sql.size() + 1 : label_sql.size() + 2;
    LOKI_RETURN_IF_ERROR(internal::CheckShape(result, columns, "Loki volume"));
    std::map<Labels, size_t> index;
    auto add = [&](Labels labels, int64_t time, int64_t bytes) {
      auto [it, inserted] = index.try_emplace(std::move(labels), series.size());
      if (inserted) series.push_back(VolumeSeries{it->first, {}, 0});
      series[it->second].points[time] += bytes;
      series[it->second].total += bytes;
    };
    for (const auto& row : result.rows) {
      LOKI_ASSIGN_OR_RESPOND(const int64_t k, internal::CellInt(row[columns - 1]));
      const int64_t time = range ? r.window.start + k * r.step : r.window.end;
      if (r.by_labels) {
        for (size_t i = 0; i < label_sql.size(); ++i) {
          if (!row[i].has_value()) continue;
          LOKI_ASSIGN_OR_RESPOND(const int64_t bytes, internal::CellInt(row[i]));
          add(Labels{{r.labels[i], ""}}, time, bytes);
        }
        continue;
      }
      Labels labels;
      for (size_t i = 0; i < label_sql.size(); ++i) {
        if (row[i].has_value() && !row[i]->empty()) labels[r.labels[i]] = *row[i];
      }
      LOKI_ASSIGN_OR_RESPOND(const int64_t bytes, internal::CellInt(row[label_sql.size()]));
      add(std::move(labels), time, bytes);
    }
  }
  std::stable_sort(series.begin(), series.end(),
                   [](const VolumeSeries& a, const VolumeSeries& b) { return a.total > b.total; });
  if (static_cast<int64_t>(series.size()) > r.limit) series.resize(static_cast<size_t>(r.limit));
  server::HttpResponse response = JsonAnswer(200, VolumeJson(series, range));
  GzipIfAccepted(request, &response);
  return response;
}

}  // namespace strata::api
