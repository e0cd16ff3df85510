#include "api/log_tail.h"

#include <pthread.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/api_server.h"
#include "api/json_output.h"
#include "api/log_filter.h"
#include "api/log_rows.h"
#include "api/params.h"
#include "api/tail_event_id.h"
#include "common/status_macros.h"
#include "otlp/json_writer.h"
#include "query/duckdb_engine.h"
#include "query/friendly_views.h"
#include "server/websocket_frame.h"
#include "storage/format/batch_id.h"
#include "storage/format/layout.h"
#include "storage/offload/data_file_resolver.h"
#include "storage/storage.h"

namespace strata::api {

using Clock = std::chrono::steady_clock;

namespace {

constexpr std::string_view kEventStream = "text/event-stream";
// How often a stream whose queue is full is looked at again (no event
// says that a client read).
constexpr auto kFullQueueRecheck = std::chrono::milliseconds(50);

std::string Event(std::string_view type, const std::string& data) {
  std::string out = "event: ";
  out.append(type);
  out += "\ndata: " + data + "\n\n";
  return out;
}

// Every query connection was busy (the pool's 429): the same query is
// tried again shortly, from the same position.
bool Transient(const absl::Status& status) {
  return status.code() == absl::StatusCode::kResourceExhausted &&
         !query::IsQueryOutOfMemory(status);
}

std::string ReasonJson(std::string_view reason) {
  std::string out;
  otlp::JsonWriter w(&out);
  w.BeginObject();
  w.Key("reason");
  w.String(reason);
  w.EndObject();
  return out;
}

}  // namespace

// One open stream. Owned by the tail thread once it took it from arrived_.
struct LogTail::Tailer {
  std::shared_ptr<server::HttpStream> stream;
  storage::LogFeed* feed = nullptr;
  std::unique_ptr<storage::LogFeed::Subscription> subscription;
  // The filters (window, limit and cursor unused).
  LogSearch filter;
  // The next record to handle: file row `next_row` of the feed's batch
  // `next_sequence`.
  uint64_t next_sequence = 0;
  uint64_t next_row = 0;
  // Matching records skipped since the last `missed` event.
  uint64_t missed = 0;
  // A `reset` event to send before anything else, when not empty.
  std::string reset_reason;
  Clock::time_point last_write;
  // A formatted tail: how it selects and writes, and whose it is.
  std::unique_ptr<TailFormat> format;
  std::string owner;
  // The snapshot a formatted tail's history is read from, until it is.
  std::shared_ptr<const storage::Snapshot> history;
};

// A query's answer: the rows (with the feed index of each row's batch in
// the last cell), or their count.
struct LogTail::Rows {
  std::vector<std::vector<std::optional<std::string>>> rows;
  uint64_t count = 0;
};

LogTail::LogTail(LogTailOptions options, query::QueryPool* pool, std::string data_dir,
                 CallOptions call)
    : options_(options), pool_(pool), data_dir_(std::move(data_dir)), call_(call) {
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "strata-logtail");
    Loop();
  });
}

LogTail::~LogTail() { Stop(); }

void LogTail::AttachLocked(storage::Storage* storage, Tailer* tailer) {
  streams_.fetch_add(1, std::memory_order_relaxed);
  storage::LogFeed* feed = &storage->log_feed();
  if (std::find(listened_.begin(), listened_.end(), feed) == listened_.end()) {
    feed->SetListener([waker = waker_] { waker->Wake(); });
    listened_.push_back(feed);
  }
  tailer->feed = feed;
}

void LogTail::Subscribe(storage::Storage* storage, Tailer* tailer) {
  uint64_t last_sequence = 0;
  const bool history = tailer->format != nullptr && tailer->format->wants_history();
  tailer->subscription =
      storage->SubscribeLogFeed(&last_sequence, history ? &tailer->history : nullptr);
  tailer->next_sequence = last_sequence + 1;
}

