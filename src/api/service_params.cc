// The parameters of the service health endpoints (service_params.h).

#include "api/service_params.h"

#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "rollups/rollup_rows.h"

namespace strata::api {
namespace {

constexpr uint64_t kDefaultRedPoints = 1440;

absl::StatusOr<std::optional<double>> TakeFraction(QueryParams& params, std::string_view name) {
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> text, params.Take(name));
  if (!text.has_value()) return std::optional<double>();
  double v = 0;
  if (!absl::SimpleAtod(*text, &v) || !(v >= 0 && v <= 1)) {
    return absl::InvalidArgumentError(
        fmt::format("{}: not a fraction from 0 to 1: {}", name, QuoteForError(*text)));
  }
  return std::optional<double>(v);
}

absl::StatusOr<std::optional<int64_t>> TakeDuration(QueryParams& params, std::string_view name) {
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> text, params.Take(name));
  if (!text.has_value()) return std::optional<int64_t>();
  STRATA_ASSIGN_OR_RETURN(int64_t v, ParseDuration(name, *text));
  return std::optional<int64_t>(v);
}

absl::StatusOr<uint8_t> ParseSpanKind(std::string_view text) {
  static constexpr const char* kNames[] = {"UNSPECIFIED", "INTERNAL", "SERVER",
                                           "CLIENT",      "PRODUCER", "CONSUMER"};
  const std::string upper = absl::AsciiStrToUpper(std::string(text));
  for (uint8_t k = 0; k < 6; ++k) {
    if (upper == kNames[k]) return k;
  }
  uint32_t number = 0;
  if (absl::SimpleAtoi(absl::string_view(text.data(), text.size()), &number) && number <= 255)
    return static_cast<uint8_t>(number);
  return absl::InvalidArgumentError(fmt::format(
      "kind: not a span kind (SERVER, CLIENT, PRODUCER, CONSUMER, INTERNAL, UNSPECIFIED or "
      "0..255): {}",
      QuoteForError(text)));
}

}  // namespace

absl::StatusOr<HealthThresholds> TakeHealthThresholds(QueryParams& params) {
  HealthThresholds t;
  STRATA_ASSIGN_OR_RETURN(std::optional<double> degraded,
                          TakeFraction(params, "error_rate_degraded"));
  STRATA_ASSIGN_OR_RETURN(std::optional<double> unhealthy,
                          TakeFraction(params, "error_rate_unhealthy"));
  t.degraded_error_rate = degraded.value_or(t.degraded_error_rate);
  t.unhealthy_error_rate = unhealthy.value_or(t.unhealthy_error_rate);
  STRATA_ASSIGN_OR_RETURN(t.degraded_p99, TakeDuration(params, "p99_degraded"));
  STRATA_ASSIGN_OR_RETURN(t.unhealthy_p99, TakeDuration(params, "p99_unhealthy"));
  return t;
}

absl::StatusOr<std::vector<uint8_t>> TakeSpanKinds(QueryParams& params) {
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> text, params.Take("kind"));
  std::vector<uint8_t> kinds;
  if (!text.has_value()) return kinds;
  for (absl::string_view part : absl::StrSplit(*text, ',')) {
    STRATA_ASSIGN_OR_RETURN(uint8_t kind,
                            ParseSpanKind(std::string_view(part.data(), part.size())));
    kinds.push_back(kind);
  }
  return kinds;
}

absl::StatusOr<RedSelector> TakeRedSelector(QueryParams& params) {
  RedSelector s;
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> service, params.Take("service"));
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> ns, params.Take("namespace"));
  if (service.has_value()) {
    s.service = ServiceSelector{*std::move(service), std::move(ns)};
  } else if (ns.has_value()) {
    return absl::InvalidArgumentError("namespace: needs service");
  }
  STRATA_ASSIGN_OR_RETURN(s.operation, params.Take("operation"));
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> type, params.Take("endpoint_type"));
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> a, params.Take("endpoint_a"));
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> b, params.Take("endpoint_b"));
  if (type.has_value()) {
    RedSelector::Endpoint e;
    if (*type == "http") {
      e.type = rollups::EndpointType::kHttp;
    } else if (*type == "rpc") {
      e.type = rollups::EndpointType::kRpc;
    } else if (*type == "messaging") {
      e.type = rollups::EndpointType::kMessaging;
    } else {
      return absl::InvalidArgumentError(
          fmt::format("endpoint_type: not http, rpc or messaging: {}", QuoteForError(*type)));
    }
    e.a = a.value_or("");
    e.b = b.value_or("");
    s.endpoint = std::move(e);
  } else if (a.has_value() || b.has_value()) {
    return absl::InvalidArgumentError(
        fmt::format("{}: needs endpoint_type", a.has_value() ? "endpoint_a" : "endpoint_b"));
  }
  if (s.operation.has_value() && s.endpoint.has_value()) {
    return absl::InvalidArgumentError("operation: not with an endpoint (choose one)");
  }
  if ((s.operation.has_value() || s.endpoint.has_value()) && !s.service.has_value()) {
    return absl::InvalidArgumentError(
        fmt::format("{}: needs service", s.operation.has_value() ? "operation" : "endpoint_type"));
  }
  STRATA_ASSIGN_OR_RETURN(s.kinds, TakeSpanKinds(params));
  return s;
}

absl::StatusOr<uint64_t> TakeRedStep(QueryParams& params, const MinuteWindow& window) {
  STRATA_ASSIGN_OR_RETURN(std::optional<std::string> text, params.Take("step"));
  const uint64_t minutes = (window.end - window.first) / rollups::kMinuteNanos;
  uint64_t step = 0;
  if (text.has_value()) {
    STRATA_ASSIGN_OR_RETURN(int64_t v, ParseDuration("step", *text));
    if (v <= 0 || static_cast<uint64_t>(v) % rollups::kMinuteNanos != 0) {
      return absl::InvalidArgumentError(
          fmt::format("step: not a whole number of minutes: {}", QuoteForError(*text)));
    }
    step = static_cast<uint64_t>(v);
  } else {
    const uint64_t per_point =
        std::max<uint64_t>(1, (minutes + kDefaultRedPoints - 1) / kDefaultRedPoints);
    step = per_point * rollups::kMinuteNanos;
  }
  if ((minutes * rollups::kMinuteNanos + step - 1) / step > kMaxRedPoints) {
    return absl::InvalidArgumentError(fmt::format(
        "step: the window would have more than {} points; take a larger step", kMaxRedPoints));
  }
  return step;
}

}  // namespace strata::api
