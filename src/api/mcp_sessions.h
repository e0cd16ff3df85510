#pragma once

// The live MCP sessions of the /mcp endpoint (docs/mcp.md): a session is
// made by `initialize` and named by a random id the client sends back in
// the Mcp-Session-Id header; DELETE /mcp ends it, and a session unused for
// `idle_ns` ends by itself. At most `max_sessions` live at once: past that
// the least recently used is ended to make room, so a client that leaks
// sessions cannot lock others out.
//
// Each session is bound to the credential that made it (a token's hash, a
// browser session's id, an OAuth grant): a request that names the session
// with another credential is treated as naming no session at all, so a
// leaked session id is worth nothing without its credential.
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
  // `now_ns`, with the protocol version `initialize` agreed, bound to
  // `credential` (McpCredentialKey() in mcp_endpoint.cc).
  std::string Create(int64_t now_ns, std::string protocol_version, std::string credential)
      ABSL_LOCKS_EXCLUDED(mu_);
  // True, and the session's idle clock restarted, when `id` is live at
  // `now_ns` and bound to `credential`; `protocol_version` gets its version.
  bool Touch(std::string_view id, int64_t now_ns, std::string_view credential,
             std::string* protocol_version = nullptr) ABSL_LOCKS_EXCLUDED(mu_);
  // Ends `id` when it is bound to `credential`; false when it was not live
  // or is another credential's.
  bool End(std::string_view id, std::string_view credential) ABSL_LOCKS_EXCLUDED(mu_);
  // True when `id` is live at `now_ns` (whatever its credential); `touch`
  // restarts its idle clock (a session with an open GET stream is in use).
  bool Live(std::string_view id, int64_t now_ns, bool touch) ABSL_LOCKS_EXCLUDED(mu_);
  size_t size() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Session {
    int64_t last_used_ns = 0;
    std::string protocol_version;
    std::string credential;
  };
  void DropIdle(int64_t now_ns) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  const McpSessionLimits limits_;

  mutable Mutex mu_;
  absl::flat_hash_map<std::string, Session> sessions_ ABSL_GUARDED_BY(mu_);
};

}  // namespace strata::api
