// rollups.parquet: writer, reader and footer check (rollups_table.h).

#include "storage/table/rollups_table.h"

#include <limits>
#include <memory>
#include <utility>

#include "common/check.h"
#include "common/path.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "parquet/file_writer.h"
#include "storage/table/file_source.h"
#include "storage/table/logs_table.h"
#include "storage/table/metrics_table.h"
#include "storage/table/spans_table.h"

namespace strata::storage {

using parquet::ColumnSpec;
using parquet::ColumnVector;
using parquet::PhysicalType;
using rollups::DurationHistogram;
using rollups::EndpointType;
using rollups::RollupKind;
using rollups::RollupRow;
using rollups::RollupRows;

namespace {

// Column positions, in the order of rollups-parquet.md "Rows".
enum RollupsColumn : int {
  kRollup,
  kMinute,
  kServiceNamespace,
  kServiceName,
  kSpanName,
  kSpanKind,
  kEndpointType,
  kEndpointA,
  kEndpointB,
  kSeverityClass,
  kCount,
  kErrors,
  kDurationSum,
  kDurationMin,
  kDurationMax,
  kHistIndex,
  kHistCount,
  kRollupsColumnCount,
};

std::vector<ColumnSpec> RollupsColumnSpecs() {
  std::vector<ColumnSpec> s;
  s.push_back(ColumnSpec::Integer("rollup", 8, false));
  s.push_back(ColumnSpec::Integer("minute", 64, false));
  s.push_back(ColumnSpec::String("service_namespace"));
  s.push_back(ColumnSpec::String("service_name"));
  s.push_back(ColumnSpec::String("span_name", true));
  s.push_back(ColumnSpec::Integer("span_kind", 8, false, true));
  s.push_back(ColumnSpec::Integer("endpoint_type", 8, false, true));
  s.push_back(ColumnSpec::String("endpoint_a", true));
  s.push_back(ColumnSpec::String("endpoint_b", true));
  s.push_back(ColumnSpec::Integer("severity_class", 8, false, true));
  s.push_back(ColumnSpec::Int64("count"));
  s.push_back(ColumnSpec::Int64("errors", true));
  s.push_back(ColumnSpec::Int64("duration_sum", true));
  s.push_back(ColumnSpec::Int64("duration_min", true));
  s.push_back(ColumnSpec::Int64("duration_max", true));
  s.push_back(ColumnSpec::List(ColumnSpec::Integer("hist_index", 32, false), true));
  s.push_back(ColumnSpec::List(ColumnSpec::Int64("hist_count"), true));
  STRATA_CHECK(s.size() == kRollupsColumnCount, "rollups column count");
  return s;
}

ColumnVector Empty(const ColumnSpec& spec) {
  return spec.list ? ColumnVector::List(spec.type) : ColumnVector(spec.type);
}

void AppendString(ColumnVector& c, bool set, std::string_view value) {
  if (set) {
    c.AppendBytes(value);
  } else {
    c.AppendNull();
  }
}

void AppendSmall(ColumnVector& c, bool set, uint8_t value) {
  if (set) {
    c.AppendInt32(value);
  } else {
    c.AppendNull();
  }
}

void AppendInt(ColumnVector& c, bool set, int64_t value) {
  if (set) {
    c.AppendInt64(value);
  } else {
    c.AppendNull();
  }
}

// zstd level of rollups.parquet (at most the tables' own).
constexpr int kRollupsZstdLevel = 3;

// Span and log rows read at a time by ComputeBatchRollups.
constexpr uint64_t kRollupChunkRows = 65'536;

absl::Status RowError(std::string_view file_name, size_t row, std::string_view what) {
  return absl::DataLossError(fmt::format("{}: row {}: {}", file_name, row, what));
}

// Which key columns a kind sets: span_name, span_kind, the endpoint
// columns, severity_class.
struct KeyColumns {
  bool span_name, span_kind, endpoint, severity;
};
KeyColumns KeyColumnsOf(RollupKind kind) {
  return {kind == RollupKind::kOperation, rollups::HasDurations(kind),
          kind == RollupKind::kEndpoint, kind == RollupKind::kLogSeverity};
}

// One row read back, checked against the page's rules.
absl::StatusOr<RollupRow> ReadRow(const std::vector<ColumnVector>& c, size_t i,
                                  std::string_view file_name) {
  RollupRow row;
  const int32_t kind = c[kRollup].int32s[i];
  if (kind < 1 || kind > 4) return RowError(file_name, i, fmt::format("rollup {}", kind));
  row.key.kind = static_cast<RollupKind>(kind);
  row.key.minute = static_cast<uint64_t>(c[kMinute].int64s[i]);
  if (row.key.minute % rollups::kMinuteNanos != 0) {
    return RowError(file_name, i, fmt::format("minute {} is not whole", row.key.minute));
  }
  row.key.service_namespace = std::string(c[kServiceNamespace].bytes_at(i));
  row.key.service_name = std::string(c[kServiceName].bytes_at(i));
  const KeyColumns want = KeyColumnsOf(row.key.kind);
  auto check_set = [&](int column, bool set) -> absl::Status {
    if (c[column].is_null(i) == set) {
      return RowError(
          file_name, i,
          fmt::format("column {} is {} on a rollup {} row", column, set ? "null" : "set", kind));
    }
    return absl::OkStatus();
  };
  STRATA_RETURN_IF_ERROR(check_set(kSpanName, want.span_name));
  STRATA_RETURN_IF_ERROR(check_set(kSpanKind, want.span_kind));
  STRATA_RETURN_IF_ERROR(check_set(kEndpointType, want.endpoint));
  STRATA_RETURN_IF_ERROR(check_set(kEndpointA, want.endpoint));
  STRATA_RETURN_IF_ERROR(check_set(kEndpointB, want.endpoint));
  STRATA_RETURN_IF_ERROR(check_set(kSeverityClass, want.severity));
  const bool durations = rollups::HasDurations(row.key.kind);
  for (int column : {kErrors, kDurationSum, kDurationMin, kDurationMax}) {
    STRATA_RETURN_IF_ERROR(check_set(column, durations));
  }
  for (int column : {kHistIndex, kHistCount}) {
    if (c[column].is_null_list(i) == durations) {
      return RowError(file_name, i,
                      fmt::format("histogram list {} is {} on a rollup {} row", column,
                                  durations ? "null" : "set", kind));
    }
  }
  if (want.span_name) row.key.span_name = std::string(c[kSpanName].bytes_at(i));
  if (want.span_kind) {
    const int32_t span_kind = c[kSpanKind].int32s[i];
    if (span_kind < 0 || span_kind > 255) {
      return RowError(file_name, i, fmt::format("span_kind {}", span_kind));
    }
    row.key.span_kind = static_cast<uint8_t>(span_kind);
  }
  if (want.endpoint) {
    const int32_t type = c[kEndpointType].int32s[i];
    if (type < 1 || type > 3) return RowError(file_name, i, fmt::format("endpoint_type {}", type));
    row.key.endpoint_type = static_cast<EndpointType>(type);
    row.key.endpoint_a = std::string(c[kEndpointA].bytes_at(i));
    row.key.endpoint_b = std::string(c[kEndpointB].bytes_at(i));
  }
  if (want.severity) {
    const int32_t severity = c[kSeverityClass].int32s[i];
    if (severity < 0 || severity > 6) {
      return RowError(file_name, i, fmt::format("severity_class {}", severity));
    }
    row.key.severity_class = static_cast<uint8_t>(severity);
  }
  rollups::RollupMeasures& m = row.measures;
  m.count = c[kCount].int64s[i];
  if (m.count <= 0) return RowError(file_name, i, fmt::format("count {}", m.count));
  if (!durations) return row;
  m.errors = c[kErrors].int64s[i];
  m.duration_sum = c[kDurationSum].int64s[i];
  m.duration_min = c[kDurationMin].int64s[i];
  m.duration_max = c[kDurationMax].int64s[i];
  if (m.errors < 0 || m.errors > m.count) {
    return RowError(file_name, i, fmt::format("errors {} of count {}", m.errors, m.count));
  }
  if (m.duration_min > m.duration_max) {
    return RowError(
        file_name, i,
        fmt::format("duration_min {} above duration_max {}", m.duration_min, m.duration_max));
  }
  const parquet::ListRange index = c[kHistIndex].lists[i];
  const parquet::ListRange count = c[kHistCount].lists[i];
  if (index.count != count.count) {
    return RowError(file_name, i,
                    fmt::format("{} histogram indexes and {} counts", index.count, count.count));
  }
  std::vector<DurationHistogram::Bucket> buckets(index.count);
  for (uint64_t b = 0; b < index.count; ++b) {
    buckets[b] = {static_cast<uint32_t>(c[kHistIndex].int32s[index.begin + b]),
                  c[kHistCount].int64s[count.begin + b]};
  }
  absl::StatusOr<DurationHistogram> histogram = DurationHistogram::FromBuckets(buckets);
  if (!histogram.ok()) return RowError(file_name, i, std::string(histogram.status().message()));
  if (histogram->count() != m.count) {
    return RowError(
        file_name, i,
        fmt::format("histogram counts {} durations of {} spans", histogram->count(), m.count));
  }
  m.histogram = *std::move(histogram);
  return row;
}

}  // namespace

const std::vector<ColumnSpec>& RollupsTableColumns() {
  static const std::vector<ColumnSpec>* const specs =
      new std::vector<ColumnSpec>(RollupsColumnSpecs());
  return *specs;
}

absl::StatusOr<std::string> WriteRollupsTable(const RollupRows& rows, std::string_view batch_id,
                                              const TableOptions& options) {
  if (rows.empty()) return absl::InternalError("rollups table: no rows");
  const std::vector<ColumnSpec>& specs = RollupsTableColumns();
  std::vector<ColumnVector> c;
  for (const ColumnSpec& spec : specs) c.push_back(Empty(spec));
  for (size_t i = 0; i < rows.size(); ++i) {
    const RollupRow& row = rows[i];
    if (i > 0 && row.key < rows[i - 1].key) {
      return absl::InternalError(
          fmt::format("rollups table: row {} sorts before row {}", i, i - 1));
    }
    const KeyColumns set = KeyColumnsOf(row.key.kind);
    c[kRollup].AppendInt32(static_cast<int32_t>(row.key.kind));
    c[kMinute].AppendInt64(static_cast<int64_t>(row.key.minute));
    c[kServiceNamespace].AppendBytes(row.key.service_namespace);
    c[kServiceName].AppendBytes(row.key.service_name);
    AppendString(c[kSpanName], set.span_name, row.key.span_name);
    AppendSmall(c[kSpanKind], set.span_kind, row.key.span_kind);
    AppendSmall(c[kEndpointType], set.endpoint, static_cast<uint8_t>(row.key.endpoint_type));
    AppendString(c[kEndpointA], set.endpoint, row.key.endpoint_a);
    AppendString(c[kEndpointB], set.endpoint, row.key.endpoint_b);
    AppendSmall(c[kSeverityClass], set.severity, row.key.severity_class);
    const rollups::RollupMeasures& m = row.measures;
    c[kCount].AppendInt64(m.count);
    const bool durations = rollups::HasDurations(row.key.kind);
    AppendInt(c[kErrors], durations, m.errors);
    AppendInt(c[kDurationSum], durations, m.duration_sum);
    AppendInt(c[kDurationMin], durations, m.duration_min);
    AppendInt(c[kDurationMax], durations, m.duration_max);
    if (durations) {
      const uint64_t begin = c[kHistCount].int64s.size();
      for (const DurationHistogram::Bucket& b : m.histogram.buckets()) {
        c[kHistIndex].AppendInt32(static_cast<int32_t>(b.index));
        c[kHistCount].AppendInt64(b.count);
      }
      c[kHistIndex].AppendList(begin, m.histogram.buckets().size());
      c[kHistCount].AppendList(begin, m.histogram.buckets().size());
    } else {
      c[kHistIndex].AppendNullList();
      c[kHistCount].AppendNullList();
    }
  }
  // A small file written on every commit: zstd at the fast level costs a
  // fraction of the CPU of the tables' level for a few percent of bytes.
  TableOptions fast = options;
  fast.zstd_level = std::min(options.zstd_level, kRollupsZstdLevel);
  return WriteTableFile(specs, c, MakeWriterOptions(fast, kRollupsSchema, batch_id, {}));
}

absl::StatusOr<RollupRows> ReadRollupsTable(parquet::RandomAccessSource* source,
                                            std::string_view batch_id, std::string_view file_name) {
  STRATA_ASSIGN_OR_RETURN(
      std::unique_ptr<parquet::FileReader> reader,
      OpenTable(source, RollupsTableColumns(), kRollupsSchema, batch_id, file_name));
  STRATA_ASSIGN_OR_RETURN(std::vector<ColumnVector> c, ReadAllColumns(*reader, file_name));
  RollupRows rows;
  rows.reserve(c[kRollup].size());
  for (size_t i = 0; i < c[kRollup].size(); ++i) {
    STRATA_ASSIGN_OR_RETURN(RollupRow row, ReadRow(c, i, file_name));
    if (!rows.empty() && row.key < rows.back().key) {
      return RowError(file_name, i, "sorts before the row above it");
    }
    rows.push_back(std::move(row));
  }
  if (rows.empty()) return absl::DataLossError(fmt::format("{}: no rows", file_name));
  return rows;
}

absl::Status CheckRollupsTableFooter(parquet::RandomAccessSource* source, std::string_view batch_id,
                                     std::string_view file_name) {
  return OpenTable(source, RollupsTableColumns(), kRollupsSchema, batch_id, file_name).status();
}

absl::StatusOr<RollupRows> ReadBatchRollups(FileSystem& fs, const std::string& batch_dir,
                                            const BatchMeta& meta) {
  if (!meta.rollups_parquet.has_value()) return ComputeBatchRollups(fs, batch_dir, meta);
  STRATA_ASSIGN_OR_RETURN(auto source, OpenFileSource(fs, JoinPath(batch_dir, kRollupsFileName)));
  return ReadRollupsTable(source.get(), meta.id, kRollupsFileName);
}

absl::Status ForEachSpansChunk(FileSystem& fs, const std::string& batch_dir, const BatchMeta& meta,
                               const std::function<void(const otlp::TraceBatch&)>& fn) {
  if (!meta.spans_parquet.has_value() || meta.spans.rows == 0) return absl::OkStatus();
  STRATA_ASSIGN_OR_RETURN(auto source, OpenFileSource(fs, JoinPath(batch_dir, kSpansFileName)));
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<SpansRangeReader> reader,
                          SpansRangeReader::Open(source.get(), meta.id, kSpansFileName));
  const uint64_t first = meta.spans.file_rows - meta.spans.rows;
  for (uint64_t begin = first; begin < meta.spans.file_rows; begin += kRollupChunkRows) {
    otlp::TraceBatch batch;
    STRATA_RETURN_IF_ERROR(
        reader->ReadSpans(begin, std::min(begin + kRollupChunkRows, meta.spans.file_rows), &batch));
    fn(batch);
  }
  return absl::OkStatus();
}

