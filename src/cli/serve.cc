#include "cli/serve.h"

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "api/api_server.h"
#include "api/log_tail_metrics.h"
#include "cli/control_stores.h"
#include "cli/flags.h"
#include "cli/object_store_flags.h"
#include "cli/serve_cluster.h"
#include "common/host_port.h"
#include "common/mutex.h"
#include "common/runbook.h"
#include "control/accounts.h"
#include "control/oauth.h"
#include "control/sqlite_account_store.h"
#include "control/sqlite_token_store.h"
#include "control/token_authenticator.h"
#include "fmt/format.h"
#include "io/posix_file_system.h"
#include "objectstore/store_url.h"
#include "query/query_pool.h"
#include "server/grpc_adapter.h"
#include "server/http_adapter.h"
#include "server/ingest_metrics.h"
#include "server/ingest_service.h"
#include "server/tls_context.h"
#include "spdlog/spdlog.h"
#include "storage/format/batch_id.h"
#include "storage/format/layout.h"
#include "storage/storage.h"
#include "web/web_ui.h"

namespace strata::cli {
namespace {

using SteadyClock = std::chrono::steady_clock;

// What /readyz reports; written by the main thread, read by API threads.
enum class Phase : int { kRecovering, kReady, kDraining };

// File descriptors wanted: every OTLP/HTTP connection holds one.
constexpr uint64_t kWantedOpenFiles = 65'536;

// Past the drain deadline: how long queries interrupted at it have to send
// their own 503 before the API listener answers for them, and when the
// process ends whatever is still running (the bound docs/operations.md
// promises is the drain timeout plus one second; the process needs a
// little of it to exit).
constexpr auto kInterruptedQueryGrace = std::chrono::milliseconds(100);
constexpr auto kShutdownBackstop = std::chrono::milliseconds(900);

// Ends the process with exit code 1 if shutdown has not finished by
// `exit_by`. Every step of shutdown has a deadline of its own; this is for
// one that overruns it (a DuckDB operation slow to notice its interrupt, a
// stuck disk). Nothing acknowledged is lost: an export is acknowledged only
// once stored. Single owner: the main thread; the destructor disarms it.
class ShutdownBackstop {
 public:
  explicit ShutdownBackstop(std::chrono::steady_clock::time_point exit_by)
      : thread_([this, exit_by] { Watch(exit_by); }) {}
  ~ShutdownBackstop() {
    {
      MutexLock lock(&mu_);
      done_ = true;
    }
    done_cv_.SignalAll();
    thread_.join();
  }
  ShutdownBackstop(const ShutdownBackstop&) = delete;
  ShutdownBackstop& operator=(const ShutdownBackstop&) = delete;

 private:
  void Watch(std::chrono::steady_clock::time_point exit_by) {
    MutexLock lock(&mu_);
    while (!done_) {
      if (!done_cv_.WaitUntil(&mu_, exit_by) && !done_ &&
          std::chrono::steady_clock::now() >= exit_by) {
        spdlog::error(
            "strata serve: shutdown did not finish within --drain-timeout-sec plus 1 s; "
            "exiting now (every acknowledged export is stored); {}",
            RunbookRef("shutdown-overran-its-deadline"));
        // Flushed through a reference of our own: the main thread may still
        // be logging, so the registry is left alone.
        if (std::shared_ptr<spdlog::logger> logger = spdlog::default_logger()) logger->flush();
        std::_Exit(1);
      }
    }
  }

