#include "storage/table/logs_table.h"

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

std::vector<ColumnSpec> LogsColumnSpecs() {
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

}  // namespace

namespace logs_internal {

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

}  // namespace logs_internal

using logs_internal::BodyColumnOf;
using logs_internal::kBodyValueColumns;

// Builds the columns of the rows appended since the last flush of a
// LogsTableWriter.
class LogsBuilder {
 public:
  LogsBuilder();

  uint32_t AddBatch(const otlp::LogBatch& batch);
  uint32_t AddBatch(const otlp::LogBatch& batch, std::vector<uint32_t> resource_index,
                    std::vector<uint32_t> scope_index);
  const otlp::LogBatch& batch(uint32_t number) const { return *batches_[number]; }
  size_t rows() const { return row_kind_.int32s.size(); }
  void Reserve(size_t rows);
  void AppendPlaceholder(uint32_t batch, uint32_t resource, std::optional<uint32_t> scope);
  void AppendRecord(uint32_t batch, uint32_t record);
  std::vector<ColumnVector> Finish();
  const PromotionMisses& misses() const { return misses_; }

 private:
  void AppendBody(const otlp::LogBatch& b, uint32_t record);

  std::vector<const otlp::LogBatch*> batches_;
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

LogsBuilder::LogsBuilder() : matcher_(LogPromotionRules()) {
  body_ = {ColumnVector(PhysicalType::kByteArray), ColumnVector(PhysicalType::kInt64),
           ColumnVector(PhysicalType::kDouble), ColumnVector(PhysicalType::kBoolean),
           ColumnVector(PhysicalType::kByteArray)};
  for (ColumnVector& c : promoted_) c = ColumnVector(PhysicalType::kByteArray);
}

uint32_t LogsBuilder::AddBatch(const otlp::LogBatch& batch) {
  const uint32_t number = resource_scope_.AddBatch(batch);
  STRATA_CHECK(resource_promoted_.AddBatch(batch) == number, "batch numbers agree");
  batches_.push_back(&batch);
  return number;
}

uint32_t LogsBuilder::AddBatch(const otlp::LogBatch& batch, std::vector<uint32_t> resource_index,
                               std::vector<uint32_t> scope_index) {
  const uint32_t number =
      resource_scope_.AddBatch(batch, std::move(resource_index), std::move(scope_index));
  STRATA_CHECK(resource_promoted_.AddBatch(batch) == number, "batch numbers agree");
  batches_.push_back(&batch);
  return number;
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

namespace {

// Placeholder rows of one batch: resources without scopes (kind 2), then
// scopes without records (kind 1); each is passed to `emit` (resource,
// scope or nullopt). Returns how many.
template <typename Emit>
size_t ForEachPlaceholder(const otlp::LogBatch& b, Emit emit) {
  std::vector<uint32_t> scopes_per_resource(b.resources.size(), 0);
  std::vector<uint32_t> records_per_scope(b.scopes.size(), 0);
  for (uint32_t r : b.scopes.resource) ++scopes_per_resource[r];
  for (uint32_t s : b.logs.scope) ++records_per_scope[s];
  size_t rows = 0;
  for (uint32_t r = 0; r < b.resources.size(); ++r) {
    if (scopes_per_resource[r] != 0) continue;
    emit(r, std::nullopt);
    ++rows;
  }
  for (uint32_t s = 0; s < b.scopes.size(); ++s) {
    if (records_per_scope[s] != 0) continue;
    emit(b.scopes.resource[s], std::optional<uint32_t>(s));
    ++rows;
  }
  return rows;
}

}  // namespace

// ------------------------------------------------------------ LogsTableWriter

absl::StatusOr<std::unique_ptr<LogsTableWriter>> LogsTableWriter::Open(std::string_view batch_id,
                                                                       const TableOptions& options,
                                                                       LogsRowOrder order,
                                                                       parquet::ByteSink* sink) {
  parquet::WriterOptions writer_options = MakeWriterOptions(options, kLogsSchema, batch_id, {});
  if (order == LogsRowOrder::kEventTime) {
    writer_options.key_value_metadata.push_back(
        {kLogsRowOrderKey, std::string(kLogsRowOrderEventTime)});
  }
  STRATA_ASSIGN_OR_RETURN(
      std::unique_ptr<parquet::FileWriter> writer,
      parquet::FileWriter::Open(LogsTableColumns(), std::move(writer_options), sink));
  return std::unique_ptr<LogsTableWriter>(new LogsTableWriter(order, std::move(writer)));
}

LogsTableWriter::LogsTableWriter(LogsRowOrder order, std::unique_ptr<parquet::FileWriter> writer)
    : TableFileWriter("logs", std::move(writer)),
      order_(order),
      builder_(std::make_unique<LogsBuilder>()) {}

LogsTableWriter::~LogsTableWriter() = default;

uint32_t LogsTableWriter::AddBatch(const otlp::LogBatch& batch) {
  STRATA_CHECK(meta().file_rows == 0, "consecutive numbering only before the first Flush");
  return builder_->AddBatch(batch);
}

uint32_t LogsTableWriter::AddBatch(const otlp::LogBatch& batch,
                                   std::vector<uint32_t> resource_index,
                                   std::vector<uint32_t> scope_index) {
  return builder_->AddBatch(batch, std::move(resource_index), std::move(scope_index));
}

void LogsTableWriter::Reserve(size_t rows) { builder_->Reserve(rows); }

size_t LogsTableWriter::buffered_rows() const { return builder_->rows(); }

void LogsTableWriter::AppendPlaceholder(uint32_t batch, uint32_t resource,
                                        std::optional<uint32_t> scope) {
  if (seen_record_) Fail("a placeholder row after a record row");
  builder_->AppendPlaceholder(batch, resource, scope);
  ++placeholders_;
}

size_t LogsTableWriter::AppendPlaceholders(uint32_t batch) {
  return ForEachPlaceholder(builder_->batch(batch),
                            [&](uint32_t resource, std::optional<uint32_t> scope) {
                              AppendPlaceholder(batch, resource, scope);
                            });
}

void LogsTableWriter::AppendRecord(uint32_t batch, uint32_t record) {
  const otlp::LogRecordColumns& logs = builder_->batch(batch).logs;
  const uint64_t time =
      LogEventTime(logs.time_unix_nano[record], logs.observed_time_unix_nano[record]);
  if (order_ == LogsRowOrder::kEventTime && seen_record_ && time < last_time_) {
    Fail(fmt::format("record with event time {} appended after {}", time, last_time_));
  }
  ExtendEventTime(NanosRange{time, time});
  seen_record_ = true;
  last_time_ = time;
  ++meta().rows;
  builder_->AppendRecord(batch, record);
}

absl::Status LogsTableWriter::Flush() {
  const size_t rows = builder_->rows();
  STRATA_RETURN_IF_ERROR(CheckRoom(rows));
  if (rows > 0) {
    builder_->misses().AddTo(&meta().promotion_misses);
    const std::vector<ColumnVector> columns = builder_->Finish();
    STRATA_RETURN_IF_ERROR(file().WriteBatch(columns));
    meta().file_rows += rows;
  }
  builder_ = std::make_unique<LogsBuilder>();
  // A streaming caller flushes about as many rows each time: room for as
  // many as the last flush saves growing every column row by row.
  if (rows > 0) builder_->Reserve(rows);
  return absl::OkStatus();
}

absl::StatusOr<SignalMeta> LogsTableWriter::Finish() {
  STRATA_RETURN_IF_ERROR(Flush());
  return FinishFile();
}

const std::vector<ColumnSpec>& LogsTableColumns() {
  static const std::vector<ColumnSpec>* const specs = new std::vector<ColumnSpec>(LogsColumnSpecs());
  return *specs;
}

absl::StatusOr<LogsTable> WriteLogsTable(std::span<const otlp::LogBatch* const> batches,
                                         std::string_view batch_id, const TableOptions& options) {
  size_t placeholders = 0, records = 0;
  uint64_t resources = 0, scopes = 0;
  for (const otlp::LogBatch* b : batches) {
    STRATA_RETURN_IF_ERROR(otlp::ValidateBatch(*b));
    resources += b->resources.size();
    scopes += b->scopes.size();
    placeholders += ForEachPlaceholder(*b, [](uint32_t, std::optional<uint32_t>) {});
    records += b->logs.size();
  }
  const size_t rows = placeholders + records;
  if (rows >= std::numeric_limits<uint32_t>::max() ||
      resources > std::numeric_limits<int32_t>::max() ||
      scopes > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError("logs table: too many rows for one file");
  }
  LogsTable out;
  out.first_record_row = static_cast<uint32_t>(placeholders);
  if (rows == 0) return out;

  parquet::StringSink sink(&out.file);
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<LogsTableWriter> writer,
                          LogsTableWriter::Open(batch_id, options, LogsRowOrder::kInput, &sink));
  writer->Reserve(rows);
  for (const otlp::LogBatch* b : batches) writer->AddBatch(*b);
  for (uint32_t k = 0; k < batches.size(); ++k) writer->AppendPlaceholders(k);
  for (uint32_t k = 0; k < batches.size(); ++k) {
    for (uint32_t i = 0; i < batches[k]->logs.size(); ++i) writer->AppendRecord(k, i);
  }
  STRATA_ASSIGN_OR_RETURN(out.meta, writer->Finish());
  return out;
}

absl::Status CheckLogsTableFooter(parquet::RandomAccessSource* source, std::string_view batch_id,
                                  uint64_t file_rows, std::string_view file_name) {
  return CheckTableFooter(source, LogsTableColumns(), kLogsSchema, batch_id, file_rows, file_name);
}

}  // namespace strata::storage
