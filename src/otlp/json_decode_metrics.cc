// DecodeMetricsJson: ExportMetricsServiceRequest in OTLP/JSON into a
// MetricBatch. The shared machinery is in json_decode_common.h; this file
// knows Metric, its five data kinds, their data points and exemplars.

#include <string_view>

#include "otlp/decode.h"
#include "otlp/json_decode_common.h"

namespace strata::otlp {
namespace {

using json_internal::FieldTable;
using json_internal::JsonReader;
using json_internal::PathFrame;
namespace od = json_internal::od;

const json_internal::SignalTables& MetricTables() {
  static const FieldTable* const root =
      new FieldTable({{0, "resourceMetrics", "resource_metrics"}});
  static const FieldTable* const resource_metrics = new FieldTable({
      {0, "resource", "resource"},
      {1, "scopeMetrics", "scope_metrics"},
      {2, "schemaUrl", "schema_url"},
  });
  static const FieldTable* const scope_metrics = new FieldTable({
      {0, "scope", "scope"},
      {1, "metrics", "metrics"},
      {2, "schemaUrl", "schema_url"},
  });
  static const json_internal::SignalTables tables{root, resource_metrics, scope_metrics};
  return tables;
}

enum MetricField {
  kName,
  kDescription,
  kUnit,
  kGauge,
  kSum,
  kHistogram,
  kExponentialHistogram,
  kSummary,
  kMetadata,
};

const FieldTable& MetricFields() {
  static const FieldTable* const table = new FieldTable({
      {kName, "name", "name"},
      {kDescription, "description", "description"},
      {kUnit, "unit", "unit"},
      {kGauge, "gauge", "gauge"},
      {kSum, "sum", "sum"},
      {kHistogram, "histogram", "histogram"},
      {kExponentialHistogram, "exponentialHistogram", "exponential_histogram"},
      {kSummary, "summary", "summary"},
      {kMetadata, "metadata", "metadata"},
  });
  return *table;
}

// Gauge, Sum, Histogram, ExponentialHistogram and Summary share ids; each
// table lists only the fields its message has.
enum DataField { kDataPoints, kTemporality, kMonotonic };

const FieldTable& GaugeFields() {
  static const FieldTable* const table =
      new FieldTable({{kDataPoints, "dataPoints", "data_points"}});
  return *table;
}

const FieldTable& SumFields() {
  static const FieldTable* const table = new FieldTable({
      {kDataPoints, "dataPoints", "data_points"},
      {kTemporality, "aggregationTemporality", "aggregation_temporality"},
      {kMonotonic, "isMonotonic", "is_monotonic"},
  });
  return *table;
}

// Histogram and ExponentialHistogram.
const FieldTable& HistogramFields() {
  static const FieldTable* const table = new FieldTable({
      {kDataPoints, "dataPoints", "data_points"},
      {kTemporality, "aggregationTemporality", "aggregation_temporality"},
  });
  return *table;
}

// Every data point type starts with these ids; its own fields follow.
enum PointField {
  kPointAttributes,
  kPointStartTime,
  kPointTime,
  kPointFlags,
  kPointExemplars,
  kFirstOwnField,
};

enum NumberPointField { kAsDouble = kFirstOwnField, kAsInt };

const FieldTable& NumberPointFields() {
  static const FieldTable* const table = new FieldTable({
      {kPointAttributes, "attributes", "attributes"},
      {kPointStartTime, "startTimeUnixNano", "start_time_unix_nano"},
      {kPointTime, "timeUnixNano", "time_unix_nano"},
      {kPointFlags, "flags", "flags"},
      {kPointExemplars, "exemplars", "exemplars"},
      {kAsDouble, "asDouble", "as_double"},
      {kAsInt, "asInt", "as_int"},
  });
  return *table;
}

enum HistogramPointField {
  kHistogramCount = kFirstOwnField,
  kHistogramSum,
  kBucketCounts,
  kExplicitBounds,
  kHistogramMin,
  kHistogramMax,
};

const FieldTable& HistogramPointFields() {
  static const FieldTable* const table = new FieldTable({
      {kPointAttributes, "attributes", "attributes"},
      {kPointStartTime, "startTimeUnixNano", "start_time_unix_nano"},
      {kPointTime, "timeUnixNano", "time_unix_nano"},
      {kPointFlags, "flags", "flags"},
      {kPointExemplars, "exemplars", "exemplars"},
      {kHistogramCount, "count", "count"},
      {kHistogramSum, "sum", "sum"},
      {kBucketCounts, "bucketCounts", "bucket_counts"},
      {kExplicitBounds, "explicitBounds", "explicit_bounds"},
      {kHistogramMin, "min", "min"},
      {kHistogramMax, "max", "max"},
  });
  return *table;
}

enum ExponentialPointField {
  kExpCount = kFirstOwnField,
  kExpSum,
  kScale,
  kZeroCount,
  kPositive,
  kNegative,
  kExpMin,
  kExpMax,
  kZeroThreshold,
};

const FieldTable& ExponentialPointFields() {
  static const FieldTable* const table = new FieldTable({
      {kPointAttributes, "attributes", "attributes"},
      {kPointStartTime, "startTimeUnixNano", "start_time_unix_nano"},
      {kPointTime, "timeUnixNano", "time_unix_nano"},
      {kPointFlags, "flags", "flags"},
      {kPointExemplars, "exemplars", "exemplars"},
      {kExpCount, "count", "count"},
      {kExpSum, "sum", "sum"},
      {kScale, "scale", "scale"},
      {kZeroCount, "zeroCount", "zero_count"},
      {kPositive, "positive", "positive"},
      {kNegative, "negative", "negative"},
      {kExpMin, "min", "min"},
      {kExpMax, "max", "max"},
      {kZeroThreshold, "zeroThreshold", "zero_threshold"},
  });
  return *table;
}

enum BucketsField { kOffset, kBucketsCounts };

const FieldTable& BucketsFields() {
  static const FieldTable* const table = new FieldTable({
      {kOffset, "offset", "offset"},
      {kBucketsCounts, "bucketCounts", "bucket_counts"},
  });
  return *table;
}

// SummaryDataPoint has no exemplars.
enum SummaryPointField { kSummaryCount = kFirstOwnField, kSummarySum, kQuantileValues };

const FieldTable& SummaryPointFields() {
  static const FieldTable* const table = new FieldTable({
      {kPointAttributes, "attributes", "attributes"},
      {kPointStartTime, "startTimeUnixNano", "start_time_unix_nano"},
      {kPointTime, "timeUnixNano", "time_unix_nano"},
      {kPointFlags, "flags", "flags"},
      {kSummaryCount, "count", "count"},
      {kSummarySum, "sum", "sum"},
      {kQuantileValues, "quantileValues", "quantile_values"},
  });
  return *table;
}

enum QuantileField { kQuantile, kQuantileValue };

const FieldTable& QuantileFields() {
  static const FieldTable* const table = new FieldTable({
      {kQuantile, "quantile", "quantile"},
      {kQuantileValue, "value", "value"},
  });
  return *table;
}

enum ExemplarField {
  kFilteredAttributes,
  kExemplarTime,
  kExemplarAsDouble,
  kExemplarAsInt,
  kExemplarSpanId,
  kExemplarTraceId,
};

const FieldTable& ExemplarFields() {
  static const FieldTable* const table = new FieldTable({
      {kFilteredAttributes, "filteredAttributes", "filtered_attributes"},
      {kExemplarTime, "timeUnixNano", "time_unix_nano"},
      {kExemplarAsDouble, "asDouble", "as_double"},
      {kExemplarAsInt, "asInt", "as_int"},
      {kExemplarSpanId, "spanId", "span_id"},
      {kExemplarTraceId, "traceId", "trace_id"},
  });
  return *table;
}

constexpr std::string_view kTemporalityNames[] = {
    "AGGREGATION_TEMPORALITY_UNSPECIFIED",
    "AGGREGATION_TEMPORALITY_DELTA",
    "AGGREGATION_TEMPORALITY_CUMULATIVE",
};

class MetricDecoder {
 public:
  MetricDecoder(JsonReader* reader, MetricBatch* batch) : r_(*reader), b_(*batch) {}

