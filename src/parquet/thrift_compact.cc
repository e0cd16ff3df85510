#include "parquet/thrift_compact.h"

#include <cstring>

#include "common/check.h"
#include "fmt/format.h"

namespace strata::parquet {

// ---- CompactWriter ----

void CompactWriter::BeginStruct() { last_field_id_.push_back(0); }

void CompactWriter::EndStruct() {
  STRATA_CHECK(!last_field_id_.empty(), "EndStruct without BeginStruct");
  out_->push_back(static_cast<char>(CompactType::kStop));
  last_field_id_.pop_back();
}

void CompactWriter::FieldHeader(CompactType type, int16_t id) {
  STRATA_CHECK(!last_field_id_.empty(), "field outside a struct");
  int16_t& last = last_field_id_.back();
  const int delta = static_cast<int>(id) - static_cast<int>(last);
  if (delta > 0 && delta <= 15) {
    out_->push_back(static_cast<char>((delta << 4) | static_cast<int>(type)));
  } else {
    out_->push_back(static_cast<char>(type));
    WriteZigZag64(id);
  }
  last = id;
}

void CompactWriter::WriteVarint(uint64_t value) {
  while (value >= 0x80) {
    out_->push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out_->push_back(static_cast<char>(value));
}

void CompactWriter::WriteZigZag64(int64_t value) {
  WriteVarint((static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63));
}

void CompactWriter::FieldBool(int16_t id, bool value) {
  FieldHeader(value ? CompactType::kBoolTrue : CompactType::kBoolFalse, id);
}

void CompactWriter::FieldI8(int16_t id, int8_t value) {
  FieldHeader(CompactType::kByte, id);
  out_->push_back(static_cast<char>(value));
}

void CompactWriter::FieldI16(int16_t id, int16_t value) {
  FieldHeader(CompactType::kI16, id);
  WriteZigZag64(value);
}

void CompactWriter::FieldI32(int16_t id, int32_t value) {
  FieldHeader(CompactType::kI32, id);
  WriteZigZag64(value);
}

void CompactWriter::FieldI64(int16_t id, int64_t value) {
  FieldHeader(CompactType::kI64, id);
  WriteZigZag64(value);
}

void CompactWriter::FieldDouble(int16_t id, double value) {
  FieldHeader(CompactType::kDouble, id);
  char bytes[8];
  std::memcpy(bytes, &value, 8);  // Little-endian host, as the protocol wants.
  out_->append(bytes, 8);
}

void CompactWriter::FieldBinary(int16_t id, std::string_view value) {
  FieldHeader(CompactType::kBinary, id);
  ElementBinary(value);
}

void CompactWriter::FieldStructBegin(int16_t id) {
  FieldHeader(CompactType::kStruct, id);
  BeginStruct();
}

void CompactWriter::FieldListBegin(int16_t id, CompactType element_type, uint32_t size) {
  FieldHeader(CompactType::kList, id);
  const int type = static_cast<int>(element_type);
  if (size < 15) {
    out_->push_back(static_cast<char>((size << 4) | type));
  } else {
    out_->push_back(static_cast<char>(0xF0 | type));
    WriteVarint(size);
  }
}

void CompactWriter::ElementBinary(std::string_view value) {
  WriteVarint(value.size());
  out_->append(value.data(), value.size());
}

void CompactWriter::ElementBool(bool value) { out_->push_back(value ? 1 : 2); }

// ---- CompactReader ----

absl::Status CompactReader::Error(std::string_view what) const {
  return absl::InvalidArgumentError(fmt::format("thrift compact: {} at byte {}", what, pos_));
}

absl::StatusOr<uint64_t> CompactReader::ReadVarint() {
  uint64_t result = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos_ >= input_.size()) return Error("truncated varint");
    const uint8_t byte = static_cast<uint8_t>(input_[pos_++]);
    result |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) return result;
  }
  return Error("varint longer than 10 bytes");
}

