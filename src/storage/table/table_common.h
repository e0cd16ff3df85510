#pragma once

// Column code shared by strata's three Parquet tables (spans, logs, metrics;
// docs/format/spans-parquet.md, logs-parquet.md, metrics-parquet.md): the
// seven-column attribute family of docs/format/attributes.md, the resource
// and scope columns every table starts with, the promoted resource columns,
// and the footer checks and writer options every table uses.
//
// What a table writer uses (metrics_table.cc follows the same recipe as
// spans_table.cc and logs_table.cc):
//   specs:   AppendRowKindSpec, AppendResourceScopeSpecs, AppendAttributeFamilySpecs
//            (per family, e.g. "attr", "metric_metadata", "exemplar_attr"),
//            AppendElementCountSpec ("exemplar_attr_count"),
//            AppendResourcePromotedSpecs (service_name, service_version,
//            deployment_environment; at the start of the promoted columns).
//   rows:    ResourceScopeWriter::AddBatch once per input batch (it renumbers
//            resources and scopes consecutively across inputs), then
//            AppendRow(batch, resource, scope) per file row (rows of different
//            batches may interleave); AttributeFamilyWriter::
//            AppendRow / AppendConcatenatedRow / AppendEmptyRow per family and
//            row, or (faster when rows are sorted differently from their
//            batch) AddTable once per batch and AppendTableRow /
//            AppendTableConcatenatedRow per row; AppendElementCounts for the
//            `<element>_attr_count` lists;
//            ResourcePromotedWriter::AddBatch, AppendRow / AppendNullRow;
//            PromotionMatcher for a table's own promoted columns.
//   finish:  each writer's MoveColumnsTo, in spec order, then WriteTableFile.
// What a table reader uses:
//   OpenTable (footer parsed, schema and key-value metadata checked),
//   ReadAllColumns, then RebuildResourcesAndScopes, AttributeFamilyReader
//   (AppendRow / AppendSplitRow) and RetainBytes for string columns.
// Boot uses CheckTableFooter (no pages read).
//
// Errors: every problem with bytes read from a file is DataLoss naming the
// file and the check that failed ("<file>: column 'attr_types' row 7: type
// code 9 outside 0..7"). Writers only fail when the batch breaks batch.h's
// invariants the writer depends on (Internal) or Parquet writing fails.
//
// Thread-safety: the writers and readers here have a single owner; the free
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

