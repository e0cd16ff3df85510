#pragma once

// strata's adapter to embedded DuckDB: the only code that includes duckdb.h.
// Two layers live here:
//
//   * DuckDbEngine opens a database (in memory, or a file under the data
//     directory), holds one connection and runs SQL text; tests, the writer
//     benchmark's baseline and tools use it.
//   * QueryDatabase / QueryConnection are the connection-level API the
//     bounded QueryPool (query_pool.h) is built from: a locked-down database
//     and connections that run one statement with bound parameters, cap the
//     rows they return and can be interrupted from another thread.
//
// The shape of the API stays: SQL in, Status or rows out, no exception ever
// crosses it.
//
// Thread-safety: safe for concurrent use; queries on one engine run one at a
// time (mu_ serializes them).
//
// Errors: Internal when DuckDB cannot open or connect, InvalidArgument for a
// query DuckDB rejects (its message included).

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "parquet/column_vector.h"
#include "query/typed_result.h"

namespace strata::query {

// A query's result. Every value is rendered as DuckDB's VARCHAR cast,
// except a top-level BLOB value, which is lowercase hex without a prefix
// (a trace id reads "5b8efff798038103d269b633813fc60c", not DuckDB's
// "[\x5B\x8E...]" escapes); BLOBs nested in lists or structs keep DuckDB's
// rendering. SQL NULL is std::nullopt. (DuckDbEngine::Query predates this:
// it leaves `types` empty and renders BLOBs as DuckDB does.)
struct QueryResult {
  std::vector<std::string> columns;
  // DuckDB's name of each column's type: "BIGINT", "VARCHAR", "BLOB",
  // "DOUBLE", "TIMESTAMP WITH TIME ZONE", "TIMESTAMP_NS", "VARCHAR[]",
  // "DECIMAL(18,3)", "STRUCT(a INTEGER, b VARCHAR)", ...
  std::vector<std::string> types;
  std::vector<std::vector<std::optional<std::string>>> rows;
  // True when `rows` stops before the query's last row.
  bool truncated = false;
  // Which cap cut `rows` when `truncated`: the row cap (the query had more
  // rows) or the byte cap (the next row's values would have passed it).
  enum class TruncatedBy { kRows, kBytes };
  TruncatedBy truncated_by = TruncatedBy::kRows;
};

// A bound parameter ($1, $2, ... in order). std::string binds VARCHAR;
// Blob binds BLOB.
struct Blob {
  std::string bytes;
};
using QueryParam = std::variant<std::string, int64_t, uint64_t, double, bool, Blob>;

// The SQL type DuckDB gives a Parquet column of this spec when it reads a
// file strata wrote (INTEGER(8, unsigned) -> UTINYINT, STRING -> VARCHAR,
// other byte arrays -> BLOB, TIMESTAMP(NANOS) -> TIMESTAMP_NS, LIST -> T[],
// ...). InvalidArgument for a type the mapping does not cover.
[[nodiscard]] absl::StatusOr<std::string> DuckDbTypeName(const parquet::ColumnSpec& spec);

struct EngineOptions {
  // Empty opens an in-memory database.
  std::string database_path;
  // DuckDB worker threads; 0 keeps DuckDB's default.
  int threads = 0;
  // DuckDB memory_limit setting, e.g. "1GB"; empty keeps DuckDB's default.
  std::string memory_limit;
};

// `text` as a SQL string literal: in single quotes, with quotes doubled.
std::string SqlLiteral(std::string_view text);

class DuckDbEngine {
 public:
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<DuckDbEngine>> Open(
      const EngineOptions& options);
  ~DuckDbEngine();

  DuckDbEngine(const DuckDbEngine&) = delete;
  DuckDbEngine& operator=(const DuckDbEngine&) = delete;

  // Runs `sql` (one or more statements; the last one's rows are returned).
  [[nodiscard]] absl::StatusOr<QueryResult> Query(std::string_view sql);

