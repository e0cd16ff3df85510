#pragma once

// Log volume (GET /api/v1/logs/volume, docs/api.md): how many records of a
// log search fall in each time bucket, per severity range, for the
// histogram above a log list. The records are exactly those GET
// /api/v1/logs would page through (the same filter SQL, log_filter.h).
//
// Thread-safety: reentrant (the pool is safe for concurrent use). Errors:
// the pool's; InvalidArgument for more than kMaxLogVolumeBuckets buckets;
// Internal when a result does not have the expected shape.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/search.h"

namespace strata::api {

inline constexpr int64_t kMaxLogVolumeBuckets = 10'000;

// The OTLP severity ranges by severity_number: trace 1-4, debug 5-8, info
// 9-12, warn 13-16, error 17-20, fatal 21-24; unspecified for 0 and any
// number outside 1..24.
inline constexpr size_t kSeverityRanges = 7;
inline constexpr std::array<std::string_view, kSeverityRanges> kSeverityRangeNames = {
    "trace", "debug", "info", "warn", "error", "fatal", "unspecified"};
// The index into kSeverityRangeNames of a severity number.
size_t SeverityRangeOf(int64_t severity_number);

struct LogVolumeQuery {
  LogSearch search;  // filters and window; limit and cursor unused
  int64_t step = 0;  // ns, > 0
};

struct LogVolumeBucket {
  int64_t start = 0;  // start + k * step (unix ns)
  std::array<int64_t, kSeverityRanges> counts{};
  int64_t total = 0;
};

struct LogVolume {
  // Ascending; buckets without records are left out.
  std::vector<LogVolumeBucket> buckets;
  int64_t total = 0;
};

// One aggregate query over the logs view.
[[nodiscard]] absl::StatusOr<LogVolume> QueryLogVolume(query::QueryPool& pool,
                                                       const query::ViewFiles& files,
                                                       const LogVolumeQuery& q,
                                                       const CallOptions& call = {});

std::string LogVolumeJson(const LogVolumeQuery& q, const LogVolume& volume);

}  // namespace strata::api
