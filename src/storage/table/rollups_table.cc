// rollups.parquet: writer, reader and footer check (rollups_table.h).

#include "storage/table/rollups_table.h"

#include <limits>
#include <memory>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
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

// Column positions, in the order of rollups-parquet.md "Rows". The
// columns after kDurationMax depend on the layout (HistogramColumns).
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
  kLayoutColumnsStart,
};

// Where a layout keeps the histogram (-1: not in that layout).
struct HistogramColumns {
  bool bitmaps = true;  // format 3; else format 2's index lists
  int measures_row = -1;
  int hist_first = -1;
  int hist_nonzero = -1;
  int hist_index = -1;
  int hist_count = -1;
  int column_count = 0;
};

HistogramColumns HistogramColumnsOf(uint64_t meta_format) {
  if (meta_format >= 3) {
    return {.bitmaps = true,
            .measures_row = kLayoutColumnsStart,
            .hist_first = kLayoutColumnsStart + 1,
            .hist_nonzero = kLayoutColumnsStart + 2,
            .hist_count = kLayoutColumnsStart + 3,
            .column_count = kLayoutColumnsStart + 4};
  }
  return {.bitmaps = false,
          .hist_index = kLayoutColumnsStart,
          .hist_count = kLayoutColumnsStart + 1,
          .column_count = kLayoutColumnsStart + 2};
}

std::vector<ColumnSpec> RollupsColumnSpecs(uint64_t meta_format) {
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
  STRATA_CHECK(s.size() == kLayoutColumnsStart, "rollups common column count");
  const HistogramColumns layout = HistogramColumnsOf(meta_format);
  if (layout.bitmaps) {
    s.push_back(ColumnSpec::Integer("measures_row", 32, false, true));
    s.push_back(ColumnSpec::Integer("hist_first", 32, false, true));
    s.push_back(ColumnSpec::List(ColumnSpec::Boolean("hist_nonzero"), true));
  } else {
    s.push_back(ColumnSpec::List(ColumnSpec::Integer("hist_index", 32, false), true));
  }
  s.push_back(ColumnSpec::List(ColumnSpec::Int64("hist_count"), true));
  STRATA_CHECK(static_cast<int>(s.size()) == layout.column_count, "rollups column count");
  return s;
}