  absl::Status Root(od::value& v, const PathFrame& f) {
    return r_.DecodeSignal(
        v, f, MetricTables(),
        [&](od::value& e, const PathFrame& ef, uint32_t scope) { return Metric(e, ef, scope); });
  }

 private:
  absl::Status Metric(od::value& v, const PathFrame& f, uint32_t scope);
  absl::Status Data(int id, od::value& v, const PathFrame& f, uint32_t metric, MetricRow* row);
  template <typename Table, typename PointFn>
  absl::Status DataPoints(od::value& v, const PathFrame& f, const FieldTable& fields,
                          const Table& points, MetricRow* row, PointFn point);
  absl::Status NumberPoint(od::value& v, const PathFrame& f, uint32_t metric);
  absl::Status HistogramPoint(od::value& v, const PathFrame& f, uint32_t metric);
  absl::Status ExponentialPoint(od::value& v, const PathFrame& f, uint32_t metric);
  absl::Status ExponentialField(int id, od::value& v, const PathFrame& f, ExponentialPointRow* row);
  absl::Status Buckets(od::value& v, const PathFrame& f, int32_t* offset, Range* counts);
  absl::Status SummaryPoint(od::value& v, const PathFrame& f, uint32_t metric);
  absl::Status Quantile(od::value& v, const PathFrame& f);
  absl::Status Exemplar(od::value& v, const PathFrame& f);
  // Fields with ids below kFirstOwnField, for every point type.
  absl::Status BaseField(int id, od::value& v, const PathFrame& f, PointRowBase* base);
  // The NumberDataPoint / Exemplar value oneof.
  absl::Status NumberValue(bool is_int, od::value& v, const PathFrame& f, NumberType* type,
                           uint64_t* bits);
  // Sets the fields of a new point row that precede its decoding.
  void StartPoint(uint32_t metric, PointRowBase* base) const;
  absl::Status OptionalDouble(od::value& v, const PathFrame& f, uint8_t bit, double* out,
                              uint8_t* present);

