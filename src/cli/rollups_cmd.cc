#include "cli/rollups_cmd.h"

#include <cstdio>
#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "cli/exit_codes.h"
#include "cli/flags.h"
#include "cli/object_store_flags.h"
#include "common/runbook.h"
#include "fmt/format.h"
#include "io/posix_file_system.h"
#include "objectstore/batch_store.h"
#include "objectstore/s3_config.h"
#include "objectstore/store_url.h"
#include "storage/rollups_rebuild.h"
#include "storage/storage.h"

namespace strata::cli {

int RunRollupsRebuild(const RollupsCommandOptions& options) {
  if (options.data_dir.empty()) {
    fmt::print(stderr, "strata rollups rebuild: --data-dir must not be empty\n");
    return kExitUsage;
  }
  PosixFileSystem fs;
  std::unique_ptr<objectstore::BatchStore> store;
  storage::StorageOptions storage_options;
  if (!options.object_store.url.empty()) {
    absl::StatusOr<std::unique_ptr<objectstore::BatchStore>> store_opened =
        objectstore::OpenObjectStore(fs, options.object_store, objectstore::ProcessEnvironment());
    if (!store_opened.ok()) {
      fmt::print(stderr, "strata rollups rebuild: {}; {}\n",
                 std::string(store_opened.status().message()),
                 RunbookRef("object-store-url-unusable"));
      return kExitUsage;
    }
    store = *std::move(store_opened);
    // As serve with the store: batches are uploaded (a rewritten one too),
    // and evicted ones are read back through <data>/query/cache; nothing
    // more is evicted.
    storage_options.object_store = store.get();
    storage_options.read_evicted = true;
  }
  absl::StatusOr<std::unique_ptr<storage::Storage>> opened =
      storage::Storage::Open(fs, options.data_dir, std::move(storage_options));
  if (!opened.ok()) {
    fmt::print(stderr, "strata rollups rebuild: cannot open {}: {}\n", options.data_dir,
               std::string(opened.status().message()));
    return kExitFailure;
  }
  storage::RollupsRebuildOptions rebuild;
  if (!options.day.empty()) rebuild.day = options.day;
  rebuild.check_only = options.check;
  rebuild.on_batch = [](const std::string& day, const storage::BatchId& id,
                        storage::RollupsVerdict verdict,
                        const std::optional<storage::BatchId>& rewritten_as) {
    fmt::print("{:<9} {}  {}{}\n", storage::RollupsVerdictName(verdict), day, id.ToString(),
               rewritten_as.has_value() ? "  rewritten as " + rewritten_as->ToString() : "");
    std::fflush(stdout);
  };
  absl::StatusOr<storage::RollupsRebuildReport> report = storage::RebuildRollups(**opened, rebuild);
  (*opened)->Shutdown(std::chrono::seconds(30));
  opened->reset();  // before the store it uploads to
  if (!report.ok()) {
    fmt::print(stderr, "strata rollups rebuild: {}\n", std::string(report.status().message()));
    return kExitFailure;
  }
  fmt::print(
      "rollups of {} batches{}: {} equal to their rows', {} missing (format 1), {} differed; "
      "{} rewritten\n",
      report->batches, options.day.empty() ? "" : " of " + options.day, report->equal,
      report->missing, report->differed, report->rewritten);
  const bool differ = report->missing + report->differed > 0;
  return options.check && differ ? kExitFailure : kExitOk;
}

Command RegisterRollups(CLI::App* app, std::set<std::string>* env_names) {
  auto options = std::make_shared<RollupsCommandOptions>();
  CLI::App* rollups = app->add_subcommand("rollups", "Service-health rollups (server stopped)");
  rollups->require_subcommand(1);
  CLI::App* command = rollups->add_subcommand(
      "rebuild",
      "Recompute every batch's rollups from its rows; rewrite those that differ or are missing");
  AddFlag(command, env_names, "data-dir", &options->data_dir, "Data directory");
  command->add_option("--day", options->day, "Only batches of this UTC day (YYYY-MM-DD)");
  command->add_flag("--check", options->check,
                    "Compare only: exit 1 when a batch's rollups differ or are missing");
  AddObjectStoreFlags(command, env_names, &options->object_store,
                      "The object store strata serve offloads to (s3://<bucket>[/<prefix>] or "
                      "file:///<path>): evicted batches are read back from it, never rewritten");
  return Command{command, [options] { return RunRollupsRebuild(*options); }};
}

}  // namespace strata::cli
