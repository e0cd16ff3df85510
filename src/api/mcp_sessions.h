#pragma once

// The live MCP sessions of the /mcp endpoint (docs/mcp.md): a session is
// made by `initialize` and named by a random id the client sends back in
// the Mcp-Session-Id header; DELETE /mcp ends it, and a session unused for
// `idle_ns` ends by itself. At most `max_sessions` live at once: past that
// the least recently used is ended to make room, so a client that leaks
// sessions cannot lock others out.
//
// Thread-safety: safe for concurrent use. Errors: none (Touch() says
// whether the id names a live session).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "common/mutex.h"

namespace strata::api {

struct McpSessionLimits {
  size_t max_sessions = 1000;
  int64_t idle_ns = int64_t{30} * 60 * 1'000'000'000;  // 30 minutes
};

class McpSessions {
 public:
  explicit McpSessions(McpSessionLimits limits = {}) : limits_(limits) {}

  // A new session's id (32 hex digits from a random source), live from
  // `now_ns`, with the protocol version `initialize` agreed.
  std::string Create(int64_t now_ns, std::string protocol_version) ABSL_LOCKS_EXCLUDED(mu_);
  // True, and the session's idle clock restarted, when `id` is live at
  // `now_ns`; `protocol_version` gets its version.
  bool Touch(std::string_view id, int64_t now_ns, std::string* protocol_version = nullptr)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Ends `id`; false when it was not live.
  bool End(std::string_view id) ABSL_LOCKS_EXCLUDED(mu_);
  size_t size() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Session {
    int64_t last_used_ns = 0;
    std::string protocol_version;
  };
  void DropIdle(int64_t now_ns) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  const McpSessionLimits limits_;

  mutable Mutex mu_;
  absl::flat_hash_map<std::string, Session> sessions_ ABSL_GUARDED_BY(mu_);
};

}  // namespace strata::api