  Mutex mu_;
  CondVar done_cv_;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: started once the fields above exist
};

// Everything the API listener's callbacks read, published once storage is
// open. The callbacks run on API threads while the main thread boots and
// shuts down, hence the atomics.
struct ServerState {
  std::atomic<Phase> phase{Phase::kRecovering};
  std::atomic<const storage::Storage*> storage{nullptr};
  // The REST API's router, set once the query side is open.
  std::atomic<const server::HttpHandler*> api{nullptr};
  // For /metrics, set once the query engine is open.
  std::atomic<const query::QueryPool*> pool{nullptr};
  // For /metrics (the live tails'), set with `pool`.
  std::atomic<const api::Api*> rest_api{nullptr};
  server::IngestMetrics metrics;
};

// Forwards the REST API's requests (/api/, the compatible APIs' prefixes,
// docs/api.md, /mcp and its OAuth endpoints, docs/mcp.md), whatever their method, to the REST API
// once it exists (the API listener starts before storage, tokens and the query pool are open); its
// router alone says which methods a path takes. Once shutdown begins, new requests are answered
// 503.
void AddApiForwarding(server::HttpRouter* router, ServerState& state) {
  for (std::string_view prefix : {"/api/", "/tempo/", "/jaeger/", "/prometheus/", "/loki/", "/mcp",
                                  "/oauth/", "/.well-known/oauth-"}) {
    router->Mount(prefix, [&state](server::HttpRequest request, server::HttpResponder responder) {
      if (state.phase.load() == Phase::kDraining) {
        responder.Respond(api::ApiErrorResponse(absl::UnavailableError("shutting down")));
        return;
      }
      const server::HttpHandler* api = state.api.load();
      if (api == nullptr) {
        server::HttpResponse response = server::HttpResponse::Text(503, "recovering\n");
        response.headers.emplace_back("Retry-After", "1");
        responder.Respond(std::move(response));
        return;
      }
      (*api)(std::move(request), std::move(responder));
    });
  }
}

// The query engine's lines of /metrics, and the live tails'.
std::string QueryMetricsText(const ServerState& state) {
  const query::QueryPool* pool = state.pool.load();
  if (pool == nullptr) return "";
  std::string out = fmt::format(
      "# HELP strata_queries_running SQL queries holding a query connection.\n"
      "# TYPE strata_queries_running gauge\n"
      "strata_queries_running {}\n",
      pool->RunningQueries());
  if (const api::Api* rest_api = state.rest_api.load(); rest_api != nullptr) {
    out += api::LogTailMetricsText(rest_api->LogTailStatistics());
  }
  return out;
}

server::HealthChecks HealthChecksFor(ServerState& state) {
  return server::HealthChecks{
      .ready = [&state]() -> absl::Status {
        switch (state.phase.load()) {
          case Phase::kReady:
            return absl::OkStatus();
          case Phase::kRecovering:
            return absl::UnavailableError("recovering the data directory");
          case Phase::kDraining:
            return absl::UnavailableError("shutting down");
        }
        return absl::UnavailableError("unknown state");
      },
      .metrics_text =
          [&state]() {
            const storage::Storage* storage = state.storage.load();
            if (storage == nullptr) {
              return state.metrics.RenderPrometheus(storage::GroupCommitWriterStats{}) +
                     QueryMetricsText(state);
            }
            std::optional<storage::UploadStats> upload;
            if (storage->uploader() != nullptr) upload = storage->uploader()->Stats();
            std::optional<storage::EvictionStats> eviction;
            std::optional<storage::ReadCacheStats> cache;
            if (storage->evictor() != nullptr) {
              eviction = storage->evictor()->Stats();
              cache = storage->resolver()->CacheStats();
            }
            return state.metrics.RenderPrometheus(
                       storage->WriterStats(),
                       server::StorageGauges{.live_batches = storage->Pin()->size(),
                                             .maintenance = storage->GetMaintenanceStats(),
                                             .upload = upload,
                                             .eviction = eviction,
                                             .cache = cache}) +
                   QueryMetricsText(state);
          },
  };
}

// The ingest token check: a live token whose scope allows ingest.
server::IngestService::TokenCheck TokenCheckFor(const control::TokenAuthenticator& auth) {
  return [&auth](std::string_view token) {
    return auth.Authorize(token, control::TokenScope::kIngest);
  };
}

// Prints the token the first boot created on standard output whatever the
// log level (it is shown only once), with how to make the read token the
// REST API needs.
void PrintFirstToken(const std::string& data_dir, const control::CreatedToken& created) {
  fmt::print(
      "strata serve: created ingest token \"{}\". It is shown only this once (strata keeps only "
      "a hash of it), so store it now. Send it with every OTLP export as \"Authorization: Bearer "
      "<token>\":\n    {}\nThe REST API (/api/v1/, strata sql) needs a token with read scope; "
      "create one with:\n    strata token create --data-dir {} --name <name> --scope read\n",
      control::kDefaultIngestTokenName, created.token, data_dir);
  std::fflush(stdout);
}

// While no account exists: the one-time link that creates the first admin,
// on standard output whatever the log level.
void PrintSetupLink(const std::string& api_address, bool tls, const std::string& token) {
  absl::StatusOr<HostPort> bound = ParseHostPort(api_address);
  std::string host = bound.ok() ? bound->host : "localhost";
  if (host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]") host = "localhost";
  fmt::print(
      "strata serve: no account exists yet. Open this link within 1 hour to create the first "
      "admin (it works once; restarting strata serve prints a new one):\n    "
      "{}://{}:{}/setup#token={}\nWithout a browser: POST /api/v1/auth/setup (docs/api.md) "
      "with this token.\n",
      tls ? "https" : "http", host, bound.ok() ? bound->port : 7520, token);
  std::fflush(stdout);
}

std::chrono::nanoseconds Remaining(SteadyClock::time_point deadline) {
  return std::max(std::chrono::nanoseconds(0), deadline - SteadyClock::now());
}

// --tls-cert and --tls-key come together.
absl::Status ValidateTlsFlags(const ServeOptions& options) {
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    return absl::InvalidArgumentError(fmt::format(
        "{} is given without {}: TLS needs both the certificate and its private key (or neither "
        "for plain text)",
        options.tls_cert.empty() ? "--tls-key" : "--tls-cert",
        options.tls_cert.empty() ? "--tls-cert" : "--tls-key"));
  }
  return absl::OkStatus();
}

// SIGHUP: reads the certificate and key again. A pair that cannot be used
// is logged and the one in use stays, on every listener.
void ReloadTls(server::TlsServerContext* tls, server::GrpcServer& grpc) {
  if (tls == nullptr) {
    spdlog::info("strata serve: received SIGHUP; TLS is off, so there is nothing to reload");
    return;
  }
  if (absl::Status s = tls->Reload(); !s.ok()) {
    spdlog::error("strata serve: received SIGHUP; kept the TLS certificate in use: {}",
                  std::string(s.message()));
    return;
  }
  if (absl::Status s = grpc.ReloadTls(tls->key_and_chain_pem()); !s.ok()) {
    spdlog::error(
        "strata serve: received SIGHUP; HTTPS uses the new TLS certificate but OTLP/gRPC keeps "
        "the old one: {}",
        std::string(s.message()));
    return;
  }
  spdlog::info(
      "strata serve: received SIGHUP; reloaded the TLS certificate ({}): new HTTPS connections "
      "use it now, new OTLP/gRPC connections within {} s; open connections carry on",
      tls->description(), server::GrpcServer::kTlsRefreshSeconds);
}

}  // namespace

