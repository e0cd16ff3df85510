#include "query/query_pool.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "common/check.h"
#include "common/mutex.h"
#include "fmt/format.h"
#include "query/friendly_views.h"
#include "storage/format/layout.h"
#include "storage/table/logs_table.h"
#include "storage/table/metrics_table.h"
#include "storage/table/rollups_table.h"
#include "storage/table/spans_table.h"

namespace strata::query {

namespace {

using Clock = std::chrono::steady_clock;

// After a deadline passes, the timer repeats the interrupt this often until
// the query returns: an interrupt that lands between two statements (the
// view rebuild, then the query) or before DuckDB starts executing is
// cleared when the next statement starts.
constexpr std::chrono::milliseconds kReinterruptInterval{10};

// Deadlines and queue timeouts are capped here so time points never
// overflow.
constexpr std::chrono::milliseconds kLongestWait = std::chrono::hours(24 * 365);

// Limits at or above this are "no limit": cgroup v1 reports an unset
// limit as the largest page-aligned int64 (about 8 EiB).
constexpr uint64_t kUnlimitedCgroupBytes = uint64_t{1} << 60;

// The cgroup limit in `path`, or 0 when unset ("max"), absurdly large or
// unreadable.
uint64_t ReadCgroupLimit(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return 0;
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return 0;
  uint64_t limit = 0;
  try {
    limit = std::stoull(text);
  } catch (...) {
    return 0;
  }
  return limit < kUnlimitedCgroupBytes ? limit : 0;
}

// The tighter of two limits where 0 means none.
uint64_t TighterLimit(uint64_t a, uint64_t b) {
  if (a == 0) return b;
  return b != 0 && b < a ? b : a;
}

// The smallest limit in `file` in <base><path> and each of its parents up to
// <base> itself; 0 when none is set. `path` is absolute, as /proc/self/cgroup
// gives it; one with ".." (never from the kernel) is not followed.
uint64_t SmallestLimitUpTo(const std::string& base, std::string_view path, std::string_view file) {
  if (path.empty() || path.front() != '/' || path.find("/..") != std::string_view::npos) return 0;
  std::string dir(path);
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  uint64_t smallest = 0;
  // Each step drops one path component, so this ends after at most
  // path.size() reads.
  while (true) {
    const uint64_t limit =
        ReadCgroupLimit(base + (dir == "/" ? "" : dir) + "/" + std::string(file));
    smallest = TighterLimit(smallest, limit);
    if (dir == "/") return smallest;
    const size_t slash = dir.rfind('/');
    dir.resize(slash == 0 ? 1 : slash);
  }
}

// "CREATE OR REPLACE TEMP VIEW <name> ..." over `files`: the real rows
// without row_kind, or, with no files, no rows of the same columns. A
// table with placeholder rows (spans, logs, metrics) gets two views:
// <name>_stored, its storage columns alone, and <name>, those plus the
// friendly columns (docs/sql.md, "The views"); strata's own queries that
// need no friendly column name the first, which binds faster.
absl::StatusOr<std::string> ViewSql(std::string_view name,
                                    const std::vector<parquet::ColumnSpec>& columns,
                                    const std::vector<std::string>& files) {
  STRATA_CHECK(!columns.empty(), "tables have columns");
  // Table files start with row_kind (data rows are 0); rollups.parquet
  // has only data rows.
  const bool row_kind = columns[0].name == "row_kind";
  // The rollups view resolves rows that point at other rows of their file
  // (RollupsResolvedSql), so it reads each file's row numbers too.
  const bool rollups = name == "rollups";
  std::string list;
  for (const std::string& file : files) list += (list.empty() ? "" : ", ") + SqlLiteral(file);
  std::string select;  // with no files, typed NULLs of every column
  if (files.empty()) {
    for (size_t c = row_kind ? 1 : 0; c < columns.size(); ++c) {
      absl::StatusOr<std::string> type = DuckDbTypeName(columns[c]);
      if (!type.ok()) return type.status();
      select += fmt::format("{}CAST(NULL AS {}) AS \"{}\"", select.empty() ? "" : ", ", *type,
                            columns[c].name);
    }
  }
  if (rollups) {
    const std::string stored =
        files.empty()
            ? fmt::format(
                  "(SELECT {}, CAST(NULL AS VARCHAR) AS filename, CAST(NULL AS BIGINT) AS "
                  "file_row_number WHERE false)",
                  select)
            : fmt::format("read_parquet([{}], filename = true, file_row_number = true)", list);
    return fmt::format("CREATE OR REPLACE TEMP VIEW {} AS SELECT *{} FROM ({});\n", name,
                       FriendlyColumnsSql(name), RollupsResolvedSql(stored));
  }
  const std::string stored = files.empty() ? fmt::format("SELECT {} WHERE false", select)
                             : row_kind
                                 ? fmt::format(
                                       "SELECT * EXCLUDE (row_kind) FROM read_parquet([{}]) WHERE "
                                       "row_kind = 0",
                                       list)
                                 : fmt::format("SELECT * FROM read_parquet([{}])", list);
  return fmt::format(
      "CREATE OR REPLACE TEMP VIEW {0}_stored AS {1};\n"
      "CREATE OR REPLACE TEMP VIEW {0} AS SELECT *{2} FROM {0}_stored;\n",
      name, stored, FriendlyColumnsSql(name));
}

// The views to (re)build for `files`: all of them, or with `built` (the
// lists the connection's views were last built over), only those whose
// list changed. A rebuilt view binds read_parquet again, which reads a
// footer, and binds its friendly columns; a log search that narrows its
// files slice by slice would otherwise rebind the spans and metrics views
// each time too.
absl::StatusOr<std::string> ViewsSql(const ViewFiles& files, const ViewFiles* built) {
  struct View {
    const char* name;
    const std::vector<parquet::ColumnSpec>* columns;
    std::vector<std::string> ViewFiles::*list;
  };
  const View views[] = {{"spans", &storage::SpansTableColumns(), &ViewFiles::spans},
                        {"logs", &storage::LogsTableColumns(), &ViewFiles::logs},
                        {"metrics", &storage::MetricsTableColumns(), &ViewFiles::metrics},
                        {"rollups", &storage::RollupsTableColumns(), &ViewFiles::rollups}};
  std::string sql;
  for (const View& view : views) {
    if (built != nullptr && built->*view.list == files.*view.list) continue;
    absl::StatusOr<std::string> view_sql = ViewSql(view.name, *view.columns, files.*view.list);
    if (!view_sql.ok()) return view_sql.status();
    sql += *view_sql;
  }
  return sql;
}

}  // namespace

uint64_t CgroupMemoryLimit(std::string_view proc_self_cgroup, const std::string& cgroup_root) {
  uint64_t smallest = 0;
  while (!proc_self_cgroup.empty()) {
    const size_t end = proc_self_cgroup.find('\n');
    const std::string_view line = proc_self_cgroup.substr(0, end);
    proc_self_cgroup.remove_prefix(end == std::string_view::npos ? proc_self_cgroup.size()
                                                                 : end + 1);
    // "hierarchy-id:controller,list:path"; the path may itself hold ':'.
    const size_t first = line.find(':');
    const size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    const std::string_view id = line.substr(0, first);
    const std::string_view controllers = line.substr(first + 1, second - first - 1);
    const std::string_view path = line.substr(second + 1);
    uint64_t limit = 0;
    if (id == "0" && controllers.empty()) {
      limit = SmallestLimitUpTo(cgroup_root, path, "memory.max");
    } else {
      bool memory = false;
      for (size_t begin = 0; begin <= controllers.size();) {
        const size_t comma = std::min(controllers.find(',', begin), controllers.size());
        memory = memory || controllers.substr(begin, comma - begin) == "memory";
        begin = comma + 1;
      }
      if (memory) limit = SmallestLimitUpTo(cgroup_root + "/memory", path, "memory.limit_in_bytes");
    }
    smallest = TighterLimit(smallest, limit);
  }
  return smallest;
}

uint64_t DefaultQueryMemoryLimit() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  uint64_t available = pages > 0 && page_size > 0
                           ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size)
                           : uint64_t{1} << 30;
  // Without /proc/self/cgroup (not Linux, or /proc not mounted), only the
  // hierarchy roots are read.
  std::string self = "0::/\n1:memory:/\n";
  if (std::ifstream in("/proc/self/cgroup"); in) {
    self.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const uint64_t cgroup = CgroupMemoryLimit(self, "/sys/fs/cgroup");
  if (cgroup != 0 && cgroup < available) available = cgroup;
  return available / 2;
}

