#pragma once

// OtlpClient sends pre-encoded OTLP export requests to a server, over gRPC
// (grpc_adapter.cc) or OTLP/HTTP (http_adapter.cc), many at once. It is the
// load generator's and the whole-system tests' client; strata's server never
// uses it.
//
// Thread-safety: safe for concurrent use. `done` runs exactly once per
// Export, on a client thread, and must not block.
//
// Errors given to `done`: the server's answer as a status (gRPC's code, or
// the HTTP status mapped back through HttpStatusFor's table), with the
// server's message; Unavailable when the connection failed; DeadlineExceeded
// past Options::timeout.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/ingest.h"

namespace strata::server {

struct OtlpClientOptions {
  // "host:port" of the server's OTLP/gRPC or OTLP/HTTP listener.
  std::string target;
  // Sent as "Authorization: Bearer <token>" when not empty.
  std::string token;
  // HTTP only: the body's encoding (gRPC always carries protobuf).
  Encoding encoding = Encoding::kProtobuf;
  // Compress requests with gzip. HTTP: the payloads given are already
  // gzip-compressed and are sent with Content-Encoding: gzip. gRPC: gRPC
  // compresses each message itself (grpc-encoding: gzip), so payloads are
  // best given uncompressed; a gzip-compressed one is inflated first.
  bool gzip = false;
  // Connections (HTTP keep-alive connections, gRPC channels) requests are
  // spread over.
  int connections = 4;
  // Client threads driving the connections.
  int threads = 1;
  std::chrono::milliseconds timeout{10'000};
};

// What the server answered.
struct ExportReply {
  absl::Status status;
  // HTTP Retry-After or gRPC RetryInfo, when the server sent one.
  std::chrono::seconds retry_after{0};
  // The decoded partial_success.rejected_* of an OK reply.
  int64_t rejected_rows = 0;
};

class OtlpClient {
 public:
  using Done = absl::AnyInvocable<void(ExportReply)>;
  virtual ~OtlpClient() = default;
  // Sends one Export<Signal>ServiceRequest whose body is `payload`
  // (protobuf or JSON as the options say, gzip-compressed if they say so).
  virtual void Export(Signal signal, std::shared_ptr<const std::string> payload, Done done) = 0;
};

// Clients of each transport; Unavailable/InvalidArgument when the target is
// malformed. Destroying a client waits for its outstanding exports to be
// answered (they fail promptly once it began closing).
[[nodiscard]] absl::StatusOr<std::unique_ptr<OtlpClient>> NewGrpcClient(
    const OtlpClientOptions& options);
[[nodiscard]] absl::StatusOr<std::unique_ptr<OtlpClient>> NewHttpClient(
    const OtlpClientOptions& options);

}  // namespace strata::server
