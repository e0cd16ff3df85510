#include "cli/control_data_dir.h"

#include <memory>

#include "fmt/format.h"
#include "io/posix_file_system.h"
#include "storage/commit/data_dir.h"
#include "storage/format/format_file.h"
#include "storage/format/layout.h"

namespace strata::cli {

absl::Status PrepareControlDataDir(const std::string& data_dir, bool may_initialize) {
  PosixFileSystem fs;
  absl::StatusOr<bool> has_format = fs.Exists(storage::DataDirPaths(data_dir).Format());
  if (!has_format.ok()) return has_format.status();
  if (*has_format) return storage::CheckOrInitializeDataDir(fs, data_dir).status();
  if (!may_initialize) {
    return absl::FailedPreconditionError(
        fmt::format("data directory {} is not initialised yet (it has no FORMAT), so it holds no "
                    "tokens or users; "
                    "`strata serve` or `strata token create` initialises it",
                    data_dir));
  }
  absl::StatusOr<std::unique_ptr<storage::DataDir>> opened =
      storage::OpenDataDir(fs, data_dir, storage::DataDirOptions{});
  return opened.status();  // the DataDir, and its LOCK, are released here
}

}  // namespace strata::cli
