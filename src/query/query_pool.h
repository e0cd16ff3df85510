#pragma once

// QueryPool is the bounded pool of DuckDB connections the API, `strata sql`
// and the query benchmark run SQL on (docs/architecture.md, "Query").
//
// One in-memory DuckDB database, opened with:
//   * TimeZone 'UTC' on every connection, so results never depend on the
//     process's TZ;
//   * memory_limit (default DefaultQueryMemoryLimit()) and threads;
//   * temp_directory <data dir>/query/tmp for spilling;
//   * allowed_directories = [<data dir>/telemetry/days/, <data
//     dir>/query/cache/ (copies of evicted batches' files)] (not the whole
//     data directory: control/strata.sqlite holds password and token
//     hashes), enable_external_access = false, autoinstall/autoload of
//     extensions off, then lock_configuration = true, so SQL can neither
//     read outside the published batches nor change these settings.
//
// Views. Every query sees the views `spans`, `logs` and `metrics` over an
// explicit list of Parquet files (ViewFiles), never a glob; each view keeps
// only real rows (row_kind = 0) and has the file's columns except row_kind
// (always 0 there), typed as DuckDB reads strata's files, followed by the
// friendly columns of docs/sql.md (friendly_views.h). A table with no
// files is an empty view with the same columns. A connection rebuilds its
// views only when the ViewFiles differ from the ones it last built them over
// (or its last rebuild failed). Files must lie under the allowed
// directory.
//
// Limits. At most `max_concurrent` queries run at once (one connection
// each); a query waits for a free connection at most `queue_timeout`, then
// fails with ResourceExhausted. Each query has a deadline: a timer
// interrupts it (duckdb_interrupt) when it passes, and it fails with
// DeadlineExceeded ("query interrupted after N ms"; the deadline counts
// from when the query gets its connection, and covers rebuilding the
// views). A query that needs more than memory_limit fails with
// ResourceExhausted and leaves the pool usable. Results are capped at
// `max_rows` rows (QueryResult::truncated says when more existed); a lone
// SELECT runs under "LIMIT max_rows + 1", so DuckDB never materializes
// more (its materialized results are outside memory_limit). Values
// are rendered as duckdb_engine.h's QueryResult describes (VARCHAR casts,
// top-level BLOBs as lowercase hex; timestamps with time zone in UTC).
//
// Read-only SQL. With QueryOptions::user_sql, the text must be exactly one
// statement whose type is SELECT (EXPLAIN [ANALYZE] of a SELECT is allowed
// too; DESCRIBE, SHOW, SUMMARIZE count as SELECT); anything else
// (DDL, INSERT, SET, PRAGMA, COPY, ATTACH, several statements) is
// InvalidArgument before it runs. User SQL may call the helpers of
// docs/sql.md (attr_str('http.route'), ...), expanded before it runs.
//
// Parameters. `params` bind to $1, $2, ... through a prepared statement, so
// values from HTTP requests never become SQL text.
//
// Shutdown. Close(interrupt_at) refuses every later query at once, and
// wakes those waiting for a connection to refuse them too; queries already
// running go on until `interrupt_at`, then are interrupted as at a deadline.
// Both fail with Unavailable ("the server is shutting down"). So the server
// can bound its exit: once `interrupt_at` has passed, every Run() returns
// within DuckDB's reaction to an interrupt.
//
// Thread-safety: safe for concurrent use. Errors: InvalidArgument for SQL
// DuckDB rejects (its message included); ResourceExhausted and
// DeadlineExceeded as above; Unavailable after Close(); Internal when the views cannot be built (a
// file missing or outside the allowed directory); Open returns InvalidArgument for options it
// cannot use (a relative data_dir, max_concurrent < 1) and Internal when
// DuckDB cannot open or the spill directory cannot be created.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "query/duckdb_engine.h"

