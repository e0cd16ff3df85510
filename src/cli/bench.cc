#include "cli/bench.h"

#include <memory>

#include "CLI/CLI.hpp"
#include "bench/bench_compact.h"
#include "bench/bench_compat.h"
#include "bench/bench_ingest.h"
#include "bench/bench_objectstore.h"
#include "bench/bench_query.h"
#include "bench/bench_rollups.h"
#include "bench/bench_writer.h"
#include "cli/flags.h"

namespace strata::cli {
namespace {

Command RegisterBenchWriter(CLI::App* bench) {
  auto options = std::make_shared<bench::BenchWriterOptions>();
  CLI::App* command = bench->add_subcommand(
      "writer", "Durable ingest through the storage engine, against a DuckDB baseline");
  AddOption(command, "--spans", &options->spans, "Spans to write")->capture_default_str();
  AddOption(command, "--logs", &options->logs, "Log records to write")->capture_default_str();
  AddOption(command, "--metric-points", &options->metric_points, "Metric data points to write")
      ->capture_default_str();
  AddOption(command, "--request-rows", &options->request_rows, "Rows per export request")
      ->capture_default_str();
  AddOption(command, "--clients", &options->clients, "Concurrent clients")->capture_default_str();
  AddOption(command, "--dir", &options->data_dir,
            "Working directory (default ./strata-bench-data, removed after)");
  command->add_flag("--keep", options->keep, "Keep the working directory");
  command->add_flag("--skip-baseline", options->skip_baseline,
                    "Skip the DuckDB baseline (for profiling)");
  AddOption(command, "--seed", &options->seed, "Traffic seed")->capture_default_str();
  return Command{command, [options] { return bench::RunBenchWriter(*options); }};
}

Command RegisterBenchIngest(CLI::App* bench) {
  auto options = std::make_shared<bench::BenchIngestOptions>();
  CLI::App* command = bench->add_subcommand(
      "ingest", "OTLP/gRPC and OTLP/HTTP ingest on loopback, driven by the load generator");
  AddOption(command, "--phase-sec", &options->phase_sec, "Seconds of each measured phase")
      ->capture_default_str();
  AddOption(command, "--request-spans", &options->request_spans, "Spans per request")
      ->capture_default_str();
  AddOption(command, "--concurrency", &options->concurrency, "Requests in flight")
      ->capture_default_str();
  AddOption(command, "--connections", &options->connections,
            "gRPC channels (HTTP opens one connection per request in flight)")
      ->capture_default_str();
  AddOption(command, "--overload-sec", &options->overload_sec,
            "Seconds of the overload phase (0 skips it)")
      ->capture_default_str();
  AddOption(command, "--overload-concurrency", &options->overload_concurrency,
            "Requests in flight during the overload phase")
      ->capture_default_str();
  AddOption(command, "--dir", &options->data_dir,
            "Working directory (default ./strata-bench-data, removed after)");
  command->add_flag("--keep", options->keep, "Keep the working directory");
  AddOption(command, "--seed", &options->seed, "Traffic seed")->capture_default_str();
  return Command{command, [options] { return bench::RunBenchIngest(*options); }};
}

Command RegisterBenchCompat(CLI::App* bench) {
  auto options = std::make_shared<bench::BenchCompatOptions>();
  CLI::App* command = bench->add_subcommand(
      "compat", "The compatible APIs' latency (Tempo, Loki, Prometheus) on a large data directory");
  AddOption(command, "--spans", &options->spans, "Spans to write")->capture_default_str();
  AddOption(command, "--batches", &options->batches, "Batches to write them in")
      ->capture_default_str();
  AddOption(command, "--dir", &options->data_dir,
            "Data directory (default ./strata-bench-compat, removed after)");
  command->add_flag("--keep", options->keep, "Keep the data directory");
  command->add_flag("--reuse", options->reuse, "Query the data directory given by --dir as it is");
  AddOption(command, "--runs", &options->runs, "Runs of each search and of the tag values")
      ->capture_default_str();
  AddOption(command, "--lookups", &options->lookups, "Trace ids looked up")->capture_default_str();
  AddOption(command, "--seed", &options->seed, "Traffic seed")->capture_default_str();
  AddOption(command, "--metric-points", &options->metric_points,
            "OTLP metric points for the PromQL lines, against a throwaway Prometheus (0: none)")
      ->capture_default_str();
  return Command{command, [options] { return bench::RunBenchCompat(*options); }};
}

Command RegisterBenchQuery(CLI::App* bench) {
  auto options = std::make_shared<bench::BenchQueryOptions>();
  CLI::App* command = bench->add_subcommand(
      "query", "Trace by id, search and aggregate latency on a large data directory");
  AddOption(command, "--spans", &options->spans, "Spans to write")->capture_default_str();
  AddOption(command, "--batches", &options->batches, "Batches to write them in")
      ->capture_default_str();
  AddOption(command, "--logs", &options->logs,
            "Log records to write into the last hour (0: spans / 4)")
      ->capture_default_str();
  AddOption(command, "--dir", &options->data_dir,
            "Data directory (default ./strata-bench-query, removed after)");
  command->add_flag("--keep", options->keep, "Keep the data directory");
  command->add_flag("--reuse", options->reuse, "Query the data directory given by --dir as it is");
  AddOption(command, "--lookups", &options->lookups,
            "Present and absent trace ids looked up (each)")
      ->capture_default_str();
  AddOption(command, "--scans", &options->scans,
            "Runs of the DuckDB scan, the search and the aggregate")
      ->capture_default_str();
  AddOption(command, "--seed", &options->seed, "Traffic seed")->capture_default_str();
  AddOption(command, "--lookup-cache-bytes", &options->lookup_cache_bytes,
            "Lookup cache budget (0: every lookup reads the batch's footer and "
            "dictionary pages)")
      ->capture_default_str();
  AddOption(command, "--page-rows", &options->page_rows,
            "Writer's page row limit (all tables, spans.parquet's too) for the data it "
            "builds (0: the defaults)");
  return Command{command, [options] { return bench::RunBenchQuery(*options); }};
}

Command RegisterBenchCompact(CLI::App* bench) {
  auto options = std::make_shared<bench::BenchCompactOptions>();
  CLI::App* command = bench->add_subcommand(
      "compact", "Compaction of a big day: merge throughput, peak RSS, ingest p99 against idle");
  AddOption(command, "--spans", &options->spans, "Spans to write into the day")
      ->capture_default_str();
  AddOption(command, "--batches", &options->batches, "Batches to write them in")
      ->capture_default_str();
  AddOption(command, "--dir", &options->data_dir,
            "Data directory (default ./strata-bench-compact, removed after)");
  command->add_flag("--keep", options->keep, "Keep the data directory");
  command->add_flag("--reuse", options->reuse,
                    "Compact the data directory given by --dir as it is");
  command->add_flag("--build-only", options->build_only,
                    "Build the data directory, keep it and stop");
  AddOption(command, "--ingest-seconds", &options->ingest_seconds,
            "Half the measured load's seconds (it alternates idle and compacting "
            "windows)")
      ->capture_default_str();
  AddOption(command, "--window-sec", &options->window_seconds,
            "Seconds of each idle or compacting window of the load")
      ->capture_default_str();
  AddOption(command, "--ingest-rate", &options->ingest_rate,
            "Spans/s of the load (0: half of the calibrated full speed)")
      ->capture_default_str();
  AddOption(command, "--calibrate-seconds", &options->calibrate_seconds,
            "Seconds of the full-speed calibration")
      ->capture_default_str();
  AddOption(command, "--clients", &options->clients, "Exporting client threads")
      ->capture_default_str();
  AddOption(command, "--min-inputs", &options->min_inputs,
            "Batches a level needs before it merges (at least 2)")
      ->capture_default_str();
  AddOption(command, "--maintenance-nice", &options->maintenance_nice,
            "Nice value of the maintenance thread")
      ->capture_default_str();
  command->add_flag("--maintenance-sched-idle", options->maintenance_sched_idle,
                    "Run the maintenance thread under SCHED_IDLE");
  AddOption(command, "--chunk-rows", &options->chunk_rows,
            "Rows a merge round reads (0: the storage engine's default)")
      ->capture_default_str();
  AddOption(command, "--max-compact-seconds", &options->max_compact_seconds,
            "Bound on the compaction phase")
      ->capture_default_str();
  command->add_flag("--quick", options->quick,
                    "200,000 spans in 20 batches, 3 s phases at 20,000 spans/s (for "
                    "scripts/test.sh)");
  AddOption(command, "--seed", &options->seed, "Traffic seed")->capture_default_str();
  return Command{command, [options] { return bench::RunBenchCompact(*options); }};
}

Command RegisterBenchRollups(CLI::App* bench) {
  auto options = std::make_shared<bench::BenchRollupsOptions>();
  CLI::App* command = bench->add_subcommand(
      "rollups", "Service health from the rollups against DuckDB over raw spans; ingest cost");
  AddOption(command, "--spans", &options->spans, "Spans to write over 24 hours")
      ->capture_default_str();
  AddOption(command, "--batches", &options->batches, "Batches to write them in")
      ->capture_default_str();
  AddOption(command, "--dir", &options->data_dir,
            "Data directory (default ./strata-bench-rollups, removed after)");
  command->add_flag("--keep", options->keep, "Keep the data directories");
  command->add_flag("--reuse", options->reuse, "Query the data directory given by --dir as it is");
  AddOption(command, "--runs", &options->runs, "Runs of each rollup answer")->capture_default_str();
  AddOption(command, "--baseline-runs", &options->baseline_runs,
            "Runs of each DuckDB query over the raw spans")
      ->capture_default_str();
  AddOption(command, "--ingest-rounds", &options->ingest_rounds,
            "Ingest rounds with rollups on and off each (alternated; 0 skips)")
      ->capture_default_str();
  AddOption(command, "--ingest-spans", &options->ingest_spans, "Spans written per ingest round")
      ->capture_default_str();
  AddOption(command, "--freshness-requests", &options->freshness_requests,
            "Requests timed from acknowledgement to resolved service-map edges (0 skips)")
      ->capture_default_str();
  AddOption(command, "--seed", &options->seed, "Traffic seed")->capture_default_str();
  return Command{command, [options] { return bench::RunBenchRollups(*options); }};
}

Command RegisterBenchObjectStore(CLI::App* bench) {
  auto options = std::make_shared<bench::BenchObjectStoreOptions>();
  CLI::App* command = bench->add_subcommand(
      "objectstore",
      "Object store puts and offload: spans/s with background upload against local disk alone");
  AddOption(command, "--objects", &options->objects, "Objects to put")->capture_default_str();
  AddOption(command, "--object-bytes", &options->object_bytes, "Bytes per object")
      ->capture_default_str();
  AddOption(command, "--concurrency", &options->concurrency, "Puts in flight")
      ->capture_default_str();
  AddOption(command, "--reads", &options->reads, "Ranged 64 KiB reads timed on each store")
      ->capture_default_str();
  AddOption(command, "--endpoint", &options->endpoint,
            "S3 endpoint, http(s)://host:port (default: S3_TEST_ENDPOINT, which "
            "scripts/radosgw.sh prints)");
  AddOption(command, "--bucket", &options->bucket, "S3 bucket (default: S3_TEST_BUCKET)");
  AddOption(command, "--region", &options->region,
            "S3 region (default: S3_TEST_REGION, AWS_REGION, us-east-1)");
  AddOption(command, "--addressing", &options->addressing, "path or virtual")
      ->check(CLI::IsMember({"path", "virtual"}))
      ->capture_default_str();
  AddOption(command, "--dir", &options->dir,
            "The local store's directory (default ./strata-bench-objects, removed after)");
  AddOption(command, "--spans", &options->spans,
            "Spans written locally and with background upload (0: skip that phase)")
      ->capture_default_str();
  AddOption(command, "--request-spans", &options->request_spans, "Spans per request")
      ->capture_default_str();
  AddOption(command, "--clients", &options->clients, "Concurrent writing clients")
      ->capture_default_str();
  AddOption(command, "--lookups", &options->lookups, "Trace lookups timed")->capture_default_str();
  AddOption(command, "--radosgw-script", &options->radosgw_script,
            "Started (start DIR / stop DIR) when no S3 server is given")
      ->capture_default_str();
  return Command{command, [options] { return bench::RunBenchObjectStore(*options); }};
}

}  // namespace

std::vector<Command> RegisterBenchCommands(CLI::App* app) {
  CLI::App* bench = app->add_subcommand("bench", "Benchmarks that print numbers");
  bench->require_subcommand(1);
  return {RegisterBenchWriter(bench),     RegisterBenchIngest(bench),  RegisterBenchQuery(bench),
          RegisterBenchCompat(bench),     RegisterBenchCompact(bench), RegisterBenchRollups(bench),
          RegisterBenchObjectStore(bench)};
}

}  // namespace strata::cli
