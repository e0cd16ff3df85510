#pragma once

// `strata serve`: strata's main job. It opens the API listener first (so
// /healthz answers and /readyz says "recovering" during boot), opens and
// recovers the data directory, makes sure an ingest token exists (printing a
// new one once), opens the query pool and the REST API (/api/v1/, answered
// 503 "recovering" until then), then serves OTLP/gRPC and OTLP/HTTP until SIGINT or
// SIGTERM (SIGHUP reloads the TLS certificate). Shutdown stops accepting, refuses new queries, lets
// in-flight exports and queries finish up to the drain timeout (then answers what is left 503 and
// interrupts the queries), drains the writer and exits 0, within the drain timeout plus one second
// (else it exits 1).
//
// Thread-safety: runs on the main thread; blocks SIGINT/SIGTERM in the
// calling thread (and SIGHUP) before any other thread starts, so the signals are taken
// with sigwait() and not by a handler.

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cli/command.h"
#include "objectstore/store_url.h"

namespace strata::cli {

struct ServeOptions {
  std::string data_dir = "strata-data";
  std::string otlp_grpc_address = "0.0.0.0:4317";
  std::string otlp_http_address = "0.0.0.0:4318";
  std::string api_address = "0.0.0.0:7520";
  // Bytes of admitted, unanswered export requests; beyond it exports are
  // refused with 429 / RESOURCE_EXHAUSTED.
  uint64_t inflight_bytes_limit = 256ull << 20;
  // An export body as received, and after gzip decompression.
  uint64_t max_body_bytes = 16ull << 20;
  uint64_t max_decompressed_body_bytes = 64ull << 20;
  // Spans, log records or data points in one export.
  uint64_t max_request_rows = 200'000;
  // How long shutdown waits for in-flight exports and the writer.
  double drain_timeout_sec = 10;
  int http_io_threads = 1;
  // OTLP/gRPC: how long a call may take to deliver its request message, and
  // the memory gRPC's transport buffers may use (docs/operations.md,
  // "Ingesting").
  double grpc_request_timeout_sec = 60;
  uint64_t grpc_memory_quota_bytes = 1ull << 30;
  // The query side (docs/operations.md, "Querying"): DuckDB's memory limit
  // in bytes (0: half of the cgroup's or the machine's memory), its worker
  // threads (0: one per core), queries run at once, each query's deadline,
  // and the API's worker threads.
  uint64_t query_memory_limit_bytes = 0;
  int query_threads = 0;
  int query_concurrency = 2;
  double query_timeout_sec = 30;
  int api_workers = 4;
  // Most bytes of values in one POST /api/v1/sql answer (docs/api.md).
  uint64_t sql_max_answer_bytes = uint64_t{64} << 20;
  // GET /api/v1/logs/tail (docs/api.md): open streams at once, and each
  // stream's bytes waiting for a slow client.
  int log_tail_max_connections = 16;
  uint64_t log_tail_max_queued_bytes = 1 << 20;
  // Loki live tails (GET /loki/api/v1/tail, WebSocket): at once, and per
  // token; more are answered 429.
  int loki_tail_max_connections = 16;
  int loki_tail_max_per_token = 4;
  // What trace lookups may cache across all batches: their spans.parquet
  // footers and OffsetIndexes (docs/operations.md, "Querying").
  uint64_t lookup_cache_bytes = 64 << 20;
  // Mebibytes of decoded metrics files the Prometheus API keeps across
  // queries (docs/prometheus.md, "Decoded batches"); 0: none kept, every
  // query reads its points through DuckDB. At most kMaxPromqlCacheMb.
  uint32_t promql_cache_mb = 256;
  // Maintenance (docs/operations.md, "Compaction and retention"): days of
  // ingest time kept (0: all), a cap on the telemetry files' bytes (0: no
  // cap; oldest days go first), the batches a level of today needs before
  // it is compacted (0: no compaction), and the maintenance thread's idle
  // poll.
  uint32_t retention_days = 30;
  uint64_t max_disk_bytes = 0;
  uint32_t compaction_min_inputs = 8;
  double maintenance_interval_sec = 1;
  // Accounts (docs/operations.md, "Accounts"): a browser session ends after
  // this long unused, and this long after sign-in whatever its use; audit
  // events are kept this many days.
  double session_idle_timeout_sec = 12 * 3600;
  double session_lifetime_sec = 7 * 24 * 3600;
  uint32_t audit_retention_days = 90;
  // Reverse proxies whose X-Forwarded-* headers the API believes: IP
  // addresses and CIDR networks, comma-separated (docs/operations.md,
  // "Behind a reverse proxy"). Empty: none.
  std::string trusted_proxies;
  // TLS (docs/operations.md, "TLS"): a PEM certificate chain and its
  // private key. Both or neither; with them the API (and web UI), OTLP/HTTP
  // and OTLP/gRPC listeners serve TLS only, and SIGHUP reloads the pair.
  std::string tls_cert;
  std::string tls_key;
  // Offload (docs/operations.md, "Offload to an object store"): the store
  // every committed batch is copied to (s3://bucket/prefix or
  // file:///path; empty: none), the S3 settings that override the
  // STRATA_S3_* / AWS_* variables, and whether an export is acknowledged
  // only once its batch is in the store (waiting at most
  // ack_upload_timeout_sec).
  objectstore::ObjectStoreSettings object_store;
  // The node field of every batch id this server issues, "00" to "zz"
  // (docs/format/layout.md, "Batch ids"): distinct per server when several
  // share one object store, so their batch ids never collide.
  std::string node_id = "00";
  // Several servers (docs/operations.md, "Several servers on one store"):
  // the PostgreSQL URL of the batch catalog they share (empty: this
  // server's data directory is its only catalog). Needs object_store.
  std::string catalog;
  // With catalog: seconds after its last heartbeat before a silent
  // server's node id and day leases may be taken over.
  double catalog_lease_sec = 30;
  // With catalog: seconds a removed batch's objects stay in the store.
  double catalog_delete_after_sec = 600;
  // Test-only, hidden from --help: milliseconds the restore of this node's
  // batches into an empty data directory waits before each batch, so that
  // a test can kill the server in the middle of it
  // (ClusterMemberOptions::TEST_restore_step_delay).
  uint32_t test_restore_step_delay_ms = 0;
  bool ack_after_upload = false;
  double ack_upload_timeout_sec = 30;
  // Eviction (docs/operations.md, "Evicting local copies"), with an object
  // store only: the local Parquet files of uploaded batches older than
  // evict_after ("<n>s", "<n>m", "<n>h" or "<n>d"; empty: never) are
  // removed and read back through a local cache of cache_size bytes (0:
  // the default, 1 GiB).
  std::string evict_after;
  uint64_t cache_size = 0;
};

// The largest --promql-cache-mb: 64 GiB.
inline constexpr uint32_t kMaxPromqlCacheMb = 65536;

// The longest --evict-after: 36500 days (100 years), in microseconds.
inline constexpr int64_t kMaxEvictAfterMicros = int64_t{36500} * 86'400'000'000;

// --evict-after's value in microseconds: a positive whole number and a
// unit (s, m, h, d), at most kMaxEvictAfterMicros. InvalidArgument
// otherwise, naming the flag and the value.
[[nodiscard]] absl::StatusOr<int64_t> ParseEvictAfter(std::string_view text);

// Checks the options; InvalidArgument names the bad one.
[[nodiscard]] absl::Status ValidateServeOptions(const ServeOptions& options);

// Runs the server until SIGINT or SIGTERM. Returns the process exit code.
int RunServe(const ServeOptions& options);

// Adds serve's flags to `command`, parsing into `options` (which must
// outlive parsing), and records their STRATA_* variables in `env_names`.
void AddServeFlags(CLI::App* command, std::set<std::string>* env_names, ServeOptions* options);

// Adds `serve` and its flags to `app`, recording their STRATA_* variables in
// `env_names`.
Command RegisterServe(CLI::App* app, std::set<std::string>* env_names);

}  // namespace strata::cli