namespace strata::query {

// What a batch's meta.json says of its metrics.parquet (meta-json.md):
// every row it holds (placeholders included) and the least and greatest
// time_unix_nano of its data points (nullopt: none recorded).
struct MetricsFileMeta {
  uint64_t file_rows = 0;
  std::optional<std::pair<uint64_t, uint64_t>> event_time;
};

// The Parquet files one query reads, absolute paths, one list per view.
struct ViewFiles {
  // The pinned Snapshot's sequence number (for logs and tests). A
  // connection rebuilds its views whenever the lists differ from the ones
  // it last built them over.
  uint64_t sequence = 0;
  std::vector<std::string> spans;
  std::vector<std::string> logs;
  std::vector<std::string> metrics;
  // The meta.json figures of each of `metrics`, in the same order, so a
  // reader can tell whether a window holds every point of a file without
  // opening it; empty when the lists were made by hand (nothing known).
  // Not part of the views: operator== leaves it out.
  std::vector<MetricsFileMeta> metrics_meta;
  // rollups.parquet of the batches that have one (meta.json format 2).
  std::vector<std::string> rollups;
  // Keeps the cached copies of evicted batches' files listed above while
  // the query runs (storage/offload/data_file_resolver.h); empty when
  // every file is local.
  std::vector<std::shared_ptr<const void>> holds;
  friend bool operator==(const ViewFiles& a, const ViewFiles& b) {
    return a.sequence == b.sequence && a.spans == b.spans && a.logs == b.logs &&
           a.metrics == b.metrics && a.rollups == b.rollups;
  }
};

// QueryParam (a bound parameter: std::string binds VARCHAR, Blob binds
// BLOB, ...), Blob and QueryResult are declared in query/duckdb_engine.h.

struct QueryOptions {
  // 0: the pool's default.
  std::chrono::milliseconds deadline{0};
  size_t max_rows = 0;
  // Most bytes of values in the answer (QueryConnection::Run); 0: no cap.
  size_t max_bytes = 0;
  // Enforce read-only, single-statement SQL (text from a user).
  bool user_sql = false;
  std::vector<QueryParam> params;
};

struct QueryPoolOptions {
  // Absolute path of the data directory: the only directory DuckDB may
  // read, and the parent of query/tmp.
  std::string data_dir;
  int max_concurrent = 2;
  // DuckDB worker threads; 0: the number of cores.
  int threads = 0;
  // 0: DefaultQueryMemoryLimit().
  uint64_t memory_limit_bytes = 0;
  std::chrono::milliseconds default_deadline{30'000};
  std::chrono::milliseconds queue_timeout{5'000};
  size_t default_max_rows = 10'000;
};

// Half of the memory this process may use: the smallest cgroup limit on
// the process's own cgroup or an ancestor (CgroupMemoryLimit() over
// /proc/self/cgroup and /sys/fs/cgroup) when one is set and below physical
// memory, else physical memory.
uint64_t DefaultQueryMemoryLimit();

// The smallest memory limit set on the cgroups named in `proc_self_cgroup`
// (the text of /proc/self/cgroup) or on any of their ancestors, read from
// the hierarchy mounted at `cgroup_root` (normally /sys/fs/cgroup); 0 when
// none is set. For cgroup v2 (the line "0::<path>") it reads memory.max in
// <root><path> and each parent directory up to <root>; for cgroup v1 (a line
// whose controller list holds "memory"), memory.limit_in_bytes in
// <root>/memory<path> and each parent up to <root>/memory. With both, the
// smaller limit wins. "max", a value of 1 EiB or more (v1's "unlimited" is
// about 8 EiB), an unreadable file, a malformed line and a path with ".."
// all count as no limit.
uint64_t CgroupMemoryLimit(std::string_view proc_self_cgroup, const std::string& cgroup_root);

class QueryPool {
 public:
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<QueryPool>> Open(
      const QueryPoolOptions& options);
  // No Run may be in progress.
  ~QueryPool();
  QueryPool(const QueryPool&) = delete;
  QueryPool& operator=(const QueryPool&) = delete;

  // Runs `sql` with the views over `files`.
  [[nodiscard]] absl::StatusOr<QueryResult> Run(const ViewFiles& files, std::string_view sql,
                                                const QueryOptions& options = {});

  // Runs `sql`, one SELECT of strata's own, as Run does (views, deadline,
  // row and byte caps, errors), and reads its answer as typed columns
  // (QueryConnection::RunTyped). QueryOptions::user_sql is
  // InvalidArgument: user SQL is answered as text.
  [[nodiscard]] absl::StatusOr<TypedResult> RunTyped(const ViewFiles& files, std::string_view sql,
                                                     const QueryOptions& options = {});

  // Effective settings (after defaults), for logs and tests.
  const QueryPoolOptions& options() const;

  // See "Shutdown" above. A later call may bring `interrupt_at` earlier,
  // never later.
  void Close(std::chrono::steady_clock::time_point interrupt_at);

  // Queries holding a connection right now (for /metrics; tests wait on it).
  int RunningQueries() const;

  // Waits until no query holds a connection or `until` passes; true when
  // none does. Shutdown keeps the API listener open this long, so a query
  // still running can be answered and /readyz says the server is draining.
  bool WaitUntilNoneRuns(std::chrono::steady_clock::time_point until) const;

  // Takes an idle connection out of the pool, as a query would, and keeps
  // it until TEST_ReleaseHeldConnection(): a test makes every connection
  // busy this way without relying on a slow query. False when none is idle.
  bool TEST_HoldConnection();
  // Returns a connection TEST_HoldConnection() took; a waiting query gets it.
  void TEST_ReleaseHeldConnection();

 private:
  struct State;
  explicit QueryPool(std::unique_ptr<State> state);
  // Run's connection handling around `run(connection, max_rows)`, which
  // answers the statement itself (defined and used in query_pool.cc).
  template <typename Answer, typename RunOnConnection>
  absl::StatusOr<Answer> RunWith(const ViewFiles& files, std::string_view sql,
                                 const QueryOptions& options, RunOnConnection run);
  std::unique_ptr<State> state_;
};

}  // namespace strata::query
