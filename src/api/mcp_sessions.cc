#include "api/mcp_sessions.h"

#include <random>

#include "absl/strings/escaping.h"

namespace strata::api {
namespace {

// Compares in time that depends only on the lengths.
bool SameCredential(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char differ = 0;
  for (size_t i = 0; i < a.size(); ++i) differ |= static_cast<unsigned char>(a[i] ^ b[i]);
  return differ == 0;
}

}  // namespace

std::string McpSessions::Create(int64_t now_ns, std::string protocol_version,
                                std::string credential) {
  std::random_device random;
  std::string bytes(16, '\0');
  for (char& c : bytes) c = static_cast<char>(random() & 0xff);
  std::string id = absl::BytesToHexString(bytes);
  MutexLock lock(&mu_);
  DropIdle(now_ns);
  while (sessions_.size() >= limits_.max_sessions && !sessions_.empty()) {
    auto oldest = sessions_.begin();
    for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
      if (it->second.last_used_ns < oldest->second.last_used_ns) oldest = it;
    }
    sessions_.erase(oldest);
  }
  sessions_[id] = Session{.last_used_ns = now_ns,
                          .protocol_version = std::move(protocol_version),
                          .credential = std::move(credential)};
  return id;
}

bool McpSessions::Touch(std::string_view id, int64_t now_ns, std::string_view credential,
                        std::string* protocol_version) {
  MutexLock lock(&mu_);
  auto it = sessions_.find(std::string(id));
  if (it == sessions_.end() || !SameCredential(it->second.credential, credential)) return false;
  if (now_ns - it->second.last_used_ns > limits_.idle_ns) {
    sessions_.erase(it);
    return false;
  }
  it->second.last_used_ns = now_ns;
  if (protocol_version != nullptr) *protocol_version = it->second.protocol_version;
  return true;
}

bool McpSessions::End(std::string_view id, std::string_view credential) {
  MutexLock lock(&mu_);
  auto it = sessions_.find(std::string(id));
  if (it == sessions_.end() || !SameCredential(it->second.credential, credential)) return false;
  sessions_.erase(it);
  return true;
}

bool McpSessions::Live(std::string_view id, int64_t now_ns, bool touch) {
  MutexLock lock(&mu_);
  auto it = sessions_.find(std::string(id));
  if (it == sessions_.end()) return false;
  if (now_ns - it->second.last_used_ns > limits_.idle_ns) {
    sessions_.erase(it);
    return false;
  }
  if (touch) it->second.last_used_ns = now_ns;
  return true;
}

size_t McpSessions::size() const {
  MutexLock lock(&mu_);
  return sessions_.size();
}

void McpSessions::DropIdle(int64_t now_ns) {
  absl::erase_if(sessions_, [&](const auto& entry) {
    return now_ns - entry.second.last_used_ns > limits_.idle_ns;
  });
}

}  // namespace strata::api
