#include "otlp/proto_wire.h"

#include <simdjson.h>

namespace strata::otlp {

bool IsValidUtf8Slow(std::string_view s) { return simdjson::validate_utf8(s.data(), s.size()); }

bool WireReader::SkipField(uint32_t tag, int group_depth) {
  const uint32_t field = tag >> 3;
  if (field == 0) return Error("field number 0");
  switch (static_cast<WireType>(tag & 7)) {
    case WireType::kVarint: {
      uint64_t ignored;
      return ReadVarint(&ignored);
    }
    case WireType::kFixed64:
      if (end_ - p_ < 8) return Error("truncated fixed64");
      p_ += 8;
      return true;
    case WireType::kLen: {
      std::string_view ignored;
      return ReadLen(&ignored);
    }
    case WireType::kStartGroup:
      return SkipGroup(field, group_depth + 1);
    case WireType::kEndGroup:
      return Error("end-group tag without a matching start-group");
    case WireType::kFixed32:
      if (end_ - p_ < 4) return Error("truncated fixed32");
      p_ += 4;
      return true;
  }
  return Error("invalid wire type");
}

bool WireReader::SkipGroup(uint32_t field, int group_depth) {
  if (group_depth > kMaxGroupDepth) return Error("groups nested too deeply");
  while (p_ < end_) {
    uint32_t tag;
    const uint8_t* saved_start = field_start_;
    if (!ReadTag(&tag)) return false;
    field_start_ = saved_start;
    if (static_cast<WireType>(tag & 7) == WireType::kEndGroup) {
      if ((tag >> 3) != field) return Error("end-group tag does not match its start-group");
      return true;
    }
    if (!SkipField(tag, group_depth)) return false;
  }
  return Error("truncated group");
}

}  // namespace strata::otlp
