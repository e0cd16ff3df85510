#pragma once

// LogTail serves GET /api/v1/logs/tail (docs/api.md): newly published log
// records that match the request's filters, as Server-Sent Events on a
// streamed HTTP response (server::HttpStream), one record per event in the
// JSON of a GET /api/v1/logs entry.
//
// Where records come from. The storage engine's LogFeed (storage/
// log_feed.h) lists the batches with log records in publish order; every
// request is acknowledged only after its batch is published, so that is
// the acknowledgement order. One thread (the tail thread) serves every
// tail: when the feed grows it reads, for each stream, the new batches'
// logs.parquet with one DuckDB query through the query pool (the same
// columns, filters and row reading as the log search, log_rows.h), in
// (feed order, file row) order, and writes the events.
//
// Event ids are "<batch id>-<file row>" (tail_event_id.h). A client that reconnects with
// Last-Event-ID resumes right after that record while its batch is still
// in the feed (LogFeedOptions: the last 1024 batches, at most 5 minutes
// old); otherwise it gets a `reset` event and the live edge.
//
// Bounds. At most `max_connections` streams (more: 503); each stream's
// queue of unwritten bytes is capped (HttpStreamOptions::max_queued_bytes):
// while it is more than half full the tail skips new records, counting
// those that match, and once it has drained tells the client with a
// `missed` event ({"count": N}) before it goes on from the live edge.
// Queries read at most `rows_per_query` rows and `batches_per_query`
// batches at a time. A comment line goes out every `heartbeat` when
// nothing else did.
//
// Formatted tails. The same thread, feed and queries also serve tails in
// another form: StartFormatted() takes a TailFormat (the Loki tail over a
// WebSocket, loki_tail.h) that says which rows to select and how to write
// them. Such a tail reads the rows of new batches as above; while its queue
// is more than half full the rows it reads are handed to the format as
// dropped (it reports them, Loki's dropped_entries) instead of written; a
// ping goes out every `heartbeat`; Stop() closes it with 1001. Formatted
// tails have their own limits: `formatted_max_connections` at once and
// `formatted_max_per_owner` per owner (the caller's token). A format may
// ask for the past first (TailFormat::wants_history): the tail then pins
// the storage Snapshot at the moment it subscribes to the feed, reads the
// past from it, and sends it a message at a time before the first live
// record, so the past and the live records meet without a gap or a
// repeat.
//
// Thread-safety: safe for concurrent use. Start() runs on io threads and
// does not block. The storage engines handed to Start() must outlive the
// LogTail (serve destroys the Api first). Errors: requests are answered
// 400 (bad parameter or Last-Event-ID), 503 (recovering, too many tails,
// stopping); a failed query ends its stream with an `end` event (a query
// pool with every connection busy is retried shortly instead).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "api/search.h"
#include "common/mutex.h"
#include "query/query_pool.h"
#include "server/http_adapter.h"
#include "storage/log_feed.h"

namespace strata::storage {
class Storage;
}

namespace strata::api {

// How a formatted tail selects and writes records. Made by the endpoint,
// then used by the tail thread only.
class TailFormat {
 public:
  virtual ~TailFormat() = default;
  // What to select from a row of the logs view (every stored and friendly
  // column is in scope), comma-separated; the row handed to Add() starts
  // with these cells.
  virtual std::string ColumnsSql() const = 0;
  // The condition a row must meet, binding values in `params`.
  virtual std::string ConditionSql(std::vector<query::QueryParam>* params) const = 0;
  // Takes a selected row into the next message (or not, when the rest of
  // the filter drops it); `dropped`: the client is too slow, remember it
  // as dropped instead. Returns whether the row was taken.
  [[nodiscard]] virtual absl::StatusOr<bool> Add(const std::vector<std::optional<std::string>>& row,
                                                 bool dropped) = 0;
  // Bytes of the next message so far (a message is sent when it passes
  // LogTailOptions::chunk_bytes and after each query).
  virtual size_t pending_bytes() const = 0;
  // Records in the next message.
  virtual size_t pending_records() const = 0;
  // The next message (records and dropped ones), "" when there is nothing
  // to say. Sent() clears it; Refused() moves its records to the dropped.
  virtual std::string Message() const = 0;
  virtual void Sent() = 0;
  virtual void Refused() = 0;
  // Whether the tail starts with records of the past (the Loki tail's
  // `start` and `limit`); then ReadHistory() runs once, before any live
  // record, over the Snapshot pinned when the tail subscribed to the feed
  // (Storage::SubscribeLogFeed): it holds exactly the records published
  // before the first live one, so none is lost or sent twice at the seam.
  virtual bool wants_history() const { return false; }
  // Reads the past records for TakeHistory(). Nothing is kept when it
  // fails.
  [[nodiscard]] virtual absl::Status ReadHistory(query::QueryPool& /*pool*/,
                                                 const storage::Snapshot& /*snapshot*/,
                                                 const std::string& /*data_dir*/,
                                                 const CallOptions& /*call*/) {
    return absl::OkStatus();
  }
  // Moves past records, oldest first, into the next message until it
  // holds about `bytes` (at least one record); returns whether any are
  // left. The tail sends them a message at a time, while the client keeps
  // up, before any live record.
  virtual bool TakeHistory(size_t /*bytes*/) { return false; }
  virtual bool history_left() const { return false; }
};

struct LogTailOptions {
  // Open tail streams; one more is answered 503 with Retry-After.
  int max_connections = 16;
  // Per stream: bytes written to it and not yet sent to the client.
  uint64_t max_queued_bytes = 1 << 20;
  // A comment line (": heartbeat") after this long without a write, so
  // proxies keep the stream open.
  std::chrono::milliseconds heartbeat{15'000};
  // Per query of the tail thread.
  size_t rows_per_query = 500;
  size_t batches_per_query = 64;
  // Events are written in chunks of about this many bytes.
  size_t chunk_bytes = 64 << 10;
  // Formatted tails (the Loki tail): open at once, and per owner. One more
  // is refused with ResourceExhausted (429) before it starts.
  int formatted_max_connections = 16;
  int formatted_max_per_owner = 4;
  // Runs on the caller's thread right after a formatted tail subscribed
  // to the feed, before the tail thread reads anything for it (tests
  // write records there to check that none is lost or repeated).
  std::function<void()> TEST_after_subscribe;
};

// Totals over every tail; the formatted_ fields count the formatted tails
// (the Loki tail) alone.
struct LogTailStats {
  int64_t streams = 0;          // open now
  uint64_t records_sent = 0;    // events with a record, handed to streams
  uint64_t records_missed = 0;  // matching records skipped for slow clients
  int64_t formatted_streams = 0;
  uint64_t formatted_records_sent = 0;
  uint64_t formatted_records_dropped = 0;
  uint64_t missed_events = 0;
  // The most bytes any stream had queued right after a write the tail made
  // (never above LogTailOptions::max_queued_bytes, or one chunk when the
  // queue was empty).
  uint64_t max_queued_bytes = 0;
};

class LogTail {
 public:
  LogTail(LogTailOptions options, query::QueryPool* pool, std::string data_dir, CallOptions call);
  // Stop().
  ~LogTail();
  LogTail(const LogTail&) = delete;
  LogTail& operator=(const LogTail&) = delete;

