#include "api/forwarded.h"

#include <arpa/inet.h>

#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "api/header_values.h"
#include "fmt/format.h"

namespace strata::api {
namespace {

// Parses an IPv4 or IPv6 address into the IPv6 form; false if it is not one.
// Brackets around IPv6 ("[::1]") and an IPv6 zone ("%eth0") are accepted.
bool ParseAddress(std::string_view text, std::array<uint8_t, 16>* out, bool* v4) {
  text = TrimSpaces(text);
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  if (const size_t zone = text.find('%'); zone != std::string_view::npos) {
    text = text.substr(0, zone);
  }
  if (text.empty() || text.size() > 45) return false;
  const std::string copy(text);
  in_addr a4{};
  if (inet_pton(AF_INET, copy.c_str(), &a4) == 1) {
    *out = {};
    (*out)[10] = 0xff;
    (*out)[11] = 0xff;
    std::memcpy(out->data() + 12, &a4, 4);
    *v4 = true;
    return true;
  }
  in6_addr a6{};
  if (inet_pton(AF_INET6, copy.c_str(), &a6) == 1) {
    std::memcpy(out->data(), &a6, 16);
    static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    *v4 = std::memcmp(out->data(), kMapped, 12) == 0;
    return true;
  }
  return false;
}

bool InNetwork(const std::array<uint8_t, 16>& address, const IpNetwork& network) {
  int bits = network.prefix;
  for (size_t i = 0; i < 16 && bits > 0; ++i, bits -= 8) {
    const uint8_t mask = bits >= 8 ? 0xff : static_cast<uint8_t>(0xff << (8 - bits));
    if ((address[i] & mask) != (network.address[i] & mask)) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::vector<IpNetwork>> ParseTrustedProxies(std::string_view list) {
  std::vector<IpNetwork> networks;
  while (!TrimSpaces(list).empty()) {
    const size_t comma = list.find(',');
    const std::string_view entry = TrimSpaces(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    auto bad = [&] {
      return absl::InvalidArgumentError(fmt::format(
          "--trusted-proxies: \"{}\" is not an IP address or a CIDR network (e.g. 10.0.0.0/8)",
          entry.substr(0, 64)));
    };
    const size_t slash = entry.find('/');
    IpNetwork network;
    bool v4 = false;
    if (!ParseAddress(entry.substr(0, slash), &network.address, &v4)) return bad();
    network.prefix = 128;
    if (slash != std::string_view::npos) {
      const std::string_view bits = entry.substr(slash + 1);
      int prefix = 0;
      if (bits.empty() || bits.size() > 3 ||
          !absl::SimpleAtoi(absl::string_view(bits.data(), bits.size()), &prefix) || prefix < 0 ||
          prefix > (v4 ? 32 : 128)) {
        return bad();
      }
      network.prefix = v4 ? prefix + 96 : prefix;
    }
    networks.push_back(network);
  }
  return networks;
}

bool AddressIn(std::string_view address, const std::vector<IpNetwork>& networks) {
  std::array<uint8_t, 16> parsed{};
  bool v4 = false;
  if (!ParseAddress(address, &parsed, &v4)) return false;
  for (const IpNetwork& network : networks) {
    if (InNetwork(parsed, network)) return true;
  }
  return false;
}

RequestView ViewOf(const server::HttpRequest& request, const std::vector<IpNetwork>& trusted,
                   bool tls) {
  RequestView view{request.peer_address, tls, std::string(request.Header("Host"))};
  if (trusted.empty() || !AddressIn(request.peer_address, trusted)) return view;
  // X-Forwarded-For: "client, proxy1, proxy2"; every proxy appends the
  // address it received from. The rightmost untrusted entry is the client.
  std::vector<std::string_view> hops;
  for (const auto& [name, value] : request.headers) {
    if (!EqualsIgnoringCase(name, "X-Forwarded-For")) continue;
    std::string_view rest = value;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      hops.push_back(TrimSpaces(rest.substr(0, comma)));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  for (auto it = hops.rbegin(); it != hops.rend(); ++it) {
    std::array<uint8_t, 16> parsed{};
    bool v4 = false;
    if (!ParseAddress(*it, &parsed, &v4)) break;  // garbage: stop believing the chain
    view.address = std::string(*it);
    if (!AddressIn(*it, trusted)) break;
  }
  const std::string_view proto = TrimSpaces(request.Header("X-Forwarded-Proto"));
  if (EqualsIgnoringCase(proto, "https")) view.secure = true;
  const std::string_view host = TrimSpaces(request.Header("X-Forwarded-Host"));
  if (!host.empty() && host.find_first_of(" ,/\\@") == std::string_view::npos) {
    view.host = std::string(host);
  }
  return view;
}

}  // namespace strata::api
