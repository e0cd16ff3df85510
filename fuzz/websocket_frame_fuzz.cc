// Fuzz target for the WebSocket frames a client sends to strata
// (src/server/websocket_frame.cc): the input is the bytes read from the
// socket after the upgrade. Parsing consumes frames one by one, each either
// a frame no longer than the limit, a request for more bytes, or
// InvalidArgument/ResourceExhausted; never a crash, and never a frame that
// claims more bytes than it was given. A close frame's payload parses to a
// code or InvalidArgument.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "server/websocket_frame.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata::server;
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  constexpr uint64_t kLimit = 1024;
  for (int frames = 0; frames < 1000; ++frames) {
    absl::StatusOr<std::optional<WebSocketClientFrame>> frame = ParseClientFrame(rest, kLimit);
    if (!frame.ok()) {
      const absl::StatusCode code = frame.status().code();
      if (code != absl::StatusCode::kInvalidArgument &&
          code != absl::StatusCode::kResourceExhausted) {
        __builtin_trap();
      }
      return 0;
    }
    if (!frame->has_value()) return 0;
    const WebSocketClientFrame& f = **frame;
    if (f.consumed == 0 || f.consumed > rest.size() || f.payload.size() > kLimit) __builtin_trap();
    if (f.opcode == WebSocketOpcode::kClose) {
      absl::StatusOr<WebSocketClose> close = ParseClosePayload(f.payload);
      if (!close.ok() && close.status().code() != absl::StatusCode::kInvalidArgument) {
        __builtin_trap();
      }
    }
    rest.remove_prefix(f.consumed);
  }
  return 0;
}