absl::StatusOr<int64_t> ParseEvictAfter(std::string_view text) {
  const auto bad = [text] {
    return absl::InvalidArgumentError(fmt::format(
        "--evict-after {:?}: expected a positive whole number and a unit: 90s, 30m, 6h, 7d",
        std::string(text)));
  };
  if (text.size() < 2) return bad();
  int64_t unit = 0;
  switch (text.back()) {
    case 's':
      unit = 1'000'000;
      break;
    case 'm':
      unit = 60'000'000;
      break;
    case 'h':
      unit = 3'600'000'000;
      break;
    case 'd':
      unit = 86'400'000'000;
      break;
    default:
      return bad();
  }
  int64_t n = 0;
  const std::string_view digits = text.substr(0, text.size() - 1);
  if (digits.front() < '0' || digits.front() > '9') return bad();  // no sign
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec == std::errc::result_out_of_range && end == digits.data() + digits.size()) {
    n = INT64_MAX;  // all digits, too many of them: refused as too long below
  } else if (ec != std::errc() || end != digits.data() + digits.size() || n <= 0) {
    return bad();
  }
  // Checked before multiplying, so no count of any unit overflows.
  if (n > kMaxEvictAfterMicros / unit) {
    return absl::InvalidArgumentError(
        fmt::format("--evict-after {:?}: at most {}d (100 years); leave it out to never evict",
                    std::string(text), kMaxEvictAfterMicros / 86'400'000'000));
  }
  return n * unit;
}

absl::Status ValidateServeOptions(const ServeOptions& options) {
  if (options.data_dir.empty()) return absl::InvalidArgumentError("--data-dir must not be empty");
  if (absl::Status s = ValidateTlsFlags(options); !s.ok()) return s;
  const std::pair<const char*, const std::string*> addresses[] = {
      {"--otlp-grpc-address", &options.otlp_grpc_address},
      {"--otlp-http-address", &options.otlp_http_address},
      {"--api-address", &options.api_address},
  };
  for (const auto& [flag, value] : addresses) {
    auto parsed = ParseHostPort(*value);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          fmt::format("{}: {}", flag, std::string(parsed.status().message())));
    }
  }
  if (options.inflight_bytes_limit == 0) {
    return absl::InvalidArgumentError("--inflight-bytes-limit must be > 0");
  }
  if (options.max_body_bytes == 0 || options.max_decompressed_body_bytes == 0) {
    return absl::InvalidArgumentError(
        "--max-body-bytes and --max-decompressed-body-bytes must be > 0");
  }
  if (options.max_request_rows == 0) {
    return absl::InvalidArgumentError("--max-request-rows must be > 0");
  }
  if (!(options.drain_timeout_sec >= 0)) {
    return absl::InvalidArgumentError("--drain-timeout-sec must be >= 0");
  }
  if (absl::StatusOr<int> node = storage::ParseBatchIdNode(options.node_id); !node.ok()) {
    return absl::InvalidArgumentError(
        fmt::format("--node-id: {}", std::string(node.status().message())));
  }
  if (!options.catalog.empty()) {
    if (absl::Status url = ValidateCatalogUrl(options.catalog); !url.ok()) return url;
    if (options.object_store.url.empty()) {
      return absl::InvalidArgumentError("--catalog needs --object-store");
    }
    if (!(options.catalog_lease_sec >= 1 && options.catalog_lease_sec <= 3600)) {
      return absl::InvalidArgumentError("--catalog-lease-sec must be in [1, 3600]");
    }
    if (!(options.catalog_delete_after_sec >= 1 && options.catalog_delete_after_sec <= 604800)) {
      return absl::InvalidArgumentError("--catalog-delete-after-sec must be in [1, 604800]");
    }
  }
  if (options.ack_after_upload && options.object_store.url.empty()) {
    return absl::InvalidArgumentError("--ack-after-upload needs --object-store");
  }
  if ((!options.evict_after.empty() || options.cache_size != 0) &&
      options.object_store.url.empty()) {
    return absl::InvalidArgumentError("--evict-after and --cache-size need --object-store");
  }
  if (!options.evict_after.empty()) {
    if (absl::StatusOr<int64_t> parsed = ParseEvictAfter(options.evict_after); !parsed.ok()) {
      return parsed.status();
    }
  }
  if (!(options.ack_upload_timeout_sec > 0 && options.ack_upload_timeout_sec <= 3600)) {
    return absl::InvalidArgumentError("--ack-upload-timeout-sec must be in (0, 3600]");
  }
  if (options.query_threads < 0) return absl::InvalidArgumentError("--query-threads must be >= 0");
  if (options.sql_max_answer_bytes == 0) {
    return absl::InvalidArgumentError("--sql-max-answer-bytes must be > 0");
  }
  if (options.log_tail_max_connections < 0) {
    return absl::InvalidArgumentError("--log-tail-max-connections must be >= 0");
  }
  if (options.loki_tail_max_connections < 0 || options.loki_tail_max_per_token < 0) {
    return absl::InvalidArgumentError(
        "--loki-tail-max-connections and --loki-tail-max-per-token must be >= 0");
  }
  if (options.promql_cache_mb > kMaxPromqlCacheMb) {
    return absl::InvalidArgumentError(fmt::format(
        "--promql-cache-mb must be at most {} (64 GiB; 0: no cache)", kMaxPromqlCacheMb));
  }
  if (options.log_tail_max_queued_bytes < 4096) {
    return absl::InvalidArgumentError("--log-tail-max-queued-bytes must be at least 4096");
  }
  if (options.query_concurrency < 1) {
    return absl::InvalidArgumentError("--query-concurrency must be >= 1");
  }
  if (!(options.query_timeout_sec > 0)) {
    return absl::InvalidArgumentError("--query-timeout-sec must be > 0");
  }
  if (options.api_workers < 1) return absl::InvalidArgumentError("--api-workers must be >= 1");
  if (!(options.session_idle_timeout_sec >= 60) || !(options.session_lifetime_sec >= 60)) {
    return absl::InvalidArgumentError(
        "--session-idle-timeout-sec and --session-lifetime-sec must be at least 60");
  }
  if (absl::StatusOr<std::vector<api::IpNetwork>> proxies =
          api::ParseTrustedProxies(options.trusted_proxies);
      !proxies.ok()) {
    return proxies.status();
  }
  if (options.audit_retention_days == 0) {
    return absl::InvalidArgumentError("--audit-retention-days must be > 0");
  }
  if (options.compaction_min_inputs == 1) {
    return absl::InvalidArgumentError("--compaction-min-inputs must be 0 (off) or >= 2");
  }
  if (!(options.maintenance_interval_sec > 0) || options.maintenance_interval_sec > 3600) {
    return absl::InvalidArgumentError("--maintenance-interval-sec must be in (0, 3600]");
  }
  if (options.http_io_threads < 1) {
    return absl::InvalidArgumentError("--http-io-threads must be >= 1");
  }
  if (!(options.grpc_request_timeout_sec > 0) || options.grpc_request_timeout_sec > 86400) {
    return absl::InvalidArgumentError("--grpc-request-timeout-sec must be in (0, 86400]");
  }
  if (options.grpc_memory_quota_bytes < options.max_body_bytes) {
    return absl::InvalidArgumentError(
        "--grpc-memory-quota-bytes must be at least --max-body-bytes, so that one request of "
        "the largest size can arrive");
  }
  return absl::OkStatus();
}