absl::StatusOr<int64_t> CompactReader::ReadZigZag64() {
  absl::StatusOr<uint64_t> raw = ReadVarint();
  if (!raw.ok()) return raw.status();
  return static_cast<int64_t>((*raw >> 1) ^ (~(*raw & 1) + 1));
}

absl::Status CompactReader::BeginStruct() {
  if (last_field_id_.size() >= static_cast<size_t>(kMaxDepth)) {
    return Error("nesting deeper than 32");
  }
  last_field_id_.push_back(0);
  return absl::OkStatus();
}

absl::Status CompactReader::EndStruct() {
  if (last_field_id_.empty()) return Error("struct end without begin");
  last_field_id_.pop_back();
  return absl::OkStatus();
}

absl::StatusOr<CompactReader::FieldHeader> CompactReader::ReadFieldHeader() {
  if (last_field_id_.empty()) return Error("field header outside a struct");
  if (pos_ >= input_.size()) return Error("truncated struct");
  const uint8_t byte = static_cast<uint8_t>(input_[pos_++]);
  const uint8_t type = byte & 0x0F;
  if (type == 0) {
    if (byte != 0) return Error("malformed stop byte");
    return FieldHeader{CompactType::kStop, 0};
  }
  if (type > static_cast<uint8_t>(CompactType::kStruct)) {
    return Error(fmt::format("unknown wire type {}", type));
  }
  int16_t& last = last_field_id_.back();
  const int delta = byte >> 4;
  int64_t id;
  if (delta != 0) {
    id = last + delta;
  } else {
    absl::StatusOr<int64_t> explicit_id = ReadZigZag64();
    if (!explicit_id.ok()) return explicit_id.status();
    id = *explicit_id;
  }
  if (id < INT16_MIN || id > INT16_MAX) return Error("field id out of range");
  last = static_cast<int16_t>(id);
  return FieldHeader{static_cast<CompactType>(type), static_cast<int16_t>(id)};
}

absl::StatusOr<bool> CompactReader::ReadBool(CompactType field_type) {
  if (field_type == CompactType::kBoolTrue) return true;
  if (field_type == CompactType::kBoolFalse) return false;
  if (pos_ >= input_.size()) return Error("truncated bool");
  const uint8_t byte = static_cast<uint8_t>(input_[pos_++]);
  if (byte == 1) return true;
  if (byte == 0 || byte == 2) return false;
  return Error(fmt::format("bad bool byte {}", byte));
}

absl::StatusOr<int8_t> CompactReader::ReadI8() {
  if (pos_ >= input_.size()) return Error("truncated byte");
  return static_cast<int8_t>(input_[pos_++]);
}

absl::StatusOr<int16_t> CompactReader::ReadI16() {
  absl::StatusOr<int64_t> v = ReadZigZag64();
  if (!v.ok()) return v.status();
  if (*v < INT16_MIN || *v > INT16_MAX) return Error("i16 out of range");
  return static_cast<int16_t>(*v);
}

absl::StatusOr<int32_t> CompactReader::ReadI32() {
  absl::StatusOr<int64_t> v = ReadZigZag64();
  if (!v.ok()) return v.status();
  if (*v < INT32_MIN || *v > INT32_MAX) return Error("i32 out of range");
  return static_cast<int32_t>(*v);
}

absl::StatusOr<int64_t> CompactReader::ReadI64() { return ReadZigZag64(); }

absl::StatusOr<double> CompactReader::ReadDouble() {
  if (remaining() < 8) return Error("truncated double");
  double value;
  std::memcpy(&value, input_.data() + pos_, 8);
  pos_ += 8;
  return value;
}

absl::StatusOr<std::string_view> CompactReader::ReadBinary() {
  absl::StatusOr<uint64_t> size = ReadVarint();
  if (!size.ok()) return size.status();
  if (*size > remaining()) return Error(fmt::format("binary of {} bytes past the end", *size));
  std::string_view value = input_.substr(pos_, *size);
  pos_ += *size;
  return value;
}

