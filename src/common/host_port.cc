#include "common/host_port.h"

#include <charconv>

#include "fmt/format.h"

namespace strata {

absl::StatusOr<HostPort> ParseHostPort(std::string_view text) {
  auto fail = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        fmt::format("address \"{}\": {} (want host:port, [v6-host]:port or :port)", text, why));
  };
  // A URL's "scheme:" would otherwise be taken for an IPv6 host without brackets.
  if (text.find("://") != std::string_view::npos) return fail("give host:port, not a URL");
  HostPort out;
  std::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) return fail("missing ']'");
    out.host = std::string(text.substr(1, close - 1));
    if (out.host.empty()) return fail("empty IPv6 host");
    std::string_view rest = text.substr(close + 1);
    if (rest.empty() || rest.front() != ':') return fail("missing ':' before the port");
    port_text = rest.substr(1);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return fail("missing ':port'");
    out.host = std::string(text.substr(0, colon));
    if (out.host.find(':') != std::string::npos) return fail("IPv6 hosts need brackets");
    port_text = text.substr(colon + 1);
  }
  uint32_t port = 0;
  const char* end = port_text.data() + port_text.size();
  auto [ptr, ec] = std::from_chars(port_text.data(), end, port);
  if (port_text.empty() || ec != std::errc() || ptr != end || port > 65535) {
    return fail("port must be a number from 0 to 65535 (0 picks a free port)");
  }
  out.port = static_cast<uint16_t>(port);
  return out;
}

}  // namespace strata
