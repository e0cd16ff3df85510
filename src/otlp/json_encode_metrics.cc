// EncodeMetricsJson: MetricBatch -> ExportMetricsServiceRequest in OTLP/JSON.

#include <string>
#include <string_view>

#include "otlp/encode.h"
#include "otlp/json_encode_common.h"

namespace strata::otlp {
namespace {

class MetricJsonEncoder : public internal::JsonEncoderBase {
 public:
  MetricJsonEncoder(const MetricBatch& batch, std::string* out)
      : JsonEncoderBase(batch, out), metrics_(batch) {}

  void Encode() {
    WriteRequest({"resourceMetrics", "scopeMetrics", "metrics"}, metrics_.metrics.scope,
                 [this](uint32_t row) { WriteMetric(row); });
  }

 private:
  void WriteMetric(size_t i);
  void WriteData(size_t i);
  void WritePointCommon(const PointColumnsBase& p, size_t i);
  void WriteNumberPoint(size_t i);
  void WriteHistogramPoint(size_t i);
  void WriteExponentialPoint(size_t i);
  void WriteBuckets(std::string_view key, int32_t offset, Range counts);
  void WriteSummaryPoint(size_t i);
  void WriteExemplars(Range rows);
  void WriteOptionalDouble(std::string_view key, uint8_t present, uint8_t bit, double v) {
    if (present & bit) DoubleAlways(key, v);
  }
  void WriteUint64Array(std::string_view key, Range rows);

