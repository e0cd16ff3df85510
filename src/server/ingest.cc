#include "server/ingest.h"

#include <array>

namespace strata::server {
namespace {

constexpr std::array<std::string_view, kSignalCount> kSignalNames = {"traces", "logs", "metrics"};
constexpr std::array<std::string_view, kSignalCount> kHttpPaths = {"/v1/traces", "/v1/logs",
                                                                   "/v1/metrics"};
constexpr std::array<std::string_view, kSignalCount> kGrpcMethods = {
    "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
    "/opentelemetry.proto.collector.logs.v1.LogsService/Export",
    "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export",
};
constexpr std::array<std::string_view, kRejectReasonCount> kRejectReasonNames = {
    "unauthenticated",        "permission_denied", "invalid_argument", "body_too_large",
    "unsupported_media_type", "over_budget",       "unavailable",      "deadline_exceeded",
};

std::optional<Signal> Find(const std::array<std::string_view, kSignalCount>& table,
                           std::string_view text) {
  for (int i = 0; i < kSignalCount; ++i) {
    if (table[i] == text) return static_cast<Signal>(i);
  }
  return std::nullopt;
}

}  // namespace

std::string_view SignalName(Signal signal) { return kSignalNames[static_cast<int>(signal)]; }

std::string_view TransportName(Transport transport) {
  return transport == Transport::kGrpc ? "grpc" : "http";
}

std::optional<Signal> SignalForHttpPath(std::string_view path) { return Find(kHttpPaths, path); }

std::optional<Signal> SignalForGrpcMethod(std::string_view method) {
  return Find(kGrpcMethods, method);
}

std::string_view GrpcMethodFor(Signal signal) { return kGrpcMethods[static_cast<int>(signal)]; }

std::string_view HttpPathFor(Signal signal) { return kHttpPaths[static_cast<int>(signal)]; }

std::string_view RejectReasonName(RejectReason reason) {
  return kRejectReasonNames[static_cast<int>(reason)];
}

int HttpStatusFor(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk: return 200;
    case absl::StatusCode::kInvalidArgument: return 400;
    case absl::StatusCode::kUnauthenticated: return 401;
    case absl::StatusCode::kPermissionDenied: return 403;
    case absl::StatusCode::kNotFound: return 404;
    case absl::StatusCode::kOutOfRange: return 413;
    case absl::StatusCode::kFailedPrecondition: return 415;
    case absl::StatusCode::kResourceExhausted: return 429;
    case absl::StatusCode::kUnavailable: return 503;
    case absl::StatusCode::kDeadlineExceeded: return 504;
    default: return 500;
  }
}

RejectReason RejectReasonFor(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kUnauthenticated: return RejectReason::kUnauthenticated;
    case absl::StatusCode::kPermissionDenied: return RejectReason::kPermissionDenied;
    case absl::StatusCode::kOutOfRange: return RejectReason::kBodyTooLarge;
    case absl::StatusCode::kFailedPrecondition: return RejectReason::kUnsupportedMediaType;
    case absl::StatusCode::kResourceExhausted: return RejectReason::kOverBudget;
    case absl::StatusCode::kDeadlineExceeded: return RejectReason::kDeadlineExceeded;
    case absl::StatusCode::kUnavailable: return RejectReason::kUnavailable;
    default: return RejectReason::kInvalidArgument;
  }
}

}  // namespace strata::server
