// SnappyUncompress (otlp/snappy_block.h) on arbitrary bytes: it must never
// crash, read outside its input, or answer more than the declared length
// or the cap.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/check.h"
#include "otlp/snappy_block.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr size_t kMaxBytes = 1 << 20;
  const auto out = strata::otlp::SnappyUncompress(
      std::string_view(reinterpret_cast<const char*>(data), size), kMaxBytes);
  if (out.ok()) STRATA_CHECK(out->size() <= kMaxBytes, "within the cap");
  return 0;
}