  // Creates table `table` (replacing one of that name) with one column per
  // spec, typed as DuckDB reads that Parquet column (INTEGER(8, unsigned) ->
  // UTINYINT, STRING -> VARCHAR, other byte arrays -> BLOB, LIST -> T[],
  // ...), and appends the rows of `columns` through DuckDB's appender in
  // data chunks. Used to load the same rows into DuckDB that strata writes
  // natively (the writer benchmark's baseline) and by tests. InvalidArgument
  // for a type the mapping does not cover or columns of unequal length.
  [[nodiscard]] absl::Status CreateTableFromColumns(std::string_view table,
                                                    std::span<const parquet::ColumnSpec> specs,
                                                    std::span<const parquet::ColumnVector> columns);

  // The linked library's version, e.g. "v1.4.4".
  static std::string LibraryVersion();

 private:
  struct Handles;
  explicit DuckDbEngine(std::unique_ptr<Handles> handles);

  Mutex mu_;
  std::unique_ptr<Handles> handles_ ABSL_GUARDED_BY(mu_);
};

struct QueryDatabaseOptions {
  // The only directories SQL may read files from (allowed_directories);
  // absolute, each ending in '/'.
  std::vector<std::string> allowed_directories;
  // Spill directory (temp_directory); must exist.
  std::string temp_directory;
  // memory_limit in bytes; must be > 0.
  uint64_t memory_limit_bytes = 0;
  // DuckDB worker threads; 0: the number of cores.
  int threads = 0;
};

class QueryConnection;

// QueryDatabase is one in-memory DuckDB database set up for untrusted SQL:
// TimeZone 'UTC' for every connection, memory_limit, threads,
// temp_directory, allowed_directories with enable_external_access = false,
// no extension autoload or autoinstall, and finally lock_configuration =
// true so no SQL can change any of it. It registers strata's scalar
// function otlp_value_strings(type, bytes) -> VARCHAR[]: the string values
// inside a stored array or kvlist value (type 5 or 6, bytes its encoded
// AnyValue, docs/format/attributes.md) at any depth, keys left out; an
// empty list for other types, NULL for NULL bytes; bytes that do not
// decode fail the statement. Log search's q= uses it (docs/api.md). And
// the functions behind the views' friendly columns and the SQL helpers
// (docs/sql.md; value_json.h has the encoding): otlp_value_json(type,
// str, int, double, bool, bytes) -> JSON and otlp_value_text(...) ->
// VARCHAR, one stored value; otlp_attributes_json(keys, types, str, int,
// double, bool, bytes) -> JSON, an attribute family's set as one object;
// otlp_events_json, otlp_links_json and otlp_exemplars_json (the element
// lists, the per-element attribute counts, the flat family) -> JSON, a
// span's events and links and a point's exemplars as arrays of objects.
// otlp_value_path_equals(type, bytes, path, value) -> BOOLEAN: whether the
// value at `path` inside such a value equals `value`, typed as attribute
// filters compare (otlp/any_value_path.h); log search's body.<path>= uses
// it.
//
// Thread-safety: safe for concurrent use. Errors: Internal when DuckDB
// cannot open or refuses a setting (DuckDB's message included).
class QueryDatabase {
 public:
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<QueryDatabase>> Open(
      const QueryDatabaseOptions& options);
  // Every QueryConnection must be destroyed first.
  ~QueryDatabase();
  QueryDatabase(const QueryDatabase&) = delete;
  QueryDatabase& operator=(const QueryDatabase&) = delete;

  // A new connection (it inherits the database's settings).
  [[nodiscard]] absl::StatusOr<std::unique_ptr<QueryConnection>> Connect();