namespace strata::storage {

// ------------------------------------------------------------ file level

// Key-value metadata every table file carries.
inline constexpr char kFormatKey[] = "strata.format";
inline constexpr char kFormatValue[] = "1";
inline constexpr char kSchemaKey[] = "strata.schema";
inline constexpr char kBatchIdKey[] = "strata.batch_id";

// How table files are written. The defaults are the format pages' values,
// chosen by measurement on realistic traffic (tests/storage/
// table_roundtrip_test.cc, SpansWriterThroughputAndSize): zstd 6 against 3
// saves 3.5% of spans.parquet for about 13% more writer instructions; a
// 16 KiB dictionary limit turns unique ids and times PLAIN after a few
// thousand values instead of carrying a dictionary that is larger than the
// values (41.0 against 48.3 bytes per span at zstd 3).
struct TableOptions {
  int zstd_level = 6;
  // A table may give the columns where a higher level pays off a level of
  // their own, at most zstd_level (spans.parquet does; ColumnZstdLevel),
  // and compress the others at this level: ids, durations and already
  // dictionary-coded columns come out the same size (or smaller) at level 1
  // for a fraction of the CPU (spans-parquet.md, "File-level rules").
  int fast_zstd_level = 1;
  // Row groups are cut when their buffered (uncompressed) bytes reach this.
  size_t row_group_bytes = 128 << 20;
  // Data pages end when their uncompressed estimate reaches this (logs and
  // metrics; spans.parquet uses spans_page_bytes).
  size_t page_bytes = 1 << 20;
  // spans.parquet's page size: small, so reading one trace's rows
  // decompresses little (spans-parquet.md, "File-level rules").
  size_t spans_page_bytes = 16 << 10;
  // A page also ends after this many rows.
  size_t page_rows = 20000;
  // spans.parquet's row cap, lower still: a lookup skips the levels of the
  // rows before its trace in every sparse column's page (spans-parquet.md,
  // "File-level rules"). The smaller of this and page_rows applies.
  size_t spans_page_rows = 8192;
  // A column chunk's dictionary falls back to PLAIN past this many bytes.
  size_t dictionary_bytes_limit = 16 << 10;
  // The footer's created_by ("strata <version>").
  std::string created_by = "strata " STRATA_VERSION;
};

// The parquet::WriterOptions for a table: zstd, sizes from `options`,
// sorting columns as given, and the three strata.* key-value entries.
parquet::WriterOptions MakeWriterOptions(const TableOptions& options, std::string_view schema,
                                         std::string_view batch_id,
                                         std::vector<parquet::SortingColumn> sorting_columns);

// A column compressed at its own zstd level instead of fast_zstd_level.
struct ColumnZstdLevel {
  std::string_view column;
  int level = 1;
};

// Per-column writer options (parquet::WriterOptions::column_options):
// `base` everywhere, then options.fast_zstd_level for every column except
// those in `zstd_levels`, which get their level capped at
// options.zstd_level (so a writer that lowers zstd_level, like a merge's
// runs, lowers them all), and no dictionary (PLAIN from the first value)
// for `plain_columns`, whose values never repeat. Every name must be in
// `specs`.
std::vector<parquet::ColumnWriterOptions> PerColumnOptions(
    const std::vector<parquet::ColumnSpec>& specs, const TableOptions& options,
    const parquet::ColumnWriterOptions& base, std::span<const ColumnZstdLevel> zstd_levels,
    std::span<const std::string_view> plain_columns);

// Writes one whole file: specs, then every column (columns[i] matches
// specs[i]) in one batch. Returns the file bytes.
[[nodiscard]] absl::StatusOr<std::string> WriteTableFile(
    const std::vector<parquet::ColumnSpec>& specs, std::span<const parquet::ColumnVector> columns,
    const parquet::WriterOptions& options);

// The index of column `name` in `columns`, or DataLoss naming `file_name`.
[[nodiscard]] absl::StatusOr<int> FindColumn(const std::vector<parquet::ColumnSpec>& columns,
                                             std::string_view name, std::string_view file_name);

// Checks a parsed footer against what strata writes: the schema (converted
// to ColumnSpecs) equals `expected` exactly (names, types, logical types,
// repetition, list shape, order), and the key-value metadata has
// strata.format = 1, strata.schema = `schema`, strata.batch_id = `batch_id`.
// DataLoss names `file_name` and the first difference.
[[nodiscard]] absl::Status CheckTableSchema(const parquet::FileMetaData& metadata,
                                            const std::vector<parquet::ColumnSpec>& columns,
                                            const std::vector<parquet::ColumnSpec>& expected,
                                            std::string_view schema, std::string_view batch_id,
                                            std::string_view file_name);

// What boot checks without reading pages: the footer parses (FileReader::
// Open reads only the footer), CheckTableSchema, and num_rows ==
// expected_file_rows.
[[nodiscard]] absl::Status CheckTableFooter(parquet::RandomAccessSource* source,
                                            const std::vector<parquet::ColumnSpec>& expected,
                                            std::string_view schema, std::string_view batch_id,
                                            uint64_t expected_file_rows,
                                            std::string_view file_name);

// A Parquet reader's error as a table reader returns it: InvalidArgument,
// Unimplemented and OutOfRange become DataLoss naming `file_name` (the bytes
// are not a file strata wrote); DataLoss and the source's I/O errors pass
// through unchanged.
[[nodiscard]] absl::Status AsDataLoss(const absl::Status& status, std::string_view file_name);

// Opens a table file and runs CheckTableSchema. Reader errors are turned
// into DataLoss (a file strata wrote that its own reader rejects is corrupt).
[[nodiscard]] absl::StatusOr<std::unique_ptr<parquet::FileReader>> OpenTable(
    parquet::RandomAccessSource* source, const std::vector<parquet::ColumnSpec>& expected,
    std::string_view schema, std::string_view batch_id, std::string_view file_name);

// Every column of the file, whole, in schema order.
[[nodiscard]] absl::StatusOr<std::vector<parquet::ColumnVector>> ReadAllColumns(
    parquet::FileReader& reader, std::string_view file_name);

// Every column of file rows [row_begin, row_end), in schema order, reading
// only the pages that cover them. DataLoss naming the file when the range
// is empty or passes the file's rows, and for bytes the reader rejects.
[[nodiscard]] absl::StatusOr<std::vector<parquet::ColumnVector>> ReadTableRows(
    parquet::FileReader& reader, std::string_view file_name, uint64_t row_begin, uint64_t row_end);

// Moves a BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY column's bytes into a buffer the
// batch retains and returns a view of them: value i is
// view.substr(offsets[i], offsets[i + 1] - offsets[i]) and stays valid as
// long as the batch. The column's `bytes` is left empty.
std::string_view RetainBytes(parquet::ColumnVector* column, otlp::BatchBase* batch);

// Value slot `i` of a byte column whose bytes RetainBytes returned as `all`.
inline std::string_view BytesAt(const parquet::ColumnVector& column, std::string_view all,
                                size_t i) {
  return all.substr(column.offsets[i], column.offsets[i + 1] - column.offsets[i]);
}

// DataLoss "<file>: column '<column>' row <row>: <what>".
absl::Status ColumnDataLoss(std::string_view file_name, std::string_view column, size_t row,
                            std::string_view what);

// ------------------------------------------------------------ row kind

// `row_kind` (u8, required).
void AppendRowKindSpec(std::vector<parquet::ColumnSpec>* specs);

// A list<u32> column of element counts, e.g. `event_attr_count`: one count
// per event saying how many attributes of the row's concatenated
// `event_attr_*` family belong to it.
void AppendElementCountSpec(std::string_view name, std::vector<parquet::ColumnSpec>* specs);

// ------------------------------------------------------------ attributes

// The seven list columns of an attribute family, in the order of
// attributes.md: P_keys, P_types, P_str, P_int, P_double, P_bool, P_bytes.
inline constexpr int kAttributeFamilyColumns = 7;
void AppendAttributeFamilySpecs(std::string_view prefix, std::vector<parquet::ColumnSpec>* specs);

// One row's elements in a family's element arrays; rows holding the same
// attributes (a resource's, on every span of that resource) can share them.
struct FamilyElements {
  uint64_t begin = 0;
  uint64_t count = 0;
};

// Builds the seven ColumnVectors of one family, a row at a time.
class AttributeFamilyWriter {
 public:
  AttributeFamilyWriter();

