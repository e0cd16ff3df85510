#pragma once

// The live log tails' lines of GET /metrics (docs/operations.md), in the
// Prometheus text format: open tails, records sent and records dropped for
// slow clients, each by API (`strata`: GET /api/v1/logs/tail; `loki`:
// GET /loki/api/v1/tail).
//
// Thread-safety: reentrant. Errors: none.

#include <string>

#include "api/log_tail.h"

namespace strata::api {

std::string LogTailMetricsText(const LogTailStats& stats);

}  // namespace strata::api
