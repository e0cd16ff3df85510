#pragma once

// The parameters of the service health endpoints (docs/api.md, "Services
// and RED"): health thresholds, span kinds, and what a RED series counts.
//
// Thread-safety: reentrant. Errors: InvalidArgument naming the parameter.

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "api/params.h"
#include "api/service_health.h"

namespace strata::api {

inline constexpr int64_t kServiceLimitDefault = 1000;
inline constexpr int64_t kServiceLimitMax = 10000;
// Most points of one RED series.
inline constexpr uint64_t kMaxRedPoints = 10000;

// error_rate_degraded, error_rate_unhealthy (fractions 0..1), p99_degraded,
// p99_unhealthy (durations); defaults as HealthThresholds.
[[nodiscard]] absl::StatusOr<HealthThresholds> TakeHealthThresholds(QueryParams& params);

// `kind`: comma-separated span kinds, by name (SERVER, any case) or number
// 0..255; empty when absent.
[[nodiscard]] absl::StatusOr<std::vector<uint8_t>> TakeSpanKinds(QueryParams& params);

// `service`, `namespace`, `operation`, `endpoint_type` (http, rpc,
// messaging) with `endpoint_a` and `endpoint_b`, and `kind`. `operation`
// and the endpoint exclude each other and need `service`.
[[nodiscard]] absl::StatusOr<RedSelector> TakeRedSelector(QueryParams& params);

// `step` (whole minutes; default the smallest whole number of minutes that
// keeps the series within 1,440 points), at most kMaxRedPoints points.
[[nodiscard]] absl::StatusOr<uint64_t> TakeRedStep(QueryParams& params, const MinuteWindow& window);

}  // namespace strata::api