// One connection and the views it last built. A slot belongs to the query
// that checked it out (handed over under State::mu), so its fields need no
// lock.
struct PoolSlot {
  std::unique_ptr<QueryConnection> connection;
  bool views_built = false;
  ViewFiles views_files;  // what the views were last built over
  // RollupMacrosSql() ran on the connection.
  bool macros_built = false;
};

struct QueryPool::State {
  // A query holding a slot, for the deadline timer.
  struct Running {
    PoolSlot* slot = nullptr;
    // The query's own deadline, and the earlier of it and the close
    // deadline, at which the timer interrupts it.
    Clock::time_point own_deadline;
    Clock::time_point deadline;
    // The timer interrupted it at least once.
    bool expired = false;
    Clock::time_point next_interrupt;
  };

  // Constant after construction.
  QueryPoolOptions options;
  std::unique_ptr<QueryDatabase> database;
  std::vector<std::unique_ptr<PoolSlot>> slots;
  std::thread timer;

  mutable Mutex mu;
  CondVar slot_freed;            // signalled when a slot returns to `idle`
  CondVar timer_wake;            // signalled when `running` gains an entry or on shutdown
  mutable CondVar none_running;  // signalled when `running` becomes empty
  std::vector<PoolSlot*> idle ABSL_GUARDED_BY(mu);
  std::vector<PoolSlot*> held_by_test ABSL_GUARDED_BY(mu);  // TEST_HoldConnection()
  std::map<uint64_t, Running> running ABSL_GUARDED_BY(mu);
  uint64_t next_query_id ABSL_GUARDED_BY(mu) = 1;
  bool shutting_down ABSL_GUARDED_BY(mu) = false;
  // Set by Close(): no query starts any more, running ones are interrupted
  // at `interrupt_at`.
  bool closed ABSL_GUARDED_BY(mu) = false;
  Clock::time_point interrupt_at ABSL_GUARDED_BY(mu) = Clock::time_point::max();