const std::vector<ColumnSpec>& RollupsColumnsOf(uint64_t meta_format) {
  static const std::vector<ColumnSpec>* const format2 =
      new std::vector<ColumnSpec>(RollupsColumnSpecs(2));
  static const std::vector<ColumnSpec>* const format3 =
      new std::vector<ColumnSpec>(RollupsColumnSpecs(3));
  return meta_format >= 3 ? *format3 : *format2;
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

void AppendSmallerThan2To31(ColumnVector& c, std::optional<uint32_t> value) {
  if (value.has_value()) {
    c.AppendInt32(static_cast<int32_t>(*value));
  } else {
    c.AppendNull();
  }
}

// The histogram columns of one row in `layout`; null lists for none.
void AppendHistogram(const HistogramColumns& layout, const DurationHistogram* histogram,
                     std::vector<ColumnVector>& c) {
  ColumnVector& counts = c[layout.hist_count];
  if (histogram == nullptr) {
    if (layout.bitmaps) {
      c[layout.hist_first].AppendNull();
      c[layout.hist_nonzero].AppendNullList();
    } else {
      c[layout.hist_index].AppendNullList();
    }
    counts.AppendNullList();
    return;
  }
  const std::vector<DurationHistogram::Bucket>& buckets = histogram->buckets();
  STRATA_CHECK(!buckets.empty(), "a row with durations has a histogram");
  const uint64_t counts_begin = counts.int64s.size();
  for (const DurationHistogram::Bucket& b : buckets) counts.AppendInt64(b.count);
  counts.AppendList(counts_begin, buckets.size());
  if (!layout.bitmaps) {
    ColumnVector& index = c[layout.hist_index];
    const uint64_t begin = index.int32s.size();
    for (const DurationHistogram::Bucket& b : buckets) {
      index.AppendInt32(static_cast<int32_t>(b.index));
    }
    index.AppendList(begin, buckets.size());
    return;
  }
  const uint32_t first = buckets.front().index;
  c[layout.hist_first].AppendInt32(static_cast<int32_t>(first));
  ColumnVector& nonzero = c[layout.hist_nonzero];
  const uint64_t begin = nonzero.bools.size();
  size_t next = 0;
  for (uint32_t bucket = first; bucket <= buckets.back().index; ++bucket) {
    const bool set = buckets[next].index == bucket;
    if (set) ++next;
    nonzero.AppendBool(set);
  }
  nonzero.AppendList(begin, buckets.back().index - first + 1);
}

// Finds, for an endpoint row, the first operation row added before it of
// the same minute, service and span kind with equal measures (its
// measures_row, rollups-parquet.md "Rows").
class OperationRowFinder {
 public:
  void Add(const RollupRows& rows, size_t i) { by_key_[KeyOf(rows[i])].push_back(i); }

  std::optional<uint32_t> Find(const RollupRows& rows, const RollupRow& endpoint) const {
    auto it = by_key_.find(KeyOf(endpoint));
    if (it == by_key_.end()) return std::nullopt;
    for (size_t i : it->second) {
      if (rows[i].measures == endpoint.measures) return static_cast<uint32_t>(i);
    }
    return std::nullopt;
  }

 private:
  using Key = std::tuple<uint64_t, std::string_view, std::string_view, uint8_t, int64_t>;
  static Key KeyOf(const RollupRow& row) {
    return {row.key.minute, row.key.service_namespace, row.key.service_name, row.key.span_kind,
            row.measures.count};
  }
  absl::flat_hash_map<Key, std::vector<size_t>> by_key_;
};

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

// The histogram of row i as `layout` stores it, checked (the bucket rules
// are FromBuckets's).
absl::StatusOr<DurationHistogram> ReadHistogram(const std::vector<ColumnVector>& c,
                                                const HistogramColumns& layout, size_t i,
                                                std::string_view file_name) {
  const parquet::ListRange count = c[layout.hist_count].lists[i];
  std::vector<DurationHistogram::Bucket> buckets;
  buckets.reserve(count.count);
  if (layout.bitmaps) {
    const int32_t first = c[layout.hist_first].int32s[i];
    const parquet::ListRange nonzero = c[layout.hist_nonzero].lists[i];
    if (first < 0 || nonzero.count == 0 ||
        nonzero.count > rollups::kDurationBuckets - static_cast<uint64_t>(first)) {
      return RowError(file_name, i,
                      fmt::format("histogram bitmap of {} buckets from {}", nonzero.count, first));
    }
    const std::vector<uint8_t>& bits = c[layout.hist_nonzero].bools;
    if (!bits[nonzero.begin] || !bits[nonzero.begin + nonzero.count - 1]) {
      return RowError(file_name, i, "histogram bitmap does not start and end with a set bucket");
    }
    for (uint64_t b = 0; b < nonzero.count; ++b) {
      if (!bits[nonzero.begin + b]) continue;
      if (buckets.size() == count.count) {
        return RowError(file_name, i, fmt::format("more set buckets than {} counts", count.count));
      }
      buckets.push_back({static_cast<uint32_t>(first + b),
                         c[layout.hist_count].int64s[count.begin + buckets.size()]});
    }
  } else {
    const parquet::ListRange index = c[layout.hist_index].lists[i];
    if (index.count != count.count) {
      return RowError(file_name, i,
                      fmt::format("{} histogram indexes and {} counts", index.count, count.count));
    }
    for (uint64_t b = 0; b < index.count; ++b) {
      buckets.push_back({static_cast<uint32_t>(c[layout.hist_index].int32s[index.begin + b]),
                         c[layout.hist_count].int64s[count.begin + b]});
    }
  }
  if (buckets.size() != count.count) {
    return RowError(file_name, i,
                    fmt::format("{} set buckets and {} counts", buckets.size(), count.count));
  }
  absl::StatusOr<DurationHistogram> histogram = DurationHistogram::FromBuckets(buckets);
  if (!histogram.ok()) return RowError(file_name, i, std::string(histogram.status().message()));
  return histogram;
}

// The measures of a row with `measures_row` set: those of the earlier
// operation row it numbers, which must share its minute, service, span
// kind and count.
absl::Status CopyReferencedMeasures(const RollupRows& earlier, int32_t measures_row, size_t i,
                                    std::string_view file_name, RollupRow* row) {
  if (measures_row < 0 || static_cast<size_t>(measures_row) >= earlier.size()) {
    return RowError(file_name, i,
                    fmt::format("measures_row {} is not an earlier row", measures_row));
  }
  const RollupRow& from = earlier[measures_row];
  if (from.key.kind != RollupKind::kOperation || from.key.minute != row->key.minute ||
      from.key.service_namespace != row->key.service_namespace ||
      from.key.service_name != row->key.service_name || from.key.span_kind != row->key.span_kind ||
      from.measures.count != row->measures.count) {
    return RowError(file_name, i,
                    fmt::format("measures_row {} is not an operation row of the same minute, "
                                "service, span kind and count",
                                measures_row));
  }
  row->measures = from.measures;
  return absl::OkStatus();
}

// One row read back, checked against the page's rules. `earlier` holds
// the rows before it (a measures_row names one of them).
absl::StatusOr<RollupRow> ReadRow(const std::vector<ColumnVector>& c,
                                  const HistogramColumns& layout, size_t i,
                                  std::string_view file_name, const RollupRows& earlier) {
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
  const bool referenced = layout.bitmaps && !c[layout.measures_row].is_null(i);
  if (referenced && row.key.kind != RollupKind::kEndpoint) {
    return RowError(file_name, i, fmt::format("measures_row set on a rollup {} row", kind));
  }
  const bool own_measures = durations && !referenced;
  for (int column : {kErrors, kDurationSum, kDurationMin, kDurationMax}) {
    STRATA_RETURN_IF_ERROR(check_set(column, own_measures));
  }
  if (layout.bitmaps) STRATA_RETURN_IF_ERROR(check_set(layout.hist_first, own_measures));
  for (int column : {layout.hist_nonzero, layout.hist_index, layout.hist_count}) {
    if (column >= 0 && c[column].is_null_list(i) == own_measures) {
      return RowError(file_name, i,
                      fmt::format("histogram list {} is {} on a rollup {} row", column,
                                  own_measures ? "null" : "set", kind));
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
  if (referenced) {
    STRATA_RETURN_IF_ERROR(
        CopyReferencedMeasures(earlier, c[layout.measures_row].int32s[i], i, file_name, &row));
    return row;
  }
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
  STRATA_ASSIGN_OR_RETURN(DurationHistogram histogram, ReadHistogram(c, layout, i, file_name));
  if (histogram.count() != m.count) {
    return RowError(
        file_name, i,
        fmt::format("histogram counts {} durations of {} spans", histogram.count(), m.count));
  }
  m.histogram = std::move(histogram);
  return row;
}

}  // namespace

const std::vector<ColumnSpec>& RollupsTableColumns() { return RollupsColumnsOf(kBatchMetaFormat); }

absl::StatusOr<std::string> WriteRollupsTable(const RollupRows& rows, std::string_view batch_id,
                                              const TableOptions& options, uint64_t meta_format) {
  if (rows.empty()) return absl::InternalError("rollups table: no rows");
  const HistogramColumns layout = HistogramColumnsOf(meta_format);
  const std::vector<ColumnSpec>& specs = RollupsColumnsOf(meta_format);
  std::vector<ColumnVector> c;
  for (const ColumnSpec& spec : specs) c.push_back(Empty(spec));
  OperationRowFinder operations;
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
    std::optional<uint32_t> measures_row;
    if (layout.bitmaps && row.key.kind == RollupKind::kOperation) operations.Add(rows, i);
    if (layout.bitmaps && row.key.kind == RollupKind::kEndpoint) {
      measures_row = operations.Find(rows, row);
    }
    const bool own_measures = rollups::HasDurations(row.key.kind) && !measures_row.has_value();
    AppendInt(c[kErrors], own_measures, m.errors);
    AppendInt(c[kDurationSum], own_measures, m.duration_sum);
    AppendInt(c[kDurationMin], own_measures, m.duration_min);
    AppendInt(c[kDurationMax], own_measures, m.duration_max);
    if (layout.bitmaps) {
      AppendSmallerThan2To31(c[layout.measures_row], measures_row);
    }
    AppendHistogram(layout, own_measures ? &m.histogram : nullptr, c);
  }
  // A small file written on every commit: zstd at the fast level costs a
  // fraction of the CPU of the tables' level for a few percent of bytes.
  TableOptions fast = options;
  fast.zstd_level = std::min(options.zstd_level, kRollupsZstdLevel);
  return WriteTableFile(specs, c, MakeWriterOptions(fast, kRollupsSchema, batch_id, {}));
}

absl::StatusOr<RollupRows> ReadRollupsTable(parquet::RandomAccessSource* source,
                                            std::string_view batch_id, std::string_view file_name,
                                            uint64_t meta_format) {
  STRATA_ASSIGN_OR_RETURN(
      std::unique_ptr<parquet::FileReader> reader,
      OpenTable(source, RollupsColumnsOf(meta_format), kRollupsSchema, batch_id, file_name));
  STRATA_ASSIGN_OR_RETURN(std::vector<ColumnVector> c, ReadAllColumns(*reader, file_name));
  const HistogramColumns layout = HistogramColumnsOf(meta_format);
  RollupRows rows;
  rows.reserve(c[kRollup].size());
  for (size_t i = 0; i < c[kRollup].size(); ++i) {
    STRATA_ASSIGN_OR_RETURN(RollupRow row, ReadRow(c, layout, i, file_name, rows));
    if (!rows.empty() && row.key < rows.back().key) {
      return RowError(file_name, i, "sorts before the row above it");
    }
    rows.push_back(std::move(row));
  }
  if (rows.empty()) return absl::DataLossError(fmt::format("{}: no rows", file_name));
  return rows;
}

absl::Status CheckRollupsTableFooter(parquet::RandomAccessSource* source, std::string_view batch_id,
                                     std::string_view file_name, uint64_t meta_format) {
  return OpenTable(source, RollupsColumnsOf(meta_format), kRollupsSchema, batch_id, file_name)
      .status();
}

absl::StatusOr<RollupRows> ReadBatchRollups(const DataFileOpener& open, const BatchMeta& meta) {
  if (!meta.rollups_parquet.has_value()) return ComputeBatchRollups(open, meta);
  STRATA_ASSIGN_OR_RETURN(auto source, open(kRollupsFileName));
  return ReadRollupsTable(source.get(), meta.id, kRollupsFileName, meta.format);
}

absl::StatusOr<RollupRows> ReadBatchRollups(FileSystem& fs, const std::string& batch_dir,
                                            const BatchMeta& meta) {
  return ReadBatchRollups(LocalDataFiles(fs, batch_dir), meta);
}

absl::Status ForEachSpansChunk(const DataFileOpener& open, const BatchMeta& meta,
                               const std::function<void(const otlp::TraceBatch&)>& fn) {
  if (!meta.spans_parquet.has_value() || meta.spans.rows == 0) return absl::OkStatus();
  STRATA_ASSIGN_OR_RETURN(auto source, open(kSpansFileName));
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

absl::Status ForEachSpansChunk(FileSystem& fs, const std::string& batch_dir, const BatchMeta& meta,
                               const std::function<void(const otlp::TraceBatch&)>& fn) {
  return ForEachSpansChunk(LocalDataFiles(fs, batch_dir), meta, fn);
}

absl::StatusOr<RollupRows> ComputeBatchRollups(FileSystem& fs, const std::string& batch_dir,
                                               const BatchMeta& meta) {
  return ComputeBatchRollups(LocalDataFiles(fs, batch_dir), meta);
}

absl::StatusOr<RollupRows> ComputeBatchRollups(const DataFileOpener& open, const BatchMeta& meta) {
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
  STRATA_RETURN_IF_ERROR(ForEachSpansChunk(open, meta, [&](const otlp::TraceBatch& batch) {
    const otlp::TraceBatch* one = &batch;
    add({&one, 1}, {}, {});
  }));
  if (meta.logs_parquet.has_value() && meta.logs.rows > 0) {
    STRATA_ASSIGN_OR_RETURN(auto source, open(kLogsFileName));
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
    STRATA_ASSIGN_OR_RETURN(auto source, open(kMetricsFileName));
    STRATA_ASSIGN_OR_RETURN(otlp::MetricBatch batch,
                            ReadMetricsTable(source.get(), meta.id, kMetricsFileName));
    const otlp::MetricBatch* one = &batch;
    add({}, {}, {&one, 1});
  }
  merge_parts();
  return std::move(parts.front());
}

}  // namespace strata::storage
