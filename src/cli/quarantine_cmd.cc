#include "cli/quarantine_cmd.h"

#include <cstdio>
#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "cli/exit_codes.h"
#include "cli/flags.h"
#include "common/runbook.h"
#include "fmt/format.h"
#include "io/posix_file_system.h"
#include "query/parquet_file_check.h"
#include "storage/check/quarantine.h"
#include "storage/format/batch_id.h"

namespace strata::cli {

int RunQuarantine(const QuarantineCommandOptions& options) {
  if (options.data_dir.empty()) {
    fmt::print(stderr, "strata quarantine: --data-dir must not be empty\n");
    return kExitUsage;
  }
  absl::StatusOr<storage::BatchId> id = storage::BatchId::Parse(options.batch_id);
  if (!id.ok()) {
    fmt::print(stderr, "strata quarantine: {}\n", std::string(id.status().message()));
    return kExitUsage;
  }
  absl::StatusOr<std::unique_ptr<query::DuckDbEngine>> engine = query::OpenParquetFileCheckEngine();
  if (!engine.ok()) {
    fmt::print(stderr, "strata quarantine: cannot start DuckDB to verify the batch: {}\n",
               std::string(engine.status().message()));
    return kExitFailure;
  }
  storage::VerifyOptions verify;
  verify.deep = true;
  verify.parquet_check = query::DuckDbParquetFileCheck(engine->get());

  PosixFileSystem fs;
  absl::StatusOr<storage::QuarantinedBatch> moved =
      storage::QuarantineBatch(fs, options.data_dir, *id, verify);
  if (!moved.ok()) {
    fmt::print(stderr, "strata quarantine: refused: {}\n", std::string(moved.status().message()));
    return kExitFailure;
  }
  const storage::BatchVerdict& verdict = moved->verdict;
  fmt::print(
      "Quarantined batch {}: it failed the check \"{}\"{}: {}\nMoved {}\n   to {}\nIts rows are "
      "no longer served. Keep the directory until you know what happened; {}\n",
      id->ToString(), verdict.check, verdict.file.empty() ? "" : " on " + verdict.file,
      verdict.message, moved->from, moved->to, RunbookRef("corrupt-batch"));
  return kExitOk;
}

Command RegisterQuarantine(CLI::App* app, std::set<std::string>* env_names) {
  auto options = std::make_shared<QuarantineCommandOptions>();
  CLI::App* command = app->add_subcommand(
      "quarantine",
      "Move a batch that verify proves corrupt into telemetry/quarantine/ (server stopped)");
  AddFlag(command, env_names, "data-dir", &options->data_dir, "Data directory");
  command->add_option("batch-id", options->batch_id, "The batch's id (23 characters)")->required();
  return Command{command, [options] { return RunQuarantine(*options); }};
}

}  // namespace strata::cli