absl::StatusOr<CompactReader::ListHeader> CompactReader::ReadListHeader() {
  if (pos_ >= input_.size()) return Error("truncated list header");
  const uint8_t byte = static_cast<uint8_t>(input_[pos_++]);
  const uint8_t type = byte & 0x0F;
  uint64_t size = byte >> 4;
  if (size == 15) {
    absl::StatusOr<uint64_t> long_size = ReadVarint();
    if (!long_size.ok()) return long_size.status();
    size = *long_size;
  }
  if (type == 0 || type > static_cast<uint8_t>(CompactType::kStruct)) {
    return Error(fmt::format("unknown list element type {}", type));
  }
  // Every element takes at least one byte, except bools... which also take one
  // byte inside a list; so a count beyond the remaining bytes is corrupt.
  if (size > remaining()) return Error(fmt::format("list of {} elements past the end", size));
  return ListHeader{static_cast<CompactType>(type), static_cast<uint32_t>(size)};
}

absl::Status CompactReader::Skip(CompactType type) { return SkipDepth(type, 0); }

absl::Status CompactReader::SkipDepth(CompactType type, int depth) {
  if (depth + static_cast<int>(last_field_id_.size()) >= kMaxDepth) {
    return Error("nesting deeper than 32");
  }
  switch (type) {
    case CompactType::kBoolTrue:
    case CompactType::kBoolFalse:
      return absl::OkStatus();
    case CompactType::kByte:
      return ReadI8().status();
    case CompactType::kI16:
    case CompactType::kI32:
    case CompactType::kI64:
      return ReadVarint().status();
    case CompactType::kDouble:
      return ReadDouble().status();
    case CompactType::kBinary:
      return ReadBinary().status();
    case CompactType::kList:
    case CompactType::kSet: {
      absl::StatusOr<ListHeader> header = ReadListHeader();
      if (!header.ok()) return header.status();
      for (uint32_t i = 0; i < header->size; ++i) {
        // A bool list element is one byte, not carried in a header.
        CompactType element = header->element_type;
        if (element == CompactType::kBoolTrue || element == CompactType::kBoolFalse) {
          element = CompactType::kByte;
        }
        if (absl::Status s = SkipDepth(element, depth + 1); !s.ok()) return s;
      }
      return absl::OkStatus();
    }
    case CompactType::kMap: {
      absl::StatusOr<uint64_t> size = ReadVarint();
      if (!size.ok()) return size.status();
      if (*size == 0) return absl::OkStatus();
      if (*size > remaining()) return Error("map past the end");
      if (pos_ >= input_.size()) return Error("truncated map header");
      const uint8_t types = static_cast<uint8_t>(input_[pos_++]);
      auto element = [](uint8_t t) {
        CompactType c = static_cast<CompactType>(t);
        return (c == CompactType::kBoolTrue || c == CompactType::kBoolFalse) ? CompactType::kByte
                                                                             : c;
      };
      const uint8_t key = types >> 4, value = types & 0x0F;
      if (key == 0 || key > 12 || value == 0 || value > 12) return Error("bad map types");
      for (uint64_t i = 0; i < *size; ++i) {
        if (absl::Status s = SkipDepth(element(key), depth + 1); !s.ok()) return s;
        if (absl::Status s = SkipDepth(element(value), depth + 1); !s.ok()) return s;
      }
      return absl::OkStatus();
    }
    case CompactType::kStruct: {
      if (absl::Status s = BeginStruct(); !s.ok()) return s;
      while (true) {
        absl::StatusOr<FieldHeader> field = ReadFieldHeader();
        if (!field.ok()) return field.status();
        if (field->type == CompactType::kStop) break;
        if (absl::Status s = SkipDepth(field->type, depth + 1); !s.ok()) return s;
      }
      return EndStruct();
    }
    case CompactType::kStop:
      break;
  }
  return Error("cannot skip a value of wire type 0");
}

bool CompactTypeMatches(CompactType actual, CompactType expected) {
  if (expected == CompactType::kBoolTrue || expected == CompactType::kBoolFalse) {
    return actual == CompactType::kBoolTrue || actual == CompactType::kBoolFalse;
  }
  return actual == expected;
}

}  // namespace strata::parquet
