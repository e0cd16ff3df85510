#include "otlp/proto_decode_common.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace strata::otlp::proto {

// ------------------------------------------------------------ DecodeContext

bool DecodeContext::Fail(const char* at, std::string_view field, std::string_view message) {
  if (!failed_) {
    failed_ = true;
    error_offset_ = static_cast<size_t>(at - base_);
    message_ = std::string(message);
  }
  if (!field.empty()) reversed_path_.emplace_back(field);
  return false;
}

bool DecodeContext::FailWire(const WireReader& r, std::string_view field) {
  return Fail(r.field_start(), field, r.error());
}

bool DecodeContext::FailWire(const WireReader& r, std::string_view field, size_t index) {
  Fail(r.field_start(), {}, r.error());
  return In(field, index);
}

bool DecodeContext::In(std::string_view field) {
  reversed_path_.emplace_back(field);
  return false;
}

bool DecodeContext::In(std::string_view field, size_t index) {
  reversed_path_.push_back(absl::StrCat(absl::string_view(field.data(), field.size()), "[", index, "]"));
  return false;
}

absl::Status DecodeContext::ToStatus(std::string_view root) const {
  std::string path;
  if (reversed_path_.empty()) {
    path = std::string(root);
  } else {
    path = absl::StrJoin(reversed_path_.rbegin(), reversed_path_.rend(), ".");
  }
  return absl::InvalidArgumentError(
      absl::StrCat("otlp: ", path, ": ", message_, " (at byte ", error_offset_, ")"));
}

bool SkipOrReject(DecodeContext& ctx, WireReader& r, uint32_t tag, FieldNames names) {
  const uint32_t field = tag >> 3;
  if (field < names.size() && !names[field].empty()) {
    return ctx.Fail(r.field_start(), names[field], absl::StrCat("unexpected wire type ", tag & 7));
  }
  if (!r.SkipField(tag)) return ctx.FailWire(r, absl::StrCat("field ", field));
  return true;
}

bool FailIdLength(DecodeContext& ctx, const WireReader& r, std::string_view field, size_t got,
                  size_t want, bool optional) {
  return ctx.Fail(r.field_start(), field,
                  optional ? absl::StrCat("length ", got, ", want 0 or ", want)
                           : absl::StrCat("length ", got, ", want ", want));
}

// ---------------------------------------------------------- AnyValue & co.

