#pragma once

// PgConnection: one libpq connection to a PostgreSQL server, the only code
// that talks to libpq. It runs parameterised statements only: values travel
// as parameters ($1, $2, ...), never inside the SQL text. Results come back
// as text (bytea columns decoded to their raw bytes), NULL as nullopt.
//
// Thread-safety: safe for concurrent use; statements are serialised on the
// one connection by mu_, and a transaction holds it from BEGIN to COMMIT.
//
// Errors: Unavailable when the server cannot be reached or the connection
// broke (the message names the server and says to check that it runs and
// the URL is right); AlreadyExists for a unique-constraint violation
// (SQLSTATE 23505); Aborted for a serialisation failure or deadlock
// (40001, 40P01); InvalidArgument for a malformed URL; Internal for any
// other statement error. Messages name the server (host:port/database,
// never the password) and carry PostgreSQL's own message.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

typedef struct pg_conn PGconn;

namespace strata::postgres {

// Raw bytes sent as a binary parameter (a bytea column).
struct PgBytes {
  std::string bytes;
};

using PgValue = std::variant<std::nullptr_t, int64_t, std::string, PgBytes>;
using PgParams = std::vector<PgValue>;
using PgRow = std::vector<std::optional<std::string>>;
using PgRows = std::vector<PgRow>;

struct PgConnectOptions {
  // Seconds libpq waits for the server before giving up (connect_timeout).
  int connect_timeout_seconds = 10;
};

class PgConnection {
 public:
  // Runs statements inside one transaction of Transaction().
  class Transaction {
   public:
    [[nodiscard]] absl::StatusOr<PgRows> Query(std::string_view sql, const PgParams& params = {});
    [[nodiscard]] absl::Status Exec(std::string_view sql, const PgParams& params = {});

   private:
    friend class PgConnection;
    explicit Transaction(PgConnection* connection) : connection_(connection) {}
    PgConnection* connection_;
  };

  // Connects to `url` (postgres://user[:password]@host:port/database).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<PgConnection>> Connect(
      const std::string& url, PgConnectOptions options = {});
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // host:port/database, for messages (no user or password).
  const std::string& server() const { return server_; }

  // One statement outside a transaction (autocommit).
  [[nodiscard]] absl::StatusOr<PgRows> Query(std::string_view sql, const PgParams& params = {})
      ABSL_LOCKS_EXCLUDED(mu_);
  [[nodiscard]] absl::Status Exec(std::string_view sql, const PgParams& params = {})
      ABSL_LOCKS_EXCLUDED(mu_);

  // BEGIN; fn; COMMIT when fn returns OK, ROLLBACK otherwise (fn's status is
  // returned). `begin` is the statement that opens it, e.g. "BEGIN
  // ISOLATION LEVEL SERIALIZABLE".
  [[nodiscard]] absl::Status InTransaction(const std::function<absl::Status(Transaction&)>& fn,
                                           std::string_view begin = "BEGIN")
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  PgConnection(PGconn* connection, std::string server)
      : connection_(connection), server_(std::move(server)) {}
  absl::StatusOr<PgRows> QueryLocked(std::string_view sql, const PgParams& params)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  PGconn* const connection_ ABSL_PT_GUARDED_BY(mu_);
  const std::string server_;
};

}  // namespace strata::postgres
