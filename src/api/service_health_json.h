#pragma once

// The JSON bodies of the service health answers (docs/api.md, "Services
// and RED"): services, operations, endpoints and RED series, from
// service_health.h's merged rollups. Durations are decimal strings of
// nanoseconds, rates per second, null where there is nothing to divide.
//
// Thread-safety: reentrant.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/service_health.h"
#include "api/service_map.h"

namespace strata::api {

// "SERVER", "CLIENT", ... for kinds 0 to 5, else the number.
std::string SpanKindName(uint8_t kind);
// "http", "rpc", "messaging".
const char* EndpointTypeName(rollups::EndpointType type);

std::string ServicesJson(const std::vector<ServiceRed>& services, const MinuteWindow& window,
                         const HealthThresholds& thresholds);
std::string OperationsJson(const ServiceSelector& service,
                           const std::vector<OperationRed>& operations, const MinuteWindow& window);
std::string EndpointsJson(const ServiceSelector& service, const std::vector<EndpointRed>& endpoints,
                          const MinuteWindow& window);
// "service", "peer", "database", "messaging"; "call", "database",
// "messaging".
const char* NodeTypeName(rollups::NodeType type);
const char* EdgeTypeName(rollups::EdgeType type);
std::string ServiceMapJson(const ServiceMapAnswer& map, const MinuteWindow& window,
                           const rollups::EdgeResolverOptions& resolver);
std::string RedSeriesJson(const std::vector<Red>& points, const MinuteWindow& window, uint64_t step,
                          const std::vector<uint8_t>& kinds);

}  // namespace strata::api
