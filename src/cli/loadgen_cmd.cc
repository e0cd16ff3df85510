#include "cli/loadgen_cmd.h"

#include <memory>

#include "CLI/CLI.hpp"
#include "cli/flags.h"
#include "workload/loadgen.h"

namespace strata::cli {

Command RegisterLoadgen(CLI::App* app, std::set<std::string>* env_names) {
  auto options = std::make_shared<workload::LoadgenOptions>();
  CLI::App* command =
      app->add_subcommand("loadgen", "Send realistic OTLP traffic to a server and report");
  AddOption(command, "--protocol", &options->protocol, "grpc, http/protobuf or http/json")
      ->check(CLI::IsMember({"grpc", "http/protobuf", "http/json"}))
      ->capture_default_str();
  AddOption(command, "--target", &options->target,
            "Server host:port (default 127.0.0.1:4317 for gRPC, :4318 for HTTP)");
  AddFlag(command, env_names, "token", &options->token, "Ingest token");
  AddOption(command, "--signals", &options->signals, "Signals to send, comma-separated")
      ->capture_default_str();
  AddOption(command, "--request-spans", &options->request_spans,
            "Spans per trace request (logs: half, metric points: a quarter)")
      ->capture_default_str();
  AddOption(command, "--rate", &options->rate_spans_per_sec,
            "Target spans/s (0: as fast as acknowledged)")
      ->capture_default_str();
  AddOption(command, "--duration", &options->duration_sec, "Seconds to send for")
      ->capture_default_str();
  AddOption(command, "--max-requests", &options->max_requests,
            "Stop after this many requests (0: no limit)")
      ->capture_default_str();
  AddOption(command, "--concurrency", &options->concurrency, "Requests in flight")
      ->capture_default_str();
  AddOption(command, "--connections", &options->connections,
            "HTTP keep-alive connections or gRPC channels")
      ->capture_default_str();
  AddOption(command, "--client-threads", &options->client_threads, "Client threads")
      ->capture_default_str();
  command->add_flag("--gzip", options->gzip, "Compress requests with gzip");
  AddOption(command, "--payloads", &options->payloads, "Distinct payloads per signal")
      ->capture_default_str();
  AddOption(command, "--record", &options->record_path,
            "Append every acknowledged request to this file (each payload is sent "
            "once; needs --max-requests)");
  AddOption(command, "--seed", &options->seed, "Traffic seed")->capture_default_str();
  command->add_flag("--quiet", options->quiet, "Print only the JSON report");
  return Command{command, [options] { return workload::RunLoadgen(*options); }};
}

}  // namespace strata::cli