absl::StatusOr<RollupRows> ComputeBatchRollups(FileSystem& fs, const std::string& batch_dir,
                                               const BatchMeta& meta) {
  // Spans and log records a range at a time, each range rolled up and the
  // parts merged (exact: rollups-parquet.md "Merging"), so memory holds one
  // range of rows.
  std::vector<RollupRows> parts;
  auto merge_parts = [&parts]() {
    std::vector<const RollupRows*> inputs;
    for (const RollupRows& part : parts) inputs.push_back(&part);
    RollupRows merged = rollups::MergeRollups(inputs);
    parts.clear();
    parts.push_back(std::move(merged));
  };
  auto add = [&](std::span<const otlp::TraceBatch* const> traces,
                 std::span<const otlp::LogBatch* const> logs,
                 std::span<const otlp::MetricBatch* const> metrics) {
    parts.push_back(rollups::BuildRollups(traces, logs, metrics));
    if (parts.size() >= 16) merge_parts();
  };
  STRATA_RETURN_IF_ERROR(ForEachSpansChunk(fs, batch_dir, meta, [&](const otlp::TraceBatch& batch) {
    const otlp::TraceBatch* one = &batch;
    add({&one, 1}, {}, {});
  }));
  if (meta.logs_parquet.has_value() && meta.logs.rows > 0) {
    STRATA_ASSIGN_OR_RETURN(auto source, OpenFileSource(fs, JoinPath(batch_dir, kLogsFileName)));
    STRATA_ASSIGN_OR_RETURN(
        std::unique_ptr<parquet::FileReader> reader,
        OpenTable(source.get(), LogsTableColumns(), kLogsSchema, meta.id, kLogsFileName));
    for (uint64_t begin = 0; begin < meta.logs.file_rows; begin += kRollupChunkRows) {
      STRATA_ASSIGN_OR_RETURN(
          LogRows rows, ReadLogsRows(*reader, kLogsFileName, begin,
                                     std::min(begin + kRollupChunkRows, meta.logs.file_rows)));
      const otlp::LogBatch* one = &rows.batch;
      add({}, {&one, 1}, {});
    }
  }
  if (meta.metrics_parquet.has_value() && meta.metrics.rows > 0) {
    STRATA_ASSIGN_OR_RETURN(auto source, OpenFileSource(fs, JoinPath(batch_dir, kMetricsFileName)));
    STRATA_ASSIGN_OR_RETURN(otlp::MetricBatch batch,
                            ReadMetricsTable(source.get(), meta.id, kMetricsFileName));
    const otlp::MetricBatch* one = &batch;
    add({}, {}, {&one, 1});
  }
  merge_parts();
  return std::move(parts.front());
}

}  // namespace strata::storage
