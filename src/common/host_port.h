#pragma once

// Parsing of listen addresses given as "host:port", "[v6-host]:port" or
// ":port" (all interfaces). Used by the configuration of every listener
// and by strata's clients. A URL ("http://host:port") is refused: strata
// speaks plain HTTP and gRPC on the address, so a scheme would only mislead.
//
// Errors: InvalidArgument naming the text and what is wrong with it.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace strata {

struct HostPort {
  std::string host;  // empty means all interfaces; IPv6 without brackets
  uint16_t port = 0;  // 0: the listener picks a free port
};

[[nodiscard]] absl::StatusOr<HostPort> ParseHostPort(std::string_view text);

}  // namespace strata
