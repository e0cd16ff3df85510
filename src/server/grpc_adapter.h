#pragma once

// GrpcServer is strata's OTLP/gRPC listener (docs/architecture.md, "Ports": 4317). It
// serves the three OTLP Export methods
//
//   /opentelemetry.proto.collector.trace.v1.TraceService/Export
//   /opentelemetry.proto.collector.logs.v1.LogsService/Export
//   /opentelemetry.proto.collector.metrics.v1.MetricsService/Export
//
// without libprotobuf: gRPC's generic callback service hands over each
// request's raw bytes, which go to IngestService (strata's own decoder, the
// writer) and come back as an OK with the encoded Export<Signal>ServiceResponse
// or as a status whose gRPC code is the absl code of the outcome.
//
// grpc_adapter.cc is the only file of strata that includes gRPC headers; this
// header exposes no gRPC type. It also holds NewGrpcClient (otlp_client.h).
//
// Per call, in order:
//  1. A method other than the three above: UNIMPLEMENTED.
//  2. The "authorization" metadata goes to IngestService::Authorize:
//     UNAUTHENTICATED or PERMISSION_DENIED before the message is read, so a
//     refused caller never reaches storage.
//  3. Exactly one request message is read, within
//     Options::request_timeout of the call's start: a call whose message has
//     not fully arrived by then (a client that opened a stream and stalled)
//     is finished with DEADLINE_EXCEEDED, which frees its stream and
//     reactor, whatever deadline the client set. gRPC itself refuses a message
//     larger than Options::max_wire_message_bytes as received
//     (RESOURCE_EXHAUSTED). A gzip-compressed message (grpc-encoding: gzip)
//     is inflated here, not by gRPC, with GunzipLimited and
//     Options::max_message_bytes, so a gzip bomb costs at most
//     max_message_bytes of memory (gRPC 1.51 inflates the whole message
//     before it compares its size with the limit). Over the limit:
//     RESOURCE_EXHAUSTED. Corrupt gzip: INVALID_ARGUMENT. Only gzip (and
//     identity) are accepted; a deflate-encoded call is UNIMPLEMENTED.
//  4. IngestService::Export decodes and submits it; its answer finishes the
//     call. RESOURCE_EXHAUSTED and UNAVAILABLE carry the OTLP-recommended
//     google.rpc.RetryInfo (retry_delay = ExportOutcome::retry_after) in the
//     grpc-status-details-bin trailer.
//  5. A call the client cancels, whose deadline passes, or that Shutdown()
//     cancels, is finished at once (the client sees gRPC's status for the
//     cancellation); a storage answer that arrives later is dropped (the
//     rows may still be stored: delivery is at-least-once, docs/architecture.md,
//     Contracts: durability).
//
// Memory: gRPC's transport buffers (connections, streams, messages being
// received) draw on one grpc::ResourceQuota of Options::memory_quota_bytes;
// under pressure gRPC core shrinks read buffers and then closes connections
// instead of growing (docs/operations.md, "Ingesting").
//
// Thread model: gRPC's callback API runs every reaction (a new call, a read
// completed, a cancellation, the end of a call) on gRPC core's own threads;
// strata starts none. Those reactions never block: the token check is a
// cached lookup, decoding is CPU work, and submission to the writer never
// waits. IngestService answers on a storage writer thread (or inline on the
// gRPC thread for an immediate refusal); finishing a callback call from any
// thread is allowed by gRPC. Each call's reactor is freed only after both
// gRPC's OnDone and the storage answer have run, whichever comes last.
//
// Transport security: plaintext, or TLS when Options::tls_key_and_chain_pem
// is set (gRPC's own TLS, no client certificates). gRPC takes its
// certificate from a FileWatcherCertificateProvider, which reads its files
// again every kTlsRefreshSeconds and uses what changed for new handshakes;
// the "file" is an in-memory one (memfd) that this adapter owns and
// ReloadTls() replaces in one step, so gRPC only ever sees a whole,
// already-checked pair (serve.cc checks it with TlsServerContext first).
// Connections already open keep their session.
//
// Thread-safety: safe for concurrent use. Owner: serve.cc. The IngestService
// (and the storage engine and metrics behind it) must outlive the server.
// Order at exit: Shutdown() this server, then shut the storage down (it
// still answers calls cancelled at the drain deadline; those answers are
// dropped safely, even after the server is destroyed), then destroy the
// IngestService.
//
// Errors (Start): InvalidArgument for a malformed address or limit;
// FailedPrecondition when the address cannot be bound (in use, not local, no
// permission), naming the address and the runbook section.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/ingest_service.h"

