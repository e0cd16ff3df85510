#pragma once

// McpStreams holds what the MCP server sends to a client on its own
// initiative (docs/mcp.md, "Server-initiated stream"): per session, the
// messages it sent (a bounded replay buffer), the log level the client set
// with logging/setLevel, and at most one open GET /mcp stream of
// Server-Sent Events that carries them.
//
// Event ids. Every event of a session gets the next decimal integer of
// that session (from 1), so ids are unique across the session's streams
// and increase on each stream. A client that reconnects with Last-Event-ID
// N gets every held message with an id above N, in order, then the live
// ones. The buffer holds a session's last `replay_events` messages of at
// most `replay_bytes` in all; when N is older than the oldest held message
// the stream replays what is held (the older ones are lost) and
// McpStreamStats::replays_incomplete counts it. An id that is not a
// decimal integer, or that this session never gave, is refused 400.
//
// A new stream first gets `retry: <retry_ms>`, then the replayed messages,
// or, when none is replayed, a priming event (a fresh id, empty data) so
// that the client has an id to resume from. A comment line goes out every
// `keepalive` when nothing else did. A stream whose client reads so slowly
// that `max_queued_bytes` would be passed is ended; the client reconnects
// with Last-Event-ID and is replayed what it missed.
//
// Bounds. One open stream per session: another GET of the session replaces
// it (the old one ends), since a client reconnects after a drop the server
// may not have seen yet. `max_streams_per_credential` per credential (429)
// and `max_streams` in all (503). A session's state is dropped when the session ends (End(),
// on DELETE) and, by the keepalive thread, when `live` says it is gone
// (expired or evicted); `live` is asked with `streaming` true for a
// session with an open stream, which keeps the session from idling out.
//
// Thread-safety: safe for concurrent use. Writes to the streams happen
// under mu_, so each stream has one writer at a time; they never block
// (HttpStream queues). Stop() ends every stream and joins the keepalive
// thread; later opens are answered 503.

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "common/mutex.h"
#include "server/http_adapter.h"

namespace strata::api {

struct McpStreamLimits {
  // Per session: the messages held for replay, and their bytes in all.
  size_t replay_events = 128;
  size_t replay_bytes = 64 << 10;
  int max_streams = 64;
  int max_streams_per_credential = 8;
  std::chrono::milliseconds keepalive{15'000};
  // The SSE `retry` field: how long a client waits before reconnecting.
  int retry_ms = 1000;
  // Per stream: bytes written and not yet sent to the client.
  uint64_t max_queued_bytes = 1 << 20;
};

struct McpStreamStats {
  int64_t streams = 0;              // open now
  uint64_t messages = 0;            // sent with an id, to a stream or only to the buffer
  uint64_t replayed = 0;            // messages written again after a Last-Event-ID
  uint64_t replays_incomplete = 0;  // Last-Event-ID older than the buffer
  uint64_t slow_closed = 0;         // streams ended for a client that read too slowly
};

// The MCP log levels (RFC 5424's, as the specification lists them), from
// the least severe; -1 for another name.
int McpLogLevelRank(std::string_view level);

class McpStreams {
 public:
  // Whether `session` is still live; `streaming`: it has an open stream
  // (the callee restarts its idle clock then).
  using LiveFn = std::function<bool(std::string_view session, bool streaming)>;

  McpStreams(McpStreamLimits limits, LiveFn live);
  // Stop().
  ~McpStreams();
  McpStreams(const McpStreams&) = delete;
  McpStreams& operator=(const McpStreams&) = delete;

  // Opens the GET stream of `session` (live and bound to `credential`:
  // the caller checked), resuming after `last_event_id` when not empty,
  // or answers the refusal (400, 429, 503) as a JSON-RPC error.
  void Open(const std::string& session, const std::string& credential,
            std::string_view last_event_id, server::HttpResponder responder)
      ABSL_LOCKS_EXCLUDED(mu_);

  // logging/setLevel: messages of `level` and above go to the session.
  // `level` must have a rank (McpLogLevelRank).
  void SetLogLevel(const std::string& session, std::string_view level) ABSL_LOCKS_EXCLUDED(mu_);
  // Sends notifications/message {level, logger, data} when the session set
  // a level at or below `level`. `data_json` is a JSON value.
  void Log(const std::string& session, std::string_view level, std::string_view logger,
           std::string_view data_json) ABSL_LOCKS_EXCLUDED(mu_);
  // Sends one JSON-RPC message: the next id, the replay buffer, the open
  // stream (if any).
  void Send(const std::string& session, std::string_view message_json) ABSL_LOCKS_EXCLUDED(mu_);

  // The session ended: its stream ends and its state is dropped.
  void End(std::string_view session) ABSL_LOCKS_EXCLUDED(mu_);
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

  McpStreamStats Stats() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Held {
    uint64_t id = 0;
    std::string message;
  };
  struct SessionState {
    std::string credential;
    int log_rank = -1;  // no logging/setLevel yet: no log messages
    uint64_t last_id = 0;
    // Held messages, oldest first, and their bytes; `lost_through` is the
    // highest id dropped from the buffer.
    std::deque<Held> held;
    size_t held_bytes = 0;
    uint64_t lost_through = 0;
    std::shared_ptr<server::HttpStream> stream;
    std::chrono::steady_clock::time_point last_write;
  };

  void Loop() ABSL_LOCKS_EXCLUDED(mu_);
  void SendLocked(const std::string& session, std::string_view message_json)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes `bytes` to `state`'s stream; ends it when the client is too
  // slow or gone.
  void WriteLocked(SessionState& state, std::string_view bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CloseStreamLocked(SessionState& state) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int OpenStreamsLocked(std::string_view credential) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  const McpStreamLimits limits_;
  const LiveFn live_;

  mutable Mutex mu_;
  CondVar wake_;
  absl::flat_hash_map<std::string, SessionState> sessions_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  McpStreamStats stats_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace strata::api
