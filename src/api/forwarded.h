#pragma once

// Requests that arrive through a reverse proxy (docs/operations.md, "Behind
// a reverse proxy"). A proxy that terminates TLS connects to strata itself,
// so the socket's address is the proxy's and the scheme is http. When the
// connecting address is one of `--trusted-proxies`, strata believes the
// proxy's X-Forwarded-For (the client's address: the rightmost entry that
// is not itself a trusted proxy), X-Forwarded-Proto (https makes the
// session cookie Secure and the expected Origin https) and
// X-Forwarded-Host (the host the browser used). From any other address
// those headers are ignored, so a client cannot forge its address in the
// audit log or the sign-in limits.
//
// Thread-safety: stateless functions over constant data.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "server/http_adapter.h"

namespace strata::api {

// An IPv4 or IPv6 network: an address and a prefix length. IPv4 is kept as
// an IPv4-mapped IPv6 address (::ffff:a.b.c.d), prefix + 96.
struct IpNetwork {
  std::array<uint8_t, 16> address{};
  int prefix = 128;
};

// "10.0.0.1, 192.168.0.0/16, ::1, fd00::/8": addresses or CIDR networks,
// separated by commas (spaces allowed). Empty text is an empty list.
// InvalidArgument naming the bad entry.
[[nodiscard]] absl::StatusOr<std::vector<IpNetwork>> ParseTrustedProxies(std::string_view list);

// True when `address` (as the socket or a header writes it, IPv4, IPv6 or
// IPv4-mapped IPv6) lies in one of `networks`.
bool AddressIn(std::string_view address, const std::vector<IpNetwork>& networks);

// What the client sees: its address, whether it speaks https to the front
// door, and the host it named.
struct RequestView {
  std::string address;
  bool secure = false;
  std::string host;
};

// `tls`: the listener itself speaks TLS.
RequestView ViewOf(const server::HttpRequest& request, const std::vector<IpNetwork>& trusted,
                   bool tls);

}  // namespace strata::api
