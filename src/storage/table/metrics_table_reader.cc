// ReadMetricsTable and ReadMetricsRows: metrics.parquet, whole or a row
// range, back into one MetricBatch, with the checks of metrics-parquet.md
// "Validation" (metrics_table.h).

#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/status_macros.h"
#include "fmt/format.h"
#include "otlp/decode.h"
#include "storage/table/metrics_table.h"

namespace strata::storage {
namespace {

using metrics_internal::HasTemporality;
using metrics_internal::IsFamilyColumn;
using metrics_internal::IsKnownMetricType;
using metrics_internal::IsNumberType;
using metrics_internal::kExemplarLists;
using otlp::MetricBatch;
using otlp::MetricType;
using otlp::NumberType;
using otlp::Range;
using parquet::ColumnVector;

// Whether a column must be null, must be present, or may be either.
enum class Presence : uint8_t { kNull, kPresent, kEither };

Presence PresentIf(bool condition) { return condition ? Presence::kPresent : Presence::kNull; }

// What metrics-parquet.md "Validation" requires of a shaped column on a row
// of `kind` whose metric has `type` (kUnset on kinds 2 and 3).
Presence ExpectedPresence(int column, int32_t kind, MetricType type) {
  const bool metric_row = kind == kMetricsDataPointRow || kind == kMetricsEmptyMetricRow;
  const bool point = kind == kMetricsDataPointRow;
  const bool histogram = type == MetricType::kHistogram;
  const bool exponential = type == MetricType::kExponentialHistogram;
  const bool summary = type == MetricType::kSummary;
  switch (column) {
    case kMetricsIndex:
    case kMetricsName:
    case kMetricsDescription:
    case kMetricsUnit:
    case kMetricsType:
      return PresentIf(metric_row);
    case kMetricsAggregationTemporality:
      return PresentIf(metric_row && HasTemporality(type));
    case kMetricsIsMonotonic:
      return PresentIf(metric_row && type == MetricType::kSum);
    case kMetricsStartTime:
    case kMetricsTime:
    case kMetricsPointFlags:
      return PresentIf(point);
    case kMetricsValueType:
      return PresentIf(point && IsNumberType(type));
    case kMetricsValueDouble:
    case kMetricsValueInt:
      return point && IsNumberType(type) ? Presence::kEither : Presence::kNull;
    case kMetricsCount:
      return PresentIf(point && (histogram || exponential || summary));
    case kMetricsSum:
      if (point && summary) return Presence::kPresent;
      return point && (histogram || exponential) ? Presence::kEither : Presence::kNull;
    case kMetricsMin:
    case kMetricsMax:
      return point && (histogram || exponential) ? Presence::kEither : Presence::kNull;
    case kMetricsBucketCounts:
    case kMetricsExplicitBounds:
      return PresentIf(point && histogram);
    case kMetricsSummaryQuantile:
    case kMetricsSummaryValue:
      return PresentIf(point && summary);
    default:  // kMetricsExpScale .. kMetricsExpNegativeBucketCounts
      return PresentIf(point && exponential);
  }
}

// Rebuilds a MetricBatch from the read-back columns of one file, checking
// them as it goes. Single use: construct, then Read().
class MetricsTableReader {
 public:
  // Vector row r is file row first_row + r (for messages).
  MetricsTableReader(std::string_view file_name, uint64_t first_row, MetricsRowOrder order,
                     std::vector<ColumnVector>* columns, MetricBatch* batch)
      : file_name_(file_name), first_row_(first_row), order_(order), c_(*columns), b_(batch) {}

  [[nodiscard]] absl::Status Read();

  const RowOwners& owners() const { return owners_; }
  // Per vector row: the row of its point table a data point went to.
  const std::vector<uint32_t>& point_of_row() const { return point_of_row_; }

