#include "storage/table/promotion.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <utility>

#include "common/check.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "otlp/any_value_codec.h"

namespace strata::storage {

using parquet::ColumnSpec;
using parquet::ColumnVector;
using parquet::ListRange;
using parquet::PhysicalType;

// ------------------------------------------------------------ promotion

void PromotionMisses::Add(std::string_view key, uint64_t rows) {
  for (auto& [k, n] : counts_) {
    if (k == key) {
      n += rows;
      return;
    }
  }
  counts_.emplace_back(key, rows);
}

void PromotionMisses::AddTo(std::map<std::string, uint64_t>* out) const {
  for (const auto& [k, n] : counts_) (*out)[std::string(k)] += n;
}

namespace {

constexpr size_t kMaxPromotedKeyLength = 64;
constexpr size_t kMaxPromotedSources = 32;

// A key's first 8 bytes (zero-padded when shorter), compared before the rest.
uint64_t KeyHead(std::string_view key) {
  uint64_t head = 0;
  std::memcpy(&head, key.data(), std::min<size_t>(8, key.size()));
  return head;
}

}  // namespace

PromotionMatcher::PromotionMatcher(std::vector<PromotionRule> rules)
    : rules_(std::move(rules)), by_length_(kMaxPromotedKeyLength + 1) {
  for (size_t r = 0; r < rules_.size(); ++r) {
    for (size_t p = 0; p < rules_[r].keys.size(); ++p) {
      const std::string_view key = rules_[r].keys[p];
      STRATA_CHECK(key.size() <= kMaxPromotedKeyLength, "promoted key too long");
      const Source source{key, KeyHead(key), static_cast<uint32_t>(r),
                          static_cast<uint32_t>(sources_.size())};
      by_length_[key.size()].push_back(source);
      sources_.push_back(source);
    }
  }
  STRATA_CHECK(sources_.size() <= kMaxPromotedSources, "too many promoted source keys");
}

void PromotionMatcher::Match(const otlp::AttributeColumns& table, otlp::Range range,
                             std::vector<int64_t>* out,
                             std::vector<std::string_view>* missed) const {
  // first[slot] is the row of the slot's first occurrence where bit slot of
  // `found` is set, and unset otherwise.
  static_assert(kMaxPromotedSources <= 64);
  std::array<int64_t, kMaxPromotedSources> first;
  uint64_t found = 0;
  for (uint32_t i = range.begin; i < range.end(); ++i) {
    const std::string_view key = table.key[i];
    if (key.size() > kMaxPromotedKeyLength) continue;
    const std::vector<Source>& candidates = by_length_[key.size()];
    if (candidates.empty()) continue;
    const uint64_t head = KeyHead(key);
    for (const Source& s : candidates) {
      if (s.head != head || (found >> s.slot & 1) != 0) continue;
      if (key.size() <= 8 || std::memcmp(s.key.data() + 8, key.data() + 8, key.size() - 8) == 0) {
        first[s.slot] = i;
        found |= uint64_t{1} << s.slot;
        break;
      }
    }
  }
  out->assign(rules_.size(), -1);
  // Slots were numbered rule by rule, keys in priority order, so the found
  // slots in ascending order meet each rule's keys in priority order; a
  // rule's first key of the right type gives its value.
  for (; found != 0; found &= found - 1) {
    const int slot = std::countr_zero(found);
    const Source& source = sources_[slot];
    if ((*out)[source.rule] >= 0) continue;
    if (table.value.type[first[slot]] == rules_[source.rule].type) {
      (*out)[source.rule] = first[slot];
    } else {
      missed->push_back(source.key);
    }
  }
}

void AppendResourcePromotedSpecs(std::vector<ColumnSpec>* specs) {
  specs->push_back(ColumnSpec::String("service_name", true));
  specs->push_back(ColumnSpec::String("service_version", true));
  specs->push_back(ColumnSpec::String("deployment_environment", true));
}

ResourcePromotedWriter::ResourcePromotedWriter()
    : matcher_({{"service_name", {"service.name"}, otlp::ValueType::kString},
                {"service_version", {"service.version"}, otlp::ValueType::kString},
                {"deployment_environment",
                 {"deployment.environment.name", "deployment.environment"},
                 otlp::ValueType::kString}}) {
  for (ColumnVector& c : columns_) c = ColumnVector(PhysicalType::kByteArray);
}

void ResourcePromotedWriter::Reserve(size_t rows) {
  for (ColumnVector& c : columns_) {
    c.Reserve(rows);
    c.validity.reserve(rows);
  }
}

uint32_t ResourcePromotedWriter::AddBatch(const otlp::BatchBase& batch) {
  BatchState state;
  state.batch = &batch;
  state.resources.resize(batch.resources.size());
  batches_.push_back(std::move(state));
  return static_cast<uint32_t>(batches_.size() - 1);
}

void ResourcePromotedWriter::AppendRow(uint32_t batch, uint32_t resource, PromotionMisses* misses) {
  STRATA_CHECK(batch < batches_.size(), "batch number not registered");
  BatchState& state = batches_[batch];
  const otlp::BatchBase& b = *state.batch;
  STRATA_CHECK(resource < b.resources.size(), "resource row out of range");
  Derived& d = state.resources[resource];
  if (!d.built) {
    d.built = true;
    matcher_.Match(b.resource_attributes, b.resources.attributes[resource], &d.value_row,
                   &d.missed);
  }
  for (int i = 0; i < kResourcePromotedColumns; ++i) {
    const int64_t row = d.value_row[i];
    AppendOptionalString(&columns_[i], row < 0 ? std::nullopt
                                               : std::optional<std::string_view>(
                                                     b.resource_attributes.value.str[row]));
  }
  for (std::string_view key : d.missed) misses->Add(key);
}

void ResourcePromotedWriter::AppendNullRow() {
  for (ColumnVector& c : columns_) AppendOptionalString(&c, std::nullopt);
}

void ResourcePromotedWriter::ExposeRows(std::vector<const ColumnVector*>* out) const {
  for (const ColumnVector& c : columns_) out->push_back(&c);
}

void ResourcePromotedWriter::ClearRows() {
  for (ColumnVector& c : columns_) c.Clear();
}

void ResourcePromotedWriter::MoveColumnsTo(std::vector<ColumnVector>* out) {
  for (ColumnVector& c : columns_) {
    out->push_back(std::move(c));
    c = ColumnVector(PhysicalType::kByteArray);
  }
  batches_.clear();
  current_ = 0;
}

void AppendOptionalString(ColumnVector* column, std::optional<std::string_view> value) {
  if (value.has_value()) {
    column->validity.push_back(1);
    PushBytes(*column, *value);
  } else {
    PushNull(*column);
  }
}

}  // namespace strata::storage
