// ReadLogsTable, ReadLogsRows and ReadLogsRowsAt: logs.parquet, whole, a
// row range or chosen rows, back into a LogBatch (logs_table.h). All read
// their columns and then share one path (AppendLogRows) that rebuilds
// resources, scopes and records.

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "otlp/any_value_codec.h"
#include "otlp/decode.h"
#include "storage/table/logs_table.h"

namespace strata::storage {

using logs_internal::BodyColumnOf;
using logs_internal::kBodyValueColumns;
using parquet::ColumnVector;

namespace {

const std::string& LogsColumnName(int column) { return LogsTableColumns()[column].name; }

class LogRowReader {
 public:
  // Vector row r is file row first_row + r (for messages).
  LogRowReader(std::vector<ColumnVector>& c, std::string_view file_name, uint64_t first_row,
               otlp::LogBatch* batch)
      : c_(c), file_name_(file_name), first_row_(first_row), batch_(batch) {}

  [[nodiscard]] absl::Status Init() {
    for (int k : {kLogsSeverityText, kLogsBodyStr, kLogsBodyBytes, kLogsEventName}) {
      views_[k] = RetainBytes(&c_[k], batch_);
    }
    STRATA_ASSIGN_OR_RETURN(
        attributes_, AttributeFamilyReader::Make(std::span<ColumnVector>(c_).subspan(
                                                     kLogsAttributes, kAttributeFamilyColumns),
                                                 "attr", file_name_, batch_));
    return absl::OkStatus();
  }

  [[nodiscard]] absl::Status ReadRow(size_t r, uint32_t scope) {
    for (int k : {kLogsTime, kLogsObservedTime, kLogsSeverityNumber, kLogsSeverityText,
                  kLogsBodyType, kLogsDroppedAttributes, kLogsFlags, kLogsEventName}) {
      if (c_[k].is_null(r)) {
        return ColumnDataLoss(file_name_, LogsColumnName(k), first_row_ + r,
                              "null on a log record row");
      }
    }
    otlp::LogRecordRow record;
    record.scope = scope;
    record.time_unix_nano = static_cast<uint64_t>(c_[kLogsTime].int64s[r]);
    record.observed_time_unix_nano = static_cast<uint64_t>(c_[kLogsObservedTime].int64s[r]);
    record.severity_number = c_[kLogsSeverityNumber].int32s[r];
    record.severity_text = Str(kLogsSeverityText, r);
    STRATA_ASSIGN_OR_RETURN(record.body, ReadBody(r));
    STRATA_ASSIGN_OR_RETURN(record.attributes,
                            attributes_->AppendRow(r, batch_, &batch_->log_attributes));
    record.dropped_attributes_count = static_cast<uint32_t>(c_[kLogsDroppedAttributes].int32s[r]);
    record.flags = static_cast<uint32_t>(c_[kLogsFlags].int32s[r]);
    if (!c_[kLogsTraceId].is_null(r)) {
      std::memcpy(record.trace_id.data(),
                  c_[kLogsTraceId].bytes.data() + c_[kLogsTraceId].offsets[r], 16);
      record.has_trace_id = 1;
    }
    if (!c_[kLogsSpanId].is_null(r)) {
      std::memcpy(record.span_id.data(), c_[kLogsSpanId].bytes.data() + c_[kLogsSpanId].offsets[r],
                  8);
      record.has_span_id = 1;
    }
    record.event_name = Str(kLogsEventName, r);
    batch_->logs.Append(record);
    return absl::OkStatus();
  }

 private:
  std::string_view Str(int column, size_t i) const {
    return BytesAt(c_[column], views_[column], i);
  }

