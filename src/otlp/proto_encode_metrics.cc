// EncodeMetricsProto: MetricBatch -> ExportMetricsServiceRequest wire bytes.

#include <string>

#include "otlp/encode.h"
#include "otlp/proto_encode_common.h"

namespace strata::otlp {
namespace {

class MetricProtoEncoder : public internal::ProtoEncoderBase {
 public:
  MetricProtoEncoder(const MetricBatch& batch, std::string* out)
      : ProtoEncoderBase(batch, out), metrics_(batch) {}

  void Encode() {
    WriteResourceTree(metrics_.metrics.scope, [this](uint32_t row) { WriteMetric(row); });
  }

 private:
  void WriteMetric(size_t i);
  void WriteData(size_t i);
  void WriteNumberPoint(size_t i);
  void WriteHistogramPoint(size_t i);
  void WriteExponentialPoint(size_t i);
  void WriteBuckets(uint32_t field, int32_t offset, Range counts);
  void WriteSummaryPoint(size_t i);
  void WriteExemplars(uint32_t field, Range rows);

  const MetricBatch& metrics_;
};

void MetricProtoEncoder::WriteMetric(size_t i) {
  const MetricColumns& m = metrics_.metrics;
  ProtoWriter::Mark metric = w_.Open(2);  // ScopeMetrics.metrics
  w_.String(1, m.name[i]);
  w_.String(2, m.description[i]);
  w_.String(3, m.unit[i]);
  WriteData(i);
  WriteKeyValues(12, metrics_.metadata_attributes, m.metadata[i]);
  w_.Close(metric);
}

// The data oneof is written whenever the type is set, even with no points:
// the member's presence is the metric's type. Its field number is the
// MetricType value.
void MetricProtoEncoder::WriteData(size_t i) {
  const MetricColumns& m = metrics_.metrics;
  MetricType type = m.type[i];
  if (type == MetricType::kUnset) return;
  ProtoWriter::Mark data = w_.Open(static_cast<uint32_t>(type));
  Range points = m.points[i];
  for (uint32_t p = points.begin; p < points.end(); ++p) {
    switch (type) {
      case MetricType::kGauge:
      case MetricType::kSum:
        WriteNumberPoint(p);
        break;
      case MetricType::kHistogram:
        WriteHistogramPoint(p);
        break;
      case MetricType::kExponentialHistogram:
        WriteExponentialPoint(p);
        break;
      case MetricType::kSummary:
        WriteSummaryPoint(p);
        break;
      case MetricType::kUnset:
        break;
    }
  }
  if (type == MetricType::kSum || type == MetricType::kHistogram ||
      type == MetricType::kExponentialHistogram) {
    w_.Int32(2, m.aggregation_temporality[i]);
  }
  if (type == MetricType::kSum) w_.Bool(3, m.is_monotonic[i] != 0);
  w_.Close(data);
}

void MetricProtoEncoder::WriteNumberPoint(size_t i) {
  const NumberPointColumns& p = metrics_.number_points;
  ProtoWriter::Mark point = w_.Open(1);  // Gauge/Sum.data_points
  w_.Fixed64(2, p.start_time_unix_nano[i]);
  w_.Fixed64(3, p.time_unix_nano[i]);
  if (p.value_type[i] == NumberType::kDouble) w_.Fixed64Always(4, p.value_bits[i]);  // as_double
  WriteExemplars(5, p.exemplars[i]);
  if (p.value_type[i] == NumberType::kInt) w_.Fixed64Always(6, p.value_bits[i]);  // as_int
  WriteKeyValues(7, metrics_.point_attributes, p.attributes[i]);
  w_.UInt32(8, p.flags[i]);
  w_.Close(point);
}

void MetricProtoEncoder::WriteHistogramPoint(size_t i) {
  const HistogramPointColumns& p = metrics_.histogram_points;
  ProtoWriter::Mark point = w_.Open(1);  // Histogram.data_points
  w_.Fixed64(2, p.start_time_unix_nano[i]);
  w_.Fixed64(3, p.time_unix_nano[i]);
  w_.Fixed64(4, p.count[i]);
  if (p.present[i] & kHasSum) w_.DoubleAlways(5, p.sum[i]);
  Range buckets = p.bucket_counts[i];
  w_.PackedFixed64(6, metrics_.bucket_counts.data() + buckets.begin, buckets.count);
  Range bounds = p.explicit_bounds[i];
  w_.PackedDouble(7, metrics_.explicit_bounds.data() + bounds.begin, bounds.count);
  WriteExemplars(8, p.exemplars[i]);
  WriteKeyValues(9, metrics_.point_attributes, p.attributes[i]);
  w_.UInt32(10, p.flags[i]);
  if (p.present[i] & kHasMin) w_.DoubleAlways(11, p.min[i]);
  if (p.present[i] & kHasMax) w_.DoubleAlways(12, p.max[i]);
  w_.Close(point);
}

void MetricProtoEncoder::WriteExponentialPoint(size_t i) {
  const ExponentialPointColumns& p = metrics_.exponential_points;
  ProtoWriter::Mark point = w_.Open(1);  // ExponentialHistogram.data_points
  WriteKeyValues(1, metrics_.point_attributes, p.attributes[i]);
  w_.Fixed64(2, p.start_time_unix_nano[i]);
  w_.Fixed64(3, p.time_unix_nano[i]);
  w_.Fixed64(4, p.count[i]);
  if (p.present[i] & kHasSum) w_.DoubleAlways(5, p.sum[i]);
  w_.SInt32(6, p.scale[i]);
  w_.Fixed64(7, p.zero_count[i]);
  WriteBuckets(8, p.positive_offset[i], p.positive_bucket_counts[i]);
  WriteBuckets(9, p.negative_offset[i], p.negative_bucket_counts[i]);
  w_.UInt32(10, p.flags[i]);
  WriteExemplars(11, p.exemplars[i]);
  if (p.present[i] & kHasMin) w_.DoubleAlways(12, p.min[i]);
  if (p.present[i] & kHasMax) w_.DoubleAlways(13, p.max[i]);
  w_.Double(14, p.zero_threshold[i]);
  w_.Close(point);
}

// Buckets presence is not retained, so empty Buckets (offset 0, no counts)
// are omitted.
void MetricProtoEncoder::WriteBuckets(uint32_t field, int32_t offset, Range counts) {
  if (offset == 0 && counts.count == 0) return;
  ProtoWriter::Mark buckets = w_.Open(field);
  w_.SInt32(1, offset);
  w_.PackedVarint(2, metrics_.bucket_counts.data() + counts.begin, counts.count);
  w_.Close(buckets);
}

void MetricProtoEncoder::WriteSummaryPoint(size_t i) {
  const SummaryPointColumns& p = metrics_.summary_points;
  ProtoWriter::Mark point = w_.Open(1);  // Summary.data_points
  w_.Fixed64(2, p.start_time_unix_nano[i]);
  w_.Fixed64(3, p.time_unix_nano[i]);
  w_.Fixed64(4, p.count[i]);
  w_.Double(5, p.sum[i]);
  Range quantiles = p.quantiles[i];
  for (uint32_t q = quantiles.begin; q < quantiles.end(); ++q) {
    ProtoWriter::Mark value = w_.Open(6);  // quantile_values
    w_.Double(1, metrics_.quantiles.quantile[q]);
    w_.Double(2, metrics_.quantiles.value[q]);
    w_.Close(value);
  }
  WriteKeyValues(7, metrics_.point_attributes, p.attributes[i]);
  w_.UInt32(8, p.flags[i]);
  w_.Close(point);
}

void MetricProtoEncoder::WriteExemplars(uint32_t field, Range rows) {
  const ExemplarColumns& e = metrics_.exemplars;
  for (uint32_t i = rows.begin; i < rows.end(); ++i) {
    ProtoWriter::Mark exemplar = w_.Open(field);
    w_.Fixed64(2, e.time_unix_nano[i]);
    if (e.value_type[i] == NumberType::kDouble) w_.Fixed64Always(3, e.value_bits[i]);
    if (e.has_span_id[i]) w_.IdAlways(4, e.span_id[i]);
    if (e.has_trace_id[i]) w_.IdAlways(5, e.trace_id[i]);
    if (e.value_type[i] == NumberType::kInt) w_.Fixed64Always(6, e.value_bits[i]);
    WriteKeyValues(7, metrics_.exemplar_attributes, e.filtered_attributes[i]);
    w_.Close(exemplar);
  }
}

}  // namespace

std::string EncodeMetricsProto(const MetricBatch& batch) {
  std::string out;
  out.reserve(internal::EstimateProtoBytes(batch));
  MetricProtoEncoder(batch, &out).Encode();
  return out;
}

}  // namespace strata::otlp
