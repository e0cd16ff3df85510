#include "query/query_pool.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "common/check.h"
#include "common/mutex.h"
#include "fmt/format.h"
#include "storage/logs_table.h"
#include "storage/metrics_table.h"
#include "storage/spans_table.h"

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

// The cgroup limit in `path`, or 0 when unset ("max") or unreadable.
uint64_t ReadCgroupLimit(const char* path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return 0;
  try {
    return std::stoull(text);
  } catch (...) {
    return 0;
  }
}

// "CREATE OR REPLACE TEMP VIEW <name> ..." over `files`: the real rows
// without row_kind, or, with no files, no rows of the same columns.
absl::StatusOr<std::string> ViewSql(std::string_view name,
                                    const std::vector<parquet::ColumnSpec>& columns,
                                    const std::vector<std::string>& files) {
  STRATA_CHECK(!columns.empty() && columns[0].name == "row_kind", "tables start with row_kind");
  if (!files.empty()) {
    std::string list;
    for (const std::string& file : files) list += (list.empty() ? "" : ", ") + SqlLiteral(file);
    return fmt::format(
        "CREATE OR REPLACE TEMP VIEW {} AS SELECT * EXCLUDE (row_kind) FROM read_parquet([{}]) "
        "WHERE row_kind = 0;\n",
        name, list);
  }
  std::string select;
  for (size_t c = 1; c < columns.size(); ++c) {
    absl::StatusOr<std::string> type = DuckDbTypeName(columns[c]);
    if (!type.ok()) return type.status();
    select +=
        fmt::format("{}CAST(NULL AS {}) AS \"{}\"", c == 1 ? "" : ", ", *type, columns[c].name);
  }
  return fmt::format("CREATE OR REPLACE TEMP VIEW {} AS SELECT {} WHERE false;\n", name, select);
}

absl::StatusOr<std::string> ViewsSql(const ViewFiles& files) {
  std::string sql;
  const std::pair<const char*, std::pair<const std::vector<parquet::ColumnSpec>*,
                                         const std::vector<std::string>*>>
      views[] = {{"spans", {&storage::SpansTableColumns(), &files.spans}},
                 {"logs", {&storage::LogsTableColumns(), &files.logs}},
                 {"metrics", {&storage::MetricsTableColumns(), &files.metrics}}};
  for (const auto& [name, table] : views) {
    absl::StatusOr<std::string> view = ViewSql(name, *table.first, *table.second);
    if (!view.ok()) return view.status();
    sql += *view;
  }
  return sql;
}

}  // namespace

uint64_t DefaultQueryMemoryLimit() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  uint64_t available = pages > 0 && page_size > 0
                           ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size)
                           : uint64_t{1} << 30;
  uint64_t cgroup = ReadCgroupLimit("/sys/fs/cgroup/memory.max");
  if (cgroup == 0) cgroup = ReadCgroupLimit("/sys/fs/cgroup/memory/memory.limit_in_bytes");
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
};

struct QueryPool::State {
  // A query holding a slot, for the deadline timer.
  struct Running {
    PoolSlot* slot = nullptr;
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
  CondVar slot_freed;  // signalled when a slot returns to `idle`
  CondVar timer_wake;  // signalled when `running` gains an entry or on shutdown
  std::vector<PoolSlot*> idle ABSL_GUARDED_BY(mu);
  std::map<uint64_t, Running> running ABSL_GUARDED_BY(mu);
  uint64_t next_query_id ABSL_GUARDED_BY(mu) = 1;
  bool shutting_down ABSL_GUARDED_BY(mu) = false;

  void TimerLoop();
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

int QueryPool::TEST_RunningQueries() const {
  MutexLock lock(&state_->mu);
  return static_cast<int>(state_->running.size());
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

  const std::string temp_directory = o.data_dir + "/query/tmp";
  std::error_code error;
  std::filesystem::create_directories(temp_directory, error);
  if (error) {
    return absl::InternalError(
        fmt::format("query pool: cannot create {}: {}", temp_directory, error.message()));
  }
  QueryDatabaseOptions database_options;
  database_options.allowed_directories = {o.data_dir + "/telemetry/days/"};
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

absl::StatusOr<QueryResult> QueryPool::Run(const ViewFiles& files, std::string_view sql,
                                           const QueryOptions& options) {
  State& s = *state_;
  const std::chrono::milliseconds deadline = std::min(
      options.deadline.count() > 0 ? options.deadline : s.options.default_deadline, kLongestWait);
  const size_t max_rows = options.max_rows > 0 ? options.max_rows : s.options.default_max_rows;

  // Check out a connection, waiting at most queue_timeout.
  PoolSlot* slot = nullptr;
  uint64_t query_id = 0;
  {
    MutexLock lock(&s.mu);
    const Clock::time_point give_up = Clock::now() + s.options.queue_timeout;
    while (s.idle.empty()) {
      if (!s.slot_freed.WaitUntil(&s.mu, give_up) && s.idle.empty() && Clock::now() >= give_up) {
        return absl::ResourceExhaustedError(
            fmt::format("query pool: all {} connections stayed busy for {} ms (queue timeout)",
                        s.options.max_concurrent, s.options.queue_timeout.count()));
      }
    }
    slot = s.idle.back();
    s.idle.pop_back();
    query_id = s.next_query_id++;
    State::Running& running = s.running[query_id];
    running.slot = slot;
    running.deadline = Clock::now() + deadline;
    running.next_interrupt = running.deadline;
  }
  s.timer_wake.Signal();

  absl::StatusOr<QueryResult> result;
  if (!slot->views_built || slot->views_files != files) {
    slot->views_built = false;
    absl::StatusOr<std::string> views = ViewsSql(files);
    if (views.ok()) {
      result = slot->connection->Run(*views, {}, 0, /*read_only=*/false);
    } else {
      result = views.status();
    }
    if (result.ok()) {
      slot->views_built = true;
      slot->views_files = files;
    } else if (result.status().code() == absl::StatusCode::kInvalidArgument) {
      // The files, not the user's SQL, are at fault.
      result = absl::InternalError(fmt::format("query pool: cannot build the views: {}",
                                               std::string(result.status().message())));
    }
  }
  if (slot->views_built) {
    result = slot->connection->Run(sql, options.params, max_rows, options.user_sql);
  }

  bool expired = false;
  {
    MutexLock lock(&s.mu);
    auto it = s.running.find(query_id);
    STRATA_CHECK(it != s.running.end(), "a running query is registered until it returns");
    expired = it->second.expired;
    s.running.erase(it);
    s.idle.push_back(slot);
  }
  s.slot_freed.Signal();
  if (expired && !result.ok() && result.status().code() == absl::StatusCode::kCancelled) {
    return absl::DeadlineExceededError(
        fmt::format("query interrupted after {} ms (deadline)", deadline.count()));
  }
  return result;
}

}  // namespace strata::query