  void TimerLoop();
  // Takes an idle slot and registers the query, or fails: Unavailable once
  // closed, ResourceExhausted after queue_timeout.
  absl::StatusOr<std::pair<PoolSlot*, uint64_t>> CheckOut(std::chrono::milliseconds deadline)
      ABSL_LOCKS_EXCLUDED(mu);
  ~State();
};

void QueryPool::State::TimerLoop() {
  MutexLock lock(&mu);
  while (!shutting_down) {
    const Clock::time_point now = Clock::now();
    Clock::time_point wake = Clock::time_point::max();
    for (auto& [id, query] : running) {
      if (query.deadline <= now && query.next_interrupt <= now) {
        // Under mu: the query cannot release its slot (and the connection
        // cannot start another query) while it is interrupted.
        query.slot->connection->Interrupt();
        query.expired = true;
        query.next_interrupt = now + kReinterruptInterval;
      }
      wake = std::min(wake, query.deadline > now ? query.deadline : query.next_interrupt);
    }
    if (wake == Clock::time_point::max()) {
      timer_wake.Wait(&mu);  // shutdown and every new query signal it
    } else {
      timer_wake.WaitUntil(&mu, wake);
    }
  }
}

QueryPool::State::~State() {
  {
    MutexLock lock(&mu);
    shutting_down = true;
  }
  timer_wake.SignalAll();
  if (timer.joinable()) timer.join();
  slots.clear();  // connections before the database
  database.reset();
}

QueryPool::QueryPool(std::unique_ptr<State> state) : state_(std::move(state)) {}
QueryPool::~QueryPool() = default;

const QueryPoolOptions& QueryPool::options() const { return state_->options; }

absl::StatusOr<std::pair<PoolSlot*, uint64_t>> QueryPool::State::CheckOut(
    std::chrono::milliseconds deadline) {
  MutexLock lock(&mu);
  const Clock::time_point give_up = Clock::now() + options.queue_timeout;
  while (idle.empty() && !closed) {
    if (!slot_freed.WaitUntil(&mu, give_up) && idle.empty() && Clock::now() >= give_up) {
      return absl::ResourceExhaustedError(
          fmt::format("query pool: all {} query connections stayed busy for {} ms (queue "
                      "timeout); retry later",
                      options.max_concurrent, options.queue_timeout.count()));
    }
  }
  if (closed) {
    return absl::UnavailableError(
        "query pool: the server is shutting down; no query starts any more");
  }
  PoolSlot* slot = idle.back();
  idle.pop_back();
  const uint64_t query_id = next_query_id++;
  Running& query = running[query_id];
  query.slot = slot;
  query.own_deadline = Clock::now() + deadline;
  query.deadline = std::min(query.own_deadline, interrupt_at);
  query.next_interrupt = query.deadline;
  return std::make_pair(slot, query_id);
}

