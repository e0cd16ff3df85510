#include "cli/app.h"

#include <set>
#include <string>

#include "CLI/CLI.hpp"
#include "cli/bench_compact.h"
#include "cli/bench_ingest.h"
#include "cli/bench_query.h"
#include "cli/bench_writer.h"
#include "cli/environment.h"
#include "cli/flags.h"
#include "cli/loadgen.h"
#include "cli/quarantine_cmd.h"
#include "cli/serve.h"
#include "cli/sql_cmd.h"
#include "cli/token_cmd.h"
#include "cli/verify_cmd.h"
#include "common/runbook.h"
#include "spdlog/spdlog.h"

namespace strata::cli {
namespace {

constexpr char kVersion[] = "strata " STRATA_VERSION;

}  // namespace

int Main(int argc, char** argv, char** envp) {
  CLI::App app{"strata: a single-binary OpenTelemetry backend (traces, logs, metrics as Parquet)",
               "strata"};
  app.set_version_flag("--version", kVersion);
  app.require_subcommand(1);
  std::set<std::string> env_names;

  std::string log_level = "info";
  AddFlag(&app, &env_names, "log-level", &log_level, "Log level")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));

  ServeOptions serve;
  CLI::App* serve_cmd = app.add_subcommand("serve", "Run the server (strata's main job)");
  AddFlag(serve_cmd, &env_names, "data-dir", &serve.data_dir, "Data directory");
  AddFlag(serve_cmd, &env_names, "otlp-grpc-address", &serve.otlp_grpc_address,
          "OTLP/gRPC listen address");
  AddFlag(serve_cmd, &env_names, "otlp-http-address", &serve.otlp_http_address,
          "OTLP/HTTP listen address");
  AddFlag(serve_cmd, &env_names, "api-address", &serve.api_address,
          "Web UI, REST API, /healthz, /readyz and /metrics listen address");
  AddFlag(serve_cmd, &env_names, "inflight-bytes-limit", &serve.inflight_bytes_limit,
          "Memory held by admitted, unanswered exports (decoded rows, protobuf bodies); beyond it "
          "exports get 429 / RESOURCE_EXHAUSTED");
  AddFlag(serve_cmd, &env_names, "max-body-bytes", &serve.max_body_bytes,
          "Largest export body as received (413 beyond)");
  AddFlag(serve_cmd, &env_names, "max-decompressed-body-bytes",
          &serve.max_decompressed_body_bytes,
          "Largest export body after gzip decompression (413 / RESOURCE_EXHAUSTED beyond)");
  AddFlag(serve_cmd, &env_names, "max-request-rows", &serve.max_request_rows,
          "Most spans, log records or data points in one export (400 beyond)");
  AddFlag(serve_cmd, &env_names, "drain-timeout-sec", &serve.drain_timeout_sec,
          "How long shutdown waits for in-flight exports and the writer");
  AddFlag(serve_cmd, &env_names, "http-io-threads", &serve.http_io_threads,
          "Event-loop threads of the OTLP/HTTP listener");
  AddFlag(serve_cmd, &env_names, "grpc-request-timeout-sec", &serve.grpc_request_timeout_sec,
          "How long an OTLP/gRPC call may take to deliver its request (DEADLINE_EXCEEDED beyond)");
  AddFlag(serve_cmd, &env_names, "grpc-memory-quota-bytes", &serve.grpc_memory_quota_bytes,
          "Memory gRPC's transport buffers may use (at least --max-body-bytes)");
  AddFlag(serve_cmd, &env_names, "query-memory-limit-bytes", &serve.query_memory_limit_bytes,
          "DuckDB's memory limit (0: half of the cgroup's or the machine's memory)");
  AddFlag(serve_cmd, &env_names, "query-threads", &serve.query_threads,
          "DuckDB worker threads (0: one per core)");
  AddFlag(serve_cmd, &env_names, "query-concurrency", &serve.query_concurrency,
          "Queries that run at once (more wait, then get 429)");
  AddFlag(serve_cmd, &env_names, "query-timeout-sec", &serve.query_timeout_sec,
          "Deadline of each query; it is interrupted after it");
  AddFlag(serve_cmd, &env_names, "api-workers", &serve.api_workers,
          "Threads that answer REST API requests");
  AddFlag(serve_cmd, &env_names, "lookup-cache-bytes", &serve.lookup_cache_bytes,
          "Memory trace lookups may keep for the batches' parsed footers and dictionary pages "
          "(0: none)");
  AddFlag(serve_cmd, &env_names, "retention-days", &serve.retention_days,
          "Days of ingest time kept; older whole days are deleted (0: keep everything)");
  AddFlag(serve_cmd, &env_names, "max-disk-bytes", &serve.max_disk_bytes,
          "Cap on stored telemetry bytes; the oldest days go first, never today (0: no cap)");
  AddFlag(serve_cmd, &env_names, "compaction-min-inputs", &serve.compaction_min_inputs,
          "Batches a level of today's data needs before they are merged (0: no compaction)");
  AddFlag(serve_cmd, &env_names, "maintenance-interval-sec", &serve.maintenance_interval_sec,
          "How often the idle maintenance thread looks for work");

  LoadgenOptions loadgen;
  CLI::App* loadgen_cmd =
      app.add_subcommand("loadgen", "Send realistic OTLP traffic to a server and report");
  loadgen_cmd->add_option("--protocol", loadgen.protocol, "grpc, http/protobuf or http/json")
      ->check(CLI::IsMember({"grpc", "http/protobuf", "http/json"}))
      ->capture_default_str();
  loadgen_cmd->add_option("--target", loadgen.target,
                          "Server host:port (default 127.0.0.1:4317 for gRPC, :4318 for HTTP)");
  AddFlag(loadgen_cmd, &env_names, "token", &loadgen.token, "Ingest token");
  loadgen_cmd->add_option("--signals", loadgen.signals, "Signals to send, comma-separated")
      ->capture_default_str();
  loadgen_cmd->add_option("--request-spans", loadgen.request_spans,
                          "Spans per trace request (logs: half, metric points: a quarter)")
      ->capture_default_str();
  loadgen_cmd->add_option("--rate", loadgen.rate_spans_per_sec,
                          "Target spans/s (0: as fast as acknowledged)")
      ->capture_default_str();
  loadgen_cmd->add_option("--duration", loadgen.duration_sec, "Seconds to send for")
      ->capture_default_str();
  loadgen_cmd->add_option("--max-requests", loadgen.max_requests,
                          "Stop after this many requests (0: no limit)")
      ->capture_default_str();
  loadgen_cmd->add_option("--concurrency", loadgen.concurrency, "Requests in flight")
      ->capture_default_str();
  loadgen_cmd->add_option("--connections", loadgen.connections,
                          "HTTP keep-alive connections or gRPC channels")
      ->capture_default_str();
  loadgen_cmd->add_option("--client-threads", loadgen.client_threads, "Client threads")
      ->capture_default_str();
  loadgen_cmd->add_flag("--gzip", loadgen.gzip, "Compress requests with gzip");
  loadgen_cmd->add_option("--payloads", loadgen.payloads, "Distinct payloads per signal")
      ->capture_default_str();
  loadgen_cmd->add_option("--record", loadgen.record_path,
                          "Append every acknowledged request to this file (each payload is "
                          "sent once; needs --max-requests)");
  loadgen_cmd->add_option("--seed", loadgen.seed, "Traffic seed")->capture_default_str();
  loadgen_cmd->add_flag("--quiet", loadgen.quiet, "Print only the JSON report");

  CLI::App* bench_cmd = app.add_subcommand("bench", "Benchmarks that print numbers");
  bench_cmd->require_subcommand(1);
  BenchWriterOptions bench_writer;
  CLI::App* bench_writer_cmd = bench_cmd->add_subcommand(
      "writer", "Durable ingest through the storage engine, against a DuckDB baseline");
  bench_writer_cmd->add_option("--spans", bench_writer.spans, "Spans to write")
      ->capture_default_str();
  bench_writer_cmd->add_option("--logs", bench_writer.logs, "Log records to write")
      ->capture_default_str();
  bench_writer_cmd->add_option("--metric-points", bench_writer.metric_points,
                               "Metric data points to write")
      ->capture_default_str();
  bench_writer_cmd->add_option("--request-rows", bench_writer.request_rows,
                               "Rows per export request")
      ->capture_default_str();
  bench_writer_cmd->add_option("--clients", bench_writer.clients, "Concurrent clients")
      ->capture_default_str();
  bench_writer_cmd->add_option("--dir", bench_writer.data_dir,
                               "Working directory (default ./strata-bench-data, removed after)");
  bench_writer_cmd->add_flag("--keep", bench_writer.keep, "Keep the working directory");
  bench_writer_cmd->add_flag("--skip-baseline", bench_writer.skip_baseline,
                             "Skip the DuckDB baseline (for profiling)");
  bench_writer_cmd->add_option("--seed", bench_writer.seed, "Traffic seed")->capture_default_str();

  BenchIngestOptions bench_ingest;
  CLI::App* bench_ingest_cmd = bench_cmd->add_subcommand(
      "ingest", "OTLP/gRPC and OTLP/HTTP ingest on loopback, driven by the load generator");
  bench_ingest_cmd->add_option("--phase-sec", bench_ingest.phase_sec,
                               "Seconds of each measured phase")
      ->capture_default_str();
  bench_ingest_cmd->add_option("--request-spans", bench_ingest.request_spans, "Spans per request")
      ->capture_default_str();
  bench_ingest_cmd->add_option("--concurrency", bench_ingest.concurrency, "Requests in flight")
      ->capture_default_str();
  bench_ingest_cmd->add_option("--connections", bench_ingest.connections,
                               "gRPC channels (HTTP opens one connection per request in flight)")
      ->capture_default_str();
  bench_ingest_cmd->add_option("--overload-sec", bench_ingest.overload_sec,
                               "Seconds of the overload phase (0 skips it)")
      ->capture_default_str();
  bench_ingest_cmd->add_option("--overload-concurrency", bench_ingest.overload_concurrency,
                               "Requests in flight during the overload phase")
      ->capture_default_str();
  bench_ingest_cmd->add_option("--dir", bench_ingest.data_dir,
                               "Working directory (default ./strata-bench-data, removed after)");
  bench_ingest_cmd->add_flag("--keep", bench_ingest.keep, "Keep the working directory");
  bench_ingest_cmd->add_option("--seed", bench_ingest.seed, "Traffic seed")->capture_default_str();

  BenchQueryOptions bench_query;
  CLI::App* bench_query_cmd = bench_cmd->add_subcommand(
      "query", "Trace by id, search and aggregate latency on a large data directory");
  bench_query_cmd->add_option("--spans", bench_query.spans, "Spans to write")
      ->capture_default_str();
  bench_query_cmd->add_option("--batches", bench_query.batches, "Batches to write them in")
      ->capture_default_str();
  bench_query_cmd->add_option("--dir", bench_query.data_dir,
                              "Data directory (default ./strata-bench-query, removed after)");
  bench_query_cmd->add_flag("--keep", bench_query.keep, "Keep the data directory");
  bench_query_cmd->add_flag("--reuse", bench_query.reuse,
                            "Query the data directory given by --dir as it is");
  bench_query_cmd->add_option("--lookups", bench_query.lookups,
                              "Present and absent trace ids looked up (each)")
      ->capture_default_str();
  bench_query_cmd->add_option("--scans", bench_query.scans,
                              "Runs of the DuckDB scan, the search and the aggregate")
      ->capture_default_str();
  bench_query_cmd->add_option("--seed", bench_query.seed, "Traffic seed")->capture_default_str();
  bench_query_cmd
      ->add_option("--lookup-cache-bytes", bench_query.lookup_cache_bytes,
                   "Lookup cache budget (0: every lookup reads the batch's footer and "
                   "dictionary pages)")
      ->capture_default_str();
  bench_query_cmd->add_option("--page-rows", bench_query.page_rows,
                              "Writer's page row limit (all tables, spans.parquet's too) for the data it builds "
                              "(0: the defaults)");

  BenchCompactOptions bench_compact;
  CLI::App* bench_compact_cmd = bench_cmd->add_subcommand(
      "compact", "Compaction of a big day: merge throughput, peak RSS, ingest p99 against idle");
  bench_compact_cmd->add_option("--spans", bench_compact.spans, "Spans to write into the day")
      ->capture_default_str();
  bench_compact_cmd->add_option("--batches", bench_compact.batches, "Batches to write them in")
      ->capture_default_str();
  bench_compact_cmd->add_option("--dir", bench_compact.data_dir,
                                "Data directory (default ./strata-bench-compact, removed after)");
  bench_compact_cmd->add_flag("--keep", bench_compact.keep, "Keep the data directory");
  bench_compact_cmd->add_flag("--reuse", bench_compact.reuse,
                              "Compact the data directory given by --dir as it is");
  bench_compact_cmd->add_flag("--build-only", bench_compact.build_only,
                              "Build the data directory, keep it and stop");
  bench_compact_cmd->add_option("--ingest-seconds", bench_compact.ingest_seconds,
                                "Half the measured load's seconds (it alternates idle and "
                                "compacting windows)")
      ->capture_default_str();
  bench_compact_cmd->add_option("--window-sec", bench_compact.window_seconds,
                                "Seconds of each idle or compacting window of the load")
      ->capture_default_str();
  bench_compact_cmd->add_option("--ingest-rate", bench_compact.ingest_rate,
                                "Spans/s of the load (0: half of the calibrated full speed)")
      ->capture_default_str();
  bench_compact_cmd->add_option("--calibrate-seconds", bench_compact.calibrate_seconds,
                                "Seconds of the full-speed calibration")
      ->capture_default_str();
  bench_compact_cmd->add_option("--clients", bench_compact.clients, "Exporting client threads")
      ->capture_default_str();
  bench_compact_cmd->add_option("--min-inputs", bench_compact.min_inputs,
                                "Batches a level needs before it merges (at least 2)")
      ->capture_default_str();
  bench_compact_cmd->add_option("--maintenance-nice", bench_compact.maintenance_nice,
                                "Nice value of the maintenance thread")
      ->capture_default_str();
  bench_compact_cmd->add_flag("--maintenance-sched-idle", bench_compact.maintenance_sched_idle,
                              "Run the maintenance thread under SCHED_IDLE");
  bench_compact_cmd->add_option("--chunk-rows", bench_compact.chunk_rows,
                                "Rows a merge round reads (0: the storage engine's default)")
      ->capture_default_str();
  bench_compact_cmd->add_option("--max-compact-seconds", bench_compact.max_compact_seconds,
                                "Bound on the compaction phase")
      ->capture_default_str();
  bench_compact_cmd->add_flag("--quick", bench_compact.quick,
                              "200,000 spans in 20 batches, 3 s phases at 20,000 spans/s (for scripts/test.sh)");
  bench_compact_cmd->add_option("--seed", bench_compact.seed, "Traffic seed")
      ->capture_default_str();

  SqlOptions sql;
  CLI::App* sql_cmd = app.add_subcommand(
      "sql", "Read-only SQL over spans, logs and metrics of a running server");
  AddFlag(sql_cmd, &env_names, "api-address", &sql.api_address, "The server's API address");
  AddFlag(sql_cmd, &env_names, "token", &sql.token, "A token with read scope");
  sql_cmd->add_option("-c,--command", sql.command, "Run this statement and exit");
  sql_cmd->add_option("--limit", sql.limit, "Most rows shown per statement")
      ->capture_default_str();
  sql_cmd->add_option("--timeout-sec", sql.timeout_sec, "How long to wait for an answer")
      ->capture_default_str();
  sql_cmd->add_flag("--json", sql.json, "Print the API's JSON instead of a table");

  std::unique_ptr<TokenCommands> token = AddTokenCommands(&app, &env_names);

  VerifyCommandOptions verify;
  CLI::App* verify_cmd = app.add_subcommand(
      "verify", "Check every batch of a data directory (read-only; works beside a running server)");
  AddFlag(verify_cmd, &env_names, "data-dir", &verify.data_dir, "Data directory");
  verify_cmd->add_flag("--deep", verify.deep,
                       "Also decode every page (strata's reader and DuckDB), check sort order and "
                       "that spans.tidx agrees with the rows");
  verify_cmd->add_flag("--json", verify.json, "Print one JSON object instead of lines");

  QuarantineCommandOptions quarantine;
  CLI::App* quarantine_cmd = app.add_subcommand(
      "quarantine",
      "Move a batch that verify proves corrupt into telemetry/quarantine/ (server stopped)");
  AddFlag(quarantine_cmd, &env_names, "data-dir", &quarantine.data_dir, "Data directory");
  quarantine_cmd->add_option("batch-id", quarantine.batch_id, "The batch's id (23 characters)")
      ->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (absl::Status s = CheckStrataEnvironment(envp, env_names); !s.ok()) {
    spdlog::error("strata: {}; {}", s.ToString(), RunbookRef("unknown-environment-variable"));
    return 2;
  }
  spdlog::set_level(spdlog::level::from_str(log_level));
  if (serve_cmd->parsed()) return RunServe(serve);
  if (std::optional<int> code = RunTokenCommands(*token)) return *code;
  if (bench_writer_cmd->parsed()) return RunBenchWriter(bench_writer);
  if (loadgen_cmd->parsed()) return RunLoadgen(loadgen);
  if (bench_ingest_cmd->parsed()) return RunBenchIngest(bench_ingest);
  if (bench_query_cmd->parsed()) return RunBenchQuery(bench_query);
  if (bench_compact_cmd->parsed()) return RunBenchCompact(bench_compact);
  if (sql_cmd->parsed()) return RunSql(sql);
  if (verify_cmd->parsed()) return RunVerify(verify);
  if (quarantine_cmd->parsed()) return RunQuarantine(quarantine);
  return 2;
}

}  // namespace strata::cli