 private:
  struct Handle;
  explicit QueryDatabase(std::unique_ptr<Handle> handle);
  std::unique_ptr<Handle> handle_;
};

// True when `status` is DuckDB running out of memory (QueryConnection::Run's
// ResourceExhausted for a query that does not fit memory_limit), as opposed
// to other ResourceExhausted errors (a busy pool): retrying cannot help, only
// a narrower query can.
bool IsQueryOutOfMemory(const absl::Status& status);

// QueryConnection is one DuckDB connection of a QueryDatabase.
//
// Thread-safety: single owner (one Run at a time), except Interrupt(),
// which any thread may call while the connection is alive.
//
// Errors of Run: InvalidArgument for SQL DuckDB rejects or a statement
// `read_only` refuses (the reason included); ResourceExhausted when DuckDB
// runs out of memory (its "Out of Memory Error" message, without DuckDB's
// advice to change settings, which are locked, and with how to narrow the
// query; IsQueryOutOfMemory() tells it apart); Cancelled when Interrupt()
// stopped the statement.
class QueryConnection {
 public:
  ~QueryConnection();
  QueryConnection(const QueryConnection&) = delete;
  QueryConnection& operator=(const QueryConnection&) = delete;

  // Runs the statements of `sql` in order; `params` bind to $1, $2, ... of
  // the last one, whose rows are returned: at most `max_rows` of them, and
  // only whole rows whose values (as rendered, summed over the answer) stay
  // within `max_bytes` (0: no byte cap). QueryResult::truncated and
  // truncated_by say when and why rows were left out.
  //
  // With `read_only`, calls of strata's SQL helpers (attr_str('k'), ...;
  // sql_helpers.h) are expanded after the parser check and before
  // anything else; a helper called with anything but one string literal
  // is InvalidArgument.
  //
  // With `read_only`, `sql` must be exactly one SELECT, or EXPLAIN
  // [ANALYZE] of one (EXPLAIN ANALYZE runs its statement). That is decided
  // by DuckDB's parser alone (json_serialize_sql, which serializes SELECT
  // statements and refuses every other kind) before anything is bound or
  // planned: binding a statement can act on its own (EXPORT DATABASE
  // creates its directory while it is prepared). The prepared statement's
  // type is checked again afterwards.
  //
  // DuckDB materializes a whole result outside memory_limit, and its
  // streaming buffer does not count strings, so a single SELECT runs as
  // "SELECT <each column as text> FROM (<sql>) WHERE <running sum of the
  // bytes before this row> <= max_bytes LIMIT max_rows + 1" and its rows
  // are fetched chunk by chunk (2,048 rows at most), stopping at either
  // cap: memory holds the kept rows and the chunks DuckDB's threads have
  // in flight. Column names and types are the statement's own. A read-only
  // SELECT that cannot be wrapped so is InvalidArgument (none is known:
  // semicolons and comments at the end are handled); other SQL, and a
  // SELECT whose column types depend on its parameters, runs unwrapped and
  // materializes fully.
  [[nodiscard]] absl::StatusOr<QueryResult> Run(std::string_view sql,
                                                std::span<const QueryParam> params, size_t max_rows,
                                                size_t max_bytes, bool read_only);

  // Runs `sql`, one SELECT of strata's own (not user SQL: nothing is
  // checked or expanded), with `params` bound to $1, $2, ..., and reads its
  // rows as typed columns (typed_result.h): at most `max_rows` of them (it
  // runs under "LIMIT max_rows + 1") and only whole rows within
  // `max_bytes` (0: no byte cap), fetched chunk by chunk in a streaming
  // result. TypedResult::truncated says when rows were left out. A column
  // of a type TypedKind does not cover is InvalidArgument; other errors as
  // Run's.
  [[nodiscard]] absl::StatusOr<TypedResult> RunTyped(std::string_view sql,
                                                     std::span<const QueryParam> params,
                                                     size_t max_rows, size_t max_bytes);

  // Stops the statement running on this connection, if any (duckdb_interrupt);
  // it then fails with Cancelled. A statement that starts afterwards is not
  // affected, so a caller that may race a statement's start repeats it.
  void Interrupt();

 private:
  friend class QueryDatabase;
  struct Handle;
  explicit QueryConnection(std::unique_ptr<Handle> handle);
  std::unique_ptr<Handle> handle_;
};

}  // namespace strata::query
