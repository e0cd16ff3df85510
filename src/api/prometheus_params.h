#pragma once

// Parameters of the Prometheus API (docs/prometheus.md): the form body
// Grafana posts. Its times and durations are parsed by params.h.

#include "absl/status/statusor.h"
#include "api/params.h"
#include "server/http_adapter.h"

namespace strata::api {

// The request's parameters: the URL's query and, for a form-encoded POST
// (application/x-www-form-urlencoded), the body's, as Prometheus merges
// them.
[[nodiscard]] absl::StatusOr<QueryParams> PromParams(const server::HttpRequest& request);

}  // namespace strata::api
