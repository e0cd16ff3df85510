#pragma once

// Parameters of the Prometheus API (docs/prometheus.md): its times, its
// durations, and the form body Grafana posts.

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "api/params.h"
#include "server/http_adapter.h"

namespace strata::api {

// The request's parameters: the URL's query and, for a form-encoded POST
// (application/x-www-form-urlencoded), the body's, as Prometheus merges
// them.
[[nodiscard]] absl::StatusOr<QueryParams> PromParams(const server::HttpRequest& request);

// A Prometheus time: unix seconds with an optional fraction
// ("1700000000", "1700000000.123") or RFC 3339. In milliseconds, as
// Prometheus keeps them (a fraction past the millisecond is rounded off).
[[nodiscard]] absl::StatusOr<int64_t> ParsePromTime(std::string_view name, std::string_view value);

// A Prometheus duration: seconds with an optional fraction ("15", "0.5") or
// units ms s m h d w y in order ("1h30m", "5m"). In milliseconds; positive.
[[nodiscard]] absl::StatusOr<int64_t> ParsePromDuration(std::string_view name,
                                                        std::string_view value);

}  // namespace strata::api
