#pragma once

// The resource and scope columns every table starts with
// (spans-parquet.md, "Resource and scope"): ResourceScopeWriter numbers
// resources and scopes consecutively across the batches added
// (AddBatch once per input batch, then AppendRow(batch, resource, scope)
// per file row; rows of different batches may interleave), and
// RebuildResourcesAndScopes reads them back into a batch.
//
// Errors: every problem with bytes read from a file is DataLoss naming the
// file and the check that failed. Writers only fail when the batch breaks
// batch.h's invariants the writer depends on (Internal) or Parquet writing
// fails. Thread-safety: writers and readers have a single owner; the free
// functions are reentrant.

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "otlp/batch.h"
#include "parquet/column_vector.h"
#include "parquet/file_reader.h"
#include "parquet/file_writer.h"
#include "storage/format/batch_meta.h"
#include "storage/table/attribute_family.h"

namespace strata::storage {

// ------------------------------------------------------ resource and scope

// The resource and scope columns of spans-parquet.md "Resource and scope",
// in order: resource_index, resource_schema_url,
// resource_dropped_attributes_count, resource_attr_* (7),
// resource_entity_schema_url, resource_entity_type,
// resource_entity_id_key_count, resource_entity_id_keys,
// resource_entity_description_key_count, resource_entity_description_keys,
// scope_index, scope_name, scope_version, scope_schema_url,
// scope_dropped_attributes_count, scope_attr_* (7).
inline constexpr int kResourceScopeColumns = 3 + 7 + 6 + 5 + 7;
// Where resource_index and scope_index are among them.
inline constexpr int kResourceIndexOffset = 0;
inline constexpr int kScopeIndexOffset = 16;
void AppendResourceScopeSpecs(std::vector<parquet::ColumnSpec>* specs);

// Builds the resource and scope columns. Input batches are numbered
// consecutively in the order they are added: resource row r of the k-th
// added batch is file resource index (resources of batches 0..k-1) + r,
// likewise scopes. Each resource's and scope's attribute and entity lists
// are stored once per file and shared by every row that names them.
//
// Rows of different batches may interleave (a sorted table): add every
// batch first with AddBatch and pass its number to AppendRow. BeginBatch +
// the two-argument AppendRow is the same for a writer that emits one batch's
// rows at a time.
class ResourceScopeWriter {
 public:
  ResourceScopeWriter();

  void Reserve(size_t rows);
  // Numbers the first resource and scope of the first batch added as
  // `resource` and `scope` instead of 0 (a streaming writer's later pieces
  // continue the file's numbering). Call before AddBatch.
  void StartNumberingAt(uint32_t resource, uint32_t scope) {
    next_resource_base_ = resource;
    next_scope_base_ = scope;
  }
  // Registers the next input batch (kept by pointer until MoveColumnsTo)
  // and returns its number.
  uint32_t AddBatch(const otlp::BatchBase& batch);
  // Registers a batch whose resource row r is file resource index
  // resource_index[r] and scope row s file scope index scope_index[s]
  // (one entry per row of the batch), for a writer that places rows of one
  // file's resources in several batches (compaction's merge reads a file
  // in row ranges). Does not move the consecutive numbering above on.
  uint32_t AddBatch(const otlp::BatchBase& batch, std::vector<uint32_t> resource_index,
                    std::vector<uint32_t> scope_index);
  // One row for resource row `resource` and, unless nullopt (a placeholder
  // for a resource without scopes), scope row `scope` (a scope of that
  // resource) of batch number `batch`.
  void AppendRow(uint32_t batch, uint32_t resource, std::optional<uint32_t> scope);

  // AddBatch, remembering the batch as the current one.
  void BeginBatch(const otlp::BatchBase& batch) { current_ = AddBatch(batch); }
  // AppendRow for the current batch.
  void AppendRow(uint32_t resource, std::optional<uint32_t> scope) {
    AppendRow(current_, resource, scope);
  }

  // File index of a resource / scope row of batch number `batch`.
  uint32_t file_resource_index(uint32_t batch, uint32_t resource) const {
    const BatchState& state = batches_[batch];
    return state.resource_index.empty() ? state.resource_base + resource
                                        : state.resource_index[resource];
  }
  uint32_t file_scope_index(uint32_t batch, uint32_t scope) const {
    const BatchState& state = batches_[batch];
    return state.scope_index.empty() ? state.scope_base + scope : state.scope_index[scope];
  }
  // The same for the current batch.
  uint32_t file_resource_index(uint32_t resource) const {
    return file_resource_index(current_, resource);
  }
  uint32_t file_scope_index(uint32_t scope) const { return file_scope_index(current_, scope); }

