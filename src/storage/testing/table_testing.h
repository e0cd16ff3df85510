#pragma once

// Test-only helpers for the Parquet table suites (spans, logs, metrics, and
// the whole-system round trip in tests/storage): DuckDB as the oracle for
// every column of a table file, a sorted copy of a TraceBatch in the file's
// span order, and rewriting a valid file's columns to build corrupt ones.
// Header-only, included only by tests (it includes gtest and DuckDB's
// adapter), never by strata_storage's sources.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "otlp/batch.h"
#include "otlp/encode.h"
#include "parquet/file_reader.h"
#include "parquet/file_writer.h"
#include "parquet/testing/parquet_testing.h"
#include "query/duckdb_engine.h"

namespace strata::storage::table_testing {

using parquet::ColumnSpec;
using parquet::ColumnVector;
using parquet::LogicalType;
using parquet::PhysicalType;

// The DuckDB type a column reads as (spans-parquet.md "Type notation").
inline std::string DuckDbType(const ColumnSpec& spec) {
  std::string base;
  const bool integer = spec.logical_type.kind == LogicalType::Kind::kInteger;
  const bool is_unsigned = integer && !spec.logical_type.is_signed;
  switch (spec.type) {
    case PhysicalType::kBoolean:
      base = "BOOLEAN";
      break;
    case PhysicalType::kInt32:
      if (integer && spec.logical_type.bit_width == 8) {
        base = is_unsigned ? "UTINYINT" : "TINYINT";
      } else {
        base = is_unsigned ? "UINTEGER" : "INTEGER";
      }
      break;
    case PhysicalType::kInt64:
      base = is_unsigned ? "UBIGINT" : "BIGINT";
      break;
    case PhysicalType::kDouble:
      base = "DOUBLE";
      break;
    case PhysicalType::kByteArray:
      base = spec.logical_type.kind == LogicalType::Kind::kString ? "VARCHAR" : "BLOB";
      break;
    default:
      base = "BLOB";
  }
  return spec.list ? base + "[]" : base;
}

// SQL rendering one value x of the column; strings and bytes as hex, so
// every byte sequence is unambiguous; doubles with 17 digits.
inline std::string ElementSql(const ColumnSpec& spec, const std::string& x) {
  switch (spec.type) {
    case PhysicalType::kByteArray:
    case PhysicalType::kFixedLenByteArray:
      return fmt::format("hex({})", x);
    case PhysicalType::kDouble:
      return fmt::format("printf('%.17g', {})", x);
    default:
      return fmt::format("CAST({} AS VARCHAR)", x);
  }
}

inline std::string ColumnSql(const ColumnSpec& spec) {
  const std::string name = fmt::format("\"{}\"", spec.name);
  if (!spec.list) return ElementSql(spec, name);
  return fmt::format(
      "CAST(len({0}) AS VARCHAR) || ':' || "
      "coalesce(array_to_string(list_transform({0}, x -> coalesce({1}, 'N')), '|'), '')",
      name, ElementSql(spec, "x"));
}

inline std::string RenderElement(const ColumnSpec& spec, const ColumnVector& v, size_t i) {
  if (v.is_null(i)) return "N";
  const bool is_unsigned =
      spec.logical_type.kind == LogicalType::Kind::kInteger && !spec.logical_type.is_signed;
  switch (spec.type) {
    case PhysicalType::kBoolean:
      return v.bools[i] ? "true" : "false";
    case PhysicalType::kInt32:
      return is_unsigned ? fmt::format("{}", static_cast<uint32_t>(v.int32s[i]))
                         : fmt::format("{}", v.int32s[i]);
    case PhysicalType::kInt64:
      return is_unsigned ? fmt::format("{}", static_cast<uint64_t>(v.int64s[i]))
                         : fmt::format("{}", v.int64s[i]);
    case PhysicalType::kDouble:
      return fmt::format("{:.17g}", v.doubles[i]);
    default:
      return parquet::parquet_testing::Hex(v.bytes_at(i));
  }
}

inline std::optional<std::string> RenderRow(const ColumnSpec& spec, const ColumnVector& v,
                                            size_t row) {
  if (!spec.list) {
    if (v.is_null(row)) return std::nullopt;
    return RenderElement(spec, v, row);
  }
  if (v.is_null_list(row)) return std::nullopt;
  const parquet::ListRange range = v.lists[row];
  std::string out = fmt::format("{}:", range.count);
  for (uint64_t k = 0; k < range.count; ++k) {
    if (k > 0) out += "|";
    out += RenderElement(spec, v, range.begin + k);
  }
  return out;
}

// NaN's sign and payload are not something both printf implementations
// agree on; strata's own reader checks the bits.
inline std::optional<std::string> NormalizeNan(std::optional<std::string> cell) {
  if (!cell) return cell;
  std::string& s = *cell;
  for (size_t at = s.find("-nan"); at != std::string::npos; at = s.find("-nan", at)) {
    s.erase(at, 1);
  }
  return cell;
}

inline std::unique_ptr<query::DuckDbEngine> OpenDuckDb() {
  return parquet::parquet_testing::OpenDuckDb();
}

// Reads `bytes` with strata's reader and with DuckDB and expects the same
// schema (column names, DuckDB types) and every value of every column, in
// file order. Returns the number of rows DuckDB saw (-1 on failure).
inline int64_t ExpectDuckDbMatchesStrata(query::DuckDbEngine& db, const std::string& bytes,
                                         const std::string& what) {
  parquet::StringSource source(bytes);
  absl::StatusOr<std::unique_ptr<parquet::FileReader>> reader = parquet::FileReader::Open(&source);
  EXPECT_TRUE(reader.ok()) << what << ": " << reader.status();
  if (!reader.ok()) return -1;
  const std::vector<ColumnSpec>& specs = (*reader)->columns();
  std::vector<int> all(specs.size());
  std::iota(all.begin(), all.end(), 0);
  absl::StatusOr<std::vector<ColumnVector>> columns =
      (*reader)->Read(all, 0, (*reader)->num_rows());
  EXPECT_TRUE(columns.ok()) << what << ": " << columns.status();
  if (!columns.ok()) return -1;

  parquet::parquet_testing::TempFile file(bytes);
  const std::string source_sql =
      fmt::format("read_parquet('{}', file_row_number = true)", file.path());
  query::QueryResult described = parquet::parquet_testing::MustQuery(
      db, fmt::format("SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM '{}')",
                      file.path()));
  EXPECT_EQ(described.rows.size(), specs.size()) << what;
  for (size_t c = 0; c < std::min(described.rows.size(), specs.size()); ++c) {
    EXPECT_EQ(described.rows[c][0], std::optional<std::string>(specs[c].name)) << what;
    EXPECT_EQ(described.rows[c][1], std::optional<std::string>(DuckDbType(specs[c])))
        << what << " column " << specs[c].name;
  }
  std::string select;
  for (const ColumnSpec& spec : specs) select += (select.empty() ? "" : ", ") + ColumnSql(spec);
  query::QueryResult dump = parquet::parquet_testing::MustQuery(
      db, fmt::format("SELECT {} FROM {} ORDER BY file_row_number", select, source_sql));
  EXPECT_EQ(dump.rows.size(), static_cast<size_t>((*reader)->num_rows())) << what;
  int failures = 0;
  for (size_t r = 0; r < dump.rows.size() && failures < 10; ++r) {
    for (size_t c = 0; c < specs.size(); ++c) {
      const std::optional<std::string> expected =
          NormalizeNan(RenderRow(specs[c], (*columns)[c], r));
      const std::optional<std::string> actual = NormalizeNan(dump.rows[r][c]);
      if (expected != actual) {
        ADD_FAILURE() << what << ": row " << r << " column " << specs[c].name << ": strata "
                      << expected.value_or("NULL") << ", DuckDB " << actual.value_or("NULL");
        if (++failures >= 10) break;
      }
    }
  }
  return static_cast<int64_t>(dump.rows.size());
}

// A copy of `batch` (views shared with it) whose span rows are in the
// order of spans.parquet: stable by (trace id bytewise, start time).
inline otlp::TraceBatch SortedCopy(const otlp::TraceBatch& in) {
  otlp::TraceBatch out;
  out.resources = in.resources;
  out.resource_attributes = in.resource_attributes;
  out.entity_refs = in.entity_refs;
  out.entity_keys = in.entity_keys;
  out.scopes = in.scopes;
  out.scope_attributes = in.scope_attributes;
  out.nested_values = in.nested_values;
  out.nested_attributes = in.nested_attributes;
  out.span_attributes = in.span_attributes;
  out.events = in.events;
  out.event_attributes = in.event_attributes;
  out.links = in.links;
  out.link_attributes = in.link_attributes;
  std::vector<uint32_t> order(in.spans.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (in.spans.trace_id[a] != in.spans.trace_id[b]) {
      return in.spans.trace_id[a] < in.spans.trace_id[b];
    }
    return in.spans.start_time_unix_nano[a] < in.spans.start_time_unix_nano[b];
  });
  const otlp::SpanColumns& s = in.spans;
  for (uint32_t i : order) {
    out.spans.Append({s.scope[i], s.trace_id[i], s.span_id[i], s.trace_state[i],
                      s.parent_span_id[i], s.has_parent_span_id[i], s.flags[i], s.name[i],
                      s.kind[i], s.start_time_unix_nano[i], s.end_time_unix_nano[i],
                      s.attributes[i], s.dropped_attributes_count[i], s.events[i],
                      s.dropped_events_count[i], s.links[i], s.dropped_links_count[i],
                      s.status_message[i], s.status_code[i]});
  }
  return out;
}