namespace {

constexpr std::string_view kAnyValueFields[] = {
    "",           "string_value", "bool_value",  "int_value",           "double_value",
    "array_value", "kvlist_value", "bytes_value", "string_value_strindex"};
constexpr std::string_view kKeyValueFields[] = {"", "key", "value", "key_strindex"};
constexpr std::string_view kValuesFields[] = {"", "values"};  // ArrayValue, KeyValueList

constexpr const char* kStrindexMessage =
    "string-table references are only valid in the profiles signal";

[[nodiscard]] bool DecodeKeyValueFields(DecodeContext& ctx, std::string_view payload,
                                        uint32_t depth, BatchBase* b, std::string_view* key,
                                        ValueRow* value);

// Counts the `values` (field 1) entries of an ArrayValue or KeyValueList so
// that their rows can be reserved contiguously before any child is decoded.
[[nodiscard]] bool CountValues(DecodeContext& ctx, std::string_view payload, uint32_t* count) {
  uint32_t n = 0;
  WireReader r(payload);
  while (!r.done()) {
    uint32_t tag;
    if (!r.ReadTag(&tag)) return ctx.FailWire(r);
    if (tag == Tag(1, WireType::kLen)) {
      std::string_view ignored;
      if (!r.ReadLen(&ignored)) return ctx.FailWire(r, "values", n);
      ++n;
    } else if (!SkipOrReject(ctx, r, tag, kValuesFields)) {
      return false;
    }
  }
  *count = n;
  return true;
}

// Reserves `count` rows at the end of a nested table; fails if row numbers
// would overflow uint32 (input far beyond any realistic request).
[[nodiscard]] bool ReserveNested(DecodeContext& ctx, std::string_view payload, size_t size,
                                 uint32_t count, uint32_t* begin) {
  if (size + count > std::numeric_limits<uint32_t>::max()) {
    return ctx.Fail(payload.data(), {}, "too many nested values in one batch");
  }
  *begin = static_cast<uint32_t>(size);
  return true;
}

// Decodes the repeated `values` (field 1) of an ArrayValue or KeyValueList
// into rows reserved together at the end of `table`, so the children of one
// value stay contiguous even when they nest (grandchildren are reserved
// after them). decode_one(sub, row) decodes one element into row `row`; it
// must index the table afresh, since decoding a child may grow (move) it.
template <typename Table, typename DecodeOne>
[[nodiscard]] bool DecodeNestedValues(DecodeContext& ctx, std::string_view payload, Table& table,
                                      Range* out, DecodeOne decode_one) {
  uint32_t count;
  if (!CountValues(ctx, payload, &count)) return false;
  uint32_t begin;
  if (!ReserveNested(ctx, payload, table.size(), count, &begin)) return false;
  table.Resize(begin + count);
  uint32_t i = 0;
  WireReader r(payload);
  while (!r.done()) {
    uint32_t tag;
    if (!r.ReadTag(&tag)) return ctx.FailWire(r);
    if (tag != Tag(1, WireType::kLen)) {
      if (!SkipOrReject(ctx, r, tag, kValuesFields)) return false;
      continue;
    }
    std::string_view sub;
    if (!r.ReadLen(&sub)) return ctx.FailWire(r, "values", i);
    if (!decode_one(sub, begin + i)) return ctx.In("values", i);
    ++i;
  }
  *out = Range{begin, count};
  return true;
}

[[nodiscard]] bool DecodeArrayValue(DecodeContext& ctx, std::string_view payload, uint32_t depth,
                                    BatchBase* b, Range* out) {
  return DecodeNestedValues(ctx, payload, b->nested_values, out,
                            [&](std::string_view sub, uint32_t row) {
                              ValueRow v;
                              if (!DecodeAnyValue(ctx, sub, depth + 1, b, &v)) return false;
                              b->nested_values.Set(row, v);
                              return true;
                            });
}

[[nodiscard]] bool DecodeKvListValue(DecodeContext& ctx, std::string_view payload, uint32_t depth,
                                     BatchBase* b, Range* out) {
  return DecodeNestedValues(ctx, payload, b->nested_attributes, out,
                            [&](std::string_view sub, uint32_t row) {
                              std::string_view key;
                              ValueRow v;
                              if (!DecodeKeyValueFields(ctx, sub, depth + 1, b, &key, &v)) {
                                return false;
                              }
                              b->nested_attributes.Set(row, {key, v});
                              return true;
                            });
}

[[nodiscard]] bool DecodeKeyValueFields(DecodeContext& ctx, std::string_view payload,
                                        uint32_t depth, BatchBase* b, std::string_view* key,
                                        ValueRow* value) {
  bool seen_value = false;
  WireReader r(payload);
  while (!r.done()) {
    uint32_t tag;
    if (!r.ReadTag(&tag)) return ctx.FailWire(r);
    switch (tag) {
      case Tag(1, WireType::kLen):
        if (!GetString(ctx, r, "key", key)) return false;
        break;
      case Tag(2, WireType::kLen): {
        std::string_view sub;
        if (!r.ReadLen(&sub)) return ctx.FailWire(r, "value");
        if (seen_value) return ctx.Fail(r.field_start(), "value", kDuplicateMessage);
        seen_value = true;
        if (!DecodeAnyValue(ctx, sub, depth, b, value)) return ctx.In("value");
        break;
      }
      case Tag(3, WireType::kVarint):
        return ctx.Fail(r.field_start(), "key_strindex", kStrindexMessage);
      default:
        if (!SkipOrReject(ctx, r, tag, kKeyValueFields)) return false;
    }
  }
  return true;
}

}  // namespace

