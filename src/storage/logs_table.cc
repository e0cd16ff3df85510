#include "storage/logs_table.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include "common/check.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "otlp/any_value_codec.h"
#include "otlp/decode.h"

namespace strata::storage {

using parquet::ColumnSpec;
using parquet::ColumnVector;
using parquet::PhysicalType;

namespace {

constexpr int kLogPromotedColumns = 2;
static_assert(kLogsColumnCount == kLogsPromoted + kResourcePromotedColumns + kLogPromotedColumns);

std::vector<PromotionRule> LogPromotionRules() {
  return {{"exception_type", {"exception.type"}, otlp::ValueType::kString},
          {"exception_message", {"exception.message"}, otlp::ValueType::kString}};
}

std::vector<ColumnSpec> BuildSpecs() {
  std::vector<ColumnSpec> s;
  AppendRowKindSpec(&s);
  AppendResourceScopeSpecs(&s);
  s.push_back(ColumnSpec::Integer("time_unix_nano", 64, false, true));
  s.push_back(ColumnSpec::Integer("observed_time_unix_nano", 64, false, true));
  s.push_back(ColumnSpec::Int32("severity_number", true));
  s.push_back(ColumnSpec::String("severity_text", true));
  s.push_back(ColumnSpec::Integer("body_type", 8, false, true));
  s.push_back(ColumnSpec::String("body_str", true));
  s.push_back(ColumnSpec::Int64("body_int", true));
  s.push_back(ColumnSpec::Double("body_double", true));
  s.push_back(ColumnSpec::Boolean("body_bool", true));
  s.push_back(ColumnSpec::Bytes("body_bytes", true));
  AppendAttributeFamilySpecs("attr", &s);
  s.push_back(ColumnSpec::Integer("dropped_attributes_count", 32, false, true));
  s.push_back(ColumnSpec::Integer("flags", 32, false, true));
  s.push_back(ColumnSpec::FixedBytes("trace_id", 16, true));
  s.push_back(ColumnSpec::FixedBytes("span_id", 8, true));
  s.push_back(ColumnSpec::String("event_name", true));
  AppendResourcePromotedSpecs(&s);
  for (const PromotionRule& rule : LogPromotionRules()) {
    s.push_back(ColumnSpec::String(std::string(rule.column), true));
  }
  STRATA_CHECK(s.size() == kLogsColumnCount, "logs column count");
  STRATA_CHECK(s[kLogsTime].name == "time_unix_nano" && s[kLogsEventName].name == "event_name" &&
                   s[kLogsPromoted].name == "service_name",
               "logs column positions");
  return s;
}

// The value columns of the body, in the order the schema has them.
constexpr int kBodyValueColumns = 5;  // str, int, double, bool, bytes

// Which body column (0..4 from kLogsBodyStr) holds a body of `type`; -1 for
// kEmpty.
int BodyColumnOf(otlp::ValueType type) {
  switch (type) {
    case otlp::ValueType::kString:
      return 0;
    case otlp::ValueType::kInt:
      return 1;
    case otlp::ValueType::kDouble:
      return 2;
    case otlp::ValueType::kBool:
      return 3;
    case otlp::ValueType::kBytes:
    case otlp::ValueType::kArray:
    case otlp::ValueType::kKvList:
      return 4;
    case otlp::ValueType::kEmpty:
      return -1;
  }
  return -1;
}

class LogsBuilder {
 public:
  explicit LogsBuilder(std::span<const otlp::LogBatch* const> batches);

  void Reserve(size_t rows);
  void AppendPlaceholder(uint32_t batch, uint32_t resource, std::optional<uint32_t> scope);
  void AppendRecord(uint32_t batch, uint32_t record);
  std::vector<ColumnVector> Finish();
  const PromotionMisses& misses() const { return misses_; }

 private:
  void AppendBody(const otlp::LogBatch& b, uint32_t record);

  std::span<const otlp::LogBatch* const> batches_;
  PromotionMatcher matcher_;
  PromotionMisses misses_;
  std::vector<int64_t> match_;
  std::vector<std::string_view> missed_;
  std::string scratch_;

