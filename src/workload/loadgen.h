#pragma once

// `strata loadgen`: realistic OTLP traffic against a running server, over
// gRPC or OTLP/HTTP (protobuf or JSON). Payloads are generated and encoded
// before the clock starts (src/workload's five-service traces, correlated
// logs, metrics of every type), so the generator itself costs little CPU
// while it sends. It reports acknowledged rows per second, export latency
// percentiles and errors by code; the last line of its output is one JSON
// object.
//
// With a record file, every payload is sent at most once and each
// acknowledged request is appended to the file (docs/format/
// loadgen-record.md), so a test can check that nothing acknowledged was lost.
//
// Thread-safety: RunLoad is called from one thread; it drives the client's
// threads and waits for them.

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/ingest.h"
#include "server/otlp_client.h"

namespace strata::workload {

struct LoadgenOptions {
  // "grpc", "http/protobuf" or "http/json".
  std::string protocol = "grpc";
  // Server address; empty means 127.0.0.1:4317 for gRPC, 127.0.0.1:4318 for HTTP.
  std::string target;
  std::string token;
  // Which signals to send, comma-separated.
  std::string signals = "traces,logs,metrics";
  // Spans per trace request; log requests carry half as many records and
  // metric requests a quarter as many data points.
  int request_spans = 500;
  // Target spans per second across all requests (0: as fast as the server
  // acknowledges). Logs and metrics follow in proportion.
  double rate_spans_per_sec = 0;
  double duration_sec = 10;
  // Stop after this many requests (0: no limit).
  uint64_t max_requests = 0;
  // Requests in flight at once.
  int concurrency = 64;
  int connections = 8;
  int client_threads = 1;
  bool gzip = false;
  // Distinct pre-encoded payloads per signal, cycled through.
  int payloads = 32;
  // When set: payloads are generated for max_requests requests, each sent at
  // most once, and acknowledged ones are appended here.
  std::string record_path;
  uint64_t seed = 1;
  // Print the JSON report only.
  bool quiet = false;
};

struct LoadgenReport {
  double elapsed_sec = 0;
  uint64_t requests_sent = 0;
  uint64_t requests_ok = 0;
  std::map<server::Signal, uint64_t> acked_rows;
  // absl status code name ("UNAVAILABLE", ...) -> count.
  std::map<std::string, uint64_t> errors;
  double p50_ms = 0, p90_ms = 0, p99_ms = 0, max_ms = 0;

  uint64_t acked(server::Signal s) const {
    auto it = acked_rows.find(s);
    return it == acked_rows.end() ? 0 : it->second;
  }
  double spans_per_sec() const {
    return elapsed_sec > 0 ? static_cast<double>(acked(server::Signal::kTraces)) / elapsed_sec : 0;
  }
  std::string ToJson() const;
};

// One pre-encoded export request.
struct Payload {
  server::Signal signal;
  std::shared_ptr<const std::string> bytes;
  uint64_t rows = 0;
};

// The traffic of `options`, generated and encoded (and gzip-compressed for
// HTTP when asked): `options.payloads` per signal, or max_requests in all
// with a record file.
[[nodiscard]] absl::StatusOr<std::vector<Payload>> BuildPayloads(const LoadgenOptions& options);

// The client the options describe.
[[nodiscard]] absl::StatusOr<std::unique_ptr<server::OtlpClient>> NewClient(
    const LoadgenOptions& options);

// Sends `payloads` through `client` as the options say and reports. Fails
// only for a record file that cannot be written.
[[nodiscard]] absl::StatusOr<LoadgenReport> RunLoad(const LoadgenOptions& options,
                                                    const std::vector<Payload>& payloads,
                                                    server::OtlpClient& client);

// `strata loadgen`; returns the exit code (0 when at least one request was
// acknowledged and the report printed).
int RunLoadgen(const LoadgenOptions& options);


}  // namespace strata::workload