bool DecodeAnyValue(DecodeContext& ctx, std::string_view payload, uint32_t depth, BatchBase* b,
                    ValueRow* out) {
  bool seen_array = false;
  bool seen_kvlist = false;
  WireReader r(payload);
  while (!r.done()) {
    uint32_t tag;
    if (!r.ReadTag(&tag)) return ctx.FailWire(r);
    switch (tag) {
      case Tag(1, WireType::kLen):
        out->type = ValueType::kString;
        out->bits = 0;
        if (!GetString(ctx, r, "string_value", &out->str)) return false;
        break;
      case Tag(2, WireType::kVarint): {
        uint64_t v;
        if (!GetVarint(ctx, r, "bool_value", &v)) return false;
        *out = ValueRow{ValueType::kBool, {}, v != 0 ? 1u : 0u};
        break;
      }
      case Tag(3, WireType::kVarint): {
        uint64_t v;
        if (!GetVarint(ctx, r, "int_value", &v)) return false;
        *out = ValueRow{ValueType::kInt, {}, v};
        break;
      }
      case Tag(4, WireType::kFixed64): {
        uint64_t v;
        if (!GetFixed64(ctx, r, "double_value", &v)) return false;
        *out = ValueRow{ValueType::kDouble, {}, v};
        break;
      }
      case Tag(5, WireType::kLen):
      case Tag(6, WireType::kLen): {
        const bool is_array = tag == Tag(5, WireType::kLen);
        const std::string_view field = is_array ? "array_value" : "kvlist_value";
        std::string_view sub;
        if (!r.ReadLen(&sub)) return ctx.FailWire(r, field);
        bool& seen = is_array ? seen_array : seen_kvlist;
        if (seen) return ctx.Fail(r.field_start(), field, kDuplicateMessage);
        seen = true;
        if (depth > ctx.limits().max_value_depth) {
          return ctx.Fail(r.field_start(), field,
                          absl::StrCat("values nested deeper than max_value_depth (",
                                       ctx.limits().max_value_depth, ")"));
        }
        Range children;
        bool ok = is_array ? DecodeArrayValue(ctx, sub, depth, b, &children)
                           : DecodeKvListValue(ctx, sub, depth, b, &children);
        if (!ok) return ctx.In(field);
        *out = ValueRow{
            is_array ? ValueType::kArray : ValueType::kKvList, {}, ValueColumns::Pack(children)};
        break;
      }
      case Tag(7, WireType::kLen):
        out->type = ValueType::kBytes;
        out->bits = 0;
        if (!GetBytes(ctx, r, "bytes_value", &out->str)) return false;
        break;
      case Tag(8, WireType::kVarint):
        return ctx.Fail(r.field_start(), "string_value_strindex", kStrindexMessage);
      default:
        if (!SkipOrReject(ctx, r, tag, kAnyValueFields)) return false;
    }
  }
  return true;
}

namespace {

// Reads a varint that must end exactly at `end`. No error reporting: the
// fast path below falls back to the full decoder on anything unusual.
inline bool VarintUpTo(const uint8_t* p, const uint8_t* end, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; p < end && shift < 64; shift += 7) {
    const uint8_t byte = *p++;
    result |= uint64_t{byte & 0x7fu} << shift;
    if (byte < 0x80) {
      *v = result;
      return p == end;
    }
  }
  return false;
}

// The scalar AnyValue payloads [p, end) that the fast path accepts: a single
// string, bool, int, double or bytes member with a one-byte length.
inline bool SimpleAnyValue(const uint8_t* p, const uint8_t* end, ValueRow* out) {
  const size_t n = static_cast<size_t>(end - p);
  if (n == 0) return true;  // empty AnyValue
  if (n < 2) return false;
  const char* s = reinterpret_cast<const char*>(p);
  switch (p[0]) {
    case Tag(1, WireType::kLen):
    case Tag(7, WireType::kLen):
      if (p[1] >= 0x80 || p[1] != n - 2) return false;
      *out = ValueRow{p[0] == Tag(1, WireType::kLen) ? ValueType::kString : ValueType::kBytes,
                      std::string_view(s + 2, n - 2), 0};
      return out->type == ValueType::kBytes || IsValidUtf8(out->str);
    case Tag(2, WireType::kVarint):
    case Tag(3, WireType::kVarint): {
      uint64_t v;
      if (!VarintUpTo(p + 1, end, &v)) return false;
      *out = p[0] == Tag(2, WireType::kVarint) ? ValueRow{ValueType::kBool, {}, v != 0 ? 1u : 0u}
                                               : ValueRow{ValueType::kInt, {}, v};
      return true;
    }
    case Tag(4, WireType::kFixed64):
      if (n != 9) return false;
      out->type = ValueType::kDouble;
      std::memcpy(&out->bits, p + 1, 8);
      return true;
    default:
      return false;
  }
}