int RunServe(const ServeOptions& options) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  if (absl::Status s = ValidateTlsFlags(options); !s.ok()) {
    spdlog::error("strata serve: {}; {}", std::string(s.message()),
                  RunbookRef("tls-certificate-or-key-unusable"));
    return 2;
  }
  if (absl::Status s = ValidateServeOptions(options); !s.ok()) {
    const bool eviction = absl::StartsWith(s.message(), "--evict-after");
    spdlog::error(
        "strata serve: {}; {}", std::string(s.message()),
        RunbookRef(eviction ? "eviction-needs-an-object-store" : "invalid-configuration"));
    return 2;
  }
  std::error_code ec;
  const std::filesystem::path data_dir = std::filesystem::absolute(options.data_dir, ec);
  spdlog::info(
      "strata serve: effective configuration: data_dir={} otlp_grpc_address={} "
      "otlp_http_address={} api_address={} inflight_bytes_limit={} max_body_bytes={} "
      "max_decompressed_body_bytes={} max_request_rows={} drain_timeout_sec={}",
      ec ? options.data_dir : data_dir.string(), options.otlp_grpc_address,
      options.otlp_http_address, options.api_address, options.inflight_bytes_limit,
      options.max_body_bytes, options.max_decompressed_body_bytes, options.max_request_rows,
      options.drain_timeout_sec);
  if (absl::StatusOr<uint64_t> files = server::RaiseOpenFileLimit(kWantedOpenFiles); !files.ok()) {
    spdlog::warn("strata serve: could not raise the open-file limit: {}",
                 files.status().ToString());
  } else if (*files < 4096) {
    spdlog::warn(
        "strata serve: only {} open files allowed; OTLP/HTTP connections are limited by "
        "it",
        *files);
  }

  // TLS: read and checked before anything listens; one context serves both
  // HTTP listeners, and gRPC gets the same pair.
  std::shared_ptr<server::TlsServerContext> tls;
  if (!options.tls_cert.empty()) {
    absl::StatusOr<std::shared_ptr<server::TlsServerContext>> loaded =
        server::TlsServerContext::Load(options.tls_cert, options.tls_key);
    if (!loaded.ok()) {
      // The message names the runbook section.
      spdlog::error("strata serve: {}", std::string(loaded.status().message()));
      return 2;
    }
    tls = std::move(*loaded);
    spdlog::info("strata serve: TLS on every listener with {} (--tls-cert {}); SIGHUP reloads it",
                 tls->description(), options.tls_cert);
  }
  const char* const tls_note = tls != nullptr ? " (TLS)" : "";

  ServerState state;
  server::HttpRouter api_routes;
  server::AddHealthRoutes(&api_routes, HealthChecksFor(state));
  AddApiForwarding(&api_routes, state);
  web::AddWebUiRoutes(&api_routes);
  absl::StatusOr<std::unique_ptr<server::HttpServer>> api = server::HttpServer::Start(
      server::HttpServerOptions{.address = options.api_address, .tls = tls},
      std::move(api_routes).ToHandler());
  if (!api.ok()) {
    spdlog::error("strata serve: --api-address: {}", api.status().ToString());
    return 1;
  }
  spdlog::info("strata serve: API listening on {}{}", (*api)->address(), tls_note);

  PosixFileSystem fs;
  storage::StorageOptions storage_options;
  std::shared_ptr<cluster::ClusterCompactionGate> compaction_gate;
  storage_options.writer.inflight_bytes_limit = options.inflight_bytes_limit;
  storage_options.start_maintenance = true;
  storage_options.lookup_cache_bytes = options.lookup_cache_bytes;
  storage_options.node = *storage::ParseBatchIdNode(options.node_id);  // validated above
  storage::MaintenanceOptions& maintenance = storage_options.maintenance;
  maintenance.compaction = options.compaction_min_inputs >= 2;
  maintenance.policy.min_inputs = std::max<uint32_t>(options.compaction_min_inputs, 2);
  maintenance.retention.days = options.retention_days;
  maintenance.retention.max_disk_bytes = options.max_disk_bytes;
  maintenance.idle_interval =
      std::chrono::nanoseconds(static_cast<int64_t>(options.maintenance_interval_sec * 1e9));
  maintenance.on_error = [](const absl::Status& status) {
    spdlog::warn("strata serve: maintenance: {}", status.ToString());
  };
  std::unique_ptr<objectstore::BatchStore> object_store;
  if (!options.object_store.url.empty()) {
    absl::StatusOr<std::unique_ptr<objectstore::BatchStore>> opened =
        objectstore::OpenObjectStore(fs, options.object_store, objectstore::ProcessEnvironment());
    if (!opened.ok()) {
      spdlog::error("strata serve: {}; {}", std::string(opened.status().message()),
                    RunbookRef("object-store-url-unusable"));
      return 2;
    }
    object_store = *std::move(opened);
    storage_options.object_store = object_store.get();
    storage_options.ack_after_upload = options.ack_after_upload;
    storage_options.shared_catalog = !options.catalog.empty();
    if (storage_options.shared_catalog) {
      // One compactor per day across the servers (cluster_member.h).
      compaction_gate = std::make_shared<cluster::ClusterCompactionGate>();
      storage_options.maintenance.gate = compaction_gate;
    }
    storage_options.ack_upload_timeout = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::duration<double>(options.ack_upload_timeout_sec));
    storage_options.upload.on_error = [](const absl::Status& status) {
      spdlog::warn("strata serve: offload: {} (retried)", status.ToString());
    };
    if (!options.evict_after.empty()) {
      storage_options.evict_after =
          std::chrono::microseconds(*ParseEvictAfter(options.evict_after));
      if (options.cache_size != 0) storage_options.cache_bytes = options.cache_size;
      storage_options.on_evict_error = [](const absl::Status& status) {
        spdlog::warn("strata serve: eviction: {} (retried)", status.ToString());
      };
    }
  }
  // Absolute, so the files queries name lie under the one directory DuckDB
  // may read.
  const std::string data_path = ec ? options.data_dir : data_dir.lexically_normal().string();
  absl::StatusOr<std::unique_ptr<storage::Storage>> storage =
      storage::Storage::Open(fs, data_path, storage_options);
  if (!storage.ok() && object_store != nullptr &&
      storage.status().message().find("the object store") != std::string_view::npos) {
    spdlog::error("strata serve: {}; {}", std::string(storage.status().message()),
                  RunbookRef("object-store-does-not-answer"));
    return 1;
  }
  if (!storage.ok()) {
    // Recovery's refusals already name the runbook section.
    spdlog::error("strata serve: cannot open the data directory: {}", storage.status().ToString());
    return 1;
  }
  const storage::RecoveryReport& report = (*storage)->data_dir().recovery();
  for (const storage::SetAsideEntry& stray : report.set_aside) {
    spdlog::warn(
        "strata serve: set a stray entry aside: {} is not something strata writes, so boot moved "
        "it to {} (nothing was deleted); {}",
        stray.from, stray.to, RunbookRef("stray-entry-set-aside"));
  }
  spdlog::info(
      "strata serve: storage ready: {} batches; removed {} staging entries and {} empty "
      "day directories{}{}",
      (*storage)->Pin()->size(), report.removed_staging.size(), report.removed_days.size(),
      report.compaction.empty() ? "" : "; ", report.compaction);
  if (const storage::Uploader* uploader = (*storage)->uploader(); uploader != nullptr) {
    const storage::UploadStats upload = uploader->Stats();
    spdlog::info(
        "strata serve: offload to {}: {} live batches already there, {} to upload; "
        "acknowledgement {}",
        object_store->Describe(), upload.found_at_start, upload.batches_pending,
        options.ack_after_upload ? "after the upload (--ack-after-upload)"
                                 : "after the local fsync (data not yet uploaded is only on "
                                   "this disk; see strata_upload_oldest_pending_age_seconds)");
  }
  spdlog::info(
      "strata serve: maintenance: compaction {}, retention {}, disk cap {}",
      maintenance.compaction
          ? fmt::format("on (a level of today merges at {} batches)", maintenance.policy.min_inputs)
          : "off",
      options.retention_days == 0 ? "off" : fmt::format("{} days", options.retention_days),
      options.max_disk_bytes == 0 ? "off" : fmt::format("{} bytes", options.max_disk_bytes));
  ServeCluster cluster;
  if (!options.catalog.empty()) {
    absl::StatusOr<ServeCluster> joined = JoinCluster(
        {.url = options.catalog,
         .node_id = options.node_id,
         .address = options.api_address,
         .lease_time = absl::Seconds(options.catalog_lease_sec),
         .delete_after = absl::Seconds(options.catalog_delete_after_sec),
         .keep_days = static_cast<int>(options.retention_days),
         .gate = compaction_gate,
         .TEST_restore_step_delay = absl::Milliseconds(options.test_restore_step_delay_ms)},
        **storage);
    if (!joined.ok()) {
      // The message ends with its runbook section.
      spdlog::error("strata serve: {}", std::string(joined.status().message()));
      return 1;
    }
    cluster = *std::move(joined);
    spdlog::info("strata serve: batch catalog {}: node {} joined", cluster.catalog->server(),
                 options.node_id);
  }
  // Queries and exports see the storage engine only now: with --catalog,
  // once the first sync dropped the other servers' batches the catalog no
  // longer lists (their objects may be gone after a long stop).
  state.storage.store(storage->get());

  // With --catalog, tokens, accounts and MCP's OAuth are the PostgreSQL
  // ones several servers share.
  absl::StatusOr<std::unique_ptr<control::TokenStore>> tokens =
      OpenTokenStore(options.data_dir, options.catalog);
  if (!tokens.ok()) {
    spdlog::error("strata serve: {}", tokens.status().ToString());
    return 1;
  }
  absl::StatusOr<std::optional<control::CreatedToken>> first =
      (*tokens)->CreateIfNone(control::kDefaultIngestTokenName, control::TokenScope::kIngest);
  if (!first.ok()) {
    spdlog::error("strata serve: cannot create the first ingest token: {}",
                  first.status().ToString());
    return 1;
  }
  if (first->has_value()) PrintFirstToken(options.data_dir, **first);
  absl::StatusOr<std::unique_ptr<control::TokenAuthenticator>> authenticator =
      control::TokenAuthenticator::Create(
          tokens->get(),
          control::TokenAuthenticatorOptions{.on_refresh_error = [](const absl::Status& s) {
            spdlog::warn(
                "strata serve: reloading tokens failed (the last "
                "loaded ones stay in use): {}",
                s.ToString());
          }});
  if (!authenticator.ok()) {
    spdlog::error("strata serve: cannot load ingest tokens: {}", authenticator.status().ToString());
    return 1;
  }
  (*authenticator)->Start();

  absl::StatusOr<std::unique_ptr<control::AccountStore>> account_store =
      OpenAccountStore(options.data_dir, options.catalog, absl::Now());
  if (!account_store.ok()) {
    spdlog::error("strata serve: {}", account_store.status().ToString());
    return 1;
  }
  control::AccountsOptions account_options;
  account_options.session_idle = absl::Seconds(options.session_idle_timeout_sec);
  account_options.session_lifetime = absl::Seconds(options.session_lifetime_sec);
  account_options.audit_retention = absl::Hours(24) * options.audit_retention_days;
  account_options.on_audit_error = [](const absl::Status& status) {
    spdlog::warn("strata serve: audit log: {}", status.ToString());
  };
  control::Accounts accounts(account_store->get(), std::move(account_options));
  control::SavedQueries saved_queries(account_store->get());
  // The account store's database (with --catalog, the PostgreSQL one the
  // servers share), whose users its grants reference.
  absl::StatusOr<std::unique_ptr<control::OAuth>> oauth =
      OpenOAuth(options.data_dir, options.catalog, absl::Now());
  if (!oauth.ok()) {
    spdlog::error("strata serve: {}", oauth.status().ToString());
    return 1;
  }
  absl::StatusOr<std::optional<std::string>> setup = accounts.OpenSetup();
  if (!setup.ok()) {
    spdlog::error("strata serve: cannot read the accounts: {}", setup.status().ToString());
    return 1;
  }
  if (setup->has_value()) PrintSetupLink((*api)->address(), tls != nullptr, **setup);

  const auto query_timeout = std::chrono::milliseconds(
      static_cast<int64_t>(std::max(1.0, options.query_timeout_sec * 1000)));
  absl::StatusOr<std::unique_ptr<query::QueryPool>> pool =
      query::QueryPool::Open(query::QueryPoolOptions{
          .data_dir = data_path,
          .max_concurrent = options.query_concurrency,
          .threads = options.query_threads,
          .memory_limit_bytes = options.query_memory_limit_bytes,
          .default_deadline = query_timeout,
      });
  if (!pool.ok()) {
    spdlog::error("strata serve: cannot start the query engine: {}; {}", pool.status().ToString(),
                  RunbookRef("query-engine-cannot-start"));
    return 1;
  }
  spdlog::info(
      "strata serve: query engine ready: memory_limit={} MiB threads={} concurrency={} "
      "timeout={} s",
      (*pool)->options().memory_limit_bytes >> 20, (*pool)->options().threads,
      (*pool)->options().max_concurrent, options.query_timeout_sec);
  storage::Storage* const storage_ptr = storage->get();
  control::TokenAuthenticator* const auth_ptr = authenticator->get();
  auto rest_api = std::make_unique<api::Api>(api::ApiOptions{
      .storage = [storage_ptr] { return storage_ptr; },
      .pool = pool->get(),
      .fs = &fs,
      .data_dir = data_path,
      .authenticate = [auth_ptr](std::string_view token) { return auth_ptr->Authenticate(token); },
      .accounts = &accounts,
      .saved_queries = &saved_queries,
      .tokens = tokens->get(),
      .oauth = oauth->get(),
      .tokens_changed =
          [auth_ptr] {
            if (absl::Status s = auth_ptr->Refresh(); !s.ok()) {
              spdlog::warn(
                  "strata serve: tokens changed, refresh failed (the next one retries): {}",
                  s.ToString());
            }
          },
      // Over TLS the session cookie is __Host-strata_session with Secure.
      .secure_cookies = tls != nullptr,
      // Checked by ValidateServeOptions.
      .trusted_proxies = api::ParseTrustedProxies(options.trusted_proxies).value(),
      .worker_threads = options.api_workers,
      .query_deadline = query_timeout,
      .sql_max_answer_bytes = options.sql_max_answer_bytes,
      .promql_cache_bytes = size_t{options.promql_cache_mb} << 20,
      .log_tail = {.max_connections = options.log_tail_max_connections,
                   .max_queued_bytes = options.log_tail_max_queued_bytes,
                   .formatted_max_connections = options.loki_tail_max_connections,
                   .formatted_max_per_owner = options.loki_tail_max_per_token},
  });
  server::HttpRouter rest_routes;
  rest_api->AddRoutes(&rest_routes);
  const server::HttpHandler rest_handler = std::move(rest_routes).ToHandler();
  state.api.store(&rest_handler);
  state.pool.store(pool->get());
  state.rest_api.store(rest_api.get());
  // Whichever way this function returns, the API listener stops (no handler
  // runs any more) before the REST API and the engines it reads go.
  std::chrono::nanoseconds api_drain = std::chrono::seconds(1);
  absl::Cleanup stop_api_listener = [&api, &state, &api_drain] {
    (*api)->Shutdown(api_drain);
    state.api.store(nullptr);
    state.pool.store(nullptr);
    state.rest_api.store(nullptr);
  };

  server::IngestService ingest(
      **storage, TokenCheckFor(**authenticator), state.metrics,
      server::IngestService::Options{.max_rows_per_request = options.max_request_rows});
  absl::StatusOr<std::unique_ptr<server::GrpcServer>> grpc = server::GrpcServer::Start(
      ingest, server::GrpcServerOptions{
                  .address = options.otlp_grpc_address,
                  .max_message_bytes = options.max_decompressed_body_bytes,
                  .max_wire_message_bytes = options.max_body_bytes,
                  .request_timeout = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::duration<double>(options.grpc_request_timeout_sec)),
                  .memory_quota_bytes = options.grpc_memory_quota_bytes,
                  .tls_key_and_chain_pem = tls != nullptr ? tls->key_and_chain_pem() : ""});
  if (!grpc.ok()) {
    spdlog::error("strata serve: --otlp-grpc-address: {}", grpc.status().ToString());
    return 1;
  }
  const std::string grpc_host = ParseHostPort(options.otlp_grpc_address)->host;
  spdlog::info("strata serve: OTLP/gRPC listening on {}:{}{}",
               grpc_host.empty() ? "0.0.0.0" : grpc_host, (*grpc)->port(), tls_note);

  server::OtlpHttpOptions http_options;
  http_options.http.address = options.otlp_http_address;
  http_options.http.io_threads = options.http_io_threads;
  http_options.http.max_body_bytes = options.max_body_bytes;
  http_options.http.tls = tls;
  http_options.max_decompressed_body_bytes = options.max_decompressed_body_bytes;
  absl::StatusOr<std::unique_ptr<server::HttpServer>> http =
      server::StartOtlpHttpServer(std::move(http_options), ingest);
  if (!http.ok()) {
    spdlog::error("strata serve: --otlp-http-address: {}", http.status().ToString());
    (*grpc)->Shutdown(std::chrono::nanoseconds(0));
    return 1;
  }
  spdlog::info("strata serve: OTLP/HTTP listening on {}{}", (*http)->address(), tls_note);
  state.phase.store(Phase::kReady);
  spdlog::info("strata serve: ready; waiting for SIGINT or SIGTERM");

  int received = 0;
  for (;;) {
    if (sigwait(&signals, &received) != 0) {
      spdlog::error("strata serve: sigwait failed");
      return 1;
    }
    if (received != SIGHUP) break;
    ReloadTls(tls.get(), **grpc);
  }
  const SteadyClock::time_point deadline =
      SteadyClock::now() + std::chrono::duration_cast<SteadyClock::duration>(
                               std::chrono::duration<double>(options.drain_timeout_sec));
  spdlog::info("strata serve: received {}; no longer accepting, draining for up to {} s",
               received == SIGINT ? "SIGINT" : "SIGTERM", options.drain_timeout_sec);
  state.phase.store(Phase::kDraining);
  const ShutdownBackstop backstop(deadline + kShutdownBackstop);
  // Live tails end now (an `end` event, then the last chunk), not when the
  // API listener closes after the drain.
  rest_api->StopLogTails();
  // So do the MCP sessions' GET streams: a client resumes them elsewhere
  // (or after the restart, with a new session) rather than holding the
  // drain open.
  rest_api->StopMcpStreams();
  // No query starts any more; running ones may finish until the deadline,
  // then are interrupted and answered 503.
  (*pool)->Close(deadline);
  // In-flight exports finish while the writer still runs; only then is the
  // writer drained, so nothing acknowledged is lost and nothing is
  // acknowledged that was not stored. Exports still unanswered at the
  // deadline are answered 503.
  (*http)->StopAccepting();
  (*grpc)->Shutdown(Remaining(deadline));
  (*http)->Shutdown(Remaining(deadline));
  (*storage)->Shutdown(Remaining(deadline));
  if (cluster.member != nullptr) {
    // The node id is free for a restart at once, not after the lease.
    if (absl::Status left = cluster.member->Leave(); !left.ok()) {
      spdlog::warn("strata serve: batch catalog: {} (the node id is free again after the lease)",
                   left.ToString());
    }
  }
  const storage::GroupCommitWriterStats stats = (*storage)->WriterStats();
  spdlog::info("strata serve: drained; {} requests acknowledged, {} batches published",
               stats.requests_ok, stats.batches_committed);
  (*authenticator)->Stop();
  if (absl::Status s = (*authenticator)->Refresh(); !s.ok()) {
    spdlog::warn("strata serve: could not record the tokens' last use: {}", s.ToString());
  }
  state.storage.store(nullptr);
  // The API listener stays open while a query runs: /readyz says the
  // server is draining, new queries are refused 503, and the running ones
  // are answered (those interrupted at the deadline within the grace).
  (*pool)->WaitUntilNoneRuns(deadline);
  api_drain = Remaining(deadline) + kInterruptedQueryGrace;
  std::move(stop_api_listener).Invoke();
  rest_api.reset();  // joins its workers: no query runs on the storage any more
  pool->reset();
  storage->reset();
  spdlog::info("strata serve: stopped");
  return 0;
}

