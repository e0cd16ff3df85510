// ReadLogRecords, LogRecordKey, LogsFileBatchIds (log_records.h).

#include "api/log_records.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/params.h"
#include "api/trace_path.h"
#include "common/status_macros.h"
#include "storage/format/layout.h"
#include "storage/offload/data_file_resolver.h"
#include "storage/table/file_source.h"
#include "storage/table/logs_table.h"

namespace strata::api::internal {
namespace {

// A 64-bit hash whose value depends only on what is added, in order: the
// same on every run and machine (it is part of "v2." cursors).
class StableHash {
 public:
  void Add(uint64_t v) { h_ = Mix(h_ ^ v); }
  void Add(std::string_view bytes) {
    Add(uint64_t{bytes.size()});
    size_t i = 0;
    for (; i + 8 <= bytes.size(); i += 8) {
      uint64_t word;
      std::memcpy(&word, bytes.data() + i, 8);
      Add(word);
    }
    uint64_t tail = 0;
    for (size_t shift = 0; i < bytes.size(); ++i, shift += 8) {
      tail |= uint64_t{static_cast<uint8_t>(bytes[i])} << shift;
    }
    Add(tail);
  }
  template <size_t N>
  void Add(const std::array<uint8_t, N>& id) {
    Add(std::string_view(reinterpret_cast<const char*>(id.data()), N));
  }
  uint64_t value() const { return h_; }