// Fast path for the KeyValue shape every SDK emits — key (field 1, length
// < 128) then a scalar value (field 2, length < 128) — without per-field
// calls. Returns false, having stored nothing, on any other shape or on
// invalid UTF-8; the full decoder then decodes (and reports) it.
inline bool SimpleKeyValue(std::string_view payload, std::string_view* key, ValueRow* value) {
  const auto* p = reinterpret_cast<const uint8_t*>(payload.data());
  const uint8_t* end = p + payload.size();
  if (end - p < 2 || p[0] != Tag(1, WireType::kLen) || p[1] >= 0x80) return false;
  const size_t key_len = p[1];
  p += 2;
  if (key_len > static_cast<size_t>(end - p)) return false;
  const std::string_view k(reinterpret_cast<const char*>(p), key_len);
  p += key_len;
  ValueRow v;
  if (p != end) {
    if (end - p < 2 || p[0] != Tag(2, WireType::kLen) || p[1] >= 0x80 || p[1] != end - p - 2) {
      return false;
    }
    if (!SimpleAnyValue(p + 2, end, &v)) return false;
  }
  if (!IsValidUtf8(k)) return false;
  *key = k;
  *value = v;
  return true;
}

}  // namespace

bool AppendKeyValue(DecodeContext& ctx, std::string_view payload, BatchBase* b,
                    AttributeColumns* table) {
  std::string_view key;
  ValueRow value;
  if (!SimpleKeyValue(payload, &key, &value) &&
      !DecodeKeyValueFields(ctx, payload, 1, b, &key, &value)) {
    return false;
  }
  table->Append({key, value});
  return true;
}

// ------------------------------------------------------- Resource & Scope

namespace {

constexpr std::string_view kResourceFields[] = {"", "attributes", "dropped_attributes_count",
                                                "entity_refs"};
constexpr std::string_view kEntityRefFields[] = {"", "schema_url", "type", "id_keys",
                                                 "description_keys"};
constexpr std::string_view kScopeFields[] = {"", "name", "version", "attributes",
                                             "dropped_attributes_count"};

// Decodes an EntityRef and appends its row. id_keys and description_keys may
// interleave on the wire, so both are counted first and their rows reserved
// as two contiguous runs of b->entity_keys.
[[nodiscard]] bool DecodeEntityRef(DecodeContext& ctx, std::string_view payload, BatchBase* b) {
  uint32_t id_count = 0;
  uint32_t description_count = 0;
  WireReader scan(payload);
  while (!scan.done()) {
    uint32_t tag;
    if (!scan.ReadTag(&tag)) return ctx.FailWire(scan);
    if (tag == Tag(3, WireType::kLen)) ++id_count;
    if (tag == Tag(4, WireType::kLen)) ++description_count;
    if (!scan.SkipField(tag)) return ctx.FailWire(scan);
  }
  const size_t id_begin = b->entity_keys.size();
  const size_t description_begin = id_begin + id_count;
  b->entity_keys.resize(description_begin + description_count);
  std::string_view schema_url;
  std::string_view type;
  uint32_t ids = 0;
  uint32_t descriptions = 0;
  WireReader r(payload);
  while (!r.done()) {
    uint32_t tag;
    if (!r.ReadTag(&tag)) return ctx.FailWire(r);
    switch (tag) {
      case Tag(1, WireType::kLen):
        if (!GetString(ctx, r, "schema_url", &schema_url)) return false;
        break;
      case Tag(2, WireType::kLen):
        if (!GetString(ctx, r, "type", &type)) return false;
        break;
      case Tag(3, WireType::kLen):
        if (!GetString(ctx, r, {}, &b->entity_keys[id_begin + ids])) {
          return ctx.In("id_keys", ids);
        }
        ++ids;
        break;
      case Tag(4, WireType::kLen):
        if (!GetString(ctx, r, {}, &b->entity_keys[description_begin + descriptions])) {
          return ctx.In("description_keys", descriptions);
        }
        ++descriptions;
        break;
      default:
        if (!SkipOrReject(ctx, r, tag, kEntityRefFields)) return false;
    }
  }
  b->entity_refs.Append({schema_url, type, RangeFrom(id_begin, description_begin),
                         RangeFrom(description_begin, description_begin + description_count)});
  return true;
}

}  // namespace

