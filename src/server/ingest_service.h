#pragma once

// IngestService is the transport-neutral half of OTLP ingest: it checks a
// request's bearer token, decodes its (already decompressed) body with
// strata's OTLP decoders, hands the rows to the storage engine's
// group-commit writer, and reports the outcome with the codes docs/architecture.md's
// failure contract names. The gRPC and HTTP adapters do framing,
// compression and limits, then call Authorize() and Export().
//
// Thread-safety: safe for concurrent use. Owner: the server (serve.cc); the
// storage engine, authenticator and metrics it points to outlive it.
//
// Errors (ExportOutcome::status and Authorize()):
//  - Unauthenticated: no "Bearer" token, or one that is unknown or revoked.
//    Storage is never touched. The token never appears in a message or log.
//  - PermissionDenied: a valid token whose scope is not ingest (or admin).
//  - InvalidArgument: the decoder's message (field path and byte offset),
//    more rows than Options::max_rows_per_request, or a request whose every
//    row the decoders rejected (docs/otlp.md, "Rejected rows").
//
// Rows the decoders reject from a request that keeps others are not an
// error: the rest is stored and the OK outcome carries rejected_rows and
// partial_message, which EncodeResponse turns into partial_success.
//  - ResourceExhausted: the writer's in-flight budget is full; retry_after set.
//  - Unavailable: a storage fault or shutdown; retry_after set.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "otlp/decode.h"
#include "server/ingest.h"
#include "server/ingest_metrics.h"

namespace strata::storage {
class Storage;
}

namespace strata::server {

class IngestService {
 public:
  struct Options {
    // Rows (spans, log records or data points) one request may carry.
    uint64_t max_rows_per_request = 200'000;
    otlp::DecodeLimits decode_limits;
    // Retry-After for an over-budget refusal and for a storage fault or
    // shutdown.
    std::chrono::seconds retry_after_overloaded{1};
    std::chrono::seconds retry_after_unavailable{5};
  };
  using Done = absl::AnyInvocable<void(ExportOutcome)>;
  // Checks a bearer token (the text after "Bearer "): OK for a live token
  // with ingest scope, Unauthenticated for an unknown or revoked one,
  // PermissionDenied for another scope. Must be cheap (a cached check) and
  // must not log the token. serve.cc wires the control plane's
  // authenticator in; tests pass their own.
  using TokenCheck = std::function<absl::Status(std::string_view token)>;

  IngestService(storage::Storage& storage, TokenCheck token_check, IngestMetrics& metrics,
                Options options);
  IngestService(const IngestService&) = delete;
  IngestService& operator=(const IngestService&) = delete;

  // Checks the value of the Authorization header (or gRPC "authorization"
  // metadata); empty when absent. Counts a refusal.
  [[nodiscard]] absl::Status Authorize(std::string_view authorization, Signal signal,
                                       Transport transport) const;

  // Decodes `body` and submits it. `wire_bytes` is what arrived before
  // decompression (for the ingested-bytes counter). `done` runs exactly
  // once: inline for a decode error or an immediate refusal, else on a
  // storage writer thread once the rows are durably published or failed.
  // It must not block.
  void Export(Signal signal, Encoding encoding, Transport transport,
              std::shared_ptr<const std::string> body, uint64_t wire_bytes, Done done);

  // The Export<Signal>ServiceResponse message for `outcome` (an OK outcome),
  // as protobuf bytes or OTLP/JSON: empty, or partial_success when rows
  // were rejected.
  static std::string EncodeResponse(Signal signal, Encoding encoding,
                                    const ExportOutcome& outcome);

  IngestMetrics& metrics() const { return metrics_; }

 private:
  storage::Storage& storage_;
  const TokenCheck token_check_;
  IngestMetrics& metrics_;
  const Options options_;
};

}  // namespace strata::server