  absl::StatusOr<otlp::ValueRow> ReadBody(size_t r) {
    const int32_t code = c_[kLogsBodyType].int32s[r];
    if (code < 0 || code > 7) {
      return ColumnDataLoss(file_name_, "body_type", first_row_ + r,
                            fmt::format("type code {} outside 0..7", code));
    }
    const auto type = static_cast<otlp::ValueType>(code);
    const int column = BodyColumnOf(type);
    for (int i = 0; i < kBodyValueColumns; ++i) {
      if (c_[kLogsBodyStr + i].is_null(r) != (i == column)) continue;
      return ColumnDataLoss(file_name_, LogsColumnName(kLogsBodyStr + i), first_row_ + r,
                            fmt::format("body of type {} breaks the one-value rule", code));
    }
    otlp::ValueRow body{type, {}, 0};
    switch (type) {
      case otlp::ValueType::kString:
        body.str = Str(kLogsBodyStr, r);
        break;
      case otlp::ValueType::kBytes:
        body.str = Str(kLogsBodyBytes, r);
        break;
      case otlp::ValueType::kInt:
        body.bits = static_cast<uint64_t>(c_[kLogsBodyInt].int64s[r]);
        break;
      case otlp::ValueType::kDouble:
        body.bits = std::bit_cast<uint64_t>(c_[kLogsBodyDouble].doubles[r]);
        break;
      case otlp::ValueType::kBool:
        body.bits = c_[kLogsBodyBool].bools[r] != 0 ? 1 : 0;
        break;
      case otlp::ValueType::kArray:
      case otlp::ValueType::kKvList: {
        absl::Status decoded = otlp::DecodeAnyValueProto(Str(kLogsBodyBytes, r), batch_, &body);
        if (!decoded.ok() || body.type != type) {
          return ColumnDataLoss(
              file_name_, "body_bytes", first_row_ + r,
              fmt::format("not a valid encoded value of type {}: {}", code,
                          decoded.ok() ? "wrong value type" : std::string(decoded.message())));
        }
        break;
      }
      case otlp::ValueType::kEmpty:
        break;
    }
    return body;
  }