void AddServeFlags(CLI::App* command, std::set<std::string>* env_names, ServeOptions* options) {
  AddFlag(command, env_names, "data-dir", &options->data_dir, "Data directory");
  AddFlag(command, env_names, "otlp-grpc-address", &options->otlp_grpc_address,
          "OTLP/gRPC listen address");
  AddFlag(command, env_names, "otlp-http-address", &options->otlp_http_address,
          "OTLP/HTTP listen address");
  AddFlag(command, env_names, "api-address", &options->api_address,
          "REST API, /healthz, /readyz and /metrics listen address");
  AddFlag(command, env_names, "session-idle-timeout-sec", &options->session_idle_timeout_sec,
          "A browser session ends after this long unused");
  AddFlag(command, env_names, "session-lifetime-sec", &options->session_lifetime_sec,
          "A browser session ends this long after sign-in, however much it is used");
  AddFlag(command, env_names, "audit-retention-days", &options->audit_retention_days,
          "Days the audit log keeps its events");
  AddFlag(command, env_names, "trusted-proxies", &options->trusted_proxies,
          "Reverse proxies (IPs or CIDR networks, comma-separated) whose X-Forwarded-For, "
          "-Proto and -Host the API believes");
  AddFlag(command, env_names, "tls-cert", &options->tls_cert,
          "PEM certificate chain: serve TLS on every listener (with --tls-key; SIGHUP reloads)");
  AddFlag(command, env_names, "tls-key", &options->tls_key,
          "PEM private key of --tls-cert (unencrypted)");
  AddFlag(command, env_names, "inflight-bytes-limit", &options->inflight_bytes_limit,
          "Memory held by admitted, unanswered exports (decoded rows, protobuf bodies); beyond it "
          "exports get 429 / RESOURCE_EXHAUSTED");
  AddFlag(command, env_names, "max-body-bytes", &options->max_body_bytes,
          "Largest export body as received (413 beyond)");
  AddFlag(command, env_names, "max-decompressed-body-bytes", &options->max_decompressed_body_bytes,
          "Largest export body after gzip decompression (413 / RESOURCE_EXHAUSTED beyond)");
  AddFlag(command, env_names, "max-request-rows", &options->max_request_rows,
          "Most spans, log records or data points in one export (400 beyond)");
  AddFlag(command, env_names, "drain-timeout-sec", &options->drain_timeout_sec,
          "How long shutdown waits for in-flight exports and the writer");
  AddFlag(command, env_names, "http-io-threads", &options->http_io_threads,
          "Event-loop threads of the OTLP/HTTP listener");
  AddFlag(command, env_names, "grpc-request-timeout-sec", &options->grpc_request_timeout_sec,
          "How long an OTLP/gRPC call may take to deliver its request (DEADLINE_EXCEEDED beyond)");
  AddFlag(command, env_names, "grpc-memory-quota-bytes", &options->grpc_memory_quota_bytes,
          "Memory gRPC's transport buffers may use (at least --max-body-bytes)");
  AddFlag(command, env_names, "query-memory-limit-bytes", &options->query_memory_limit_bytes,
          "DuckDB's memory limit (0: half of the cgroup's or the machine's memory)");
  AddFlag(command, env_names, "query-threads", &options->query_threads,
          "DuckDB worker threads (0: one per core)");
  AddFlag(command, env_names, "query-concurrency", &options->query_concurrency,
          "Queries that run at once (more wait, then get 429)");
  AddFlag(command, env_names, "query-timeout-sec", &options->query_timeout_sec,
          "Deadline of each query; it is interrupted after it");
  AddFlag(command, env_names, "api-workers", &options->api_workers,
          "Threads that answer REST API requests");
  AddFlag(command, env_names, "sql-max-answer-bytes", &options->sql_max_answer_bytes,
          "Most bytes of values in one SQL answer; past it rows are left out (truncated)");
  AddFlag(command, env_names, "log-tail-max-connections", &options->log_tail_max_connections,
          "Live log tails (GET /api/v1/logs/tail) open at once; more are answered 503 (0: none)");
  AddFlag(command, env_names, "log-tail-max-queued-bytes", &options->log_tail_max_queued_bytes,
          "Bytes a live log tail may hold for a slow client; past half of it records are "
          "skipped and counted in a `missed` event");
  AddFlag(command, env_names, "loki-tail-max-connections", &options->loki_tail_max_connections,
          "Loki live tails (GET /loki/api/v1/tail, WebSocket) open at once; more are answered "
          "429 (0: none)");
  AddFlag(command, env_names, "loki-tail-max-per-token", &options->loki_tail_max_per_token,
          "Loki live tails one token may hold open at once; more are answered 429");
  AddFlag(command, env_names, "lookup-cache-bytes", &options->lookup_cache_bytes,
          "Memory trace lookups may keep for the batches' parsed footers and dictionary pages "
          "(0: none)");
  AddFlag(command, env_names, "promql-cache-mb", &options->promql_cache_mb,
          "MiB of decoded metrics files the Prometheus API keeps across queries (0: none; "
          "every query reads through DuckDB)");
  AddFlag(command, env_names, "retention-days", &options->retention_days,
          "Days of ingest time kept; older whole days are deleted (0: keep everything)");
  AddFlag(command, env_names, "max-disk-bytes", &options->max_disk_bytes,
          "Cap on stored telemetry bytes; the oldest days go first, never today (0: no cap)");
  AddFlag(command, env_names, "compaction-min-inputs", &options->compaction_min_inputs,
          "Batches a level of today's data needs before they are merged (0: no compaction)");
  AddFlag(command, env_names, "maintenance-interval-sec", &options->maintenance_interval_sec,
          "How often the idle maintenance thread looks for work");
  AddFlag(command, env_names, "node-id", &options->node_id,
          "This server's node in every batch id it issues, 00 to zz: give each server that "
          "shares an object store its own");
  AddFlag(command, env_names, "catalog", &options->catalog,
          "With --object-store, for several servers: the PostgreSQL URL of the batch catalog "
          "they share, postgres://user[:password]@host:port/database (empty: none)");
  AddFlag(command, env_names, "catalog-lease-sec", &options->catalog_lease_sec,
          "With --catalog: seconds after its last heartbeat before a silent server's node id "
          "and day leases may be taken over (it heartbeats every third of this)");
  AddFlag(command, env_names, "catalog-delete-after-sec", &options->catalog_delete_after_sec,
          "With --catalog: seconds the objects of a batch removed from the catalog (by "
          "compaction or retention) stay in the store for queries of other servers still "
          "reading them; also how long objects no catalog names wait before deletion");
  // Hidden (no group): a test-only knob, ClusterMemberOptions::TEST_restore_step_delay.
  AddFlag(command, env_names, "test-restore-step-delay-ms", &options->test_restore_step_delay_ms,
          "Test only: wait this long before each batch a restore into an empty data directory "
          "restores")
      ->group("");
  AddObjectStoreFlags(command, env_names, &options->object_store,
                      "Copy every committed batch to this object store in the background: "
                      "s3://<bucket>[/<prefix>] or file:///<path> (empty: none)");
  AddFlag(command, env_names, "evict-after", &options->evict_after,
          "With --object-store: remove the local Parquet files of uploaded batches older than "
          "this (90s, 30m, 6h, 7d; at most 36500d) and read them back through the cache (empty: "
          "never)");
  AddFlag(command, env_names, "cache-size", &options->cache_size,
          "With --evict-after: bytes of evicted files kept in <data>/query/cache (0: 1 GiB)");
  command
      ->add_flag("--ack-after-upload", options->ack_after_upload,
                 "Acknowledge an export only once its batch is in the object store")
      ->envname(EnvironmentVariableOf("ack-after-upload"));
  env_names->insert(EnvironmentVariableOf("ack-after-upload"));
  AddFlag(command, env_names, "ack-upload-timeout-sec", &options->ack_upload_timeout_sec,
          "With --ack-after-upload: how long an export waits for the upload before it is "
          "answered 503 (its rows stay stored and are uploaded later)");
}

Command RegisterServe(CLI::App* app, std::set<std::string>* env_names) {
  auto options = std::make_shared<ServeOptions>();
  CLI::App* command = app->add_subcommand("serve", "Run the server (strata's main job)");
  AddServeFlags(command, env_names, options.get());
  return Command{command, [options] { return RunServe(*options); }};
}

}  // namespace strata::cli
