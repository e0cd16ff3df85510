#pragma once

// SqliteDb is strata's adapter to SQLite: the only code that includes
// sqlite3.h. It opens the control-plane database (control/strata.sqlite) in
// WAL mode and runs SQL, with values bound as parameters (never spliced into
// the SQL text). The control plane (tokens, users, sessions, saved queries)
// builds on it with numbered migrations (migrations.h); telemetry never
// touches it.
//
// Several processes may use one database at once (a running server and
// `strata token ...` from a shell): WAL lets readers and one writer proceed
// together, and every connection waits up to kBusyTimeoutMs for a lock
// another process holds before giving up with Unavailable.
//
// Thread-safety: safe for concurrent use; statements on one SqliteDb run one
// at a time (mu_ serializes them), and a transaction holds mu_ from BEGIN to
// COMMIT, so no other thread's statement lands inside it.
//
// Errors: Unavailable when the file cannot be opened (permissions, missing
// directory) or a lock is still held by another connection after the busy
// timeout; InvalidArgument for SQL that SQLite rejects, wrong parameter
// counts, and constraint violations other than uniqueness; AlreadyExists for
// a UNIQUE or PRIMARY KEY violation; DataLoss when the file is not a
// database or is corrupt; Internal for other SQLite failures. Each message
// includes SQLite's own.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"

namespace strata::control {

struct SqliteDbOptions {
  // How long a statement waits for a lock another connection holds before
  // failing with Unavailable.
  int busy_timeout_ms = 5000;
};

// A BLOB parameter (a TEXT parameter is a plain std::string).
struct SqlBlob {
  std::string bytes;
};

// One bound parameter: NULL, INTEGER, TEXT or BLOB.
using SqlValue = std::variant<std::nullptr_t, int64_t, std::string, SqlBlob>;
// Parameters in the order of the statement's `?` placeholders.
using SqlParams = std::vector<SqlValue>;
// One result row: each value as SQLite's text rendering (integers in
// decimal; BLOBs as their raw bytes); NULL is nullopt.
using SqlRow = std::vector<std::optional<std::string>>;
using SqlRows = std::vector<SqlRow>;

class SqliteDb {
 public:
  static constexpr int kBusyTimeoutMs = SqliteDbOptions{}.busy_timeout_ms;

  // Statements run inside InTransaction(); only valid inside its body.
  class Transaction {
   public:
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;

    // ExecScript() runs a script, as SqliteDb::Exec(sql); Exec() and Query()
    // run one statement with parameters, as SqliteDb's.
    [[nodiscard]] absl::Status ExecScript(std::string_view sql);
    [[nodiscard]] absl::Status Exec(std::string_view sql, const SqlParams& params);
    [[nodiscard]] absl::StatusOr<SqlRows> Query(std::string_view sql, const SqlParams& params = {});

   private:
    friend class SqliteDb;
    explicit Transaction(SqliteDb* db) : db_(db) {}
    SqliteDb* const db_;
  };

  // Opens (creating if needed) the database at `path`, switches it to WAL
  // and sets the busy timeout.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SqliteDb>> Open(const std::string& path);
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SqliteDb>> Open(
      const std::string& path, const SqliteDbOptions& options);
  ~SqliteDb();

  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  const std::string& path() const { return path_; }

  // Runs one or more statements that take no parameters and return no rows
  // (a script).
  [[nodiscard]] absl::Status Exec(std::string_view sql);

  // Runs exactly one statement with `params` bound to its placeholders;
  // rows it returns are discarded.
  [[nodiscard]] absl::Status Exec(std::string_view sql, const SqlParams& params);

  // Runs exactly one statement with `params` bound and returns its rows.
  [[nodiscard]] absl::StatusOr<SqlRows> Query(std::string_view sql, const SqlParams& params = {});

  // Runs `body` inside BEGIN IMMEDIATE ... COMMIT. The write lock is taken
  // up front, so a transaction that reads and then writes cannot fail
  // half-way for want of it. If `body` returns an error, or COMMIT fails,
  // the transaction is rolled back and that error is returned. `body` must
  // use only the Transaction it is given (calling this SqliteDb from inside
  // would deadlock).
  [[nodiscard]] absl::Status InTransaction(const std::function<absl::Status(Transaction&)>& body);

  // The linked library's version, e.g. "3.40.1".
  static std::string LibraryVersion();

 private:
  struct Handle;
  SqliteDb(std::string path, std::unique_ptr<Handle> handle);

  absl::Status ExecScriptLocked(std::string_view sql) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Prepares one statement, binds `params`, steps it to the end and appends
  // its rows to `rows` when not null.
  absl::Status RunLocked(std::string_view sql, const SqlParams& params, SqlRows* rows)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  const std::string path_;

  Mutex mu_;
  std::unique_ptr<Handle> handle_ ABSL_GUARDED_BY(mu_);
};

}  // namespace strata::control