// Each span of `in` as the OTLP protobuf of a request holding just that
// span under its resource and scope, sorted: the spans with their owners'
// content, however resources and scopes are numbered (a file shares one
// index among equal resources and scopes of different requests).
inline std::vector<std::string> SpansWithOwners(const otlp::TraceBatch& in) {
  std::vector<std::string> out;
  otlp::TraceBatch one = SortedCopy(in);  // the attribute tables; owners and spans replaced below
  for (uint32_t i = 0; i < in.spans.size(); ++i) {
    const uint32_t scope = in.spans.scope[i];
    const uint32_t resource = in.scopes.resource[scope];
    one.resources = {};
    one.resources.Append({in.resources.attributes[resource],
                          in.resources.dropped_attributes_count[resource],
                          in.resources.entity_refs[resource], in.resources.schema_url[resource]});
    one.scopes = {};
    one.scopes.Append({0, in.scopes.name[scope], in.scopes.version[scope],
                       in.scopes.attributes[scope], in.scopes.dropped_attributes_count[scope],
                       in.scopes.schema_url[scope]});
    one.spans = {};
    const otlp::SpanColumns& s = in.spans;
    one.spans.Append({0, s.trace_id[i], s.span_id[i], s.trace_state[i], s.parent_span_id[i],
                      s.has_parent_span_id[i], s.flags[i], s.name[i], s.kind[i],
                      s.start_time_unix_nano[i], s.end_time_unix_nano[i], s.attributes[i],
                      s.dropped_attributes_count[i], s.events[i], s.dropped_events_count[i],
                      s.links[i], s.dropped_links_count[i], s.status_message[i], s.status_code[i]});
    out.push_back(otlp::EncodeTracesProto(one));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Reads every column of a valid table file, lets `mutate` change them, and
// writes them again with the same schema and key-value metadata, declaring
// `sorting_columns` (by default none): how the tests build files that are
// well-formed Parquet but break a table rule.
inline std::string RewriteColumns(
    const std::string& bytes, const std::function<void(std::vector<ColumnVector>&)>& mutate,
    std::vector<parquet::SortingColumn> sorting_columns = {},
    const std::function<void(std::vector<ColumnSpec>&)>& mutate_specs = nullptr) {
  parquet::StringSource source(bytes);
  absl::StatusOr<std::unique_ptr<parquet::FileReader>> reader = parquet::FileReader::Open(&source);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return {};
  std::vector<int> all((*reader)->columns().size());
  std::iota(all.begin(), all.end(), 0);
  absl::StatusOr<std::vector<ColumnVector>> columns =
      (*reader)->Read(all, 0, (*reader)->num_rows());
  EXPECT_TRUE(columns.ok()) << columns.status();
  if (!columns.ok()) return {};
  std::vector<ColumnSpec> specs = (*reader)->columns();
  if (mutate_specs) mutate_specs(specs);
  mutate(*columns);
  parquet::WriterOptions options;
  options.key_value_metadata = (*reader)->metadata().key_value_metadata;
  options.sorting_columns = std::move(sorting_columns);
  std::string out;
  parquet::StringSink sink(&out);
  absl::StatusOr<std::unique_ptr<parquet::FileWriter>> writer =
      parquet::FileWriter::Open(specs, options, &sink);
  EXPECT_TRUE(writer.ok()) << writer.status();
  if (!writer.ok()) return {};
  absl::Status status = (*writer)->WriteBatch(*columns);
  EXPECT_TRUE(status.ok()) << status;
  status = (*writer)->Close();
  EXPECT_TRUE(status.ok()) << status;
  return out;
}

// ------------------------------------------------------ attribute families

// The index of every family's `P_keys` column in a table's schema (its
// `P_types` and five value lists follow it, attributes.md).
inline std::vector<size_t> AttributeFamilyColumns(const std::vector<ColumnSpec>& specs) {
  std::vector<size_t> out;
  for (size_t c = 0; c + 7 <= specs.size(); ++c) {
    const std::string& keys = specs[c].name;
    if (keys.size() > 5 && keys.ends_with("_keys") &&
        specs[c + 1].name == keys.substr(0, keys.size() - 5) + "_types") {
      out.push_back(c);
    }
  }
  return out;
}

// attributes.md: a value list is null exactly when none of the row's
// attributes has its value there. Returns the first row that breaks the
// rule, described, or "" (and "" for a file this cannot read; other checks
// report that).
inline std::string ValueListRuleViolation(const std::string& bytes) {
  parquet::StringSource source(bytes);
  absl::StatusOr<std::unique_ptr<parquet::FileReader>> reader = parquet::FileReader::Open(&source);
  if (!reader.ok()) return "";
  const std::vector<ColumnSpec>& specs = (*reader)->columns();
  std::vector<int> all(specs.size());
  std::iota(all.begin(), all.end(), 0);
  absl::StatusOr<std::vector<ColumnVector>> columns =
      (*reader)->Read(all, 0, (*reader)->num_rows());
  if (!columns.ok()) return "";
  // The value list (2..6 after P_keys) of each type code.
  constexpr int kListOf[8] = {0, 2, 5, 3, 4, 6, 6, 6};
  for (size_t f : AttributeFamilyColumns(specs)) {
    const ColumnVector& types = (*columns)[f + 1];
    for (size_t r = 0; r < types.size(); ++r) {
      bool has[7] = {};
      for (uint64_t k = 0; k < types.lists[r].count; ++k) {
        has[kListOf[types.int32s[types.lists[r].begin + k] & 7]] = true;
      }
      for (int v = 2; v < 7; ++v) {
        if ((*columns)[f + v].is_null_list(r) == has[v]) {
          return fmt::format("row {} column {}: list {} but the row has {} value there", r,
                             specs[f + v].name, has[v] ? "null" : "present", has[v] ? "a" : "no");
        }
      }
    }
  }
  return "";
}

// The file as strata wrote it before value lists became optional: every
// value list required, a row with no value there holding one null per
// attribute. Readers must read it as the same rows.
inline std::string WithRequiredValueLists(const std::string& bytes) {
  parquet::StringSource source(bytes);
  absl::StatusOr<std::unique_ptr<parquet::FileReader>> reader = parquet::FileReader::Open(&source);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return {};
  const std::vector<parquet::RowGroup>& groups = (*reader)->metadata().row_groups;
  std::vector<size_t> families;
  return RewriteColumns(
      bytes,
      [&](std::vector<ColumnVector>& columns) {
        for (size_t f : families) {
          for (size_t v = f + 2; v < f + 7; ++v) {
            ColumnVector& list = columns[v];
            for (size_t r = 0; r < list.size(); ++r) {
              if (!list.is_null_list(r)) continue;
              const uint64_t count = columns[f].lists[r].count;
              list.lists[r] = {list.element_count(), count};
              for (uint64_t k = 0; k < count; ++k) list.AppendNull();
            }
            list.list_validity.clear();
          }
        }
      },
      groups.empty() ? std::vector<parquet::SortingColumn>{} : groups[0].sorting_columns,
      [&](std::vector<ColumnSpec>& specs) {
        families = AttributeFamilyColumns(specs);
        for (size_t f : families) {
          for (size_t v = f + 2; v < f + 7; ++v) {
            specs[v].list_repetition = parquet::Repetition::kRequired;
          }
        }
      });
}

// The value-list rule holds in table file `bytes`, and the file rewritten
// with required value lists reads, with `read` (bytes → StatusOr of a batch)
// and `encode` (batch → protobuf bytes), as `encoded`. Returns the first
// problem, or "".
template <typename Read, typename Encode>
std::string ValueListProblems(const std::string& bytes, Read read, Encode encode,
                              const std::string& encoded) {
  if (std::string rule = ValueListRuleViolation(bytes); !rule.empty()) return rule;
  auto old_form = read(WithRequiredValueLists(bytes));
  if (!old_form.ok()) {
    return fmt::format("read with required value lists: {}",
                       std::string(old_form.status().message()));
  }
  return encode(*old_form) == encoded ? "" : "required value lists read as other rows";
}

// Replaces value `row` of a BYTE_ARRAY column with `value`, keeping the
// other values and the nulls.
inline void SetBytes(ColumnVector& column, size_t row, std::string_view value) {
  ColumnVector changed(PhysicalType::kByteArray);
  for (size_t r = 0; r < column.size(); ++r) {
    if (column.is_null(r)) {
      changed.AppendNull();
    } else {
      changed.AppendBytes(r == row ? value : column.bytes_at(r));
    }
  }
  column = std::move(changed);
}

}  // namespace strata::storage::table_testing
