#include "cli/serve.h"

#include <pthread.h>
#include <signal.h>

#include <filesystem>

#include "fmt/format.h"
#include "common/host_port.h"
#include "common/runbook.h"
#include "io/posix_file_system.h"
#include "storage/storage.h"
#include "spdlog/spdlog.h"

namespace strata::cli {

absl::Status ValidateServeOptions(const ServeOptions& options) {
  if (options.data_dir.empty()) return absl::InvalidArgumentError("--data-dir must not be empty");
  const std::pair<const char*, const std::string*> addresses[] = {
      {"--otlp-grpc-address", &options.otlp_grpc_address},
      {"--otlp-http-address", &options.otlp_http_address},
      {"--api-address", &options.api_address},
  };
  for (const auto& [flag, value] : addresses) {
    auto parsed = ParseHostPort(*value);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(fmt::format("{}: {}", flag, parsed.status().ToString()));
    }
  }
  return absl::OkStatus();
}

int RunServe(const ServeOptions& options) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  if (absl::Status s = ValidateServeOptions(options); !s.ok()) {
    spdlog::error("strata serve: {}; {}", s.ToString(), RunbookRef("invalid-configuration"));
    return 2;
  }
  std::error_code ec;
  const std::filesystem::path data_dir = std::filesystem::absolute(options.data_dir, ec);
  spdlog::info("strata serve: effective configuration: data_dir={} otlp_grpc_address={} "
               "otlp_http_address={} api_address={}",
               ec ? options.data_dir : data_dir.string(), options.otlp_grpc_address,
               options.otlp_http_address, options.api_address);
  PosixFileSystem fs;
  absl::StatusOr<std::unique_ptr<storage::Storage>> storage =
      storage::Storage::Open(fs, options.data_dir);
  if (!storage.ok()) {
    // Recovery's refusals already name the runbook section.
    spdlog::error("strata serve: cannot open the data directory: {}", storage.status().ToString());
    return 1;
  }
  const storage::RecoveryReport& report = (*storage)->data_dir().recovery();
  spdlog::info("strata serve: storage ready: {} batches; removed {} staging entries and {} empty "
               "day directories{}{}",
               (*storage)->Pin()->size(), report.removed_staging.size(),
               report.removed_days.size(), report.compaction.empty() ? "" : "; ",
               report.compaction);
  spdlog::info("strata serve: no OTLP listeners or API yet (they come with the ingest and query "
               "work); waiting for SIGINT or SIGTERM");
  int received = 0;
  if (sigwait(&signals, &received) != 0) {
    spdlog::error("strata serve: sigwait failed");
    return 1;
  }
  spdlog::info("strata serve: received {}, shutting down", received == SIGINT ? "SIGINT" : "SIGTERM");
  (*storage)->Shutdown(std::chrono::seconds(10));
  storage->reset();
  return 0;
}

}  // namespace strata::cli