  void Reserve(size_t rows, size_t elements);

  // Appends a row holding attributes `range` of `table` (an attribute table
  // of `batch`; kArray / kKvList values are stored as their protobuf-encoded
  // AnyValue, children read from batch.nested_*). Returns where its
  // elements are, for AppendSharedRow.
  FamilyElements AppendRow(const otlp::BatchBase& batch, const otlp::AttributeColumns& table,
                           otlp::Range range);
  // Appends a row holding the concatenation of the attributes each range
  // names, in order (per-event / per-link / per-exemplar attributes).
  FamilyElements AppendConcatenatedRow(const otlp::BatchBase& batch,
                                       const otlp::AttributeColumns& table,
                                       std::span<const otlp::Range> ranges);
  // Adds the elements of attributes `range` of `table` without a row, for
  // rows that AppendSharedRow adds later.
  FamilyElements AddElements(const otlp::BatchBase& batch, const otlp::AttributeColumns& table,
                             otlp::Range range);
  // Adds every row of `table` as elements, in table order (reading the
  // table sequentially), and returns the element number of its row 0. Rows
  // then point at them with AppendTableRow / AppendTableConcatenatedRow, in
  // any order: the way to write rows sorted differently from their batch.
  uint64_t AddTable(const otlp::BatchBase& batch, const otlp::AttributeColumns& table);
  // A row holding attributes `range` of a table AddTable returned `base` for.
  void AppendTableRow(uint64_t base, otlp::Range range);
  // Hints that AppendTableRow(base, range) comes soon (it reads the row's
  // type codes).
  void PrefetchTableRow(uint64_t base, otlp::Range range) const {
    if (range.count != 0) __builtin_prefetch(types_.int32s.data() + base + range.begin);
  }
  // A row holding the concatenation of `ranges` of such a table: shares the
  // table's elements when the non-empty ranges are adjacent (as decoders
  // lay them out), else copies them like AppendConcatenatedRow.
  void AppendTableConcatenatedRow(uint64_t base, const otlp::BatchBase& batch,
                                  const otlp::AttributeColumns& table,
                                  std::span<const otlp::Range> ranges);
  // Appends a row whose list is the same elements as an earlier row.
  void AppendSharedRow(FamilyElements elements);
  void AppendEmptyRow() { AppendSharedRow({}); }

  size_t rows() const { return rows_.size(); }

