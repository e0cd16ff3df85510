#pragma once

// Promotion: well-known semantic-convention keys copied into columns of
// their own (docs/format/attributes.md, "Promoted columns").
// PromotionMatcher finds a table's promoted keys in a row's attributes;
// ResourcePromotedWriter builds the promoted resource columns
// (service_name, service_version, deployment_environment); PromotionMisses
// counts the rows whose value had a type its column cannot hold (meta.json
// `promotion_misses`).
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
#include "storage/table/table_file.h"

namespace strata::storage {

// ------------------------------------------------------------ promotion

// Counts, per promoted source key, the data rows where the key's first
// occurrence had a type the promoted column cannot hold (meta.json
// `promotion_misses`).
class PromotionMisses {
 public:
  void Add(std::string_view key, uint64_t rows = 1);
  // Adds every count into *out (meta.json's map).
  void AddTo(std::map<std::string, uint64_t>* out) const;

 private:
  // Keys are the static strings of a PromotionRule, so few and long-lived.
  std::vector<std::pair<std::string_view, uint64_t>> counts_;
};

// One promoted column: its source keys in priority order and the value type
// it holds (kString or kInt).
struct PromotionRule {
  std::string_view column;
  std::vector<std::string_view> keys;
  otlp::ValueType type = otlp::ValueType::kString;
};

// Finds, for several promoted columns at once, the value each takes from
// one attribute set in a single pass over the set (spans-parquet.md
// "Promoted columns", rules 2 and 3).
class PromotionMatcher {
 public:
  explicit PromotionMatcher(std::vector<PromotionRule> rules);

  const std::vector<PromotionRule>& rules() const { return rules_; }

  // For each rule i, (*out)[i] = the row of `table` within `range` whose
  // value the column takes, or -1 (out is resized to rules().size()). Each
  // miss (a source key whose first occurrence has the wrong type, met
  // before the column found its value) appends the key to *missed.
  void Match(const otlp::AttributeColumns& table, otlp::Range range, std::vector<int64_t>* out,
             std::vector<std::string_view>* missed) const;

 private:
  struct Source {
    std::string_view key;
    uint64_t head = 0;  // the key's first 8 bytes, zero-padded
    uint32_t rule = 0;
    uint32_t slot = 0;  // index into sources_ and the per-call first-occurrence array
  };
  std::vector<PromotionRule> rules_;
  // Sources grouped by key length (index = length, capped).
  std::vector<std::vector<Source>> by_length_;
  // Every source, by slot: rule by rule, each rule's keys in priority order.
  std::vector<Source> sources_;
};

// The promoted resource columns every table has, first among its promoted
// columns: service_name, service_version, deployment_environment (all
// optional strings).
inline constexpr int kResourcePromotedColumns = 3;
void AppendResourcePromotedSpecs(std::vector<parquet::ColumnSpec>* specs);

// Builds the promoted resource columns. Each resource's values are derived
// once; its misses count once per data row. Batches are registered as in
// ResourceScopeWriter (AddBatch + AppendRow(batch, ...), or BeginBatch +
// AppendRow(resource, ...) for one batch at a time).
class ResourcePromotedWriter {
 public:
  ResourcePromotedWriter();
  void Reserve(size_t rows);
  uint32_t AddBatch(const otlp::BatchBase& batch);
  void BeginBatch(const otlp::BatchBase& batch) { current_ = AddBatch(batch); }
  // A data row of resource row `resource` of batch number `batch` (counts
  // its misses into *misses).
  void AppendRow(uint32_t batch, uint32_t resource, PromotionMisses* misses);
  void AppendRow(uint32_t resource, PromotionMisses* misses) {
    AppendRow(current_, resource, misses);
  }
  // A placeholder row: all null.
  void AppendNullRow();
  // Appends the kResourcePromotedColumns columns to *out and resets.
  void MoveColumnsTo(std::vector<parquet::ColumnVector>* out);
  // Rows in chunks (AttributeFamilyWriter::ExposeRows): pointers to the
  // columns, then ClearRows forgets their rows (the matches made stay).
  void ExposeRows(std::vector<const parquet::ColumnVector*>* out) const;
  void ClearRows();

 private:
  struct Derived {
    bool built = false;
    std::vector<int64_t> value_row;  // per column: resource_attributes row or -1
    std::vector<std::string_view> missed;
  };
  struct BatchState {
    const otlp::BatchBase* batch = nullptr;
    std::vector<Derived> resources;
  };

  PromotionMatcher matcher_;
  std::vector<BatchState> batches_;
  uint32_t current_ = 0;
  std::array<parquet::ColumnVector, kResourcePromotedColumns> columns_;
};

// Appends `value` (present) or null to an optional string column.
void AppendOptionalString(parquet::ColumnVector* column, std::optional<std::string_view> value);

}  // namespace strata::storage
