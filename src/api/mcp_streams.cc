#include "api/mcp_streams.h"

#include <pthread.h>

#include <array>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/mcp_jsonrpc.h"
#include "common/absl_view.h"
#include "otlp/json_writer.h"

namespace strata::api {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::array<std::string_view, 8> kLogLevels = {"debug", "info",     "notice", "warning",
                                                        "error", "critical", "alert",  "emergency"};

server::HttpResponse Refusal(int status, std::string_view message) {
  server::HttpResponse response;
  response.status = status;
  response.content_type = "application/json";
  response.body = JsonRpcErrorJson("null", kJsonRpcInvalidRequest, message);
  if (status == 429 || status == 503) response.headers.emplace_back("Retry-After", "5");
  return response;
}

std::string EventText(uint64_t id, std::string_view data) {
  return absl::StrCat("id: ", id, "\ndata: ", Absl(data), "\n\n");
}

}  // namespace

int McpLogLevelRank(std::string_view level) {
  for (size_t i = 0; i < kLogLevels.size(); ++i) {
    if (kLogLevels[i] == level) return static_cast<int>(i);
  }
  return -1;
}

McpStreams::McpStreams(McpStreamLimits limits, LiveFn live)
    : limits_(limits), live_(std::move(live)) {
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "strata-mcpstream");
    Loop();
  });
}

McpStreams::~McpStreams() { Stop(); }

void McpStreams::Open(const std::string& session, const std::string& credential,
                      std::string_view last_event_id, server::HttpResponder responder) {
  std::optional<uint64_t> resume;
  if (!last_event_id.empty()) {
    uint64_t id = 0;
    if (!absl::SimpleAtoi(Absl(last_event_id), &id)) {
      responder.Respond(
          Refusal(400, "Last-Event-ID: not an event id of this server (a decimal integer)"));
      return;
    }
    resume = id;
  }
  MutexLock lock(&mu_);
  if (stopping_) {
    responder.Respond(Refusal(503, "the server is shutting down"));
    return;
  }
  SessionState& state = sessions_[session];
  if (state.credential.empty()) state.credential = credential;
  if (state.stream != nullptr && state.stream->closed()) CloseStreamLocked(state);
  // This session's own open stream is replaced below: it does not count.
  const int own = state.stream != nullptr ? 1 : 0;
  if (resume.has_value() && *resume > state.last_id) {
    responder.Respond(
        Refusal(400, absl::StrCat("Last-Event-ID: ", *resume, " was never sent in this session")));
    return;
  }
  if (stats_.streams - own >= limits_.max_streams) {
    responder.Respond(Refusal(
        503, absl::StrCat("too many open MCP streams: at most ", limits_.max_streams, " at once")));
    return;
  }
  if (OpenStreamsLocked(credential) - own >= limits_.max_streams_per_credential) {
    responder.Respond(Refusal(429, absl::StrCat("too many open MCP streams for this credential: "
                                                "at most ",
                                                limits_.max_streams_per_credential)));
    return;
  }
  // A new GET of the session replaces its open stream: a client whose
  // connection dropped reconnects at once, before the server noticed
  // the drop (which it may only see at the next write).
  CloseStreamLocked(state);
  server::HttpResponse head;
  head.content_type = "text/event-stream";
  head.headers.emplace_back("Cache-Control", "no-cache");
  head.headers.emplace_back("X-Accel-Buffering", "no");
  head.headers.emplace_back("Mcp-Session-Id", session);
  head.body = absl::StrCat(": strata mcp stream\nretry: ", limits_.retry_ms, "\n\n");
  std::shared_ptr<server::HttpStream> stream =
      responder.Stream(std::move(head), {.max_queued_bytes = limits_.max_queued_bytes});
  if (stream == nullptr) return;
  state.stream = std::move(stream);
  ++stats_.streams;
  std::string replay;
  if (resume.has_value()) {
    if (*resume < state.lost_through) ++stats_.replays_incomplete;
    for (const Held& held : state.held) {
      if (held.id <= *resume) continue;
      replay.append(EventText(held.id, held.message));
      ++stats_.replayed;
    }
  }
  // Priming: an id the client can resume from before any message came.
  if (replay.empty()) replay = EventText(++state.last_id, "");
  WriteLocked(state, replay);
  wake_.Signal();
}