uint32_t AppendResourceRow(BatchBase* b) {
  ResourceRow row;
  row.attributes = Range{static_cast<uint32_t>(b->resource_attributes.size()), 0};
  row.entity_refs = Range{static_cast<uint32_t>(b->entity_refs.size()), 0};
  return b->resources.Append(row);
}

bool DecodeResource(DecodeContext& ctx, std::string_view payload, BatchBase* b, uint32_t row) {
  const size_t attributes_begin = b->resource_attributes.size();
  const size_t refs_begin = b->entity_refs.size();
  WireReader r(payload);
  while (!r.done()) {
    uint32_t tag;
    if (!r.ReadTag(&tag)) return ctx.FailWire(r);
    switch (tag) {
      case Tag(1, WireType::kLen):
        if (!GetAttribute(ctx, r, "attributes", b, &b->resource_attributes, attributes_begin)) {
          return false;
        }
        break;
      case Tag(2, WireType::kVarint): {
        uint64_t v;
        if (!GetVarint(ctx, r, "dropped_attributes_count", &v)) return false;
        b->resources.dropped_attributes_count[row] = VarintToUint32(v);
        break;
      }
      case Tag(3, WireType::kLen): {
        const size_t index = b->entity_refs.size() - refs_begin;
        std::string_view sub;
        if (!r.ReadLen(&sub)) return ctx.FailWire(r, "entity_refs", index);
        if (!DecodeEntityRef(ctx, sub, b)) return ctx.In("entity_refs", index);
        break;
      }
      default:
        if (!SkipOrReject(ctx, r, tag, kResourceFields)) return false;
    }
  }
  b->resources.attributes[row] = RangeFrom(attributes_begin, b->resource_attributes.size());
  b->resources.entity_refs[row] = RangeFrom(refs_begin, b->entity_refs.size());
  return true;
}

uint32_t AppendScopeRow(BatchBase* b, uint32_t resource) {
  ScopeRow row;
  row.resource = resource;
  row.attributes = Range{static_cast<uint32_t>(b->scope_attributes.size()), 0};
  return b->scopes.Append(row);
}

bool DecodeScope(DecodeContext& ctx, std::string_view payload, BatchBase* b, uint32_t row) {
  const size_t attributes_begin = b->scope_attributes.size();
  ScopeColumns& scopes = b->scopes;
  WireReader r(payload);
  while (!r.done()) {
    uint32_t tag;
    if (!r.ReadTag(&tag)) return ctx.FailWire(r);
    switch (tag) {
      case Tag(1, WireType::kLen):
        if (!GetString(ctx, r, "name", &scopes.name[row])) return false;
        break;
      case Tag(2, WireType::kLen):
        if (!GetString(ctx, r, "version", &scopes.version[row])) return false;
        break;
      case Tag(3, WireType::kLen):
        if (!GetAttribute(ctx, r, "attributes", b, &b->scope_attributes, attributes_begin)) {
          return false;
        }
        break;
      case Tag(4, WireType::kVarint): {
        uint64_t v;
        if (!GetVarint(ctx, r, "dropped_attributes_count", &v)) return false;
        scopes.dropped_attributes_count[row] = VarintToUint32(v);
        break;
      }
      default:
        if (!SkipOrReject(ctx, r, tag, kScopeFields)) return false;
    }
  }
  scopes.attributes[row] = RangeFrom(attributes_begin, b->scope_attributes.size());
  return true;
}

}  // namespace strata::otlp::proto