void QueryPool::Close(Clock::time_point interrupt_at) {
  State& s = *state_;
  {
    MutexLock lock(&s.mu);
    s.closed = true;
    s.interrupt_at = std::min(s.interrupt_at, interrupt_at);
    for (auto& [id, query] : s.running) {
      if (query.deadline > s.interrupt_at) {
        query.deadline = s.interrupt_at;
        query.next_interrupt = s.interrupt_at;
      }
    }
  }
  s.slot_freed.SignalAll();  // waiters are refused
  s.timer_wake.Signal();     // the timer looks at the new deadlines
}

int QueryPool::RunningQueries() const {
  MutexLock lock(&state_->mu);
  return static_cast<int>(state_->running.size());
}

bool QueryPool::WaitUntilNoneRuns(Clock::time_point until) const {
  MutexLock lock(&state_->mu);
  while (!state_->running.empty()) {
    if (!state_->none_running.WaitUntil(&state_->mu, until) && Clock::now() >= until) {
      return state_->running.empty();
    }
  }
  return true;
}

bool QueryPool::TEST_HoldConnection() {
  MutexLock lock(&state_->mu);
  if (state_->idle.empty()) return false;
  state_->held_by_test.push_back(state_->idle.back());
  state_->idle.pop_back();
  return true;
}

void QueryPool::TEST_ReleaseHeldConnection() {
  {
    MutexLock lock(&state_->mu);
    STRATA_CHECK(!state_->held_by_test.empty(), "TEST_HoldConnection() took a connection");
    state_->idle.push_back(state_->held_by_test.back());
    state_->held_by_test.pop_back();
  }
  state_->slot_freed.Signal();
}

absl::StatusOr<std::unique_ptr<QueryPool>> QueryPool::Open(const QueryPoolOptions& options) {
  auto state = std::make_unique<State>();
  state->options = options;
  QueryPoolOptions& o = state->options;
  if (o.data_dir.empty() || o.data_dir[0] != '/') {
    return absl::InvalidArgumentError(
        fmt::format("query pool: data_dir must be an absolute path, got \"{}\"", o.data_dir));
  }
  while (o.data_dir.size() > 1 && o.data_dir.back() == '/') o.data_dir.pop_back();
  if (o.max_concurrent < 1) {
    return absl::InvalidArgumentError("query pool: max_concurrent must be at least 1");
  }
  if (o.threads <= 0) {
    o.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }
  o.queue_timeout = std::clamp(o.queue_timeout, std::chrono::milliseconds(0), kLongestWait);
  if (o.memory_limit_bytes == 0) o.memory_limit_bytes = DefaultQueryMemoryLimit();
  if (o.default_deadline.count() <= 0) o.default_deadline = QueryPoolOptions{}.default_deadline;
  o.default_deadline = std::min(o.default_deadline, kLongestWait);
  if (o.default_max_rows == 0) o.default_max_rows = QueryPoolOptions{}.default_max_rows;

  const std::string temp_directory = storage::DataDirPaths(o.data_dir).QueryTemp();
  std::error_code error;
  std::filesystem::create_directories(temp_directory, error);
  if (error) {
    return absl::InternalError(
        fmt::format("query pool: cannot create {}: {}", temp_directory, error.message()));
  }
  QueryDatabaseOptions database_options;
  // And the read cache of evicted batches' files (storage/offload/
  // data_file_resolver.h): copies of published batch data, nothing else.
  database_options.allowed_directories = {o.data_dir + "/telemetry/days/",
                                          o.data_dir + "/query/cache/"};
  database_options.temp_directory = temp_directory;
  database_options.memory_limit_bytes = o.memory_limit_bytes;
  database_options.threads = o.threads;
  absl::StatusOr<std::unique_ptr<QueryDatabase>> database = QueryDatabase::Open(database_options);
  if (!database.ok()) return database.status();
  state->database = *std::move(database);
  for (int i = 0; i < o.max_concurrent; ++i) {
    absl::StatusOr<std::unique_ptr<QueryConnection>> connection = state->database->Connect();
    if (!connection.ok()) return connection.status();
    auto slot = std::make_unique<PoolSlot>();
    slot->connection = *std::move(connection);
    state->slots.push_back(std::move(slot));
  }
  {
    MutexLock lock(&state->mu);
    for (auto& slot : state->slots) state->idle.push_back(slot.get());
  }
  State* raw = state.get();
  state->timer = std::thread([raw] { raw->TimerLoop(); });
  return std::unique_ptr<QueryPool>(new QueryPool(std::move(state)));
}