  // Parses `request` (the filters of GET /api/v1/logs but the window,
  // limit and cursor; the Last-Event-ID header) and starts its stream, or
  // answers the error. `storage` null: 503 recovering.
  void Start(storage::Storage* storage, const server::HttpRequest& request,
             server::HttpResponder responder) ABSL_LOCKS_EXCLUDED(mu_);

  // Starts a formatted tail of `owner` from the live edge: answers with
  // `head` and `stream_options` (a WebSocket upgrade), then what `format`
  // writes. Returns an error without touching `responder` when it cannot
  // start: Unavailable (recovering, stopping), ResourceExhausted (over
  // a limit).
  [[nodiscard]] absl::Status StartFormatted(storage::Storage* storage,
                                            std::unique_ptr<TailFormat> format, std::string owner,
                                            server::HttpResponse head,
                                            server::HttpStreamOptions stream_options,
                                            server::HttpResponder& responder)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Ends every stream (an `end` event, then the last chunk) and refuses
  // new ones with 503; joins the tail thread. Later calls return at once.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

  LogTailStats Stats() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Tailer;
  struct Rows;

  // What a stream needs after one step of Serve().
  enum class Step {
    kDone,     // its stream is over
    kIdle,     // nothing until the feed grows or a heartbeat is due
    kRecheck,  // its queue was full: look again shortly
    kMore,     // more is waiting: serve again at once
  };

  void Loop() ABSL_LOCKS_EXCLUDED(mu_);
  // Counts a new stream and has the waker listen to `storage`'s log feed
  // (once per feed); the tailer reads that feed.
  void AttachLocked(storage::Storage* storage, Tailer* tailer) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Subscribes the tailer to its feed, from the next record on.
  static void Subscribe(storage::Storage* storage, Tailer* tailer);
  // One step of `t`: notices, new records (or a count of those skipped for
  // a slow client), a heartbeat.
  Step Serve(Tailer& t);
  Step ServeFormatted(Tailer& t);
  // `t` is over: its stream ends (`reason` says why on a formatted one)
  // and it no longer counts against the limits.
  void Finish(Tailer& t, std::string_view reason) ABSL_LOCKS_EXCLUDED(mu_);
  // The matching rows (or their count) of `batches` from `t`'s position.
  absl::StatusOr<Rows> Query(const Tailer& t, const std::vector<storage::FedLogBatch>& batches,
                             bool count_only) const;
  void NoteQueued(uint64_t bytes);

  // Wakes the tail thread. Shared with the feeds' listeners, which may
  // still hold it (and call it) while the LogTail is being destroyed.
  struct Waker {
    Mutex mu;
    CondVar cv;
    bool woken ABSL_GUARDED_BY(mu) = false;
    void Wake() {
      MutexLock lock(&mu);
      woken = true;
      cv.Signal();
    }
  };

  // Constant after construction.
  const LogTailOptions options_;
  query::QueryPool* const pool_;
  const std::string data_dir_;
  const CallOptions call_;

  // Statistics: relaxed atomics, read by Stats() only.
  std::atomic<int64_t> streams_{0};
  // Of the plain tails (Start()); the formatted ones count theirs in
  // formatted_records_*.
  std::atomic<uint64_t> records_sent_{0};
  std::atomic<uint64_t> records_missed_{0};
  std::atomic<uint64_t> formatted_records_sent_{0};
  std::atomic<uint64_t> formatted_records_dropped_{0};
  std::atomic<uint64_t> missed_events_{0};
  std::atomic<uint64_t> max_queued_bytes_{0};

  const std::shared_ptr<Waker> waker_ = std::make_shared<Waker>();

  mutable Mutex mu_;
  // Streams Start() made that the tail thread has not taken yet.
  std::vector<std::unique_ptr<Tailer>> arrived_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Formatted tails open, in all and per owner.
  int formatted_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, int> formatted_by_owner_ ABSL_GUARDED_BY(mu_);
  // The feeds whose listener wakes this tail (one per storage engine).
  std::vector<storage::LogFeed*> listened_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace strata::api