  const MetricBatch& metrics_;
};

void MetricJsonEncoder::WriteMetric(size_t i) {
  const MetricColumns& m = metrics_.metrics;
  w_.BeginObject();
  StringField("name", m.name[i]);
  StringField("description", m.description[i]);
  StringField("unit", m.unit[i]);
  WriteData(i);
  WriteKeyValues("metadata", metrics_.metadata_attributes, m.metadata[i]);
  w_.EndObject();
}

std::string_view DataKey(MetricType type) {
  switch (type) {
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kSum:
      return "sum";
    case MetricType::kHistogram:
      return "histogram";
    case MetricType::kExponentialHistogram:
      return "exponentialHistogram";
    case MetricType::kSummary:
      return "summary";
    case MetricType::kUnset:
      break;
  }
  return {};
}

// The data member is written whenever the type is set, even with no points.
void MetricJsonEncoder::WriteData(size_t i) {
  const MetricColumns& m = metrics_.metrics;
  MetricType type = m.type[i];
  std::string_view key = DataKey(type);
  if (key.empty()) return;
  w_.Key(key);
  w_.BeginObject();
  Range points = m.points[i];
  if (points.count != 0) {
    w_.Key("dataPoints");
    w_.BeginArray();
    for (uint32_t p = points.begin; p < points.end(); ++p) {
      if (type == MetricType::kGauge || type == MetricType::kSum) WriteNumberPoint(p);
      if (type == MetricType::kHistogram) WriteHistogramPoint(p);
      if (type == MetricType::kExponentialHistogram) WriteExponentialPoint(p);
      if (type == MetricType::kSummary) WriteSummaryPoint(p);
    }
    w_.EndArray();
  }
  if (type == MetricType::kSum || type == MetricType::kHistogram ||
      type == MetricType::kExponentialHistogram) {
    Int32Field("aggregationTemporality", m.aggregation_temporality[i]);
  }
  if (type == MetricType::kSum && m.is_monotonic[i] != 0) {
    w_.Key("isMonotonic");
    w_.Bool(true);
  }
  w_.EndObject();
}

void MetricJsonEncoder::WritePointCommon(const PointColumnsBase& p, size_t i) {
  WriteKeyValues("attributes", metrics_.point_attributes, p.attributes[i]);
  Uint64Field("startTimeUnixNano", p.start_time_unix_nano[i]);
  Uint64Field("timeUnixNano", p.time_unix_nano[i]);
}

void MetricJsonEncoder::WriteNumberPoint(size_t i) {
  const NumberPointColumns& p = metrics_.number_points;
  w_.BeginObject();
  WritePointCommon(p, i);
  NumberValue(p.value_type[i], p.value_bits[i]);
  WriteExemplars(p.exemplars[i]);
  Uint32Field("flags", p.flags[i]);
  w_.EndObject();
}

void MetricJsonEncoder::WriteHistogramPoint(size_t i) {
  const HistogramPointColumns& p = metrics_.histogram_points;
  w_.BeginObject();
  WritePointCommon(p, i);
  Uint64Field("count", p.count[i]);
  WriteOptionalDouble("sum", p.present[i], kHasSum, p.sum[i]);
  WriteUint64Array("bucketCounts", p.bucket_counts[i]);
  Range bounds = p.explicit_bounds[i];
  if (bounds.count != 0) {
    w_.Key("explicitBounds");
    w_.BeginArray();
    for (uint32_t b = bounds.begin; b < bounds.end(); ++b) w_.Double(metrics_.explicit_bounds[b]);
    w_.EndArray();
  }
  WriteExemplars(p.exemplars[i]);
  Uint32Field("flags", p.flags[i]);
  WriteOptionalDouble("min", p.present[i], kHasMin, p.min[i]);
  WriteOptionalDouble("max", p.present[i], kHasMax, p.max[i]);
  w_.EndObject();
}

void MetricJsonEncoder::WriteExponentialPoint(size_t i) {
  const ExponentialPointColumns& p = metrics_.exponential_points;
  w_.BeginObject();
  WritePointCommon(p, i);
  Uint64Field("count", p.count[i]);
  WriteOptionalDouble("sum", p.present[i], kHasSum, p.sum[i]);
  Int32Field("scale", p.scale[i]);
  Uint64Field("zeroCount", p.zero_count[i]);
  WriteBuckets("positive", p.positive_offset[i], p.positive_bucket_counts[i]);
  WriteBuckets("negative", p.negative_offset[i], p.negative_bucket_counts[i]);
  Uint32Field("flags", p.flags[i]);
  WriteExemplars(p.exemplars[i]);
  WriteOptionalDouble("min", p.present[i], kHasMin, p.min[i]);
  WriteOptionalDouble("max", p.present[i], kHasMax, p.max[i]);
  DoubleField("zeroThreshold", p.zero_threshold[i]);
  w_.EndObject();
}

// Empty Buckets are omitted, as in the protobuf encoder.
void MetricJsonEncoder::WriteBuckets(std::string_view key, int32_t offset, Range counts) {
  if (offset == 0 && counts.count == 0) return;
  w_.Key(key);
  w_.BeginObject();
  Int32Field("offset", offset);
  WriteUint64Array("bucketCounts", counts);
  w_.EndObject();
}

void MetricJsonEncoder::WriteSummaryPoint(size_t i) {
  const SummaryPointColumns& p = metrics_.summary_points;
  w_.BeginObject();
  WritePointCommon(p, i);
  Uint64Field("count", p.count[i]);
  DoubleField("sum", p.sum[i]);
  Range quantiles = p.quantiles[i];
  if (quantiles.count != 0) {
    w_.Key("quantileValues");
    w_.BeginArray();
    for (uint32_t q = quantiles.begin; q < quantiles.end(); ++q) {
      w_.BeginObject();
      DoubleField("quantile", metrics_.quantiles.quantile[q]);
      DoubleField("value", metrics_.quantiles.value[q]);
      w_.EndObject();
    }
    w_.EndArray();
  }
  Uint32Field("flags", p.flags[i]);
  w_.EndObject();
}

void MetricJsonEncoder::WriteExemplars(Range rows) {
  if (rows.count == 0) return;
  const ExemplarColumns& e = metrics_.exemplars;
  w_.Key("exemplars");
  w_.BeginArray();
  for (uint32_t i = rows.begin; i < rows.end(); ++i) {
    w_.BeginObject();
    WriteKeyValues("filteredAttributes", metrics_.exemplar_attributes, e.filtered_attributes[i]);
    Uint64Field("timeUnixNano", e.time_unix_nano[i]);
    NumberValue(e.value_type[i], e.value_bits[i]);
    if (e.has_span_id[i]) IdField("spanId", e.span_id[i]);
    if (e.has_trace_id[i]) IdField("traceId", e.trace_id[i]);
    w_.EndObject();
  }
  w_.EndArray();
}

void MetricJsonEncoder::WriteUint64Array(std::string_view key, Range rows) {
  if (rows.count == 0) return;
  w_.Key(key);
  w_.BeginArray();
  for (uint32_t b = rows.begin; b < rows.end(); ++b) w_.UintString(metrics_.bucket_counts[b]);
  w_.EndArray();
}

}  // namespace

std::string EncodeMetricsJson(const MetricBatch& batch) {
  std::string out;
  out.reserve(2 * internal::EstimateProtoBytes(batch));
  MetricJsonEncoder(batch, &out).Encode();
  return out;
}

}  // namespace strata::otlp
