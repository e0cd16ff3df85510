#include "storage/table/resource_scope_columns.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "common/check.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "otlp/any_value_codec.h"

namespace strata::storage {

using parquet::ColumnSpec;
using parquet::ColumnVector;
using parquet::ListRange;
using parquet::PhysicalType;

// ------------------------------------------------------ resource and scope

void AppendResourceScopeSpecs(std::vector<ColumnSpec>* specs) {
  specs->push_back(ColumnSpec::Integer("resource_index", 32, false));
  specs->push_back(ColumnSpec::String("resource_schema_url"));
  specs->push_back(ColumnSpec::Integer("resource_dropped_attributes_count", 32, false));
  AppendAttributeFamilySpecs("resource_attr", specs);
  specs->push_back(ColumnSpec::List(ColumnSpec::String("resource_entity_schema_url")));
  specs->push_back(ColumnSpec::List(ColumnSpec::String("resource_entity_type")));
  AppendElementCountSpec("resource_entity_id_key_count", specs);
  specs->push_back(ColumnSpec::List(ColumnSpec::String("resource_entity_id_keys")));
  AppendElementCountSpec("resource_entity_description_key_count", specs);
  specs->push_back(ColumnSpec::List(ColumnSpec::String("resource_entity_description_keys")));
  specs->push_back(ColumnSpec::Integer("scope_index", 32, false, true));
  specs->push_back(ColumnSpec::String("scope_name", true));
  specs->push_back(ColumnSpec::String("scope_version", true));
  specs->push_back(ColumnSpec::String("scope_schema_url", true));
  specs->push_back(ColumnSpec::Integer("scope_dropped_attributes_count", 32, false, true));
  AppendAttributeFamilySpecs("scope_attr", specs);
}

ResourceScopeWriter::ResourceScopeWriter()
    : resource_index_(PhysicalType::kInt32),
      resource_schema_url_(PhysicalType::kByteArray),
      resource_dropped_(PhysicalType::kInt32),
      entity_schema_url_(ColumnVector::List(PhysicalType::kByteArray)),
      entity_type_(ColumnVector::List(PhysicalType::kByteArray)),
      entity_id_key_count_(ColumnVector::List(PhysicalType::kInt32)),
      entity_id_keys_(ColumnVector::List(PhysicalType::kByteArray)),
      entity_description_key_count_(ColumnVector::List(PhysicalType::kInt32)),
      entity_description_keys_(ColumnVector::List(PhysicalType::kByteArray)),
      scope_index_(PhysicalType::kInt32),
      scope_name_(PhysicalType::kByteArray),
      scope_version_(PhysicalType::kByteArray),
      scope_schema_url_(PhysicalType::kByteArray),
      scope_dropped_(PhysicalType::kInt32) {}

void ResourceScopeWriter::Reserve(size_t rows) {
  for (ColumnVector* c :
       {&resource_index_, &resource_schema_url_, &resource_dropped_, &scope_index_, &scope_name_,
        &scope_version_, &scope_schema_url_, &scope_dropped_}) {
    c->Reserve(rows);
  }
  entity_lists_.reserve(rows);
  entity_id_keys_.lists.reserve(rows);
  entity_description_keys_.lists.reserve(rows);
  resource_attributes_.Reserve(rows, 0);
  scope_attributes_.Reserve(rows, 0);
}

uint32_t ResourceScopeWriter::AddBatch(const otlp::BatchBase& batch) {
  BatchState state;
  state.batch = &batch;
  state.resource_base = next_resource_base_;
  state.scope_base = next_scope_base_;
  state.resources.resize(batch.resources.size());
  state.scopes.resize(batch.scopes.size());
  next_resource_base_ += static_cast<uint32_t>(batch.resources.size());
  next_scope_base_ += static_cast<uint32_t>(batch.scopes.size());
  batches_.push_back(std::move(state));
  return static_cast<uint32_t>(batches_.size() - 1);
}

uint32_t ResourceScopeWriter::AddBatch(const otlp::BatchBase& batch,
                                       std::vector<uint32_t> resource_index,
                                       std::vector<uint32_t> scope_index) {
  STRATA_CHECK(
      resource_index.size() == batch.resources.size() && scope_index.size() == batch.scopes.size(),
      "one file index per resource and scope row");
  BatchState state;
  state.batch = &batch;
  state.resource_index = std::move(resource_index);
  state.scope_index = std::move(scope_index);
  state.resources.resize(batch.resources.size());
  state.scopes.resize(batch.scopes.size());
  batches_.push_back(std::move(state));
  return static_cast<uint32_t>(batches_.size() - 1);
}

void ResourceScopeWriter::BuildResource(const otlp::BatchBase& b, ResourceElements* cache,
                                        uint32_t resource) {
  cache->built = true;
  // The attribute elements, written once; every row of the resource shares them.
  cache->attributes =
      resource_attributes_.AddElements(b, b.resource_attributes, b.resources.attributes[resource]);
  const otlp::Range refs = b.resources.entity_refs[resource];
  STRATA_CHECK(refs.end() <= b.entity_refs.size(), "entity ref range outside its table");
  cache->entities = {entity_type_.offsets.size() - 1, refs.count};
  cache->id_keys = {entity_id_keys_.offsets.size() - 1, 0};
  cache->description_keys = {entity_description_keys_.offsets.size() - 1, 0};
  for (uint32_t e = refs.begin; e < refs.end(); ++e) {
    PushBytes(entity_schema_url_, b.entity_refs.schema_url[e]);
    PushBytes(entity_type_, b.entity_refs.type[e]);
    const otlp::Range ids = b.entity_refs.id_keys[e];
    const otlp::Range descriptions = b.entity_refs.description_keys[e];
    STRATA_CHECK(ids.end() <= b.entity_keys.size() && descriptions.end() <= b.entity_keys.size(),
                 "entity key range outside its table");
    entity_id_key_count_.int32s.push_back(static_cast<int32_t>(ids.count));
    entity_description_key_count_.int32s.push_back(static_cast<int32_t>(descriptions.count));
    for (uint32_t k = ids.begin; k < ids.end(); ++k) PushBytes(entity_id_keys_, b.entity_keys[k]);
    for (uint32_t k = descriptions.begin; k < descriptions.end(); ++k) {
      PushBytes(entity_description_keys_, b.entity_keys[k]);
    }
    cache->id_keys.count += ids.count;
    cache->description_keys.count += descriptions.count;
  }
}

void ResourceScopeWriter::AppendRow(uint32_t batch, uint32_t resource,
                                    std::optional<uint32_t> scope) {
  STRATA_CHECK(batch < batches_.size(), "batch number not registered");
  BatchState& state = batches_[batch];
  const otlp::BatchBase& b = *state.batch;
  STRATA_CHECK(resource < b.resources.size(), "resource row out of range");
  ResourceElements& rc = state.resources[resource];
  if (!rc.built) BuildResource(b, &rc, resource);
  resource_index_.int32s.push_back(static_cast<int32_t>(file_resource_index(batch, resource)));
  PushBytes(resource_schema_url_, b.resources.schema_url[resource]);
  resource_dropped_.int32s.push_back(
      static_cast<int32_t>(b.resources.dropped_attributes_count[resource]));
  resource_attributes_.AppendSharedRow(rc.attributes);
  entity_lists_.push_back(rc.entities);
  entity_id_keys_.lists.push_back(rc.id_keys);
  entity_description_keys_.lists.push_back(rc.description_keys);

  if (!scope.has_value()) {
    for (ColumnVector* c :
         {&scope_index_, &scope_name_, &scope_version_, &scope_schema_url_, &scope_dropped_}) {
      c->AppendNull();
    }
    scope_attributes_.AppendEmptyRow();
    return;
  }
  const uint32_t s = *scope;
  STRATA_CHECK(s < b.scopes.size() && b.scopes.resource[s] == resource,
               "scope row out of range or of another resource");
  ScopeElements& sc = state.scopes[s];
  if (!sc.built) {
    sc.built = true;
    sc.attributes = scope_attributes_.AddElements(b, b.scope_attributes, b.scopes.attributes[s]);
  }
  scope_attributes_.AppendSharedRow(sc.attributes);
  scope_index_.AppendInt32(static_cast<int32_t>(file_scope_index(batch, s)));
  scope_name_.AppendBytes(b.scopes.name[s]);
  scope_version_.AppendBytes(b.scopes.version[s]);
  scope_schema_url_.AppendBytes(b.scopes.schema_url[s]);
  scope_dropped_.AppendInt32(static_cast<int32_t>(b.scopes.dropped_attributes_count[s]));
}

template <typename ColumnFn, typename FamilyFn>
void ResourceScopeWriter::VisitInOrder(ColumnFn&& column, FamilyFn&& family) {
  // The four per-entity columns list the same entities per row.
  const parquet::ListRanges entities(std::move(entity_lists_));
  entity_lists_ = {};
  for (ColumnVector* c : {&entity_schema_url_, &entity_type_, &entity_id_key_count_,
                          &entity_description_key_count_}) {
    c->lists = entities;
  }
  for (ColumnVector* c : {&resource_index_, &resource_schema_url_, &resource_dropped_}) column(c);
  family(resource_attributes_);
  for (ColumnVector* c :
       {&entity_schema_url_, &entity_type_, &entity_id_key_count_, &entity_id_keys_,
        &entity_description_key_count_, &entity_description_keys_, &scope_index_, &scope_name_,
        &scope_version_, &scope_schema_url_, &scope_dropped_}) {
    column(c);
  }
  family(scope_attributes_);
}

void ResourceScopeWriter::ExposeRows(std::vector<const ColumnVector*>* out) {
  VisitInOrder([&](ColumnVector* c) { out->push_back(c); },
               [&](AttributeFamilyWriter& family) { family.ExposeRows(out); });
}

void ResourceScopeWriter::ClearRows() {
  for (ColumnVector* c :
       {&resource_index_, &resource_schema_url_, &resource_dropped_, &scope_index_, &scope_name_,
        &scope_version_, &scope_schema_url_, &scope_dropped_}) {
    c->Clear();
  }
  for (ColumnVector* c :
       {&entity_schema_url_, &entity_type_, &entity_id_key_count_, &entity_id_keys_,
        &entity_description_key_count_, &entity_description_keys_}) {
    c->ClearLists();
  }
  resource_attributes_.ClearRows();
  scope_attributes_.ClearRows();
  entity_lists_.reserve(resource_index_.int32s.capacity());
}

void ResourceScopeWriter::MoveColumnsTo(std::vector<ColumnVector>* out) {
  VisitInOrder([&](ColumnVector* c) { out->push_back(std::move(*c)); },
               [&](AttributeFamilyWriter& family) { family.MoveColumnsTo(out); });
  *this = ResourceScopeWriter();
}

// ------------------------------------------------ resource and scope, read

namespace {

// Column offsets within the resource and scope columns.
enum ResourceScopeColumn : int {
  kResourceIndex = 0,
  kResourceSchemaUrl = 1,
  kResourceDropped = 2,
  kResourceAttributes = 3,
  kEntitySchemaUrl = 10,
  kEntityType = 11,
  kEntityIdKeyCount = 12,
  kEntityIdKeys = 13,
  kEntityDescriptionKeyCount = 14,
  kEntityDescriptionKeys = 15,
  kScopeIndex = 16,
  kScopeName = 17,
  kScopeVersion = 18,
  kScopeSchemaUrl = 19,
  kScopeDropped = 20,
  kScopeAttributes = 21,
};
static_assert(kScopeAttributes + kAttributeFamilyColumns == kResourceScopeColumns);
static_assert(kResourceIndex == kResourceIndexOffset && kScopeIndex == kScopeIndexOffset);

// For each index 0..max of an index column (null rows skipped), the first
// row holding it. DataLoss unless the indexes are dense.
absl::StatusOr<std::vector<uint32_t>> FirstRows(const ColumnVector& index, std::string_view column,
                                                std::string_view file_name) {
  const size_t rows = index.size();
  std::vector<uint32_t> first;
  for (size_t r = 0; r < rows; ++r) {
    if (index.is_null(r)) continue;
    const auto value = static_cast<uint32_t>(index.int32s[r]);
    // Dense indexes never exceed the row count; checking first keeps a
    // corrupt value from sizing the vector.
    if (value >= rows) {
      return ColumnDataLoss(file_name, column, r,
                            fmt::format("index {} is not below the row count {}", value, rows));
    }
    if (value >= first.size()) first.resize(value + 1, UINT32_MAX);
    if (first[value] == UINT32_MAX) first[value] = static_cast<uint32_t>(r);
  }
  for (size_t i = 0; i < first.size(); ++i) {
    if (first[i] == UINT32_MAX) {
      return absl::DataLossError(
          fmt::format("{}: column '{}': indexes are not dense, {} is missing below {}", file_name,
                      column, i, first.size() - 1));
    }
  }
  return first;
}

// The entity refs of the resource on row `row`, appended to the batch.
absl::StatusOr<otlp::Range> ReadEntityRefs(std::span<ColumnVector> c, size_t row,
                                           const std::string_view* views,
                                           std::string_view file_name, otlp::BatchBase* batch) {
  const uint64_t refs = c[kEntityType].lists[row].count;
  for (int k : {kEntitySchemaUrl, kEntityIdKeyCount, kEntityDescriptionKeyCount}) {
    if (c[k].lists[row].count != refs) {
      return ColumnDataLoss(file_name,
                            k == kEntitySchemaUrl    ? "resource_entity_schema_url"
                            : k == kEntityIdKeyCount ? "resource_entity_id_key_count"
                                                     : "resource_entity_description_key_count",
                            row, "length differs from resource_entity_type");
    }
  }
  const std::span<const uint32_t> id_counts = ListU32(c[kEntityIdKeyCount], row);
  const std::span<const uint32_t> description_counts = ListU32(c[kEntityDescriptionKeyCount], row);
  uint64_t id_total = 0, description_total = 0;
  for (uint32_t n : id_counts) id_total += n;
  for (uint32_t n : description_counts) description_total += n;
  if (id_total != c[kEntityIdKeys].lists[row].count) {
    return ColumnDataLoss(file_name, "resource_entity_id_keys", row,
                          "length differs from the sum of resource_entity_id_key_count");
  }
  if (description_total != c[kEntityDescriptionKeys].lists[row].count) {
    return ColumnDataLoss(file_name, "resource_entity_description_keys", row,
                          "length differs from the sum of resource_entity_description_key_count");
  }
  // The views are into the columns, which the batch does not keep.
  auto copy = [batch](std::string_view bytes) { return batch->arena.Copy(bytes); };
  const otlp::Range out{static_cast<uint32_t>(batch->entity_refs.size()),
                        static_cast<uint32_t>(refs)};
  uint64_t next_id = c[kEntityIdKeys].lists[row].begin;
  uint64_t next_description = c[kEntityDescriptionKeys].lists[row].begin;
  for (uint64_t e = 0; e < refs; ++e) {
    otlp::EntityRefRow ref;
    ref.schema_url = copy(BytesAt(c[kEntitySchemaUrl], views[kEntitySchemaUrl],
                                  c[kEntitySchemaUrl].lists[row].begin + e));
    ref.type =
        copy(BytesAt(c[kEntityType], views[kEntityType], c[kEntityType].lists[row].begin + e));
    ref.id_keys = {static_cast<uint32_t>(batch->entity_keys.size()), id_counts[e]};
    for (uint32_t k = 0; k < id_counts[e]; ++k) {
      batch->entity_keys.push_back(
          copy(BytesAt(c[kEntityIdKeys], views[kEntityIdKeys], next_id++)));
    }
    ref.description_keys = {static_cast<uint32_t>(batch->entity_keys.size()),
                            description_counts[e]};
    for (uint32_t k = 0; k < description_counts[e]; ++k) {
      batch->entity_keys.push_back(copy(
          BytesAt(c[kEntityDescriptionKeys], views[kEntityDescriptionKeys], next_description++)));
    }
    batch->entity_refs.Append(ref);
  }
  return out;
}

}  // namespace

absl::StatusOr<RowOwners> RebuildResourcesAndScopes(std::span<ColumnVector> c,
                                                    std::string_view file_name,
                                                    otlp::BatchBase* batch) {
  STRATA_CHECK(c.size() == kResourceScopeColumns, "resource and scope column count");
  const size_t rows = c[kResourceIndex].size();
  // Every row repeats its resource's and scope's columns, but the batch
  // needs them once per resource and scope: their strings are copied into
  // the batch's arena rather than the whole columns retained.
  std::string_view views[kScopeAttributes];
  for (int k : {kResourceSchemaUrl, kEntitySchemaUrl, kEntityType, kEntityIdKeys,
                kEntityDescriptionKeys, kScopeName, kScopeVersion, kScopeSchemaUrl}) {
    views[k] = c[k].bytes;
  }
  auto copy = [batch](std::string_view bytes) { return batch->arena.Copy(bytes); };
  STRATA_ASSIGN_OR_RETURN(const std::vector<uint32_t> resource_rows,
                          FirstRows(c[kResourceIndex], "resource_index", file_name));
  STRATA_ASSIGN_OR_RETURN(const std::vector<uint32_t> scope_rows,
                          FirstRows(c[kScopeIndex], "scope_index", file_name));
  STRATA_ASSIGN_OR_RETURN(
      AttributeFamilyReader resource_attributes,
      AttributeFamilyReader::Make(c.subspan(kResourceAttributes, kAttributeFamilyColumns),
                                  "resource_attr", file_name, batch,
                                  AttributeFamilyReader::StringOwnership::kCopyToArena));
  STRATA_ASSIGN_OR_RETURN(
      AttributeFamilyReader scope_attributes,
      AttributeFamilyReader::Make(c.subspan(kScopeAttributes, kAttributeFamilyColumns),
                                  "scope_attr", file_name, batch,
                                  AttributeFamilyReader::StringOwnership::kCopyToArena));

  const auto resource_base = static_cast<uint32_t>(batch->resources.size());
  const auto scope_base = static_cast<uint32_t>(batch->scopes.size());
  for (uint32_t row : resource_rows) {
    otlp::ResourceRow resource;
    STRATA_ASSIGN_OR_RETURN(resource.attributes,
                            resource_attributes.AppendRow(row, batch, &batch->resource_attributes));
    resource.dropped_attributes_count = static_cast<uint32_t>(c[kResourceDropped].int32s[row]);
    STRATA_ASSIGN_OR_RETURN(resource.entity_refs, ReadEntityRefs(c, row, views, file_name, batch));
    resource.schema_url = copy(BytesAt(c[kResourceSchemaUrl], views[kResourceSchemaUrl], row));
    batch->resources.Append(resource);
  }
  for (uint32_t row : scope_rows) {
    for (int k : {kScopeName, kScopeVersion, kScopeSchemaUrl, kScopeDropped}) {
      if (c[k].is_null(row)) {
        return ColumnDataLoss(file_name, "scope_name, scope_version, scope_schema_url", row,
                              "null on a row with a scope_index");
      }
    }
    otlp::ScopeRow scope;
    scope.resource = resource_base + static_cast<uint32_t>(c[kResourceIndex].int32s[row]);
    scope.name = copy(BytesAt(c[kScopeName], views[kScopeName], row));
    scope.version = copy(BytesAt(c[kScopeVersion], views[kScopeVersion], row));
    STRATA_ASSIGN_OR_RETURN(scope.attributes,
                            scope_attributes.AppendRow(row, batch, &batch->scope_attributes));
    scope.dropped_attributes_count = static_cast<uint32_t>(c[kScopeDropped].int32s[row]);
    scope.schema_url = copy(BytesAt(c[kScopeSchemaUrl], views[kScopeSchemaUrl], row));
    batch->scopes.Append(scope);
  }

  RowOwners owners;
  owners.resource.resize(rows);
  owners.scope.resize(rows);
  for (size_t r = 0; r < rows; ++r) {
    const auto resource = static_cast<uint32_t>(c[kResourceIndex].int32s[r]);
    owners.resource[r] = resource_base + resource;
    if (c[kScopeIndex].is_null(r)) {
      owners.scope[r] = RowOwners::kNoScope;
      continue;
    }
    const auto scope = static_cast<uint32_t>(c[kScopeIndex].int32s[r]);
    owners.scope[r] = scope_base + scope;
    if (batch->scopes.resource[scope_base + scope] != resource_base + resource) {
      return ColumnDataLoss(
          file_name, "scope_index", r,
          fmt::format("scope {} appears under resources {} and {}", scope,
                      batch->scopes.resource[scope_base + scope] - resource_base, resource));
    }
  }
  return owners;
}

std::vector<uint32_t> RenumberDense(ColumnVector* index) {
  // A range of many rows names few resources and scopes (a big trace's
  // spans name a handful): sort the distinct values, not every row's.
  absl::flat_hash_set<uint32_t> distinct;
  for (size_t r = 0; r < index->int32s.size(); ++r) {
    if (!index->is_null(r)) distinct.insert(static_cast<uint32_t>(index->int32s[r]));
  }
  std::vector<uint32_t> values(distinct.begin(), distinct.end());
  std::sort(values.begin(), values.end());
  for (size_t r = 0; r < index->int32s.size(); ++r) {
    if (index->is_null(r)) continue;
    const auto it =
        std::lower_bound(values.begin(), values.end(), static_cast<uint32_t>(index->int32s[r]));
    index->int32s[r] = static_cast<int32_t>(it - values.begin());
  }
  return values;
}

}  // namespace strata::storage
