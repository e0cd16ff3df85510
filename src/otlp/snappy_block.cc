#include "otlp/snappy_block.h"

#include <cstdint>

#include "absl/strings/str_cat.h"

namespace strata::otlp {
namespace {

absl::Status Malformed(std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("malformed snappy block: ", absl::string_view(why.data(), why.size())));
}

}  // namespace

absl::StatusOr<std::string> SnappyUncompress(std::string_view block, size_t max_bytes) {
  const auto* p = reinterpret_cast<const uint8_t*>(block.data());
  const uint8_t* const end = p + block.size();
  // The preamble: the uncompressed length, a varint of at most 32 bits.
  uint64_t length = 0;
  for (int shift = 0;; shift += 7) {
    if (p == end) return Malformed("truncated length");
    if (shift > 28) return Malformed("length varint too long");
    const uint8_t byte = *p++;
    length |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) break;
  }
  if (length > UINT32_MAX) return Malformed("length above 32 bits");
  if (length > max_bytes) {
    return absl::OutOfRangeError(absl::StrCat("snappy block decompresses to ", length,
                                              " bytes, above the limit of ", max_bytes));
  }
  std::string out;
  out.reserve(length);
  while (p < end) {
    const uint8_t tag = *p++;
    if ((tag & 3) == 0) {
      uint64_t size = tag >> 2;
      if (size >= 60) {
        const int bytes = static_cast<int>(size) - 59;
        if (end - p < bytes) return Malformed("truncated literal length");
        size = 0;
        for (int i = 0; i < bytes; ++i) size |= static_cast<uint64_t>(p[i]) << (8 * i);
        p += bytes;
      }
      size += 1;
      if (static_cast<uint64_t>(end - p) < size) return Malformed("truncated literal");
      if (size > length - out.size()) return Malformed("output longer than declared");
      out.append(reinterpret_cast<const char*>(p), size);
      p += size;
      continue;
    }
    uint64_t size = 0;
    uint64_t offset = 0;
    if ((tag & 3) == 1) {
      if (end - p < 1) return Malformed("truncated copy");
      size = 4 + ((tag >> 2) & 7);
      offset = (static_cast<uint64_t>(tag >> 5) << 8) | p[0];
      p += 1;
    } else if ((tag & 3) == 2) {
      if (end - p < 2) return Malformed("truncated copy");
      size = 1 + (tag >> 2);
      offset = p[0] | (static_cast<uint64_t>(p[1]) << 8);
      p += 2;
    } else {
      if (end - p < 4) return Malformed("truncated copy");
      size = 1 + (tag >> 2);
      offset = p[0] | (static_cast<uint64_t>(p[1]) << 8) | (static_cast<uint64_t>(p[2]) << 16) |
               (static_cast<uint64_t>(p[3]) << 24);
      p += 4;
    }
    if (offset == 0 || offset > out.size()) return Malformed("copy offset out of range");
    if (size > length - out.size()) return Malformed("output longer than declared");
    // Byte by byte: a copy may read what it is writing (a run).
    const size_t from = out.size() - offset;
    for (uint64_t i = 0; i < size; ++i) out.push_back(out[from + i]);
  }
  if (out.size() != length) return Malformed("output shorter than declared");
  return out;
}

}  // namespace strata::otlp
