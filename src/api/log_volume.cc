// QueryLogVolume and LogVolumeJson (log_volume.h).

#include "api/log_volume.h"

#include "absl/strings/str_cat.h"
#include "api/log_filter.h"
#include "common/status_macros.h"
#include "otlp/json_writer.h"

namespace strata::api {
namespace {

using internal::CellInt;
using internal::NextParam;

// The SQL of SeverityRangeOf, so DuckDB groups by range.
constexpr char kSeverityRangeSql[] =
    "CASE WHEN severity_number BETWEEN 1 AND 24 THEN (severity_number - 1) // 4 ELSE 6 END";

}  // namespace

size_t SeverityRangeOf(int64_t severity_number) {
  if (severity_number < 1 || severity_number > 24) return kSeverityRanges - 1;
  return static_cast<size_t>((severity_number - 1) / 4);
}

absl::StatusOr<LogVolume> QueryLogVolume(query::QueryPool& pool, const query::ViewFiles& files,
                                         const LogVolumeQuery& q, const CallOptions& call) {
  if (q.step <= 0) return absl::InvalidArgumentError("step: must be positive");
  const int64_t buckets = (q.search.end - q.search.start - 1) / q.step + 1;
  if (buckets > kMaxLogVolumeBuckets) {
    return absl::InvalidArgumentError(
        absl::StrCat("step: the window holds ", buckets, " buckets of this step, more than ",
                     kMaxLogVolumeBuckets, "; use a larger step or a narrower window"));
  }
  std::vector<query::QueryParam> params;
  const std::string filters = internal::LogFilterSql(q.search, &params);
  // $1 is the window's start (LogFilterSql binds it first).
  const std::string step_param = NextParam(params);
  params.emplace_back(static_cast<uint64_t>(q.step));
  const std::string sql =
      absl::StrCat("SELECT (time_unix_nano - $1) // ", step_param, " AS bucket, ",
                   kSeverityRangeSql, " AS severity_range, count(*) FROM logs WHERE ", filters,
                   " GROUP BY ALL ORDER BY bucket, severity_range");
  STRATA_ASSIGN_OR_RETURN(
      query::QueryResult result,
      pool.Run(files, sql,
               internal::Options(call, std::move(params),
                                 static_cast<size_t>(buckets) * kSeverityRanges + 1)));
  STRATA_RETURN_IF_ERROR(internal::CheckShape(result, 3, "log volume"));
  LogVolume volume;
  for (const auto& row : result.rows) {
    STRATA_ASSIGN_OR_RETURN(int64_t bucket, CellInt(row[0]));
    STRATA_ASSIGN_OR_RETURN(int64_t range, CellInt(row[1]));
    STRATA_ASSIGN_OR_RETURN(int64_t count, CellInt(row[2]));
    if (bucket < 0 || bucket >= buckets || range < 0 ||
        range >= static_cast<int64_t>(kSeverityRanges)) {
      return absl::InternalError(absl::StrCat("log volume: bucket ", bucket, " or severity range ",
                                              range, " out of range"));
    }
    const int64_t start = q.search.start + bucket * q.step;
    if (volume.buckets.empty() || volume.buckets.back().start != start) {
      volume.buckets.push_back(LogVolumeBucket{.start = start});
    }
    volume.buckets.back().counts[static_cast<size_t>(range)] += count;
    volume.buckets.back().total += count;
    volume.total += count;
  }
  return volume;
}

std::string LogVolumeJson(const LogVolumeQuery& q, const LogVolume& volume) {
  std::string out;
  otlp::JsonWriter w(&out);
  w.BeginObject();
  w.Key("start_time_unix_nano");
  w.IntString(q.search.start);
  w.Key("end_time_unix_nano");
  w.IntString(q.search.end);
  w.Key("step_nano");
  w.IntString(q.step);
  w.Key("total");
  w.Int(volume.total);
  w.Key("buckets");
  w.BeginArray();
  for (const LogVolumeBucket& bucket : volume.buckets) {
    w.BeginObject();
    w.Key("start_time_unix_nano");
    w.IntString(bucket.start);
    w.Key("total");
    w.Int(bucket.total);
    w.Key("counts");
    w.BeginObject();
    for (size_t i = 0; i < kSeverityRanges; ++i) {
      if (bucket.counts[i] == 0) continue;
      w.Key(kSeverityRangeNames[i]);
      w.Int(bucket.counts[i]);
    }
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return out;
}

}  // namespace strata::api