template <typename Answer, typename RunOnConnection>
absl::StatusOr<Answer> QueryPool::RunWith(const ViewFiles& files, std::string_view sql,
                                          const QueryOptions& options, RunOnConnection run) {
  State& s = *state_;
  const std::chrono::milliseconds deadline = std::min(
      options.deadline.count() > 0 ? options.deadline : s.options.default_deadline, kLongestWait);
  const size_t max_rows = options.max_rows > 0 ? options.max_rows : s.options.default_max_rows;

  // Check out a connection, waiting at most queue_timeout.
  absl::StatusOr<std::pair<PoolSlot*, uint64_t>> checked_out = s.CheckOut(deadline);
  if (!checked_out.ok()) return checked_out.status();
  auto [slot, query_id] = *checked_out;
  s.timer_wake.Signal();

  absl::StatusOr<Answer> result;
  if (!slot->views_built || slot->views_files != files) {
    const bool was_built = slot->views_built;
    slot->views_built = false;
    absl::StatusOr<std::string> views = ViewsSql(files, was_built ? &slot->views_files : nullptr);
    absl::Status built = views.status();
    if (views.ok() && !views->empty()) {  // empty: only the sequence differs
      built = slot->connection->Run(*views, {}, 0, 0, /*read_only=*/false).status();
    }
    result = built.ok() ? absl::StatusOr<Answer>(Answer{}) : absl::StatusOr<Answer>(built);
    if (result.ok()) {
      slot->views_built = true;
      slot->views_files = files;
    } else if (result.status().code() == absl::StatusCode::kInvalidArgument) {
      // The files, not the user's SQL, are at fault.
      result = absl::InternalError(fmt::format("query pool: cannot build the views: {}",
                                               std::string(result.status().message())));
    }
  }
  // The rollup macros, once per connection, for the first user SQL that
  // may call them: only there, because under ThreadSanitizer a macro's
  // creation is reported racing with DuckDB's own worker threads (whose
  // synchronisation TSan cannot see), which queries that never use them
  // need not risk.
  bool ready = slot->views_built;
  if (ready && options.user_sql && !slot->macros_built &&
      sql.find("rollup_") != std::string_view::npos) {
    absl::Status macros =
        slot->connection->Run(RollupMacrosSql(), {}, 0, 0, /*read_only=*/false).status();
    if (!macros.ok()) result = macros;
    slot->macros_built = ready = macros.ok();
  }
  if (ready) result = run(*slot->connection, max_rows);

  bool expired = false;
  bool closed_first = false;  // Close() interrupted it before its own deadline
  {
    MutexLock lock(&s.mu);
    auto it = s.running.find(query_id);
    STRATA_CHECK(it != s.running.end(), "a running query is registered until it returns");
    expired = it->second.expired;
    closed_first = it->second.deadline < it->second.own_deadline;
    s.running.erase(it);
    s.idle.push_back(slot);
    if (s.running.empty()) s.none_running.SignalAll();
  }
  s.slot_freed.Signal();
  if (expired && !result.ok() && result.status().code() == absl::StatusCode::kCancelled) {
    if (closed_first) {
      return absl::UnavailableError(
          "query pool: the server is shutting down; the query was interrupted");
    }
    return absl::DeadlineExceededError(
        fmt::format("query interrupted after {} ms (deadline)", deadline.count()));
  }
  return result;
}

absl::StatusOr<QueryResult> QueryPool::Run(const ViewFiles& files, std::string_view sql,
                                           const QueryOptions& options) {
  return RunWith<QueryResult>(
      files, sql, options, [&](QueryConnection& connection, size_t max_rows) {
        return connection.Run(sql, options.params, max_rows, options.max_bytes, options.user_sql);
      });
}

absl::StatusOr<TypedResult> QueryPool::RunTyped(const ViewFiles& files, std::string_view sql,
                                                const QueryOptions& options) {
  if (options.user_sql) {
    return absl::InvalidArgumentError("query pool: typed reads are for strata's own SQL");
  }
  return RunWith<TypedResult>(
      files, sql, options, [&](QueryConnection& connection, size_t max_rows) {
        return connection.RunTyped(sql, options.params, max_rows, options.max_bytes);
      });
}

}  // namespace strata::query