  ColumnVector row_kind_{PhysicalType::kInt32};
  ResourceScopeWriter resource_scope_;
  ColumnVector time_{PhysicalType::kInt64};
  ColumnVector observed_time_{PhysicalType::kInt64};
  ColumnVector severity_number_{PhysicalType::kInt32};
  ColumnVector severity_text_{PhysicalType::kByteArray};
  ColumnVector body_type_{PhysicalType::kInt32};
  std::array<ColumnVector, kBodyValueColumns> body_;
  AttributeFamilyWriter attributes_;
  ColumnVector dropped_attributes_{PhysicalType::kInt32};
  ColumnVector flags_{PhysicalType::kInt32};
  ColumnVector trace_id_{PhysicalType::kFixedLenByteArray};
  ColumnVector span_id_{PhysicalType::kFixedLenByteArray};
  ColumnVector event_name_{PhysicalType::kByteArray};
  ResourcePromotedWriter resource_promoted_;
  std::array<ColumnVector, kLogPromotedColumns> promoted_;
};

LogsBuilder::LogsBuilder(std::span<const otlp::LogBatch* const> batches)
    : batches_(batches), matcher_(LogPromotionRules()) {
  for (const otlp::LogBatch* b : batches_) {
    resource_scope_.AddBatch(*b);
    resource_promoted_.AddBatch(*b);
  }
  body_ = {ColumnVector(PhysicalType::kByteArray), ColumnVector(PhysicalType::kInt64),
           ColumnVector(PhysicalType::kDouble), ColumnVector(PhysicalType::kBoolean),
           ColumnVector(PhysicalType::kByteArray)};
  for (ColumnVector& c : promoted_) c = ColumnVector(PhysicalType::kByteArray);
}

void LogsBuilder::Reserve(size_t rows) {
  resource_scope_.Reserve(rows);
  resource_promoted_.Reserve(rows);
  for (ColumnVector* c :
       {&row_kind_, &time_, &observed_time_, &severity_number_, &severity_text_, &body_type_,
        &dropped_attributes_, &flags_, &trace_id_, &span_id_, &event_name_}) {
    c->Reserve(rows);
  }
  for (ColumnVector& c : body_) c.Reserve(rows);
  for (ColumnVector& c : promoted_) c.Reserve(rows);
}

void LogsBuilder::AppendPlaceholder(uint32_t batch, uint32_t resource,
                                    std::optional<uint32_t> scope) {
  row_kind_.int32s.push_back(scope.has_value() ? 1 : 2);
  resource_scope_.AppendRow(batch, resource, scope);
  for (ColumnVector* c : {&time_, &observed_time_, &severity_number_, &severity_text_, &body_type_,
                          &dropped_attributes_, &flags_, &trace_id_, &span_id_, &event_name_}) {
    c->AppendNull();
  }
  for (ColumnVector& c : body_) c.AppendNull();
  attributes_.AppendEmptyRow();
  resource_promoted_.AppendNullRow();
  for (ColumnVector& c : promoted_) c.AppendNull();
}

void LogsBuilder::AppendBody(const otlp::LogBatch& b, uint32_t record) {
  const otlp::ValueColumns& body = b.logs.body;
  const otlp::ValueType type = body.type[record];
  body_type_.AppendInt32(static_cast<int32_t>(type));
  const int column = BodyColumnOf(type);
  for (int i = 0; i < kBodyValueColumns; ++i) {
    if (i != column) body_[i].AppendNull();
  }
  switch (type) {
    case otlp::ValueType::kString:
    case otlp::ValueType::kBytes:
      body_[column].AppendBytes(body.str[record]);
      break;
    case otlp::ValueType::kInt:
      body_[column].AppendInt64(body.int_at(record));
      break;
    case otlp::ValueType::kDouble:
      body_[column].AppendDouble(body.double_at(record));
      break;
    case otlp::ValueType::kBool:
      body_[column].AppendBool(body.bool_at(record));
      break;
    case otlp::ValueType::kArray:
    case otlp::ValueType::kKvList:
      scratch_.clear();
      otlp::EncodeAnyValueProto(b, body, record, &scratch_);
      body_[column].AppendBytes(scratch_);
      break;
    case otlp::ValueType::kEmpty:
      break;
  }
}

void LogsBuilder::AppendRecord(uint32_t batch, uint32_t record) {
  const otlp::LogBatch& b = *batches_[batch];
  const otlp::LogRecordColumns& l = b.logs;
  const uint32_t scope = l.scope[record];
  const uint32_t resource = b.scopes.resource[scope];
  row_kind_.int32s.push_back(0);
  resource_scope_.AppendRow(batch, resource, scope);
  time_.AppendInt64(static_cast<int64_t>(l.time_unix_nano[record]));
  observed_time_.AppendInt64(static_cast<int64_t>(l.observed_time_unix_nano[record]));
  severity_number_.AppendInt32(l.severity_number[record]);
  severity_text_.AppendBytes(l.severity_text[record]);
  AppendBody(b, record);
  attributes_.AppendRow(b, b.log_attributes, l.attributes[record]);
  dropped_attributes_.AppendInt32(static_cast<int32_t>(l.dropped_attributes_count[record]));
  flags_.AppendInt32(static_cast<int32_t>(l.flags[record]));
  if (l.has_trace_id[record] != 0) {
    trace_id_.AppendBytes({reinterpret_cast<const char*>(l.trace_id[record].data()), 16});
  } else {
    trace_id_.AppendNull();
  }
  if (l.has_span_id[record] != 0) {
    span_id_.AppendBytes({reinterpret_cast<const char*>(l.span_id[record].data()), 8});
  } else {
    span_id_.AppendNull();
  }
  event_name_.AppendBytes(l.event_name[record]);
  resource_promoted_.AppendRow(batch, resource, &misses_);
  missed_.clear();
  matcher_.Match(b.log_attributes, l.attributes[record], &match_, &missed_);
  for (int i = 0; i < kLogPromotedColumns; ++i) {
    if (match_[i] < 0) {
      promoted_[i].AppendNull();
    } else {
      promoted_[i].AppendBytes(b.log_attributes.value.str[match_[i]]);
    }
  }
  for (std::string_view key : missed_) misses_.Add(key);
}

std::vector<ColumnVector> LogsBuilder::Finish() {
  std::vector<ColumnVector> out;
  out.reserve(kLogsColumnCount);
  out.push_back(std::move(row_kind_));
  resource_scope_.MoveColumnsTo(&out);
  for (ColumnVector* c :
       {&time_, &observed_time_, &severity_number_, &severity_text_, &body_type_}) {
    out.push_back(std::move(*c));
  }
  for (ColumnVector& c : body_) out.push_back(std::move(c));
  attributes_.MoveColumnsTo(&out);
  for (ColumnVector* c : {&dropped_attributes_, &flags_, &trace_id_, &span_id_, &event_name_}) {
    out.push_back(std::move(*c));
  }
  resource_promoted_.MoveColumnsTo(&out);
  for (ColumnVector& c : promoted_) out.push_back(std::move(c));
  STRATA_CHECK(out.size() == kLogsColumnCount, "logs column count");
  return out;
}

// Placeholder rows of one batch: resources without scopes (kind 2), then
// scopes without records (kind 1).
size_t AppendPlaceholders(const otlp::LogBatch& b, uint32_t batch, LogsBuilder* builder) {
  std::vector<uint32_t> scopes_per_resource(b.resources.size(), 0);
  std::vector<uint32_t> records_per_scope(b.scopes.size(), 0);
  for (uint32_t r : b.scopes.resource) ++scopes_per_resource[r];
  for (uint32_t s : b.logs.scope) ++records_per_scope[s];
  size_t rows = 0;
  for (uint32_t r = 0; r < b.resources.size(); ++r) {
    if (scopes_per_resource[r] != 0) continue;
    if (builder != nullptr) builder->AppendPlaceholder(batch, r, std::nullopt);
    ++rows;
  }
  for (uint32_t s = 0; s < b.scopes.size(); ++s) {
    if (records_per_scope[s] != 0) continue;
    if (builder != nullptr) builder->AppendPlaceholder(batch, b.scopes.resource[s], s);
    ++rows;
  }
  return rows;
}

}  // namespace

const std::vector<ColumnSpec>& LogsTableColumns() {
  static const std::vector<ColumnSpec>* const specs = new std::vector<ColumnSpec>(BuildSpecs());
  return *specs;
}

absl::StatusOr<LogsTable> WriteLogsTable(std::span<const otlp::LogBatch* const> batches,
                                         std::string_view batch_id, const TableOptions& options) {
  size_t placeholders = 0, records = 0;
  uint64_t resources = 0, scopes = 0;
  uint64_t min_time = std::numeric_limits<uint64_t>::max(), max_time = 0;
  for (uint32_t k = 0; k < batches.size(); ++k) {
    const otlp::LogBatch& b = *batches[k];
    STRATA_RETURN_IF_ERROR(otlp::ValidateBatch(b));
    resources += b.resources.size();
    scopes += b.scopes.size();
    placeholders += AppendPlaceholders(b, k, nullptr);
    records += b.logs.size();
    for (size_t i = 0; i < b.logs.size(); ++i) {
      const uint64_t t = b.logs.time_unix_nano[i] != 0 ? b.logs.time_unix_nano[i]
                                                       : b.logs.observed_time_unix_nano[i];
      min_time = std::min(min_time, t);
      max_time = std::max(max_time, t);
    }
  }
  const size_t rows = placeholders + records;
  if (rows > std::numeric_limits<uint32_t>::max() ||
      resources > std::numeric_limits<int32_t>::max() ||
      scopes > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError("logs table: too many rows for one file");
  }
  LogsTable out;
  out.first_record_row = static_cast<uint32_t>(placeholders);
  out.meta.rows = records;
  out.meta.file_rows = rows;
  if (records > 0) {
    out.meta.event_time = NanosRange{min_time, max_time};
  } else if (rows > 0) {
    out.meta.event_time = NanosRange{0, 0};
  }
  if (rows == 0) return out;

  LogsBuilder builder(batches);
  builder.Reserve(rows);
  for (uint32_t k = 0; k < batches.size(); ++k) AppendPlaceholders(*batches[k], k, &builder);
  for (uint32_t k = 0; k < batches.size(); ++k) {
    for (uint32_t i = 0; i < batches[k]->logs.size(); ++i) builder.AppendRecord(k, i);
  }
  builder.misses().AddTo(&out.meta.promotion_misses);
  const std::vector<ColumnVector> columns = builder.Finish();
  STRATA_ASSIGN_OR_RETURN(out.file,
                          WriteTableFile(LogsTableColumns(), columns,
                                         MakeWriterOptions(options, kLogsSchema, batch_id, {})));
  return out;
}

absl::Status CheckLogsTableFooter(parquet::RandomAccessSource* source, std::string_view batch_id,
                                  uint64_t file_rows, std::string_view file_name) {
  return CheckTableFooter(source, LogsTableColumns(), kLogsSchema, batch_id, file_rows, file_name);
}

// ------------------------------------------------------------------ read

namespace {

const std::string& ColumnName(int column) { return LogsTableColumns()[column].name; }

class LogRowReader {
 public:
  LogRowReader(std::vector<ColumnVector>& c, std::string_view file_name, otlp::LogBatch* batch)
      : c_(c), file_name_(file_name), batch_(batch) {}

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
        return ColumnDataLoss(file_name_, ColumnName(k), r, "null on a log record row");
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
      return ColumnDataLoss(file_name_, "body_type", r,
                            fmt::format("type code {} outside 0..7", code));
    }
    const auto type = static_cast<otlp::ValueType>(code);
    const int column = BodyColumnOf(type);
    for (int i = 0; i < kBodyValueColumns; ++i) {
      if (c_[kLogsBodyStr + i].is_null(r) != (i == column)) continue;
      return ColumnDataLoss(file_name_, ColumnName(kLogsBodyStr + i), r,
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
              file_name_, "body_bytes", r,
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
  otlp::LogBatch* batch_;
  std::vector<std::string_view> views_ = std::vector<std::string_view>(kLogsColumnCount);
  std::optional<AttributeFamilyReader> attributes_;
};

}  // namespace

absl::StatusOr<otlp::LogBatch> ReadLogsTable(parquet::RandomAccessSource* source,
                                             std::string_view batch_id,
                                             std::string_view file_name) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<parquet::FileReader> reader,
                          OpenTable(source, LogsTableColumns(), kLogsSchema, batch_id, file_name));
  STRATA_ASSIGN_OR_RETURN(std::vector<ColumnVector> c, ReadAllColumns(*reader, file_name));
  otlp::LogBatch batch;
  STRATA_ASSIGN_OR_RETURN(const RowOwners owners,
                          RebuildResourcesAndScopes(std::span<ColumnVector>(c).subspan(
                                                        kLogsResourceScope, kResourceScopeColumns),
                                                    file_name, &batch));
  LogRowReader rows(c, file_name, &batch);
  STRATA_RETURN_IF_ERROR(rows.Init());
  const ColumnVector& kinds = c[kLogsRowKind];
  bool seen_record = false;
  for (size_t r = 0; r < kinds.size(); ++r) {
    const int32_t kind = kinds.int32s[r];
    if (kind < 0 || kind > 2) {
      return ColumnDataLoss(file_name, "row_kind", r,
                            fmt::format("row kind {} outside 0..2", kind));
    }
    if ((kind == 2) != (owners.scope[r] == RowOwners::kNoScope)) {
      return ColumnDataLoss(file_name, "scope_index", r,
                            kind == 2 ? "not null on a resource placeholder" : "null");
    }
    if (kind != 0) {
      if (seen_record) {
        return ColumnDataLoss(file_name, "row_kind", r, "placeholder row after a record row");
      }
      continue;
    }
    seen_record = true;
    STRATA_RETURN_IF_ERROR(rows.ReadRow(r, owners.scope[r]));
  }
  absl::Status valid = otlp::ValidateBatch(batch);
  if (!valid.ok()) {
    return absl::DataLossError(
        fmt::format("{}: rebuilt batch is invalid: {}", file_name, std::string(valid.message())));
  }
  return batch;
}

}  // namespace strata::storage