  // Appends the seven columns, in spec order, to *out and resets the writer.
  void MoveColumnsTo(std::vector<parquet::ColumnVector>* out);
  // For rows written in chunks over elements that stay (FileWriter::
  // WriteChunk): gives the seven columns the rows appended since the last
  // ClearRows and appends pointers to them, in spec order, to *out; the
  // columns stay the writer's. ClearRows then forgets those rows, keeping
  // every element.
  void ExposeRows(std::vector<const parquet::ColumnVector*>* out);
  void ClearRows();

 private:
  // Turns rows_ and present_ into the columns' lists.
  void SetLists();
  void AppendElements(const otlp::BatchBase& batch, const otlp::AttributeColumns& table,
                      otlp::Range range);

  parquet::ColumnVector keys_;
  parquet::ColumnVector types_;
  parquet::ColumnVector str_;
  parquet::ColumnVector int_;
  parquet::ColumnVector double_;
  parquet::ColumnVector bool_;
  parquet::ColumnVector bytes_;
  // Per row: its elements (every column of the family lists them), and
  // which value lists hold a value (bit 2 + list), as kValueListBit says.
  // MoveColumnsTo turns them into the columns' lists.
  std::vector<parquet::ListRange> rows_;
  std::vector<uint8_t> present_;
  // The last row's elements and present bits.
  FamilyElements last_elements_;
  uint8_t last_present_ = 0;
};

// Appends one row to a list<u32> count column (see AppendElementCountSpec):
// `ranges[i].count` for each i.
void AppendElementCounts(std::span<const otlp::Range> ranges, parquet::ColumnVector* counts);

// Reads the seven read-back ColumnVectors of one family into a batch's
// attribute tables. Make() validates the whole family once (equal list
// lengths per row, type codes 0..7, exactly one value per element in the
// column its type names, no null keys or types list; a null value list is
// one with no values) and retains the string and bytes
// buffers in the batch (or copies each appended row's strings, see
// StringOwnership); the rows then need no further checks except nested
// value decoding.
class AttributeFamilyReader {
 public:
  // Where the strings handed to the batch live.
  enum class StringOwnership {
    // The columns' byte buffers move into `batch` (retained), and rows view
    // them: for families read on most rows.
    kRetainColumns,
    // The columns keep their buffers (they must outlive the reader), and
    // each row's strings are copied into batch->arena as it is appended:
    // for families whose rows mostly repeat (a resource's attributes on
    // every row of the resource), of which the batch keeps few.
    kCopyToArena,
  };

  // `columns` are the family's seven vectors in spec order. DataLoss names
  // `file_name` and the column.
  [[nodiscard]] static absl::StatusOr<AttributeFamilyReader> Make(
      std::span<parquet::ColumnVector> columns, std::string_view prefix, std::string_view file_name,
      otlp::BatchBase* batch, StringOwnership ownership = StringOwnership::kRetainColumns);

  size_t rows() const { return lists_.size(); }

  // Appends row `row`'s attributes to *table, decoding array / kvlist bytes
  // into batch->nested_values / nested_attributes, and returns their Range
  // in *table. DataLoss for undecodable nested bytes.
  [[nodiscard]] absl::StatusOr<otlp::Range> AppendRow(size_t row, otlp::BatchBase* batch,
                                                      otlp::AttributeColumns* table) const;

  // Row `row` holds the concatenated attributes of several elements;
  // `counts` (one row of an `<element>_attr_count` column) says how many
  // each owns. Appends them to *table and writes one Range per element to
  // *out (cleared first). DataLoss when the counts do not sum to the row's
  // list length.
  [[nodiscard]] absl::Status AppendSplitRow(size_t row, std::span<const uint32_t> counts,
                                            otlp::BatchBase* batch, otlp::AttributeColumns* table,
                                            std::vector<otlp::Range>* out) const;

 private:
  AttributeFamilyReader() = default;
  [[nodiscard]] absl::Status AppendElement(uint64_t element, otlp::BatchBase* batch,
                                           otlp::AttributeColumns* table) const;

  std::string file_name_;
  std::string prefix_;
  bool copy_ = false;  // StringOwnership::kCopyToArena
  std::vector<parquet::ListRange> lists_;
  std::vector<std::string_view> keys_;
  std::vector<otlp::ValueType> types_;
  // Per element: string / bytes payload, or the int / double / bool bits.
  std::vector<std::string_view> payload_;
  std::vector<uint64_t> bits_;
};

// The u32 elements of row `row` of a list<u32> column (INT32 elements
// reinterpreted as unsigned).
std::span<const uint32_t> ListU32(const parquet::ColumnVector& column, size_t row);

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