  JsonReader& r_;
  MetricBatch& b_;
};

absl::Status MetricDecoder::Metric(od::value& v, const PathFrame& f, uint32_t scope) {
  const uint32_t metric = static_cast<uint32_t>(b_.metrics.size());
  MetricRow row;
  row.scope = scope;
  row.metadata = JsonReader::EmptyRangeAtEnd(b_.metadata_attributes);
  absl::Status s =
      r_.ForEachField(v, f, MetricFields(), [&](int id, od::value& fv, const PathFrame& ff) {
        switch (id) {
          case kName:
            return r_.String(fv, ff, &row.name);
          case kDescription:
            return r_.String(fv, ff, &row.description);
          case kUnit:
            return r_.String(fv, ff, &row.unit);
          case kMetadata:
            return r_.Attributes(fv, ff, &b_.metadata_attributes, &row.metadata);
        }
        if (row.type != MetricType::kUnset) {
          return r_.Error(ff, "more than one member of the Metric data oneof is set");
        }
        return Data(id, fv, ff, metric, &row);
      });
  if (!s.ok()) return s;
  b_.metrics.Append(row);
  return absl::OkStatus();
}

absl::Status MetricDecoder::Data(int id, od::value& v, const PathFrame& f, uint32_t metric,
                                 MetricRow* row) {
  auto number = [&](od::value& e, const PathFrame& ef) { return NumberPoint(e, ef, metric); };
  switch (id) {
    case kGauge:
      row->type = MetricType::kGauge;
      return DataPoints(v, f, GaugeFields(), b_.number_points, row, number);
    case kSum:
      row->type = MetricType::kSum;
      return DataPoints(v, f, SumFields(), b_.number_points, row, number);
    case kHistogram:
      row->type = MetricType::kHistogram;
      return DataPoints(
          v, f, HistogramFields(), b_.histogram_points, row,
          [&](od::value& e, const PathFrame& ef) { return HistogramPoint(e, ef, metric); });
    case kExponentialHistogram:
      row->type = MetricType::kExponentialHistogram;
      return DataPoints(
          v, f, HistogramFields(), b_.exponential_points, row,
          [&](od::value& e, const PathFrame& ef) { return ExponentialPoint(e, ef, metric); });
    case kSummary:
      row->type = MetricType::kSummary;
      return DataPoints(
          v, f, GaugeFields(), b_.summary_points, row,
          [&](od::value& e, const PathFrame& ef) { return SummaryPoint(e, ef, metric); });
  }
  return absl::OkStatus();
}

template <typename Table, typename PointFn>
absl::Status MetricDecoder::DataPoints(od::value& v, const PathFrame& f, const FieldTable& fields,
                                       const Table& points, MetricRow* row, PointFn point) {
  row->points = JsonReader::EmptyRangeAtEnd(points);
  return r_.ForEachField(v, f, fields, [&](int id, od::value& fv, const PathFrame& ff) {
    switch (id) {
      case kDataPoints: {
        const size_t begin = points.size();
        absl::Status s = r_.ForEachElement(fv, ff, point);
        row->points = JsonReader::RangeToEnd(points, begin);
        return s;
      }
      case kTemporality:
        return r_.Enum(fv, ff, kTemporalityNames, &row->aggregation_temporality);
      case kMonotonic: {
        bool is_monotonic = false;
        absl::Status s = r_.Bool(fv, ff, &is_monotonic);
        row->is_monotonic = is_monotonic ? 1 : 0;
        return s;
      }
    }
    return absl::OkStatus();
  });
}

void MetricDecoder::StartPoint(uint32_t metric, PointRowBase* base) const {
  base->metric = metric;
  base->attributes = JsonReader::EmptyRangeAtEnd(b_.point_attributes);
  base->exemplars = JsonReader::EmptyRangeAtEnd(b_.exemplars);
}

absl::Status MetricDecoder::BaseField(int id, od::value& v, const PathFrame& f,
                                      PointRowBase* base) {
  switch (id) {
    case kPointAttributes:
      return r_.Attributes(v, f, &b_.point_attributes, &base->attributes);
    case kPointStartTime:
      return r_.Uint64(v, f, &base->start_time_unix_nano);
    case kPointTime:
      return r_.Uint64(v, f, &base->time_unix_nano);
    case kPointFlags:
      return r_.Uint32(v, f, &base->flags);
    case kPointExemplars: {
      const size_t begin = b_.exemplars.size();
      absl::Status s = r_.ForEachElement(
          v, f, [&](od::value& e, const PathFrame& ef) { return Exemplar(e, ef); });
      base->exemplars = JsonReader::RangeToEnd(b_.exemplars, begin);
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status MetricDecoder::NumberValue(bool is_int, od::value& v, const PathFrame& f,
                                        NumberType* type, uint64_t* bits) {
  if (*type != NumberType::kNone) {
    return r_.Error(f, "both asDouble and asInt are set (members of one oneof)");
  }
  if (is_int) {
    *type = NumberType::kInt;
    int64_t value = 0;
    absl::Status s = r_.Int64(v, f, &value);
    *bits = static_cast<uint64_t>(value);
    return s;
  }
  *type = NumberType::kDouble;
  double value = 0;
  absl::Status s = r_.Double(v, f, &value);
  *bits = std::bit_cast<uint64_t>(value);
  return s;
}

absl::Status MetricDecoder::OptionalDouble(od::value& v, const PathFrame& f, uint8_t bit,
                                           double* out, uint8_t* present) {
  *present |= bit;
  return r_.Double(v, f, out);
}

absl::Status MetricDecoder::NumberPoint(od::value& v, const PathFrame& f, uint32_t metric) {
  NumberPointRow row;
  StartPoint(metric, &row);
  absl::Status s =
      r_.ForEachField(v, f, NumberPointFields(), [&](int id, od::value& fv, const PathFrame& ff) {
        if (id < kFirstOwnField) return BaseField(id, fv, ff, &row);
        return NumberValue(id == kAsInt, fv, ff, &row.value_type, &row.value_bits);
      });
  if (!s.ok()) return s;
  b_.number_points.Append(row);
  return absl::OkStatus();
}

absl::Status MetricDecoder::HistogramPoint(od::value& v, const PathFrame& f, uint32_t metric) {
  const internal::PointMark mark = internal::MarkPoint(b_);
  HistogramPointRow row;
  StartPoint(metric, &row);
  row.bucket_counts = JsonReader::EmptyRangeAtEnd(b_.bucket_counts);
  row.explicit_bounds = JsonReader::EmptyRangeAtEnd(b_.explicit_bounds);
  absl::Status s = r_.ForEachField(
      v, f, HistogramPointFields(), [&](int id, od::value& fv, const PathFrame& ff) {
        switch (id) {
          case kHistogramCount:
            return r_.Uint64(fv, ff, &row.count);
          case kHistogramSum:
            return OptionalDouble(fv, ff, kHasSum, &row.sum, &row.present);
          case kBucketCounts:
            return r_.Uint64List(fv, ff, &b_.bucket_counts, &row.bucket_counts);
          case kExplicitBounds:
            return r_.DoubleList(fv, ff, &b_.explicit_bounds, &row.explicit_bounds);
          case kHistogramMin:
            return OptionalDouble(fv, ff, kHasMin, &row.min, &row.present);
          case kHistogramMax:
            return OptionalDouble(fv, ff, kHasMax, &row.max, &row.present);
        }
        return BaseField(id, fv, ff, &row);
      });
  if (!s.ok()) return s;
  if (internal::AcceptHistogramPoint(&b_, mark, row)) b_.histogram_points.Append(row);
  return absl::OkStatus();
}

absl::Status MetricDecoder::ExponentialPoint(od::value& v, const PathFrame& f, uint32_t metric) {
  ExponentialPointRow row;
  StartPoint(metric, &row);
  row.positive_bucket_counts = JsonReader::EmptyRangeAtEnd(b_.bucket_counts);
  row.negative_bucket_counts = JsonReader::EmptyRangeAtEnd(b_.bucket_counts);
  absl::Status s = r_.ForEachField(v, f, ExponentialPointFields(),
                                   [&](int id, od::value& fv, const PathFrame& ff) {
                                     return ExponentialField(id, fv, ff, &row);
                                   });
  if (!s.ok()) return s;
  b_.exponential_points.Append(row);
  return absl::OkStatus();
}

absl::Status MetricDecoder::ExponentialField(int id, od::value& v, const PathFrame& f,
                                             ExponentialPointRow* row) {
  switch (id) {
    case kExpCount:
      return r_.Uint64(v, f, &row->count);
    case kExpSum:
      return OptionalDouble(v, f, kHasSum, &row->sum, &row->present);
    case kScale:
      return r_.Int32(v, f, &row->scale);
    case kZeroCount:
      return r_.Uint64(v, f, &row->zero_count);
    case kPositive:
      return Buckets(v, f, &row->positive_offset, &row->positive_bucket_counts);
    case kNegative:
      return Buckets(v, f, &row->negative_offset, &row->negative_bucket_counts);
    case kExpMin:
      return OptionalDouble(v, f, kHasMin, &row->min, &row->present);
    case kExpMax:
      return OptionalDouble(v, f, kHasMax, &row->max, &row->present);
    case kZeroThreshold:
      return r_.Double(v, f, &row->zero_threshold);
  }
  return BaseField(id, v, f, row);
}

absl::Status MetricDecoder::Buckets(od::value& v, const PathFrame& f, int32_t* offset,
                                    Range* counts) {
  return r_.ForEachField(v, f, BucketsFields(), [&](int id, od::value& fv, const PathFrame& ff) {
    switch (id) {
      case kOffset:
        return r_.Int32(fv, ff, offset);
      case kBucketsCounts:
        return r_.Uint64List(fv, ff, &b_.bucket_counts, counts);
    }
    return absl::OkStatus();
  });
}

absl::Status MetricDecoder::SummaryPoint(od::value& v, const PathFrame& f, uint32_t metric) {
  SummaryPointRow row;
  StartPoint(metric, &row);
  row.quantiles = JsonReader::EmptyRangeAtEnd(b_.quantiles);
  absl::Status s =
      r_.ForEachField(v, f, SummaryPointFields(), [&](int id, od::value& fv, const PathFrame& ff) {
        switch (id) {
          case kSummaryCount:
            return r_.Uint64(fv, ff, &row.count);
          case kSummarySum:
            return r_.Double(fv, ff, &row.sum);
          case kQuantileValues: {
            const size_t begin = b_.quantiles.size();
            absl::Status status = r_.ForEachElement(
                fv, ff, [&](od::value& e, const PathFrame& ef) { return Quantile(e, ef); });
            row.quantiles = JsonReader::RangeToEnd(b_.quantiles, begin);
            return status;
          }
        }
        return BaseField(id, fv, ff, &row);
      });
  if (!s.ok()) return s;
  b_.summary_points.Append(row);
  return absl::OkStatus();
}

absl::Status MetricDecoder::Quantile(od::value& v, const PathFrame& f) {
  QuantileRow row;
  absl::Status s =
      r_.ForEachField(v, f, QuantileFields(), [&](int id, od::value& fv, const PathFrame& ff) {
        return r_.Double(fv, ff, id == kQuantile ? &row.quantile : &row.value);
      });
  if (!s.ok()) return s;
  b_.quantiles.Append(row);
  return absl::OkStatus();
}

absl::Status MetricDecoder::Exemplar(od::value& v, const PathFrame& f) {
  ExemplarRow row;
  row.filtered_attributes = JsonReader::EmptyRangeAtEnd(b_.exemplar_attributes);
  absl::Status s =
      r_.ForEachField(v, f, ExemplarFields(), [&](int id, od::value& fv, const PathFrame& ff) {
        switch (id) {
          case kFilteredAttributes:
            return r_.Attributes(fv, ff, &b_.exemplar_attributes, &row.filtered_attributes);
          case kExemplarTime:
            return r_.Uint64(fv, ff, &row.time_unix_nano);
          case kExemplarAsDouble:
          case kExemplarAsInt:
            return NumberValue(id == kExemplarAsInt, fv, ff, &row.value_type, &row.value_bits);
          case kExemplarSpanId:
            return r_.SpanIdHex(fv, ff, &row.span_id, &row.has_span_id);
          case kExemplarTraceId:
            return r_.TraceIdHex(fv, ff, &row.trace_id, &row.has_trace_id);
        }
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  b_.exemplars.Append(row);
  return absl::OkStatus();
}

}  // namespace

absl::Status DecodeMetricsJson(std::string_view json, MetricBatch* batch,
                               const DecodeLimits& limits) {
  return json_internal::DecodeDocument(
      json, limits, batch,
      [](JsonReader& reader, od::value& root, const PathFrame& frame, MetricBatch* target) {
        return MetricDecoder(&reader, target).Root(root, frame);
      });
}

}  // namespace strata::otlp
