#include "cli/app.h"

#include <set>
#include <string>

#include "CLI/CLI.hpp"
#include "cli/bench_writer.h"
#include "cli/environment.h"
#include "cli/serve.h"
#include "common/runbook.h"
#include "spdlog/spdlog.h"

namespace strata::cli {
namespace {

constexpr char kVersion[] = "strata " STRATA_VERSION;

// Adds `--name` with its STRATA_* variable and records the variable.
template <typename T>
CLI::Option* AddFlag(CLI::App* app, std::set<std::string>* env_names, const std::string& name,
                     T* value, const std::string& help) {
  std::string env = std::string(kEnvPrefix);
  for (char c : name) env += c == '-' ? '_' : static_cast<char>(std::toupper(c));
  env_names->insert(env);
  return app->add_option("--" + name, *value, help)->envname(env)->capture_default_str();
}

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
          "Web UI and REST API listen address");

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
  if (bench_writer_cmd->parsed()) return RunBenchWriter(bench_writer);
  return 2;
}

}  // namespace strata::cli