 private:
  static uint64_t Mix(uint64_t x) {
    x *= 0x9e3779b97f4a7c15u;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9u;
    return x ^ (x >> 32);
  }
  uint64_t h_ = 0x243f6a8885a308d3u;
};

void HashValue(const otlp::BatchBase& batch, const otlp::ValueColumns& values, size_t row,
               StableHash* h);

void HashAttributes(const otlp::BatchBase& batch, const otlp::AttributeColumns& table,
                    otlp::Range range, StableHash* h) {
  h->Add(uint64_t{range.count});
  for (uint32_t i = range.begin; i < range.end(); ++i) {
    h->Add(table.key[i]);
    HashValue(batch, table.value, i, h);
  }
}

void HashValue(const otlp::BatchBase& batch, const otlp::ValueColumns& values, size_t row,
               StableHash* h) {
  const otlp::ValueType type = values.type[row];
  h->Add(static_cast<uint64_t>(type));
  switch (type) {
    case otlp::ValueType::kEmpty:
      return;
    case otlp::ValueType::kString:
    case otlp::ValueType::kBytes:
      h->Add(values.str[row]);
      return;
    case otlp::ValueType::kBool:
    case otlp::ValueType::kInt:
    case otlp::ValueType::kDouble:
      h->Add(values.bits[row]);
      return;
    case otlp::ValueType::kArray: {
      const otlp::Range children = values.children_at(row);
      h->Add(uint64_t{children.count});
      for (uint32_t i = children.begin; i < children.end(); ++i) {
        HashValue(batch, batch.nested_values, i, h);
      }
      return;
    }
    case otlp::ValueType::kKvList:
      HashAttributes(batch, batch.nested_attributes, values.children_at(row), h);
      return;
  }
}

// Copies of values from a read batch into the page's LogValues. Children of
// an array or kvlist are one contiguous run of the destination's nested
// table: the run is sized first, then each child is set (its own children
// go after the run).
otlp::ValueRow CopyValue(const otlp::BatchBase& from, const otlp::ValueColumns& values, size_t row,
                         otlp::BatchBase* to);

otlp::Range CopyAttributes(const otlp::BatchBase& from, const otlp::AttributeColumns& table,
                           otlp::Range range, otlp::BatchBase* to, otlp::AttributeColumns* dest) {
  const auto begin = static_cast<uint32_t>(dest->size());
  dest->Resize(begin + range.count);
  for (uint32_t i = 0; i < range.count; ++i) {
    const std::string_view key = to->arena.Copy(table.key[range.begin + i]);
    const otlp::ValueRow value = CopyValue(from, table.value, range.begin + i, to);
    dest->Set(begin + i, otlp::AttributeRow{key, value});
  }
  return otlp::Range{begin, range.count};
}

otlp::ValueRow CopyValue(const otlp::BatchBase& from, const otlp::ValueColumns& values, size_t row,
                         otlp::BatchBase* to) {
  otlp::ValueRow out{values.type[row], {}, values.bits[row]};
  switch (out.type) {
    case otlp::ValueType::kString:
    case otlp::ValueType::kBytes:
      out.str = to->arena.Copy(values.str[row]);
      break;
    case otlp::ValueType::kArray: {
      const otlp::Range children = values.children_at(row);
      const auto begin = static_cast<uint32_t>(to->nested_values.size());
      to->nested_values.Resize(begin + children.count);
      for (uint32_t i = 0; i < children.count; ++i) {
        const otlp::ValueRow child = CopyValue(from, from.nested_values, children.begin + i, to);
        to->nested_values.Set(begin + i, child);
      }
      out.bits = otlp::ValueColumns::Pack(otlp::Range{begin, children.count});
      break;
    }
    case otlp::ValueType::kKvList:
      out.bits = otlp::ValueColumns::Pack(CopyAttributes(
          from, from.nested_attributes, values.children_at(row), to, &to->nested_attributes));
      break;
    default:
      break;
  }
  return out;
}

// The service_name column's value: the first resource attribute
// service.name that is a string (promotion.h), "" when none is.
std::string ServiceName(const otlp::LogBatch& batch, uint32_t resource) {
  const otlp::Range range = batch.resources.attributes[resource];
  for (uint32_t i = range.begin; i < range.end(); ++i) {
    if (batch.resource_attributes.key[i] == "service.name" &&
        batch.resource_attributes.value.type[i] == otlp::ValueType::kString) {
      return std::string(batch.resource_attributes.value.str[i]);
    }
  }
  return "";
}

KeyedLogEntry EntryOf(const otlp::LogBatch& batch, size_t record, LogValues* values) {
  const otlp::LogRecordColumns& logs = batch.logs;
  const uint32_t scope = logs.scope[record];
  const uint32_t resource = batch.scopes.resource[scope];
  KeyedLogEntry out;
  LogEntry& e = out.entry;
  e.time = static_cast<int64_t>(logs.time_unix_nano[record]);
  e.observed_time = static_cast<int64_t>(logs.observed_time_unix_nano[record]);
  e.severity_number = logs.severity_number[record];
  e.severity_text = std::string(logs.severity_text[record]);
  e.service = ServiceName(batch, resource);
  if (logs.has_trace_id[record] != 0) e.trace_id = TraceIdHex(logs.trace_id[record]);
  if (logs.has_span_id[record] != 0) e.span_id = SpanIdHex(logs.span_id[record]);
  values->bodies.Append(CopyValue(batch, logs.body, record, values));
  e.body = otlp::LastRow(values->bodies);
  e.attributes = CopyAttributes(batch, batch.log_attributes, logs.attributes[record], values,
                                &values->log_attributes);
  e.scope_attributes = CopyAttributes(batch, batch.scope_attributes, batch.scopes.attributes[scope],
                                      values, &values->scope_attributes);
  e.resource_attributes =
      CopyAttributes(batch, batch.resource_attributes, batch.resources.attributes[resource], values,
                     &values->resource_attributes);
  out.key = LogRecordKey(batch, record);
  return out;
}

}  // namespace

uint64_t LogRecordKey(const otlp::LogBatch& batch, size_t record) {
  const otlp::LogRecordColumns& logs = batch.logs;
  const uint32_t scope = logs.scope[record];
  const uint32_t resource = batch.scopes.resource[scope];
  StableHash h;
  h.Add(logs.time_unix_nano[record]);
  h.Add(logs.observed_time_unix_nano[record]);
  h.Add(static_cast<uint64_t>(static_cast<uint32_t>(logs.severity_number[record])));
  h.Add(logs.severity_text[record]);
  HashValue(batch, logs.body, record, &h);
  HashAttributes(batch, batch.log_attributes, logs.attributes[record], &h);
  h.Add(uint64_t{logs.dropped_attributes_count[record]});
  h.Add(uint64_t{logs.flags[record]});
  h.Add(uint64_t{logs.has_trace_id[record]});
  h.Add(logs.trace_id[record]);
  h.Add(uint64_t{logs.has_span_id[record]});
  h.Add(logs.span_id[record]);
  h.Add(logs.event_name[record]);
  h.Add(batch.scopes.name[scope]);
  h.Add(batch.scopes.version[scope]);
  HashAttributes(batch, batch.scope_attributes, batch.scopes.attributes[scope], &h);
  HashAttributes(batch, batch.resource_attributes, batch.resources.attributes[resource], &h);
  return h.value();
}

std::map<std::string, std::string> LogsFileBatchIds(const storage::Snapshot& snapshot,
                                                    const std::string& data_dir) {
  std::map<std::string, std::string> out;
  for (const auto& batch : snapshot.batches()) {
    if (!batch->meta().logs_parquet.has_value()) continue;
    // The name the logs view listed it by (a cached copy when evicted).
    std::string path = storage::DataFilePathOf(*batch, storage::kLogsFileName);
    if (!path.starts_with('/')) path = absl::StrCat(data_dir, "/", path);
    out.emplace(std::move(path), batch->id().ToString());
  }
  return out;
}

absl::StatusOr<std::vector<KeyedLogEntry>> ReadLogRecords(
    FileSystem& fs, const std::map<std::string, std::string>& batch_ids,
    const std::vector<LogPosition>& positions, LogValues* values) {
  std::map<std::string_view, std::vector<uint64_t>> rows_by_file;
  for (const LogPosition& p : positions) rows_by_file[p.file].push_back(p.row);
  std::vector<KeyedLogEntry> out;
  out.reserve(positions.size());
  for (auto& [file, rows] : rows_by_file) {
    const auto id = batch_ids.find(std::string(file));
    if (id == batch_ids.end()) {
      return absl::InternalError(
          absl::StrCat("log search: ", std::string(file), " is not a logs file of the snapshot"));
    }
    std::sort(rows.begin(), rows.end());
    STRATA_ASSIGN_OR_RETURN(std::unique_ptr<storage::FileSource> source,
                            storage::OpenFileSource(fs, id->first));
    STRATA_ASSIGN_OR_RETURN(std::unique_ptr<parquet::FileReader> reader,
                            storage::OpenTable(source.get(), storage::LogsTableColumns(),
                                               storage::kLogsSchema, id->second, id->first));
    STRATA_ASSIGN_OR_RETURN(storage::LogRows read,
                            storage::ReadLogsRowsAt(*reader, id->first, rows));
    if (!read.placeholders.empty() || read.batch.logs.size() != rows.size()) {
      return absl::InternalError(
          absl::StrCat("log search: a position in ", id->first, " is not a log record row"));
    }
    for (size_t i = 0; i < read.batch.logs.size(); ++i) {
      out.push_back(EntryOf(read.batch, i, values));
    }
  }
  return out;
}

}  // namespace strata::api::internal
