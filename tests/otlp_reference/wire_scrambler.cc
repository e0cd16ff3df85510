#include "otlp_reference/wire_scrambler.h"

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "otlp_reference/random_source.h"

namespace strata::otlp_reference {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// One field as it appeared on the wire. `payload` is the value's bytes: the
// varint's bytes, 8 or 4 fixed bytes, or the content of a length-delimited
// field without its length prefix.
struct WireField {
  uint32_t number;
  uint32_t wire_type;
  std::string_view payload;
};

bool ReadVarint(std::string_view bytes, size_t* pos, uint64_t* value) {
  *value = 0;
  for (int shift = 0; shift < 64 && *pos < bytes.size(); shift += 7) {
    uint8_t b = static_cast<uint8_t>(bytes[(*pos)++]);
    *value |= uint64_t{b & 0x7fu} << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

void WriteVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

void WriteField(uint32_t number, uint32_t wire_type, std::string_view payload, std::string* out) {
  WriteVarint((uint64_t{number} << 3) | wire_type, out);
  if (wire_type == kLengthDelimited) WriteVarint(payload.size(), out);
  out->append(payload.data(), payload.size());
}

absl::StatusOr<std::vector<WireField>> SplitFields(std::string_view bytes) {
  std::vector<WireField> fields;
  size_t pos = 0;
  while (pos < bytes.size()) {
    uint64_t tag = 0;
    if (!ReadVarint(bytes, &pos, &tag)) return absl::InvalidArgumentError("bad tag");
    auto wire_type = static_cast<uint32_t>(tag & 7);
    size_t start = pos;
    uint64_t length = 0;
    switch (wire_type) {
      case kVarint:
        if (!ReadVarint(bytes, &pos, &length)) return absl::InvalidArgumentError("bad varint");
        length = pos - start;
        pos = start;
        break;
      case kFixed64:
        length = 8;
        break;
      case kFixed32:
        length = 4;
        break;
      case kLengthDelimited:
        if (!ReadVarint(bytes, &pos, &length)) return absl::InvalidArgumentError("bad length");
        start = pos;
        break;
      default:
        return absl::InvalidArgumentError(absl::StrCat("wire type ", wire_type, " unsupported"));
    }
    if (length > bytes.size() - start) return absl::InvalidArgumentError("truncated field");
    fields.push_back({static_cast<uint32_t>(tag >> 3), wire_type, bytes.substr(start, length)});
    pos = start + length;
  }
  return fields;
}

// The wire type of one element of a packable scalar field.
uint32_t ElementWireType(const FieldDescriptor& field) {
  switch (field.type()) {
    case FieldDescriptor::TYPE_DOUBLE:
    case FieldDescriptor::TYPE_FIXED64:
    case FieldDescriptor::TYPE_SFIXED64:
      return kFixed64;
    case FieldDescriptor::TYPE_FLOAT:
    case FieldDescriptor::TYPE_FIXED32:
    case FieldDescriptor::TYPE_SFIXED32:
      return kFixed32;
    default:
      return kVarint;
  }
}

// Writes a packed field's elements as separate fields.
absl::Status WriteUnpacked(const FieldDescriptor& field, std::string_view packed,
                           std::string* out) {
  uint32_t wire_type = ElementWireType(field);
  size_t pos = 0;
  while (pos < packed.size()) {
    size_t start = pos;
    if (wire_type == kVarint) {
      uint64_t unused = 0;
      if (!ReadVarint(packed, &pos, &unused)) return absl::InvalidArgumentError("bad element");
    } else {
      pos += wire_type == kFixed64 ? 8 : 4;
      if (pos > packed.size()) return absl::InvalidArgumentError("truncated element");
    }
    WriteField(field.number(), wire_type, packed.substr(start, pos - start), out);
  }
  return absl::OkStatus();
}

void WriteUnknownField(RandomSource& rng, std::string* out) {
  auto number = static_cast<uint32_t>(4000 + rng.Below(100));
  std::string payload;
  uint32_t wire_type = rng.Pick<uint32_t>({kVarint, kFixed64, kLengthDelimited, kFixed32});
  switch (wire_type) {
    case kVarint:
      WriteVarint(rng.Next64() >> rng.Below(64), &payload);
      break;
    case kFixed64:
      payload = rng.Bytes(8);
      break;
    case kFixed32:
      payload = rng.Bytes(4);
      break;
    default:
      payload = rng.Bytes(rng.Below(12));
  }
  WriteField(number, wire_type, payload, out);
}

absl::Status Scramble(std::string_view bytes, const Descriptor& descriptor, RandomSource& rng,
                      std::string* out);

absl::Status WriteScrambledField(const WireField& f, const Descriptor& descriptor,
                                 RandomSource& rng, std::string* out) {
  const FieldDescriptor* field = descriptor.FindFieldByNumber(static_cast<int>(f.number));
  if (field == nullptr || f.wire_type != kLengthDelimited) {
    WriteField(f.number, f.wire_type, f.payload, out);
    return absl::OkStatus();
  }
  if (field->message_type() != nullptr) {
    std::string inner;
    absl::Status s = Scramble(f.payload, *field->message_type(), rng, &inner);
    if (s.ok()) WriteField(f.number, kLengthDelimited, inner, out);
    return s;
  }
  if (field->is_packable() && rng.Bool()) return WriteUnpacked(*field, f.payload, out);
  WriteField(f.number, f.wire_type, f.payload, out);
  return absl::OkStatus();
}

absl::Status Scramble(std::string_view bytes, const Descriptor& descriptor, RandomSource& rng,
                      std::string* out) {
  absl::StatusOr<std::vector<WireField>> fields = SplitFields(bytes);
  if (!fields.ok()) return fields.status();
  // One queue per field number; a random interleaving of the queues keeps
  // each repeated field's element order.
  std::map<uint32_t, std::deque<WireField>> queues;
  for (const WireField& f : *fields) queues[f.number].push_back(f);
  std::vector<std::deque<WireField>*> pending;
  for (auto& [number, queue] : queues) pending.push_back(&queue);
  while (!pending.empty()) {
    if (rng.OneIn(10)) WriteUnknownField(rng, out);
    size_t pick = rng.Below(pending.size());
    absl::Status s = WriteScrambledField(pending[pick]->front(), descriptor, rng, out);
    if (!s.ok()) return s;
    pending[pick]->pop_front();
    if (pending[pick]->empty()) pending.erase(pending.begin() + static_cast<long>(pick));
  }
  if (rng.OneIn(10)) WriteUnknownField(rng, out);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> ScrambleWire(std::string_view bytes, const Descriptor* descriptor,
                                         uint64_t seed) {
  RandomSource rng(seed);
  std::string out;
  absl::Status s = Scramble(bytes, *descriptor, rng, &out);
  if (!s.ok()) return s;
  return out;
}

}  // namespace strata::otlp_reference