void McpStreams::SetLogLevel(const std::string& session, std::string_view level) {
  MutexLock lock(&mu_);
  if (stopping_) return;
  sessions_[session].log_rank = McpLogLevelRank(level);
}

void McpStreams::Log(const std::string& session, std::string_view level, std::string_view logger,
                     std::string_view data_json) {
  MutexLock lock(&mu_);
  auto it = sessions_.find(session);
  const int rank = McpLogLevelRank(level);
  if (it == sessions_.end() || it->second.log_rank < 0 || rank < it->second.log_rank) return;
  std::string message = R"({"jsonrpc":"2.0","method":"notifications/message","params":{"level":")";
  message.append(level).append(R"(","logger":")");
  otlp::JsonWriter::AppendEscaped(logger, &message);
  absl::StrAppend(&message, R"(","data":)", Absl(data_json), "}}");
  SendLocked(session, message);
}

void McpStreams::Send(const std::string& session, std::string_view message_json) {
  MutexLock lock(&mu_);
  SendLocked(session, message_json);
}

void McpStreams::SendLocked(const std::string& session, std::string_view message_json) {
  if (stopping_) return;
  SessionState& state = sessions_[session];
  const uint64_t id = ++state.last_id;
  ++stats_.messages;
  state.held.push_back(Held{.id = id, .message = std::string(message_json)});
  state.held_bytes += message_json.size();
  while (!state.held.empty() &&
         (state.held.size() > limits_.replay_events || state.held_bytes > limits_.replay_bytes)) {
    state.lost_through = state.held.front().id;
    state.held_bytes -= state.held.front().message.size();
    state.held.pop_front();
  }
  if (state.stream != nullptr) WriteLocked(state, EventText(id, message_json));
}

void McpStreams::WriteLocked(SessionState& state, std::string_view bytes) {
  using WriteResult = server::HttpStream::WriteResult;
  const WriteResult result = state.stream->Write(bytes);
  if (result == WriteResult::kQueued) {
    state.last_write = Clock::now();
    return;
  }
  // Gone, or reading too slowly: the client resumes with Last-Event-ID
  // and is replayed what it missed (while the buffer holds it).
  if (result == WriteResult::kFull) ++stats_.slow_closed;
  CloseStreamLocked(state);
}

void McpStreams::CloseStreamLocked(SessionState& state) {
  if (state.stream == nullptr) return;
  state.stream->End();
  state.stream.reset();
  --stats_.streams;
}

int McpStreams::OpenStreamsLocked(std::string_view credential) const {
  int open = 0;
  for (const auto& [id, state] : sessions_) {
    if (state.stream != nullptr && state.credential == credential) ++open;
  }
  return open;
}

void McpStreams::End(std::string_view session) {
  MutexLock lock(&mu_);
  auto it = sessions_.find(std::string(session));
  if (it == sessions_.end()) return;
  CloseStreamLocked(it->second);
  sessions_.erase(it);
}

void McpStreams::Stop() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    for (auto& [id, state] : sessions_) CloseStreamLocked(state);
    wake_.SignalAll();
  }
  if (thread_.joinable()) thread_.join();
}

McpStreamStats McpStreams::Stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

void McpStreams::Loop() {
  // Looks at the streams a few times per keepalive period, so none stays
  // silent much longer than `keepalive`.
  const auto tick = std::max(std::chrono::milliseconds(10), limits_.keepalive / 4);
  for (;;) {
    std::vector<std::pair<std::string, bool>> names;
    {
      MutexLock lock(&mu_);
      if (!stopping_) wake_.WaitFor(&mu_, tick);
      if (stopping_) return;
      const Clock::time_point now = Clock::now();
      for (auto& [id, state] : sessions_) {
        if (state.stream != nullptr && state.stream->closed()) CloseStreamLocked(state);
        if (state.stream != nullptr && now - state.last_write >= limits_.keepalive) {
          WriteLocked(state, ": keepalive\n\n");
        }
        names.emplace_back(id, state.stream != nullptr);
      }
    }
    // Asked without mu_: `live_` takes the sessions' lock.
    std::vector<std::string> gone;
    for (const auto& [id, streaming] : names) {
      if (!live_(id, streaming)) gone.push_back(id);
    }
    for (const std::string& id : gone) End(id);
  }
}

}  // namespace strata::api