 private:
  absl::Status Fail(int column, size_t row, std::string_view what) const {
    return ColumnDataLoss(file_name_, metrics_internal::ColumnName(column), first_row_ + row, what);
  }
  bool IsNull(int column, size_t row) const {
    return c_[column].is_list ? c_[column].is_null_list(row) : c_[column].is_null(row);
  }
  int32_t Kind(size_t row) const { return c_[kMetricsRowKind].int32s[row]; }
  // The row's metric type; kUnset when null or not a known code.
  MetricType TypeOf(size_t row) const {
    const int32_t code = c_[kMetricsType].int32s[row];
    return c_[kMetricsType].is_null(row) || !IsKnownMetricType(code)
               ? MetricType::kUnset
               : static_cast<MetricType>(code);
  }
  [[nodiscard]] absl::Status CheckColumnSizes() const;
  [[nodiscard]] absl::Status CheckRowShape(size_t row) const;
  [[nodiscard]] absl::Status CheckRowValues(size_t row) const;
  [[nodiscard]] absl::Status CheckExemplars(size_t row) const;
  [[nodiscard]] absl::Status CheckOrder() const;
  [[nodiscard]] absl::Status MakeFamilies();
  [[nodiscard]] absl::Status GroupRowsByMetric();
  [[nodiscard]] absl::Status AppendMetric(uint32_t metric);
  [[nodiscard]] absl::Status AppendPoint(size_t row, MetricType type, uint32_t metric);
  void AppendNumberPoint(size_t row, const otlp::PointRowBase& base);
  otlp::HistogramStatsRow Stats(size_t row, const otlp::PointRowBase& base) const;
  void AppendHistogramPoint(size_t row, const otlp::HistogramStatsRow& stats);
  void AppendExponentialPoint(size_t row, const otlp::HistogramStatsRow& stats);
  void AppendSummaryPoint(size_t row, const otlp::PointRowBase& base);
  [[nodiscard]] absl::StatusOr<Range> AppendExemplars(size_t row);
  std::string_view Name(size_t row) const { return BytesAt(c_[kMetricsName], names_, row); }