  size_t rows() const { return resource_index_.size(); }
  // Appends the kResourceScopeColumns columns, in spec order, to *out and
  // resets the writer (registered batches are forgotten).
  void MoveColumnsTo(std::vector<parquet::ColumnVector>* out);
  // Rows in chunks, as AttributeFamilyWriter::ExposeRows / ClearRows: the
  // resources' and scopes' elements, written once each, stay.
  void ExposeRows(std::vector<const parquet::ColumnVector*>* out);
  void ClearRows();

 private:
  struct ResourceElements {
    bool built = false;
    FamilyElements attributes;
    parquet::ListRange entities;  // into the four per-entity element columns
    parquet::ListRange id_keys;   // into resource_entity_id_keys
    parquet::ListRange description_keys;
  };
  struct ScopeElements {
    bool built = false;
    FamilyElements attributes;
  };
  struct BatchState {
    const otlp::BatchBase* batch = nullptr;
    uint32_t resource_base = 0;
    uint32_t scope_base = 0;
    // When not empty, the file index of each resource / scope row (the
    // bases are then unused).
    std::vector<uint32_t> resource_index;
    std::vector<uint32_t> scope_index;
    std::vector<ResourceElements> resources;
    std::vector<ScopeElements> scopes;
  };
  void BuildResource(const otlp::BatchBase& b, ResourceElements* cache, uint32_t resource);
  // Gives the per-entity columns their lists, then calls column(c) for each
  // flat or list column and family(f) for each attribute family, in spec
  // order (MoveColumnsTo and ExposeRows).
  template <typename ColumnFn, typename FamilyFn>
  void VisitInOrder(ColumnFn&& column, FamilyFn&& family);

  std::vector<BatchState> batches_;
  uint32_t current_ = 0;
  uint32_t next_resource_base_ = 0;
  uint32_t next_scope_base_ = 0;

  parquet::ColumnVector resource_index_;
  parquet::ColumnVector resource_schema_url_;
  parquet::ColumnVector resource_dropped_;
  AttributeFamilyWriter resource_attributes_;
  // Per row: its entities, in the four per-entity element columns
  // (MoveColumnsTo gives each of them these lists).
  std::vector<parquet::ListRange> entity_lists_;
  parquet::ColumnVector entity_schema_url_;
  parquet::ColumnVector entity_type_;
  parquet::ColumnVector entity_id_key_count_;
  parquet::ColumnVector entity_id_keys_;
  parquet::ColumnVector entity_description_key_count_;
  parquet::ColumnVector entity_description_keys_;
  parquet::ColumnVector scope_index_;
  parquet::ColumnVector scope_name_;
  parquet::ColumnVector scope_version_;
  parquet::ColumnVector scope_schema_url_;
  parquet::ColumnVector scope_dropped_;
  AttributeFamilyWriter scope_attributes_;
};

// Where each file row's resource and scope ended up in the rebuilt batch.
struct RowOwners {
  // Per file row: the batch's resource row.
  std::vector<uint32_t> resource;
  // Per file row: the batch's scope row, or kNoScope (kind-2 placeholders).
  std::vector<uint32_t> scope;
  static constexpr uint32_t kNoScope = UINT32_MAX;
};

// Rebuilds batch->resources, resource_attributes, entity_refs, entity_keys,
// scopes and scope_attributes from the kResourceScopeColumns read-back
// columns starting at columns[first]. Strings are copied into the batch's
// arena (once per resource and scope), so the batch keeps nothing of these
// per-row columns. Resources and scopes are
// appended in index order, each from the first row naming it. DataLoss
// when an index is not dense (0..max all present), a scope index appears
// with two resource indexes, or a family or entity list is malformed.
[[nodiscard]] absl::StatusOr<RowOwners> RebuildResourcesAndScopes(
    std::span<parquet::ColumnVector> columns, std::string_view file_name, otlp::BatchBase* batch);

// Renumbers an index column (resource_index, scope_index, metric_index) of
// a row range so its values are dense again (a range names only some of
// the file's resources, and RebuildResourcesAndScopes requires 0..max),
// keeping their order, and returns the original values: renumbered value
// i was returned[i]. Null rows are left alone.
std::vector<uint32_t> RenumberDense(parquet::ColumnVector* index);

// The file's index of each resource and each scope a row-range read
// appended, in the order appended (RenumberDense's returned values).
struct FileOwnerIndexes {
  std::vector<uint32_t> resource;
  std::vector<uint32_t> scope;
};

}  // namespace strata::storage