namespace strata::server {

struct GrpcServerOptions {
  // "host:port", "[v6-host]:port" or ":port" (all interfaces); port 0 picks
  // a free port (GrpcServer::port() says which).
  std::string address = "0.0.0.0:4317";
  // The largest request message after gzip decompression (at most
  // 2 GiB - 1, gRPC's limit).
  uint64_t max_message_bytes = 64ull << 20;
  // The largest request message as received, compressed or not; 0 means
  // max_message_bytes. (serve.cc: --max-body-bytes.)
  uint64_t max_wire_message_bytes = 0;
  // Concurrent calls one client connection may have open (HTTP/2
  // SETTINGS_MAX_CONCURRENT_STREAMS); more wait in the client.
  int max_concurrent_streams_per_connection = 1024;
  // From a call's start to its request message having fully arrived; later
  // than that the call is finished with DEADLINE_EXCEEDED (step 3).
  // (serve.cc: --grpc-request-timeout-sec.)
  std::chrono::nanoseconds request_timeout = std::chrono::seconds(60);
  // The memory gRPC may use for its transport buffers (grpc::ResourceQuota);
  // at least max_wire_message_bytes (or max_message_bytes), so that one
  // message of the largest size can arrive. (serve.cc:
  // --grpc-memory-quota-bytes.)
  uint64_t memory_quota_bytes = 1ull << 30;
  // TLS: the certificate chain, then the unencrypted private key, in PEM
  // (TlsServerContext::key_and_chain_pem()). Empty: plaintext.
  std::string tls_key_and_chain_pem;
};

class GrpcServer {
 public:
  // Binds the address and starts serving. `ingest` must outlive the server.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<GrpcServer>> Start(
      IngestService& ingest, const GrpcServerOptions& options);
  // Shutdown(0) unless Shutdown() already ran.
  ~GrpcServer();
  GrpcServer(const GrpcServer&) = delete;
  GrpcServer& operator=(const GrpcServer&) = delete;

  // The port bound (the chosen one when the address asked for port 0).
  uint16_t port() const;

  // How often gRPC looks for a new TLS pair.
  static constexpr unsigned kTlsRefreshSeconds = 1;
  // Serves `key_and_chain_pem` (as Options::tls_key_and_chain_pem) to
  // handshakes that start once gRPC has read it, within
  // kTlsRefreshSeconds. FailedPrecondition when the server was started
  // without TLS; Internal when the in-memory file cannot be written (the
  // old pair stays).
  [[nodiscard]] absl::Status ReloadTls(const std::string& key_and_chain_pem);

  // Stops accepting calls (new ones fail UNAVAILABLE), lets calls in flight
  // finish for up to `drain_timeout`, then cancels the rest: their clients
  // get gRPC's UNAVAILABLE ("Cancelling all calls"), which OTLP exporters
  // retry. Returns when every call has ended, without waiting for storage
  // answers still owed to cancelled calls. Later calls return at once. Must
  // not be called from a gRPC or storage callback.
  void Shutdown(std::chrono::nanoseconds drain_timeout);

  // Request messages that arrived gzip-compressed and were inflated by the
  // adapter (not by gRPC core); for tests.
  uint64_t TEST_gzip_messages_inflated() const;

  class Impl;

 private:
  explicit GrpcServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::server