  const std::string_view file_name_;
  const uint64_t first_row_;
  const MetricsRowOrder order_;
  std::vector<ColumnVector>& c_;
  MetricBatch* const b_;
  RowOwners owners_;
  std::string_view names_, descriptions_, units_;
  std::optional<AttributeFamilyReader> metadata_, attributes_, exemplar_attributes_;
  // Rows of metric m: rows_by_metric_[metric_rows_begin_[m] .. [m + 1]).
  std::vector<uint32_t> metric_rows_begin_;
  std::vector<uint32_t> rows_by_metric_;
  std::vector<Range> split_;
  std::vector<uint32_t> point_of_row_;
};

absl::Status MetricsTableReader::CheckColumnSizes() const {
  const size_t rows = c_[kMetricsRowKind].size();
  for (int c = 0; c < kMetricsColumnCount; ++c) {
    if (c_[c].size() != rows) return Fail(c, 0, "column length differs from row_kind's");
    // Batch tables index their rows with uint32.
    if (c_[c].element_count() >= std::numeric_limits<uint32_t>::max()) {
      return Fail(c, 0, "too many values for one batch");
    }
  }
  return absl::OkStatus();
}

// Row kind, the metric type code, and which columns are null.
absl::Status MetricsTableReader::CheckRowShape(size_t row) const {
  const int32_t kind = Kind(row);
  if (kind < kMetricsDataPointRow || kind > kMetricsEmptyResourceRow) {
    return Fail(kMetricsRowKind, row, fmt::format("row kind {} outside 0..3", kind));
  }
  if ((owners_.scope[row] == RowOwners::kNoScope) != (kind == kMetricsEmptyResourceRow)) {
    return ColumnDataLoss(file_name_, "scope_index", first_row_ + row,
                          "must be null exactly on kind-3 rows (resources without scopes)");
  }
  const bool metric_row = kind <= kMetricsEmptyMetricRow;
  if (metric_row && !c_[kMetricsType].is_null(row) &&
      !IsKnownMetricType(c_[kMetricsType].int32s[row])) {
    return Fail(kMetricsType, row, fmt::format("unknown type {}", c_[kMetricsType].int32s[row]));
  }
  const MetricType type = TypeOf(row);
  if (kind == kMetricsDataPointRow && type == MetricType::kUnset) {
    return Fail(kMetricsType, row, "a data point of a metric with no type");
  }
  for (int column = kMetricsIndex; column <= kMetricsSummaryValue; ++column) {
    if (IsFamilyColumn(column)) continue;
    const Presence want = ExpectedPresence(column, kind, type);
    if (want == Presence::kEither) continue;
    if (IsNull(column, row) == (want == Presence::kPresent)) {
      return Fail(column, row,
                  fmt::format("{} on a row of kind {} and metric type {}",
                              want == Presence::kPresent ? "null" : "present", kind,
                              static_cast<int>(type)));
    }
  }
  const std::pair<int, bool> families[] = {
      {kMetricsMetadata, metric_row},
      {kMetricsPointAttributes, kind == kMetricsDataPointRow},
      {kMetricsExemplarAttributes, kind == kMetricsDataPointRow}};
  for (const auto& [first, allowed] : families) {
    if (!allowed && c_[first].lists[row].count != 0) {
      return Fail(first, row, "attributes on a row that has none");
    }
  }
  return absl::OkStatus();
}

// Value oneofs and list lengths of a row whose shape is valid.
absl::Status MetricsTableReader::CheckRowValues(size_t row) const {
  if (!c_[kMetricsValueType].is_null(row)) {
    const int32_t vt = c_[kMetricsValueType].int32s[row];
    if (vt < 0 || vt > static_cast<int32_t>(NumberType::kInt)) {
      return Fail(kMetricsValueType, row, fmt::format("value type {} outside 0..2", vt));
    }
    if (c_[kMetricsValueDouble].is_null(row) == (vt == static_cast<int32_t>(NumberType::kDouble)) ||
        c_[kMetricsValueInt].is_null(row) == (vt == static_cast<int32_t>(NumberType::kInt))) {
      return Fail(kMetricsValueType, row, "value_double / value_int do not match the value type");
    }
  }
  if (!c_[kMetricsSummaryQuantile].is_null_list(row) &&
      c_[kMetricsSummaryQuantile].lists[row].count != c_[kMetricsSummaryValue].lists[row].count) {
    return Fail(kMetricsSummaryValue, row, "length differs from summary_quantile");
  }
  return CheckExemplars(row);
}

absl::Status MetricsTableReader::CheckExemplars(size_t row) const {
  const uint64_t count = c_[kMetricsExemplarTime].lists[row].count;
  for (int column : kExemplarLists) {
    if (c_[column].lists[row].count != count) {
      return Fail(column, row, "length differs from exemplar_time_unix_nano");
    }
  }
  if (count != 0 && Kind(row) != kMetricsDataPointRow) {
    return Fail(kMetricsExemplarTime, row, "exemplars on a placeholder row");
  }
  for (uint64_t e = 0; e < count; ++e) {
    const int32_t vt =
        c_[kMetricsExemplarValueType].int32s[c_[kMetricsExemplarValueType].lists[row].begin + e];
    if (vt < 0 || vt > static_cast<int32_t>(NumberType::kInt)) {
      return Fail(kMetricsExemplarValueType, row, fmt::format("value type {} outside 0..2", vt));
    }
    const bool has_double = !c_[kMetricsExemplarValueDouble].is_null(
        c_[kMetricsExemplarValueDouble].lists[row].begin + e);
    const bool has_int =
        !c_[kMetricsExemplarValueInt].is_null(c_[kMetricsExemplarValueInt].lists[row].begin + e);
    if (has_double != (vt == static_cast<int32_t>(NumberType::kDouble)) ||
        has_int != (vt == static_cast<int32_t>(NumberType::kInt))) {
      return Fail(kMetricsExemplarValueType, row,
                  fmt::format("exemplar {}: value columns do not match its value type", e));
    }
  }
  return absl::OkStatus();
}

// Placeholders of kinds 2 and 3 first, then metric names non-decreasing
// (and with MetricsRowOrder::kNameTime, times within a name).
absl::Status MetricsTableReader::CheckOrder() const {
  const size_t rows = c_[kMetricsRowKind].size();
  bool seen_metric = false;
  MetricsOrderKey previous;
  for (size_t r = 0; r < rows; ++r) {
    if (Kind(r) > kMetricsEmptyMetricRow) {
      if (seen_metric) {
        return Fail(kMetricsRowKind, r, "a resource or scope placeholder after metric rows");
      }
      continue;
    }
    const bool point = Kind(r) == kMetricsDataPointRow;
    const MetricsOrderKey key{Name(r), point,
                              point ? static_cast<uint64_t>(c_[kMetricsTime].int64s[r]) : 0};
    if (seen_metric && key.name < previous.name) {
      return Fail(kMetricsName, r, "rows are not sorted by metric_name");
    }
    if (seen_metric && order_ == MetricsRowOrder::kNameTime && key < previous) {
      return Fail(kMetricsTime, r, "rows are not sorted by time_unix_nano within a metric_name");
    }
    previous = key;
    seen_metric = true;
  }
  return absl::OkStatus();
}

absl::Status MetricsTableReader::MakeFamilies() {
  const std::span<ColumnVector> all(c_);
  const std::tuple<std::optional<AttributeFamilyReader>*, int, const char*> families[] = {
      {&metadata_, kMetricsMetadata, "metric_metadata"},
      {&attributes_, kMetricsPointAttributes, "attr"},
      {&exemplar_attributes_, kMetricsExemplarAttributes, "exemplar_attr"}};
  for (const auto& [reader, first, prefix] : families) {
    STRATA_ASSIGN_OR_RETURN(AttributeFamilyReader made,
                            AttributeFamilyReader::Make(all.subspan(first, kAttributeFamilyColumns),
                                                        prefix, file_name_, b_));
    reader->emplace(std::move(made));
  }
  return absl::OkStatus();
}

// Dense metric indexes; each metric's rows, in file order (a counting sort).
absl::Status MetricsTableReader::GroupRowsByMetric() {
  const ColumnVector& index = c_[kMetricsIndex];
  const size_t rows = index.size();
  std::vector<uint32_t> counts;
  for (size_t r = 0; r < rows; ++r) {
    if (index.is_null(r)) continue;
    const auto m = static_cast<uint32_t>(index.int32s[r]);
    // Dense indexes stay below the row count; checking first keeps a
    // corrupt value from sizing the vector.
    if (m >= rows) return Fail(kMetricsIndex, r, "metric index not below the row count");
    if (m >= counts.size()) counts.resize(m + 1, 0);
    ++counts[m];
  }
  metric_rows_begin_.assign(counts.size() + 1, 0);
  for (size_t m = 0; m < counts.size(); ++m) {
    if (counts[m] == 0) {
      return Fail(kMetricsIndex, 0, fmt::format("indexes are not dense: {} is missing", m));
    }
    metric_rows_begin_[m + 1] = metric_rows_begin_[m] + counts[m];
  }
  rows_by_metric_.resize(metric_rows_begin_.back());
  std::vector<uint32_t> next(metric_rows_begin_.begin(), metric_rows_begin_.end() - 1);
  for (size_t r = 0; r < rows; ++r) {
    if (!index.is_null(r)) {
      rows_by_metric_[next[static_cast<uint32_t>(index.int32s[r])]++] = static_cast<uint32_t>(r);
    }
  }
  return absl::OkStatus();
}

absl::Status MetricsTableReader::AppendMetric(uint32_t metric) {
  const std::span<const uint32_t> rows(rows_by_metric_.data() + metric_rows_begin_[metric],
                                       metric_rows_begin_[metric + 1] - metric_rows_begin_[metric]);
  const uint32_t first = rows[0];
  const MetricType type = TypeOf(first);
  for (uint32_t r : rows) {
    if (owners_.scope[r] != owners_.scope[first] || TypeOf(r) != type || Name(r) != Name(first)) {
      return Fail(kMetricsIndex, r, "scope, name or type differs between rows of one metric");
    }
    if (Kind(r) == kMetricsEmptyMetricRow && rows.size() != 1) {
      return Fail(kMetricsRowKind, r, "a metric with data points also has a placeholder row");
    }
  }
  otlp::MetricRow m;
  m.scope = owners_.scope[first];
  m.name = Name(first);
  m.description = BytesAt(c_[kMetricsDescription], descriptions_, first);
  m.unit = BytesAt(c_[kMetricsUnit], units_, first);
  STRATA_ASSIGN_OR_RETURN(m.metadata, metadata_->AppendRow(first, b_, &b_->metadata_attributes));
  m.type = type;
  if (HasTemporality(type)) {
    m.aggregation_temporality = c_[kMetricsAggregationTemporality].int32s[first];
  }
  if (type == MetricType::kSum) {
    m.is_monotonic = c_[kMetricsIsMonotonic].bools[first] != 0 ? 1 : 0;
  }
  const otlp::PointColumnsBase* table = b_->points_of(type);
  // As the decoders leave them: an empty range at the table's end, {0, 0}
  // for an unset metric.
  m.points = Range{table == nullptr ? 0 : static_cast<uint32_t>(table->size()), 0};
  if (Kind(first) == kMetricsDataPointRow) {
    for (uint32_t r : rows) {
      point_of_row_[r] = static_cast<uint32_t>(table->size());
      STRATA_RETURN_IF_ERROR(AppendPoint(r, type, metric));
    }
    m.points.count = static_cast<uint32_t>(rows.size());
  }
  b_->metrics.Append(m);
  return absl::OkStatus();
}

// Elements of row `row` of a LIST column, appended to *out; their Range.
template <typename T, typename Element>
Range AppendListElements(const ColumnVector& column, const std::vector<Element>& elements,
                         size_t row, std::vector<T>* out) {
  const parquet::ListRange list = column.lists[row];
  const Range range{static_cast<uint32_t>(out->size()), static_cast<uint32_t>(list.count)};
  for (uint64_t e = list.begin; e < list.begin + list.count; ++e) {
    out->push_back(static_cast<T>(elements[e]));
  }
  return range;
}

absl::Status MetricsTableReader::AppendPoint(size_t row, MetricType type, uint32_t metric) {
  otlp::PointRowBase base;
  base.metric = metric;
  STRATA_ASSIGN_OR_RETURN(base.attributes, attributes_->AppendRow(row, b_, &b_->point_attributes));
  base.start_time_unix_nano = static_cast<uint64_t>(c_[kMetricsStartTime].int64s[row]);
  base.time_unix_nano = static_cast<uint64_t>(c_[kMetricsTime].int64s[row]);
  base.flags = static_cast<uint32_t>(c_[kMetricsPointFlags].int32s[row]);
  STRATA_ASSIGN_OR_RETURN(base.exemplars, AppendExemplars(row));
  switch (type) {
    case MetricType::kGauge:
    case MetricType::kSum:
      AppendNumberPoint(row, base);
      break;
    case MetricType::kHistogram:
      AppendHistogramPoint(row, Stats(row, base));
      break;
    case MetricType::kExponentialHistogram:
      AppendExponentialPoint(row, Stats(row, base));
      break;
    case MetricType::kSummary:
      AppendSummaryPoint(row, base);
      break;
    case MetricType::kUnset:
      return Fail(kMetricsType, row, "a data point of a metric with no type");
  }
  return absl::OkStatus();
}

void MetricsTableReader::AppendNumberPoint(size_t row, const otlp::PointRowBase& base) {
  otlp::NumberPointRow p;
  static_cast<otlp::PointRowBase&>(p) = base;
  p.value_type = static_cast<NumberType>(c_[kMetricsValueType].int32s[row]);
  if (p.value_type == NumberType::kDouble) {
    p.value_bits = std::bit_cast<uint64_t>(c_[kMetricsValueDouble].doubles[row]);
  } else if (p.value_type == NumberType::kInt) {
    p.value_bits = static_cast<uint64_t>(c_[kMetricsValueInt].int64s[row]);
  }
  b_->number_points.Append(p);
}

otlp::HistogramStatsRow MetricsTableReader::Stats(size_t row,
                                                  const otlp::PointRowBase& base) const {
  otlp::HistogramStatsRow stats;
  static_cast<otlp::PointRowBase&>(stats) = base;
  stats.count = static_cast<uint64_t>(c_[kMetricsCount].int64s[row]);
  stats.sum = c_[kMetricsSum].doubles[row];
  stats.min = c_[kMetricsMin].doubles[row];
  stats.max = c_[kMetricsMax].doubles[row];
  stats.present = static_cast<uint8_t>((c_[kMetricsSum].is_null(row) ? 0 : otlp::kHasSum) |
                                       (c_[kMetricsMin].is_null(row) ? 0 : otlp::kHasMin) |
                                       (c_[kMetricsMax].is_null(row) ? 0 : otlp::kHasMax));
  return stats;
}

void MetricsTableReader::AppendHistogramPoint(size_t row, const otlp::HistogramStatsRow& stats) {
  otlp::HistogramPointRow p;
  static_cast<otlp::HistogramStatsRow&>(p) = stats;
  p.bucket_counts = AppendListElements(c_[kMetricsBucketCounts], c_[kMetricsBucketCounts].int64s,
                                       row, &b_->bucket_counts);
  p.explicit_bounds = AppendListElements(
      c_[kMetricsExplicitBounds], c_[kMetricsExplicitBounds].doubles, row, &b_->explicit_bounds);
  b_->histogram_points.Append(p);
}

void MetricsTableReader::AppendExponentialPoint(size_t row, const otlp::HistogramStatsRow& stats) {
  otlp::ExponentialPointRow p;
  static_cast<otlp::HistogramStatsRow&>(p) = stats;
  p.scale = c_[kMetricsExpScale].int32s[row];
  p.zero_count = static_cast<uint64_t>(c_[kMetricsExpZeroCount].int64s[row]);
  p.zero_threshold = c_[kMetricsExpZeroThreshold].doubles[row];
  p.positive_offset = c_[kMetricsExpPositiveOffset].int32s[row];
  p.positive_bucket_counts =
      AppendListElements(c_[kMetricsExpPositiveBucketCounts],
                         c_[kMetricsExpPositiveBucketCounts].int64s, row, &b_->bucket_counts);
  p.negative_offset = c_[kMetricsExpNegativeOffset].int32s[row];
  p.negative_bucket_counts =
      AppendListElements(c_[kMetricsExpNegativeBucketCounts],
                         c_[kMetricsExpNegativeBucketCounts].int64s, row, &b_->bucket_counts);
  b_->exponential_points.Append(p);
}

void MetricsTableReader::AppendSummaryPoint(size_t row, const otlp::PointRowBase& base) {
  otlp::SummaryPointRow p;
  static_cast<otlp::PointRowBase&>(p) = base;
  p.count = static_cast<uint64_t>(c_[kMetricsCount].int64s[row]);
  p.sum = c_[kMetricsSum].doubles[row];
  const parquet::ListRange q = c_[kMetricsSummaryQuantile].lists[row];
  const parquet::ListRange v = c_[kMetricsSummaryValue].lists[row];
  p.quantiles = Range{static_cast<uint32_t>(b_->quantiles.size()), static_cast<uint32_t>(q.count)};
  for (uint64_t k = 0; k < q.count; ++k) {
    b_->quantiles.Append({c_[kMetricsSummaryQuantile].doubles[q.begin + k],
                          c_[kMetricsSummaryValue].doubles[v.begin + k]});
  }
  b_->summary_points.Append(p);
}

// Copies an optional id element of a FIXED_LEN_BYTE_ARRAY list column;
// false when a present element has the wrong length.
template <size_t N>
bool ReadOptionalId(const ColumnVector& column, uint64_t element, std::array<uint8_t, N>* id,
                    uint8_t* present) {
  if (column.is_null(element)) return true;
  const std::string_view bytes = column.bytes_at(element);
  if (bytes.size() != N) return false;
  std::memcpy(id->data(), bytes.data(), N);
  *present = 1;
  return true;
}

absl::StatusOr<Range> MetricsTableReader::AppendExemplars(size_t row) {
  STRATA_RETURN_IF_ERROR(exemplar_attributes_->AppendSplitRow(
      row, ListU32(c_[kMetricsExemplarAttrCount], row), b_, &b_->exemplar_attributes, &split_));
  const uint64_t count = c_[kMetricsExemplarTime].lists[row].count;
  const Range out{static_cast<uint32_t>(b_->exemplars.size()), static_cast<uint32_t>(count)};
  for (uint64_t e = 0; e < count; ++e) {
    auto at = [&](int column) { return c_[column].lists[row].begin + e; };
    otlp::ExemplarRow x;
    x.filtered_attributes = split_[e];
    x.time_unix_nano =
        static_cast<uint64_t>(c_[kMetricsExemplarTime].int64s[at(kMetricsExemplarTime)]);
    x.value_type = static_cast<NumberType>(
        c_[kMetricsExemplarValueType].int32s[at(kMetricsExemplarValueType)]);
    if (x.value_type == NumberType::kDouble) {
      x.value_bits = std::bit_cast<uint64_t>(
          c_[kMetricsExemplarValueDouble].doubles[at(kMetricsExemplarValueDouble)]);
    } else if (x.value_type == NumberType::kInt) {
      x.value_bits =
          static_cast<uint64_t>(c_[kMetricsExemplarValueInt].int64s[at(kMetricsExemplarValueInt)]);
    }
    if (!ReadOptionalId(c_[kMetricsExemplarTraceId], at(kMetricsExemplarTraceId), &x.trace_id,
                        &x.has_trace_id) ||
        !ReadOptionalId(c_[kMetricsExemplarSpanId], at(kMetricsExemplarSpanId), &x.span_id,
                        &x.has_span_id)) {
      return Fail(kMetricsExemplarTraceId, row, "an exemplar id has the wrong length");
    }
    b_->exemplars.Append(x);
  }
  return out;
}

absl::Status MetricsTableReader::Read() {
  STRATA_RETURN_IF_ERROR(CheckColumnSizes());
  STRATA_ASSIGN_OR_RETURN(
      owners_, RebuildResourcesAndScopes(std::span<ColumnVector>(c_).subspan(kMetricsResourceScope,
                                                                             kResourceScopeColumns),
                                         file_name_, b_));
  names_ = RetainBytes(&c_[kMetricsName], b_);
  descriptions_ = RetainBytes(&c_[kMetricsDescription], b_);
  units_ = RetainBytes(&c_[kMetricsUnit], b_);
  const size_t rows = c_[kMetricsRowKind].size();
  for (size_t r = 0; r < rows; ++r) {
    STRATA_RETURN_IF_ERROR(CheckRowShape(r));
    STRATA_RETURN_IF_ERROR(CheckRowValues(r));
  }
  STRATA_RETURN_IF_ERROR(CheckOrder());
  STRATA_RETURN_IF_ERROR(MakeFamilies());
  STRATA_RETURN_IF_ERROR(GroupRowsByMetric());
  point_of_row_.assign(rows, 0);
  for (uint32_t m = 0; m + 1 < metric_rows_begin_.size(); ++m) {
    STRATA_RETURN_IF_ERROR(AppendMetric(m));
  }
  // Validate after reading, as before writing.
  absl::Status valid = otlp::ValidateBatch(*b_);
  if (!valid.ok()) {
    return absl::DataLossError(fmt::format("{}: the rebuilt batch is invalid: {}", file_name_,
                                           std::string(valid.message())));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<otlp::MetricBatch> ReadMetricsTable(parquet::RandomAccessSource* source,
                                                   std::string_view batch_id,
                                                   std::string_view file_name) {
  STRATA_ASSIGN_OR_RETURN(
      std::unique_ptr<parquet::FileReader> reader,
      OpenTable(source, MetricsTableColumns(), kMetricsSchema, batch_id, file_name));
  STRATA_ASSIGN_OR_RETURN(std::vector<ColumnVector> columns, ReadAllColumns(*reader, file_name));
  otlp::MetricBatch batch;
  MetricsTableReader table(file_name, 0, MetricsTableRowOrder(reader->metadata()), &columns,
                           &batch);
  STRATA_RETURN_IF_ERROR(table.Read());
  return batch;
}

absl::StatusOr<MetricRows> ReadMetricsRows(parquet::FileReader& reader, std::string_view file_name,
                                           uint64_t row_begin, uint64_t row_end) {
  STRATA_ASSIGN_OR_RETURN(std::vector<ColumnVector> c,
                          ReadTableRows(reader, file_name, row_begin, row_end));
  MetricRows out;
  out.resource_index = RenumberDense(&c[kMetricsResourceScope + kResourceIndexOffset]);
  out.scope_index = RenumberDense(&c[kMetricsResourceScope + kScopeIndexOffset]);
  out.metric_index = RenumberDense(&c[kMetricsIndex]);
  // The reader moves only byte buffers out of the columns: kinds and
  // indexes stay readable after it.
  MetricsTableReader table(file_name, row_begin, MetricsTableRowOrder(reader.metadata()), &c,
                           &out.batch);
  STRATA_RETURN_IF_ERROR(table.Read());
  const ColumnVector& kinds = c[kMetricsRowKind];
  const ColumnVector& metrics = c[kMetricsIndex];
  out.rows.resize(kinds.size());
  for (size_t r = 0; r < kinds.size(); ++r) {
    MetricRows::Row& row = out.rows[r];
    row.kind = static_cast<MetricsRowKind>(kinds.int32s[r]);
    row.resource = table.owners().resource[r];
    row.scope = table.owners().scope[r];
    if (row.kind <= kMetricsEmptyMetricRow) row.metric = static_cast<uint32_t>(metrics.int32s[r]);
    if (row.kind == kMetricsDataPointRow) row.point = table.point_of_row()[r];
  }
  return out;
}

}  // namespace strata::storage
