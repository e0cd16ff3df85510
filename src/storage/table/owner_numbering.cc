#include "storage/table/owner_numbering.h"

#include <limits>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "common/check.h"
#include "common/little_endian.h"
#include "fmt/format.h"

namespace strata::storage {
namespace {

// Nested values deeper than this give no key: the owner is numbered as new.
constexpr uint32_t kMaxKeyDepth = 64;

// A key is the owner's content in one unambiguous byte string: fixed-width
// integers and length-prefixed strings, in a fixed field order.
void PutBytes(std::string* out, std::string_view s) {
  PutU64(*out, s.size());
  out->append(s.data(), s.size());
}

otlp::Range Children(uint64_t bits) {
  return {static_cast<uint32_t>(bits >> 32), static_cast<uint32_t>(bits)};
}

bool PutAttributes(const otlp::BatchBase& b, const otlp::AttributeColumns& table, otlp::Range r,
                   uint32_t depth, std::string* out);

bool PutValue(const otlp::BatchBase& b, const otlp::ValueColumns& values, size_t i, uint32_t depth,
              std::string* out) {
  const otlp::ValueType type = values.type[i];
  out->push_back(static_cast<char>(type));
  switch (type) {
    case otlp::ValueType::kString:
    case otlp::ValueType::kBytes:
      PutBytes(out, values.str[i]);
      return true;
    case otlp::ValueType::kArray: {
      const otlp::Range r = Children(values.bits[i]);
      if (depth >= kMaxKeyDepth || r.end() > b.nested_values.size()) return false;
      PutU64(*out, r.count);
      for (uint32_t j = r.begin; j < r.end(); ++j) {
        if (!PutValue(b, b.nested_values, j, depth + 1, out)) return false;
      }
      return true;
    }
    case otlp::ValueType::kKvList:
      return PutAttributes(b, b.nested_attributes, Children(values.bits[i]), depth + 1, out);
    default:
      PutU64(*out, values.bits[i]);
      return true;
  }
}

bool PutAttributes(const otlp::BatchBase& b, const otlp::AttributeColumns& table, otlp::Range r,
                   uint32_t depth, std::string* out) {
  if (depth >= kMaxKeyDepth || r.end() > table.size()) return false;
  PutU64(*out, r.count);
  for (uint32_t i = r.begin; i < r.end(); ++i) {
    PutBytes(out, table.key[i]);
    if (!PutValue(b, table.value, i, depth, out)) return false;
  }
  return true;
}

std::optional<std::string> ResourceKey(const otlp::BatchBase& b, uint32_t r) {
  std::string key;
  PutBytes(&key, b.resources.schema_url[r]);
  PutU64(key, b.resources.dropped_attributes_count[r]);
  if (!PutAttributes(b, b.resource_attributes, b.resources.attributes[r], 0, &key)) {
    return std::nullopt;
  }
  const otlp::Range refs = b.resources.entity_refs[r];
  if (refs.end() > b.entity_refs.size()) return std::nullopt;
  PutU64(key, refs.count);
  for (uint32_t e = refs.begin; e < refs.end(); ++e) {
    PutBytes(&key, b.entity_refs.schema_url[e]);
    PutBytes(&key, b.entity_refs.type[e]);
    for (const otlp::Range keys : {b.entity_refs.id_keys[e], b.entity_refs.description_keys[e]}) {
      if (keys.end() > b.entity_keys.size()) return std::nullopt;
      PutU64(key, keys.count);
      for (uint32_t k = keys.begin; k < keys.end(); ++k) PutBytes(&key, b.entity_keys[k]);
    }
  }
  return key;
}

// A scope's key starts with its resource's file index: equal scopes of two
// different resources stay two scopes.
std::optional<std::string> ScopeKey(const otlp::BatchBase& b, uint32_t s, uint32_t resource) {
  std::string key;
  PutU64(key, resource);
  PutBytes(&key, b.scopes.name[s]);
  PutBytes(&key, b.scopes.version[s]);
  PutBytes(&key, b.scopes.schema_url[s]);
  PutU64(key, b.scopes.dropped_attributes_count[s]);
  if (!PutAttributes(b, b.scope_attributes, b.scopes.attributes[s], 0, &key)) return std::nullopt;
  return key;
}

}  // namespace

uint32_t OwnerNumbering::Find(absl::flat_hash_map<std::string, uint32_t>& seen,
                              std::optional<std::string> key, uint32_t* next) {
  if (key.has_value()) {
    if (const auto it = seen.find(*key); it != seen.end()) return it->second;
  }
  const uint32_t index = (*next)++;
  if (key.has_value() && key->size() <= key_budget_ - key_bytes_) {
    key_bytes_ += key->size();
    seen.emplace(std::move(*key), index);
  }
  return index;
}

absl::StatusOr<OwnerNumbering::Assigned> OwnerNumbering::Number(const otlp::BatchBase& b) {
  constexpr uint64_t kMax = std::numeric_limits<int32_t>::max();
  if (next_resource_ + uint64_t{b.resources.size()} > kMax ||
      next_scope_ + uint64_t{b.scopes.size()} > kMax) {
    return absl::InvalidArgumentError(
        fmt::format("too many resources or scopes for one file ({} and {} so far)", next_resource_,
                    next_scope_));
  }
  Assigned out;
  out.resource.reserve(b.resources.size());
  out.scope.reserve(b.scopes.size());
  for (uint32_t r = 0; r < b.resources.size(); ++r) {
    out.resource.push_back(Find(resources_, ResourceKey(b, r), &next_resource_));
  }
  for (uint32_t s = 0; s < b.scopes.size(); ++s) {
    const uint32_t parent = b.scopes.resource[s];
    STRATA_CHECK(parent < out.resource.size(), "scope of a resource outside the batch");
    out.scope.push_back(Find(scopes_, ScopeKey(b, s, out.resource[parent]), &next_scope_));
  }
  return out;
}

}  // namespace strata::storage