  std::vector<ColumnVector>& c_;
  std::string_view file_name_;
  uint64_t first_row_;
  otlp::LogBatch* batch_;
  std::vector<std::string_view> views_ = std::vector<std::string_view>(kLogsColumnCount);
  std::optional<AttributeFamilyReader> attributes_;
};

// The shared path of both readers: `c` holds every column of file rows
// [first_row, first_row + c[0].size()), the whole file when `whole`.
// Fills *out (its batch, and unless whole its index maps and placeholders)
// and validates the batch.
absl::Status AppendLogRows(std::vector<ColumnVector>& c, std::string_view file_name,
                           uint64_t first_row, bool whole, LogsRowOrder order, LogRows* out) {
  if (!whole) {
    out->resource_index = RenumberDense(&c[kLogsResourceScope + kResourceIndexOffset]);
    out->scope_index = RenumberDense(&c[kLogsResourceScope + kScopeIndexOffset]);
  }
  otlp::LogBatch& batch = out->batch;
  STRATA_ASSIGN_OR_RETURN(const RowOwners owners,
                          RebuildResourcesAndScopes(std::span<ColumnVector>(c).subspan(
                                                        kLogsResourceScope, kResourceScopeColumns),
                                                    file_name, &batch));
  LogRowReader rows(c, file_name, first_row, &batch);
  STRATA_RETURN_IF_ERROR(rows.Init());
  const ColumnVector& kinds = c[kLogsRowKind];
  bool seen_record = false;
  uint64_t previous_time = 0;
  for (size_t r = 0; r < kinds.size(); ++r) {
    const int32_t kind = kinds.int32s[r];
    if (kind < 0 || kind > 2) {
      return ColumnDataLoss(file_name, "row_kind", first_row + r,
                            fmt::format("row kind {} outside 0..2", kind));
    }
    if ((kind == 2) != (owners.scope[r] == RowOwners::kNoScope)) {
      return ColumnDataLoss(file_name, "scope_index", first_row + r,
                            kind == 2 ? "not null on a resource placeholder" : "null");
    }
    if (kind != 0) {
      if (seen_record) {
        return ColumnDataLoss(file_name, "row_kind", first_row + r,
                              "placeholder row after a record row");
      }
      if (!whole) out->placeholders.push_back({owners.resource[r], owners.scope[r]});
      continue;
    }
    STRATA_RETURN_IF_ERROR(rows.ReadRow(r, owners.scope[r]));
    const size_t record = batch.logs.size() - 1;
    const uint64_t time =
        LogEventTime(batch.logs.time_unix_nano[record], batch.logs.observed_time_unix_nano[record]);
    if (order == LogsRowOrder::kEventTime && seen_record && time < previous_time) {
      return ColumnDataLoss(file_name, "time_unix_nano", first_row + r,
                            "records are not in the declared event_time order");
    }
    seen_record = true;
    previous_time = time;
  }
  absl::Status valid = otlp::ValidateBatch(batch);
  if (!valid.ok()) {
    return absl::DataLossError(
        fmt::format("{}: rebuilt batch is invalid: {}", file_name, std::string(valid.message())));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LogsRowOrder> LogsTableRowOrder(const parquet::FileMetaData& metadata,
                                               std::string_view file_name) {
  std::optional<LogsRowOrder> order;
  for (const parquet::KeyValue& kv : metadata.key_value_metadata) {
    if (kv.key != kLogsRowOrderKey) continue;
    if (order.has_value()) {
      return absl::DataLossError(
          fmt::format("{}: key-value metadata repeats '{}'", file_name, kLogsRowOrderKey));
    }
    if (kv.value != kLogsRowOrderEventTime) {
      return absl::DataLossError(fmt::format("{}: key-value metadata '{}' is '{}', want '{}'",
                                             file_name, kLogsRowOrderKey, kv.value.value_or(""),
                                             kLogsRowOrderEventTime));
    }
    order = LogsRowOrder::kEventTime;
  }
  return order.value_or(LogsRowOrder::kInput);
}

absl::StatusOr<otlp::LogBatch> ReadLogsTable(parquet::RandomAccessSource* source,
                                             std::string_view batch_id,
                                             std::string_view file_name) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<parquet::FileReader> reader,
                          OpenTable(source, LogsTableColumns(), kLogsSchema, batch_id, file_name));
  STRATA_ASSIGN_OR_RETURN(const LogsRowOrder order,
                          LogsTableRowOrder(reader->metadata(), file_name));
  STRATA_ASSIGN_OR_RETURN(std::vector<ColumnVector> c, ReadAllColumns(*reader, file_name));
  LogRows rows;
  STRATA_RETURN_IF_ERROR(AppendLogRows(c, file_name, 0, /*whole=*/true, order, &rows));
  return std::move(rows.batch);
}

absl::StatusOr<LogRows> ReadLogsRows(parquet::FileReader& reader, std::string_view file_name,
                                     uint64_t row_begin, uint64_t row_end) {
  STRATA_ASSIGN_OR_RETURN(const LogsRowOrder order,
                          LogsTableRowOrder(reader.metadata(), file_name));
  STRATA_ASSIGN_OR_RETURN(std::vector<ColumnVector> c,
                          ReadTableRows(reader, file_name, row_begin, row_end));
  LogRows rows;
  STRATA_RETURN_IF_ERROR(AppendLogRows(c, file_name, row_begin, /*whole=*/false, order, &rows));
  return rows;
}

namespace {

// Columns `columns` of the file rows `rows` (strictly increasing), one
// vector per column holding those rows in order. Runs of rows at most
// kLogsGatherGapRows apart are read as one range; the pages between runs
// are not read.
absl::StatusOr<std::vector<ColumnVector>> GatherRows(parquet::FileReader& reader,
                                                     std::string_view file_name,
                                                     const std::vector<int>& columns,
                                                     std::span<const uint64_t> rows) {
  std::vector<ColumnVector> out;
  for (size_t first = 0; first < rows.size();) {
    size_t end = first + 1;
    while (end < rows.size() && rows[end] - rows[end - 1] <= kLogsGatherGapRows) ++end;
    absl::StatusOr<std::vector<ColumnVector>> range = reader.Read(
        columns, static_cast<int64_t>(rows[first]), static_cast<int64_t>(rows[end - 1] + 1));
    if (!range.ok()) return AsDataLoss(range.status(), file_name);
    if (out.empty()) {
      out = *range;
      for (ColumnVector& column : out) column.Clear();
    }
    for (size_t k = 0; k < columns.size(); ++k) {
      for (size_t i = first; i < end; ++i) {
        const size_t r = rows[i] - rows[first];
        out[k].AppendSlice((*range)[k], r, r + 1);
      }
    }
    first = end;
  }
  return out;
}

}  // namespace

absl::StatusOr<LogRows> ReadLogsRowsAt(parquet::FileReader& reader, std::string_view file_name,
                                       std::span<const uint64_t> rows) {
  const auto file_rows = static_cast<uint64_t>(std::max<int64_t>(reader.num_rows(), 0));
  if (rows.empty()) {
    return absl::InvalidArgumentError(fmt::format("{}: no rows to read", file_name));
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] >= file_rows || (i > 0 && rows[i] <= rows[i - 1])) {
      return absl::InvalidArgumentError(
          fmt::format("{}: rows to read must increase and lie inside the file's {} rows; row {} "
                      "is {}",
                      file_name, file_rows, i, rows[i]));
    }
  }
  STRATA_ASSIGN_OR_RETURN(const LogsRowOrder order,
                          LogsTableRowOrder(reader.metadata(), file_name));
  // Rows that share a page decompress it once.
  reader.KeepLastPages(true);
  absl::Cleanup forget_pages = [&reader] { reader.KeepLastPages(false); };
  // The resource and scope columns other than their indexes repeat their
  // resource's and scope's content on every row: they are read at one row
  // per (resource, scope) pair the rows name, and copied to the others.
  // The promoted columns are not read back (AppendLogRows ignores them).
  constexpr int kResourceIndex = kLogsResourceScope + kResourceIndexOffset;
  constexpr int kScopeIndex = kLogsResourceScope + kScopeIndexOffset;
  std::vector<int> row_columns;
  std::vector<int> owner_columns;
  for (int k = 0; k < kLogsPromoted; ++k) {
    const bool owner_content = k >= kLogsResourceScope &&
                               k < kLogsResourceScope + kResourceScopeColumns &&
                               k != kResourceIndex && k != kScopeIndex;
    (owner_content ? owner_columns : row_columns).push_back(k);
  }
  STRATA_ASSIGN_OR_RETURN(std::vector<ColumnVector> by_row,
                          GatherRows(reader, file_name, row_columns, rows));
  std::vector<ColumnVector> c(kLogsColumnCount);
  for (size_t i = 0; i < row_columns.size(); ++i) c[row_columns[i]] = std::move(by_row[i]);
  // The first of `rows` naming each pair, and each row's pair.
  const ColumnVector& resource_index = c[kResourceIndex];
  const ColumnVector& scope_index = c[kScopeIndex];
  std::map<std::pair<int64_t, int64_t>, size_t> pair_of;
  std::vector<uint64_t> owner_rows;
  std::vector<size_t> pair(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::pair<int64_t, int64_t> key{resource_index.is_null(i) ? -1 : resource_index.int32s[i],
                                          scope_index.is_null(i) ? -1 : scope_index.int32s[i]};
    auto [it, added] = pair_of.emplace(key, owner_rows.size());
    if (added) owner_rows.push_back(rows[i]);
    pair[i] = it->second;
  }
  STRATA_ASSIGN_OR_RETURN(std::vector<ColumnVector> owners,
                          GatherRows(reader, file_name, owner_columns, owner_rows));
  for (size_t k = 0; k < owner_columns.size(); ++k) {
    ColumnVector& column = c[owner_columns[k]];
    column = owners[k];
    column.Clear();
    for (size_t i = 0; i < rows.size(); ++i) column.AppendSlice(owners[k], pair[i], pair[i] + 1);
  }
  for (int k = kLogsPromoted; k < kLogsColumnCount; ++k) {
    const parquet::ColumnSpec& spec = LogsTableColumns()[k];
    c[k] = spec.list ? ColumnVector::List(spec.type) : ColumnVector(spec.type);
  }
  LogRows out;
  STRATA_RETURN_IF_ERROR(AppendLogRows(c, file_name, rows[0], /*whole=*/false, order, &out));
  return out;
}

}  // namespace strata::storage
