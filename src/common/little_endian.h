#pragma once

// Fixed-width little-endian integers in byte strings: how strata's own
// binary files (the trace index, the trace-id filter) store their fields,
// and how owner keys are built. Header only. Errors: none; readers check
// lengths before they load.

#include <cstdint>
#include <string>

namespace strata {

// Stores the low `width` bytes of `v` at `p`, least significant first.
inline void StoreLittleEndian(char* p, uint64_t v, int width) {
  for (int i = 0; i < width; ++i) p[i] = static_cast<char>(v >> (8 * i));
}

inline void PutU32(std::string& out, uint32_t v) {
  char bytes[4];
  StoreLittleEndian(bytes, v, 4);
  out.append(bytes, 4);
}

inline void PutU64(std::string& out, uint64_t v) {
  char bytes[8];
  StoreLittleEndian(bytes, v, 8);
  out.append(bytes, 8);
}

// The `width`-byte little-endian integer at `p`.
inline uint64_t LoadLittleEndian(const char* p, int width) {
  uint64_t v = 0;
  for (int i = width - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

}  // namespace strata