void LogTail::Start(storage::Storage* storage, const server::HttpRequest& request,
                    server::HttpResponder responder) {
  auto fail = [&](const absl::Status& status) { responder.Respond(ApiErrorResponse(status)); };
  if (storage == nullptr || pool_ == nullptr) return fail(absl::UnavailableError("recovering"));
  auto tailer = std::make_unique<Tailer>();
  {
    absl::StatusOr<QueryParams> params = QueryParams::Parse(request.query());
    if (!params.ok()) return fail(params.status());
    if (absl::Status s = TakeLogRecordFilters(*params, &tailer->filter); !s.ok()) {
      return fail(s);
    }
    if (absl::Status s = params->Finish(); !s.ok()) return fail(s);
  }
  std::optional<TailEventId> resume;
  if (const std::string_view last_id = request.Header("Last-Event-ID"); !last_id.empty()) {
    absl::StatusOr<TailEventId> parsed = ParseTailEventId(last_id);
    if (!parsed.ok()) return fail(parsed.status());
    resume = *parsed;
  }
  {
    MutexLock lock(&mu_);
    if (stopping_) return fail(absl::UnavailableError("the server is shutting down"));
    // Formatted tails have their own limits.
    if (streams_.load(std::memory_order_relaxed) - formatted_ >= options_.max_connections) {
      return fail(absl::UnavailableError(absl::StrCat(
          "too many live tails: at most ", options_.max_connections, " at once; retry later")));
    }
    AttachLocked(storage, tailer.get());
  }
  Subscribe(storage, tailer.get());
  if (resume.has_value()) {
    const std::optional<uint64_t> sequence = tailer->feed->SequenceOf(resume->batch);
    if (sequence.has_value()) {
      tailer->next_sequence = *sequence;
      tailer->next_row = resume->row + 1;
    } else {
      tailer->reset_reason = absl::StrCat(
          "Last-Event-ID ", FormatTailEventId(resume->batch, resume->row),
          " is no longer in the server's resume window; the stream starts at the newest records");
    }
  }
  server::HttpResponse head;
  head.content_type = std::string(kEventStream);
  head.headers.emplace_back("Cache-Control", "no-cache");
  head.headers.emplace_back("X-Accel-Buffering", "no");
  head.body = ": strata log tail\n\n";
  tailer->stream =
      responder.Stream(std::move(head), {.max_queued_bytes = options_.max_queued_bytes});
  if (tailer->stream == nullptr) {
    streams_.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
  tailer->last_write = Clock::now();
  {
    MutexLock lock(&mu_);
    if (stopping_) {
      tailer->stream->End();
      streams_.fetch_sub(1, std::memory_order_relaxed);
      return;
    }
    arrived_.push_back(std::move(tailer));
  }
  waker_->Wake();
}

absl::Status LogTail::StartFormatted(storage::Storage* storage, std::unique_ptr<TailFormat> format,
                                     std::string owner, server::HttpResponse head,
                                     server::HttpStreamOptions stream_options,
                                     server::HttpResponder& responder) {
  if (storage == nullptr || pool_ == nullptr) return absl::UnavailableError("recovering");
  auto tailer = std::make_unique<Tailer>();
  tailer->format = std::move(format);
  tailer->owner = std::move(owner);
  {
    MutexLock lock(&mu_);
    if (stopping_) return absl::UnavailableError("the server is shutting down");
    if (formatted_ >= options_.formatted_max_connections) {
      return absl::ResourceExhaustedError(absl::StrCat("too many live tails: at most ",
                                                       options_.formatted_max_connections,
                                                       " at once; retry later"));
    }
    int& mine = formatted_by_owner_[tailer->owner];
    if (mine >= options_.formatted_max_per_owner) {
      return absl::ResourceExhaustedError(
          absl::StrCat("too many live tails for this token: at most ",
                       options_.formatted_max_per_owner, " at once; retry later"));
    }
    ++mine;
    ++formatted_;
    AttachLocked(storage, tailer.get());
  }
  Subscribe(storage, tailer.get());
  if (options_.TEST_after_subscribe) options_.TEST_after_subscribe();
  // A closed stream gives its place back at once, not at the next
  // heartbeat.
  stream_options.on_closed = [waker = waker_] { waker->Wake(); };
  tailer->stream = responder.Stream(std::move(head), stream_options);
  if (tailer->stream == nullptr) {
    Finish(*tailer, "");
    return absl::OkStatus();  // the connection went away: nobody to answer
  }
  tailer->last_write = Clock::now();
  {
    MutexLock lock(&mu_);
    if (!stopping_) {
      arrived_.push_back(std::move(tailer));
      tailer = nullptr;
    }
  }
  if (tailer != nullptr) {
    Finish(*tailer, "the server is shutting down");
    return absl::OkStatus();
  }
  waker_->Wake();
  return absl::OkStatus();
}

void LogTail::Finish(Tailer& t, std::string_view reason) {
  if (t.stream != nullptr) {
    if (t.format != nullptr && !reason.empty()) {
      t.stream->Close(reason == "the server is shutting down" ? server::kWebSocketGoingAway
                                                              : server::kWebSocketInternalError,
                      reason);
    } else {
      t.stream->End();
    }
  }
  if (t.format == nullptr) {
    streams_.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
  // Both counts change under mu_, so that Start() sees the plain tails'
  // count (their difference) exactly.
  MutexLock lock(&mu_);
  streams_.fetch_sub(1, std::memory_order_relaxed);
  --formatted_;
  auto it = formatted_by_owner_.find(t.owner);
  if (it != formatted_by_owner_.end() && --it->second <= 0) formatted_by_owner_.erase(it);
}

void LogTail::Stop() {
  {
    MutexLock lock(&mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  waker_->Wake();
  if (thread_.joinable()) thread_.join();
  MutexLock lock(&mu_);
  for (storage::LogFeed* feed : listened_) feed->SetListener(nullptr);
  listened_.clear();
}

LogTailStats LogTail::Stats() const {
  int64_t streams = 0;
  int64_t formatted = 0;
  {
    // Both open counts change under mu_ for formatted tails.
    MutexLock lock(&mu_);
    streams = streams_.load(std::memory_order_relaxed);
    formatted = formatted_;
  }
  const uint64_t plain_sent = records_sent_.load(std::memory_order_relaxed);
  const uint64_t plain_missed = records_missed_.load(std::memory_order_relaxed);
  const uint64_t formatted_sent = formatted_records_sent_.load(std::memory_order_relaxed);
  const uint64_t formatted_dropped = formatted_records_dropped_.load(std::memory_order_relaxed);
  return LogTailStats{
      .streams = streams,
      .records_sent = plain_sent + formatted_sent,
      .records_missed = plain_missed + formatted_dropped,
      .formatted_streams = formatted,
      .formatted_records_sent = formatted_sent,
      .formatted_records_dropped = formatted_dropped,
      .missed_events = missed_events_.load(std::memory_order_relaxed),
      .max_queued_bytes = max_queued_bytes_.load(std::memory_order_relaxed),
  };
}

void LogTail::NoteQueued(uint64_t bytes) {
  uint64_t seen = max_queued_bytes_.load(std::memory_order_relaxed);
  while (bytes > seen &&
         !max_queued_bytes_.compare_exchange_weak(seen, bytes, std::memory_order_relaxed)) {
  }
}

void LogTail::Loop() {
  std::vector<std::unique_ptr<Tailer>> tailers;
  Step wanted = Step::kIdle;  // the most urgent step of the last pass
  for (;;) {
    Clock::time_point deadline = Clock::now() + options_.heartbeat;
    for (const auto& t : tailers) deadline = std::min(deadline, t->last_write + options_.heartbeat);
    if (wanted == Step::kRecheck) deadline = std::min(deadline, Clock::now() + kFullQueueRecheck);
    if (wanted == Step::kMore) deadline = Clock::now();
    {
      MutexLock lock(&waker_->mu);
      while (!waker_->woken && Clock::now() < deadline) waker_->cv.WaitUntil(&waker_->mu, deadline);
      waker_->woken = false;
    }
    std::vector<storage::LogFeed*> feeds;
    {
      MutexLock lock(&mu_);
      for (auto& t : arrived_) tailers.push_back(std::move(t));
      arrived_.clear();
      if (stopping_) break;
      feeds = listened_;
    }
    // At least every heartbeat, so that an idle feed lets go of its
    // batches (and compaction's retired files can be deleted).
    for (storage::LogFeed* feed : feeds) feed->Prune();
    wanted = Step::kIdle;
    for (auto it = tailers.begin(); it != tailers.end();) {
      const Step step = (*it)->format != nullptr ? ServeFormatted(**it) : Serve(**it);
      if (step == Step::kDone) {
        Finish(**it, "");
        it = tailers.erase(it);
        continue;
      }
      if (step == Step::kMore || (step == Step::kRecheck && wanted == Step::kIdle)) wanted = step;
      ++it;
    }
  }
  for (auto& t : tailers) {
    if (t->format == nullptr) {
      t->stream->Write(Event("end", ReasonJson("the server is shutting down")));
    }
    Finish(*t, "the server is shutting down");
  }
}

LogTail::Step LogTail::Serve(Tailer& t) {
  using WriteResult = server::HttpStream::WriteResult;
  if (t.stream->closed()) return Step::kDone;
  const uint64_t cap = t.stream->max_queued_bytes();
  const bool room = t.stream->queued_bytes() <= cap / 2;
  if (room && !t.reset_reason.empty()) {
    if (t.stream->Write(Event("reset", ReasonJson(t.reset_reason))) == WriteResult::kClosed) {
      return Step::kDone;
    }
    t.reset_reason.clear();
    t.last_write = Clock::now();
  }
  if (room && t.missed > 0) {
    const WriteResult result =
        t.stream->Write(Event("missed", absl::StrCat("{\"count\":", t.missed, "}")));
    if (result == WriteResult::kClosed) return Step::kDone;
    if (result == WriteResult::kQueued) {
      t.missed = 0;
      t.last_write = Clock::now();
      missed_events_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  uint64_t first_kept = 0;
  std::vector<storage::FedLogBatch> batches =
      t.feed->After(t.next_sequence - 1, options_.batches_per_query, &first_kept);
  if (t.next_sequence < first_kept) {
    // The tail fell so far behind that the feed dropped batches it had not
    // read: it cannot say how many of their records matched.
    t.reset_reason = "the tail fell behind the server's feed of log batches; records were lost";
    t.next_sequence = first_kept;
    t.next_row = 0;
    return Step::kMore;
  }
  if (batches.empty()) {
    if (room && Clock::now() - t.last_write >= options_.heartbeat) {
      const WriteResult result = t.stream->Write(": heartbeat\n\n");
      if (result == WriteResult::kClosed) return Step::kDone;
      if (result == WriteResult::kQueued) t.last_write = Clock::now();
    }
    // A `missed` event still to send waits for the queue to drain.
    return t.missed > 0 ? Step::kRecheck : Step::kIdle;
  }
  if (!room || t.missed > 0) {
    // A slow client: count what it misses and move to the live edge.
    absl::StatusOr<Rows> counted = Query(t, batches, /*count_only=*/true);
    if (!counted.ok() && Transient(counted.status())) return Step::kRecheck;
    if (!counted.ok()) {
      t.stream->Write(Event("end", ReasonJson(std::string(counted.status().message()))));
      return Step::kDone;
    }
    t.missed += counted->count;
    records_missed_.fetch_add(counted->count, std::memory_order_relaxed);
    t.next_sequence = batches.back().sequence + 1;
    t.next_row = 0;
    return Step::kRecheck;
  }
  absl::StatusOr<Rows> read = Query(t, batches, /*count_only=*/false);
  if (!read.ok() && Transient(read.status())) return Step::kRecheck;
  if (!read.ok()) {
    t.stream->Write(Event("end", ReasonJson(std::string(read.status().message()))));
    return Step::kDone;
  }
  LogValues values;
  std::string chunk;
  uint64_t in_chunk = 0;
  bool full = false;
  auto flush = [&]() -> bool {
    if (chunk.empty()) return true;
    const WriteResult result = full ? WriteResult::kFull : t.stream->Write(chunk);
    if (result == WriteResult::kClosed) return false;
    if (result == WriteResult::kQueued) {
      records_sent_.fetch_add(in_chunk, std::memory_order_relaxed);
      t.last_write = Clock::now();
      NoteQueued(t.stream->queued_bytes());
    } else {
      // The client reads too slowly: these records are missed.
      full = true;
      t.missed += in_chunk;
      records_missed_.fetch_add(in_chunk, std::memory_order_relaxed);
    }
    chunk.clear();
    in_chunk = 0;
    return true;
  };
  const size_t batch_cell = internal::log_column::kCount;
  for (const auto& row : read->rows) {
    absl::StatusOr<LogEntry> entry = internal::ReadLogEntry(row, &values);
    absl::StatusOr<int64_t> index = internal::CellInt(row[batch_cell]);
    absl::StatusOr<int64_t> file_row = internal::CellInt(row[internal::log_column::kRowKey]);
    if (!entry.ok() || !index.ok() || !file_row.ok() || *index < 0 ||
        static_cast<size_t>(*index) >= batches.size()) {
      t.stream->Write(Event("end", ReasonJson("internal error: a tailed row does not read back")));
      return Step::kDone;
    }
    const storage::FedLogBatch& batch = batches[static_cast<size_t>(*index)];
    absl::StrAppend(&chunk,
                    "id: ", FormatTailEventId(batch.batch->id(), static_cast<uint64_t>(*file_row)),
                    "\ndata: ", LogEntryJson(values, *entry), "\n\n");
    ++in_chunk;
    t.next_sequence = batch.sequence;
    t.next_row = static_cast<uint64_t>(*file_row) + 1;
    if (chunk.size() >= options_.chunk_bytes && !flush()) return Step::kDone;
  }
  if (!flush()) return Step::kDone;
  if (read->rows.size() < options_.rows_per_query) {
    // Every row of these batches was handled.
    t.next_sequence = batches.back().sequence + 1;
    t.next_row = 0;
    if (batches.size() < options_.batches_per_query) return full ? Step::kRecheck : Step::kIdle;
  }
  return Step::kMore;
}

LogTail::Step LogTail::ServeFormatted(Tailer& t) {
  using WriteResult = server::HttpStream::WriteResult;
  if (t.stream->closed()) return Step::kDone;
  TailFormat& format = *t.format;
  const uint64_t cap = t.stream->max_queued_bytes();
  auto room = [&] { return t.stream->queued_bytes() <= cap / 2; };
  auto sent = [&](uint64_t records) {
    formatted_records_sent_.fetch_add(records, std::memory_order_relaxed);
  };
  auto dropped = [&](uint64_t records) {
    formatted_records_dropped_.fetch_add(records, std::memory_order_relaxed);
  };
  // Sends the message so far (or, with no room, makes its records dropped
  // ones, told in a later message). False when the stream closed.
  auto flush = [&]() -> bool {
    if (!room()) {
      dropped(format.pending_records());
      format.Refused();
      return true;
    }
    const std::string message = format.Message();
    if (message.empty()) return true;
    const WriteResult result = t.stream->Write(message);
    if (result == WriteResult::kClosed) return false;
    if (result == WriteResult::kFull) {
      dropped(format.pending_records());
      format.Refused();
      return true;
    }
    sent(format.pending_records());
    format.Sent();
    t.last_write = Clock::now();
    NoteQueued(t.stream->queued_bytes());
    return true;
  };
  if (t.history != nullptr) {
    const absl::Status read = format.ReadHistory(*pool_, *t.history, data_dir_, call_);
    if (!read.ok() && Transient(read)) return Step::kRecheck;
    if (!read.ok()) {
      t.stream->Close(server::kWebSocketInternalError, std::string(read.message()));
      return Step::kDone;
    }
    t.history = nullptr;  // lets go of the snapshot's files
  }
  // The past, a message at a time while the client keeps up; the live
  // records wait in the feed meanwhile.
  while (format.history_left()) {
    if (!room()) return Step::kRecheck;
    format.TakeHistory(options_.chunk_bytes);
    if (!flush()) return Step::kDone;
  }
  uint64_t first_kept = 0;
  std::vector<storage::FedLogBatch> batches =
      t.feed->After(t.next_sequence - 1, options_.batches_per_query, &first_kept);
  if (t.next_sequence < first_kept) {
    // The feed dropped batches this tail had not read: it cannot list them.
    t.next_sequence = first_kept;
    t.next_row = 0;
    return Step::kMore;
  }
  if (batches.empty()) {
    if (!flush()) return Step::kDone;  // dropped entries still to tell
    if (Clock::now() - t.last_write >= options_.heartbeat) {
      if (t.stream->Ping() == WriteResult::kClosed) return Step::kDone;
      t.last_write = Clock::now();
    }
    return format.Message().empty() ? Step::kIdle : Step::kRecheck;
  }
  absl::StatusOr<Rows> read = Query(t, batches, /*count_only=*/false);
  if (!read.ok() && Transient(read.status())) return Step::kRecheck;
  if (!read.ok()) {
    t.stream->Close(server::kWebSocketInternalError, std::string(read.status().message()));
    return Step::kDone;
  }
  const size_t cells = read->rows.empty() ? 0 : read->rows.front().size();
  for (const auto& row : read->rows) {
    absl::StatusOr<int64_t> index = internal::CellInt(row[cells - 2]);
    absl::StatusOr<int64_t> file_row = internal::CellInt(row[cells - 1]);
    if (!index.ok() || !file_row.ok() || *index < 0 ||
        static_cast<size_t>(*index) >= batches.size()) {
      t.stream->Close(server::kWebSocketInternalError, "a tailed row does not read back");
      return Step::kDone;
    }
    const bool drop = !room();
    absl::StatusOr<bool> taken = format.Add(row, drop);
    if (taken.ok() && *taken && drop) dropped(1);
    if (!taken.ok()) {
      t.stream->Close(server::kWebSocketInternalError, std::string(taken.status().message()));
      return Step::kDone;
    }
    t.next_sequence = batches[static_cast<size_t>(*index)].sequence;
    t.next_row = static_cast<uint64_t>(*file_row) + 1;
    if (format.pending_bytes() >= options_.chunk_bytes && !flush()) return Step::kDone;
  }
  if (!flush()) return Step::kDone;
  if (read->rows.size() < options_.rows_per_query) {
    t.next_sequence = batches.back().sequence + 1;
    t.next_row = 0;
    if (batches.size() < options_.batches_per_query) {
      return format.Message().empty() ? Step::kIdle : Step::kRecheck;
    }
  }
  return Step::kMore;
}

absl::StatusOr<LogTail::Rows> LogTail::Query(const Tailer& t,
                                             const std::vector<storage::FedLogBatch>& batches,
                                             bool count_only) const {
  std::vector<query::QueryParam> params;
  std::string sources;
  // Cached copies of evicted batches' files, kept until the query is done.
  std::vector<std::shared_ptr<const void>> holds;
  for (size_t i = 0; i < batches.size(); ++i) {
    STRATA_ASSIGN_OR_RETURN(storage::ResolvedFile resolved,
                            storage::ResolveDataFile(*batches[i].batch, storage::kLogsFileName));
    if (resolved.hold != nullptr) holds.push_back(std::move(resolved.hold));
    std::string path = std::move(resolved.path);
    if (!path.starts_with('/')) path = absl::StrCat(data_dir_, "/", path);
    absl::StrAppend(&sources, i == 0 ? "" : " UNION ALL ", "SELECT ", i,
                    " AS tail_batch, * FROM read_parquet(", query::SqlLiteral(path),
                    ", file_row_number = true)");
    if (i == 0 && batches[0].sequence == t.next_sequence && t.next_row > 0) {
      absl::StrAppend(&sources, " WHERE file_row_number >= ", internal::NextParam(params));
      params.emplace_back(static_cast<int64_t>(t.next_row));
    }
  }
  if (t.format != nullptr) {
    // The logs view's columns over the new batches (as query_pool.cc's
    // view), then the format's condition.
    const std::string view = absl::StrCat("(SELECT *", query::FriendlyColumnsSql("logs"),
                                          " FROM (SELECT *, file_row_number AS row_key FROM (",
                                          sources, ")) WHERE row_kind = 0)");
    const std::string condition = t.format->ConditionSql(&params);
    const std::string sql = absl::StrCat(
        "SELECT ", t.format->ColumnsSql(), ", tail_batch, row_key FROM ", view, " WHERE ",
        condition, " ORDER BY tail_batch, row_key LIMIT ", options_.rows_per_query);
    STRATA_ASSIGN_OR_RETURN(
        query::QueryResult result,
        pool_->Run(query::ViewFiles{}, sql,
                   internal::Options(call_, std::move(params), options_.rows_per_query)));
    Rows out;
    if (!result.rows.empty() && result.rows.front().size() < 3) {
      return absl::InternalError("log tail: too few columns");
    }
    out.rows = std::move(result.rows);
    return out;
  }
  const std::string filters = internal::LogRecordFilterSql(t.filter, &params);
  const std::string from = absl::StrCat("(SELECT *, file_row_number AS row_key FROM (", sources,
                                        ")) WHERE row_kind = 0", filters);
  Rows out;
  if (count_only) {
    STRATA_ASSIGN_OR_RETURN(
        query::QueryResult result,
        pool_->Run(query::ViewFiles{}, absl::StrCat("SELECT count(*) FROM ", from),
                   internal::Options(call_, std::move(params), 1)));
    STRATA_RETURN_IF_ERROR(internal::CheckShape(result, 1, "log tail count"));
    if (result.rows.size() != 1) return absl::InternalError("log tail count: no row");
    STRATA_ASSIGN_OR_RETURN(int64_t count, internal::CellInt(result.rows[0][0]));
    out.count = static_cast<uint64_t>(count);
    return out;
  }
  // The row limit is a validated option, not request text.
  const std::string sql =
      absl::StrCat("SELECT ", internal::SelectedColumnsSql(), ", tail_batch FROM ", from,
                   " ORDER BY tail_batch, row_key LIMIT ", options_.rows_per_query);
  STRATA_ASSIGN_OR_RETURN(
      query::QueryResult result,
      pool_->Run(query::ViewFiles{}, sql,
                 internal::Options(call_, std::move(params), options_.rows_per_query)));
  STRATA_RETURN_IF_ERROR(
      internal::CheckShape(result, internal::log_column::kCount + 1, "log tail"));
  out.rows = std::move(result.rows);
  return out;
}

}  // namespace strata::api
