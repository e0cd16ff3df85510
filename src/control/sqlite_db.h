#pragma once

// SqliteDb is strata's adapter to SQLite: the only code that includes
// sqlite3.h. It opens the control-plane database (control/strata.sqlite) in
// WAL mode and runs SQL. The control plane (tokens, users, sessions, saved
// queries) builds on it with numbered migrations; telemetry never touches it.
//
// Thread-safety: safe for concurrent use; statements on one SqliteDb run one
// at a time (mu_ serializes them).
//
// Errors: Unavailable when the file cannot be opened (permissions, missing
// directory), InvalidArgument for SQL that SQLite rejects, Internal for other
// SQLite failures; each message includes SQLite's own.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"

namespace strata::control {

class SqliteDb {
 public:
  // Opens (creating if needed) the database at `path` and switches it to WAL.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SqliteDb>> Open(const std::string& path);
  ~SqliteDb();

  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  // Runs one or more statements that return no rows.
  [[nodiscard]] absl::Status Exec(std::string_view sql);

  // Runs one statement and returns its rows, each value as text (NULL is nullopt).
  [[nodiscard]] absl::StatusOr<std::vector<std::vector<std::optional<std::string>>>> Query(
      std::string_view sql);

  // The linked library's version, e.g. "3.40.1".
  static std::string LibraryVersion();

 private:
  struct Handle;
  explicit SqliteDb(std::unique_ptr<Handle> handle);

  Mutex mu_;
  std::unique_ptr<Handle> handle_ ABSL_GUARDED_BY(mu_);
};

}  // namespace strata::control
