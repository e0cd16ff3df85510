#pragma once

// The vocabulary shared by strata's OTLP transports (gRPC and HTTP), the
// transport-neutral IngestService behind them, and the load generator: which
// signal a request carries, how it is encoded, which transport brought it,
// and what the server answered.
//
// The status codes are gRPC's (docs/architecture.md, "Failure"); HttpStatusFor
// is the one table that maps them to HTTP.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace strata::server {

enum class Signal : uint8_t { kTraces = 0, kLogs = 1, kMetrics = 2 };
inline constexpr int kSignalCount = 3;
enum class Encoding : uint8_t { kProtobuf = 0, kJson = 1 };
enum class Transport : uint8_t { kGrpc = 0, kHttp = 1 };
inline constexpr int kTransportCount = 2;

// "traces", "logs", "metrics".
std::string_view SignalName(Signal signal);
// "grpc", "http".
std::string_view TransportName(Transport transport);
// "/v1/traces" etc. for OTLP/HTTP; nullopt for other paths.
std::optional<Signal> SignalForHttpPath(std::string_view path);
// "/opentelemetry.proto.collector.trace.v1.TraceService/Export" etc.;
// nullopt for other methods.
std::optional<Signal> SignalForGrpcMethod(std::string_view method);
// The gRPC method path of `signal`'s Export.
std::string_view GrpcMethodFor(Signal signal);
std::string_view HttpPathFor(Signal signal);

// Why a request was refused; the label of strata_ingest_rejected_total.
enum class RejectReason : uint8_t {
  kUnauthenticated = 0,   // missing, unknown or revoked token
  kPermissionDenied,      // a valid token without ingest scope
  kInvalidArgument,       // malformed body, bad encoding, too many rows
  kBodyTooLarge,          // compressed or decompressed body over its limit
  kUnsupportedMediaType,  // HTTP Content-Type or Content-Encoding strata does not take
  kOverBudget,            // in-flight budget full (429 / RESOURCE_EXHAUSTED)
  kUnavailable,           // storage fault or shutting down (503 / UNAVAILABLE)
  kDeadlineExceeded,      // the request's deadline passed before it was answered
};
inline constexpr int kRejectReasonCount = 8;
std::string_view RejectReasonName(RejectReason reason);

// What an export came to. `status` is OK when every row is durably
// published (docs/architecture.md, "Durability").
struct ExportOutcome {
  absl::Status status;
  // When status is ResourceExhausted or Unavailable: how long the client
  // should wait before retrying (HTTP Retry-After, gRPC RetryInfo).
  std::chrono::seconds retry_after{0};
  // Rows refused while the rest were stored (OTLP partial_success): the
  // decoders' row-level rejections (docs/otlp.md, "Rejected rows"), with a
  // message naming the first. Set only on an OK outcome.
  int64_t rejected_rows = 0;
  std::string partial_message;
  // The rows the request carried (spans, log records or data points) when it
  // decoded; 0 otherwise.
  uint64_t rows = 0;
};

// The HTTP status for a gRPC-style status code: OK 200, InvalidArgument 400,
// Unauthenticated 401, PermissionDenied 403, NotFound 404, ResourceExhausted
// 429, Unavailable 503, DeadlineExceeded 504, OutOfRange 413 (strata's code
// for "body too large"), FailedPrecondition 415 (unsupported media type),
// anything else 500.
int HttpStatusFor(absl::StatusCode code);

// The reason to count for a refusal with `code` (the inverse of the
// mapping above, for the codes IngestService and the transports return).
RejectReason RejectReasonFor(absl::StatusCode code);

}  // namespace strata::server
