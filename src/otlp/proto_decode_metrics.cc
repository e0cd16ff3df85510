// DecodeMetricsProto: ExportMetricsServiceRequest wire bytes → MetricBatch.
// Field numbers follow opentelemetry-proto v1.x (metrics.proto), including
// Metric.metadata (12) and ExponentialHistogramDataPoint.zero_threshold (14).
// Repeated scalars (bucket_counts, explicit_bounds) are accepted packed and
// unpacked, as protobuf requires of parsers.

#include <bit>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "otlp/decode.h"
#include "otlp/proto_decode_common.h"

namespace strata::otlp {
namespace {

using proto::DecodeContext;
using proto::FieldNames;
using proto::GetAttribute;
using proto::GetDouble;
using proto::GetFixed64;
using proto::GetId;
using proto::GetString;
using proto::GetVarint;
using proto::RangeFrom;
using proto::SkipOrReject;

constexpr std::string_view kMetricFields[] = {
    "", "name", "description", "unit", "", "gauge", "", "sum", "", "histogram",
    "exponential_histogram", "summary", "metadata"};
constexpr std::string_view kNumberPointFields[] = {
    "", "", "start_time_unix_nano", "time_unix_nano", "as_double", "exemplars", "as_int",
    "attributes", "flags"};
constexpr std::string_view kHistogramPointFields[] = {
    "", "", "start_time_unix_nano", "time_unix_nano", "count", "sum", "bucket_counts",
    "explicit_bounds", "exemplars", "attributes", "flags", "min", "max"};
constexpr std::string_view kExponentialPointFields[] = {
    "", "attributes", "start_time_unix_nano", "time_unix_nano", "count", "sum", "scale",
    "zero_count", "positive", "negative", "flags", "exemplars", "min", "max", "zero_threshold"};
constexpr std::string_view kBucketsFields[] = {"", "offset", "bucket_counts"};
constexpr std::string_view kSummaryPointFields[] = {
    "", "", "start_time_unix_nano", "time_unix_nano", "count", "sum", "quantile_values",
    "attributes", "flags"};
constexpr std::string_view kQuantileFields[] = {"", "quantile", "value"};
constexpr std::string_view kExemplarFields[] = {
    "", "", "time_unix_nano", "as_double", "span_id", "trace_id", "as_int", "filtered_attributes"};

// ---------------------------------------------------------------- exemplars

[[nodiscard]] bool DecodeExemplar(DecodeContext& ctx, std::string_view payload, MetricBatch* b) {
  const size_t attributes_begin = b->exemplar_attributes.size();
  ExemplarRow row;
  WireReader r(payload);
  while (!r.done()) {
    uint32_t tag;
    if (!r.ReadTag(&tag)) return ctx.FailWire(r);
    switch (tag) {
      case Tag(2, WireType::kFixed64):
        if (!GetFixed64(ctx, r, "time_unix_nano", &row.time_unix_nano)) return false;
        break;
      case Tag(3, WireType::kFixed64):
        if (!GetFixed64(ctx, r, "as_double", &row.value_bits)) return false;
        row.value_type = NumberType::kDouble;
        break;
      case Tag(4, WireType::kLen):
        if (!GetId(ctx, r, "span_id", true, &row.span_id, &row.has_span_id)) return false;
        break;
      case Tag(5, WireType::kLen):
        if (!GetId(ctx, r, "trace_id", true, &row.trace_id, &row.has_trace_id)) return false;
        break;
      case Tag(6, WireType::kFixed64):
        if (!GetFixed64(ctx, r, "as_int", &row.value_bits)) return false;
        row.value_type = NumberType::kInt;
        break;
      case Tag(7, WireType::kLen):
        if (!GetAttribute(ctx, r, "filtered_attributes", b, &b->exemplar_attributes,
                          attributes_begin)) {
          return false;
        }
        break;
      default:
        if (!SkipOrReject(ctx, r, tag, kExemplarFields)) return false;
    }
  }
  row.filtered_attributes = RangeFrom(attributes_begin, b->exemplar_attributes.size());
  b->exemplars.Append(row);
  return true;
}

// ------------------------------------------------------- point fields shared

// Where a point type keeps the fields all point types have.
struct PointLayout {
  uint32_t attributes_field;
  uint32_t exemplars_field;
  uint32_t flags_field;
  FieldNames names;
};

constexpr PointLayout kNumberLayout = {7, 5, 8, kNumberPointFields};
constexpr PointLayout kHistogramLayout = {9, 8, 10, kHistogramPointFields};
constexpr PointLayout kExponentialLayout = {1, 11, 10, kExponentialPointFields};
constexpr PointLayout kSummaryLayout = {7, 0, 8, kSummaryPointFields};

// Starts a point row of `metric`: its attributes and exemplars begin at the
// end of their tables, and FinishPoint extends them over the rows decoded.
void StartPoint(const MetricBatch& b, uint32_t metric, PointRowBase* p) {
  p->metric = metric;
  p->attributes = Range{static_cast<uint32_t>(b.point_attributes.size()), 0};
  p->exemplars = Range{static_cast<uint32_t>(b.exemplars.size()), 0};
}

void FinishPoint(const MetricBatch& b, PointRowBase* p) {
  p->attributes = RangeFrom(p->attributes.begin, b.point_attributes.size());
  p->exemplars = RangeFrom(p->exemplars.begin, b.exemplars.size());
}

// Decodes a field every point type has, or skips/rejects any other field.
[[nodiscard]] bool DecodePointField(DecodeContext& ctx, WireReader& r, uint32_t tag,
                                    const PointLayout& layout, MetricBatch* b, PointRowBase* p) {
  if (tag == Tag(layout.attributes_field, WireType::kLen)) {
    return GetAttribute(ctx, r, "attributes", b, &b->point_attributes, p->attributes.begin);
  }
  if (tag == Tag(2, WireType::kFixed64)) {
    return GetFixed64(ctx, r, "start_time_unix_nano", &p->start_time_unix_nano);
  }
  if (tag == Tag(3, WireType::kFixed64)) {
    return GetFixed64(ctx, r, "time_unix_nano", &p->time_unix_nano);
  }
  if (tag == Tag(layout.flags_field, WireType::kVarint)) {
    uint64_t v;
    if (!GetVarint(ctx, r, "flags", &v)) return false;
    p->flags = VarintToUint32(v);
    return true;
  }
  if (layout.exemplars_field != 0 && tag == Tag(layout.exemplars_field, WireType::kLen)) {
    const size_t index = b->exemplars.size() - p->exemplars.begin;
    std::string_view sub;
    if (!r.ReadLen(&sub)) return ctx.FailWire(r, "exemplars", index);
    return DecodeExemplar(ctx, sub, b) || ctx.In("exemplars", index);
  }
  return SkipOrReject(ctx, r, tag, layout.names);
}

// Appends a packed run of fixed64 or double values (repeated field, packed).
template <typename T>
[[nodiscard]] bool AppendPacked64(DecodeContext& ctx, WireReader& r, std::string_view field,
                                  std::vector<T>* out) {
  static_assert(sizeof(T) == 8);
  std::string_view payload;
  if (!r.ReadLen(&payload)) return ctx.FailWire(r, field);
  if (payload.size() % 8 != 0) {
    return ctx.Fail(r.field_start(), field,
                    absl::StrCat("packed length ", payload.size(), " is not a multiple of 8"));
  }
  const size_t old_size = out->size();
  out->resize(old_size + payload.size() / 8);
  if (!payload.empty()) std::memcpy(out->data() + old_size, payload.data(), payload.size());
  return true;
}

// ------------------------------------------------------------ number points

[[nodiscard]] bool DecodeNumberPoint(DecodeContext& ctx, std::string_view payload, MetricBatch* b,
                                     uint32_t metric) {
  NumberPointRow row;
  StartPoint(*b, metric, &row);
  WireReader r(payload);
  while (!r.done()) {
    uint32_t tag;
    if (!r.ReadTag(&tag)) return ctx.FailWire(r);
    switch (tag) {
      case Tag(4, WireType::kFixed64):
        if (!GetFixed64(ctx, r, "as_double", &row.value_bits)) return false;
        row.value_type = NumberType::kDouble;
        break;
      case Tag(6, WireType::kFixed64):
        if (!GetFixed64(ctx, r, "as_int", &row.value_bits)) return false;
        row.value_type = NumberType::kInt;
        break;
      default:
        if (!DecodePointField(ctx, r, tag, kNumberLayout, b, &row)) return false;
    }
  }
  FinishPoint(*b, &row);
  b->number_points.Append(row);
  return true;
}

// --------------------------------------------------------- histogram points

// An optional double (sum, min, max): the value, and its bit in `present`.
[[nodiscard]] bool GetOptionalDouble(DecodeContext& ctx, WireReader& r, std::string_view field,
                                     OptionalField bit, double* out, uint8_t* present) {
  if (!GetDouble(ctx, r, field, out)) return false;
  *present |= bit;
  return true;
}

[[nodiscard]] bool DecodeHistogramPoint(DecodeContext& ctx, std::string_view payload,
                                        MetricBatch* b, uint32_t metric) {
  const internal::PointMark mark = internal::MarkPoint(*b);
  HistogramPointRow row;
  StartPoint(*b, metric, &row);
  const size_t counts_begin = b->bucket_counts.size();
  const size_t bounds_begin = b->explicit_bounds.size();
  WireReader r(payload);
  while (!r.done()) {
    uint32_t tag;
    if (!r.ReadTag(&tag)) return ctx.FailWire(r);
    bool ok = true;
    switch (tag) {
      case Tag(4, WireType::kFixed64):
        ok = GetFixed64(ctx, r, "count", &row.count);
        break;
      case Tag(5, WireType::kFixed64):
        ok = GetOptionalDouble(ctx, r, "sum", kHasSum, &row.sum, &row.present);
        break;
      case Tag(6, WireType::kLen):
        ok = AppendPacked64(ctx, r, "bucket_counts", &b->bucket_counts);
        break;
      case Tag(6, WireType::kFixed64):
        ok = GetFixed64(ctx, r, "bucket_counts", &b->bucket_counts.emplace_back());
        break;
      case Tag(7, WireType::kLen):
        ok = AppendPacked64(ctx, r, "explicit_bounds", &b->explicit_bounds);
        break;
      case Tag(7, WireType::kFixed64):
        ok = GetDouble(ctx, r, "explicit_bounds", &b->explicit_bounds.emplace_back());
        break;
      case Tag(11, WireType::kFixed64):
        ok = GetOptionalDouble(ctx, r, "min", kHasMin, &row.min, &row.present);
        break;
      case Tag(12, WireType::kFixed64):
        ok = GetOptionalDouble(ctx, r, "max", kHasMax, &row.max, &row.present);
        break;
      default:
        ok = DecodePointField(ctx, r, tag, kHistogramLayout, b, &row);
    }
    if (!ok) return false;
  }
  FinishPoint(*b, &row);
  row.bucket_counts = RangeFrom(counts_begin, b->bucket_counts.size());
  row.explicit_bounds = RangeFrom(bounds_begin, b->explicit_bounds.size());
  if (internal::AcceptHistogramPoint(b, mark, row)) b->histogram_points.Append(row);
  return true;
}

// ExponentialHistogramDataPoint.Buckets: its counts go to b->bucket_counts.
[[nodiscard]] bool DecodeBuckets(DecodeContext& ctx, std::string_view payload, MetricBatch* b,
                                 int32_t* offset, Range* counts) {
  const size_t begin = b->bucket_counts.size();
  WireReader r(payload);
  while (!r.done()) {
    uint32_t tag;
    if (!r.ReadTag(&tag)) return ctx.FailWire(r);
    uint64_t v;
    switch (tag) {
      case Tag(1, WireType::kVarint):
        if (!GetVarint(ctx, r, "offset", &v)) return false;
        *offset = ZigZagToInt32(v);
        break;
      case Tag(2, WireType::kVarint):
        if (!GetVarint(ctx, r, "bucket_counts", &v)) return false;
        b->bucket_counts.push_back(v);
        break;
      case Tag(2, WireType::kLen): {
        std::string_view packed;
        if (!r.ReadLen(&packed)) return ctx.FailWire(r, "bucket_counts");
        WireReader values(packed);
        while (!values.done()) {
          if (!values.ReadVarint(&v)) {
            return ctx.Fail(r.field_start(), "bucket_counts", values.error());
          }
          b->bucket_counts.push_back(v);
        }
        break;
      }
      default:
        if (!SkipOrReject(ctx, r, tag, kBucketsFields)) return false;
    }
  }
  *counts = RangeFrom(begin, b->bucket_counts.size());
  return true;
}

// An exponential histogram point while its fields are decoded: the row, and
// which of its singular Buckets messages have been seen.
struct PendingExponential {
  ExponentialPointRow row;
  bool seen_positive = false;
  bool seen_negative = false;
};

[[nodiscard]] bool GetBuckets(DecodeContext& ctx, WireReader& r, MetricBatch* b, bool positive,
                              PendingExponential* point) {
  const std::string_view field = positive ? "positive" : "negative";
  std::string_view sub;
  if (!r.ReadLen(&sub)) return ctx.FailWire(r, field);
  bool& seen = positive ? point->seen_positive : point->seen_negative;
  if (seen) return ctx.Fail(r.field_start(), field, proto::kDuplicateMessage);
  seen = true;
  ExponentialPointRow& row = point->row;
  return DecodeBuckets(ctx, sub, b, positive ? &row.positive_offset : &row.negative_offset,
                       positive ? &row.positive_bucket_counts : &row.negative_bucket_counts) ||
         ctx.In(field);
}

[[nodiscard]] bool DecodeExponentialPoint(DecodeContext& ctx, std::string_view payload,
                                          MetricBatch* b, uint32_t metric) {
  PendingExponential point;
  ExponentialPointRow& row = point.row;
  StartPoint(*b, metric, &row);
  row.positive_bucket_counts = row.negative_bucket_counts =
      Range{static_cast<uint32_t>(b->bucket_counts.size()), 0};
  WireReader r(payload);
  while (!r.done()) {
    uint32_t tag;
    if (!r.ReadTag(&tag)) return ctx.FailWire(r);
    bool ok = true;
    uint64_t v = 0;
    switch (tag) {
      case Tag(4, WireType::kFixed64):
        ok = GetFixed64(ctx, r, "count", &row.count);
        break;
      case Tag(5, WireType::kFixed64):
        ok = GetOptionalDouble(ctx, r, "sum", kHasSum, &row.sum, &row.present);
        break;
      case Tag(6, WireType::kVarint):
        ok = GetVarint(ctx, r, "scale", &v);
        row.scale = ZigZagToInt32(v);
        break;
      case Tag(7, WireType::kFixed64):
        ok = GetFixed64(ctx, r, "zero_count", &row.zero_count);
        break;
      case Tag(8, WireType::kLen):
      case Tag(9, WireType::kLen):
        ok = GetBuckets(ctx, r, b, tag == Tag(8, WireType::kLen), &point);
        break;
      case Tag(12, WireType::kFixed64):
        ok = GetOptionalDouble(ctx, r, "min", kHasMin, &row.min, &row.present);
        break;
      case Tag(13, WireType::kFixed64):
        ok = GetOptionalDouble(ctx, r, "max", kHasMax, &row.max, &row.present);
        break;
      case Tag(14, WireType::kFixed64):
        ok = GetDouble(ctx, r, "zero_threshold", &row.zero_threshold);
        break;
      default:
        ok = DecodePointField(ctx, r, tag, kExponentialLayout, b, &row);
    }
    if (!ok) return false;
  }
  FinishPoint(*b, &row);
  b->exponential_points.Append(row);
  return true;
}

// ----------------------------------------------------------- summary points

[[nodiscard]] bool DecodeQuantile(DecodeContext& ctx, std::string_view payload, MetricBatch* b) {
  QuantileRow row;
  WireReader r(payload);
  while (!r.done()) {
    uint32_t tag;
    if (!r.ReadTag(&tag)) return ctx.FailWire(r);
    switch (tag) {
      case Tag(1, WireType::kFixed64):
        if (!GetDouble(ctx, r, "quantile", &row.quantile)) return false;
        break;
      case Tag(2, WireType::kFixed64):
        if (!GetDouble(ctx, r, "value", &row.value)) return false;
        break;
      default:
        if (!SkipOrReject(ctx, r, tag, kQuantileFields)) return false;
    }
  }
  b->quantiles.Append(row);
  return true;
}

[[nodiscard]] bool DecodeSummaryPoint(DecodeContext& ctx, std::string_view payload,
                                      MetricBatch* b, uint32_t metric) {
  const size_t quantiles_begin = b->quantiles.size();
  SummaryPointRow row;
  StartPoint(*b, metric, &row);
  WireReader r(payload);
  while (!r.done()) {
    uint32_t tag;
    if (!r.ReadTag(&tag)) return ctx.FailWire(r);
    switch (tag) {
      case Tag(4, WireType::kFixed64):
        if (!GetFixed64(ctx, r, "count", &row.count)) return false;
        break;
      case Tag(5, WireType::kFixed64):
        if (!GetDouble(ctx, r, "sum", &row.sum)) return false;
        break;
      case Tag(6, WireType::kLen): {
        const size_t index = b->quantiles.size() - quantiles_begin;
        std::string_view sub;
        if (!r.ReadLen(&sub)) return ctx.FailWire(r, "quantile_values", index);
        if (!DecodeQuantile(ctx, sub, b)) return ctx.In("quantile_values", index);
        break;
      }
      default:
        if (!DecodePointField(ctx, r, tag, kSummaryLayout, b, &row)) return false;
    }
  }
  FinishPoint(*b, &row);
  row.quantiles = RangeFrom(quantiles_begin, b->quantiles.size());
  b->summary_points.Append(row);
  return true;
}

// ------------------------------------------------------------------ metrics

size_t PointTableSize(const MetricBatch& b, MetricType type) {
  const PointColumnsBase* points = b.points_of(type);
  return points != nullptr ? points->size() : 0;
}

[[nodiscard]] bool DecodePoint(DecodeContext& ctx, std::string_view payload, MetricBatch* b,
                               uint32_t metric, MetricType type) {
  switch (type) {
    case MetricType::kHistogram:
      return DecodeHistogramPoint(ctx, payload, b, metric);
    case MetricType::kExponentialHistogram:
      return DecodeExponentialPoint(ctx, payload, b, metric);
    case MetricType::kSummary:
      return DecodeSummaryPoint(ctx, payload, b, metric);
    default:
      return DecodeNumberPoint(ctx, payload, b, metric);
  }
}

// Gauge, Sum, Histogram, ExponentialHistogram or Summary: data_points = 1,
// aggregation_temporality = 2 (not Gauge, Summary), is_monotonic = 3 (Sum).
[[nodiscard]] bool DecodeData(DecodeContext& ctx, std::string_view payload, MetricBatch* b,
                              uint32_t metric, MetricType type) {
  const bool has_temporality = type == MetricType::kSum || type == MetricType::kHistogram ||
                               type == MetricType::kExponentialHistogram;
  const std::string_view fields[] = {"", "data_points", has_temporality ? "aggregation_temporality" : "",
                                     type == MetricType::kSum ? "is_monotonic" : ""};
  const size_t begin = PointTableSize(*b, type);
  WireReader r(payload);
  while (!r.done()) {
    uint32_t tag;
    if (!r.ReadTag(&tag)) return ctx.FailWire(r);
    uint64_t v;
    if (tag == Tag(1, WireType::kLen)) {
      const size_t index = PointTableSize(*b, type) - begin;
      std::string_view sub;
      if (!r.ReadLen(&sub)) return ctx.FailWire(r, "data_points", index);
      if (!DecodePoint(ctx, sub, b, metric, type)) return ctx.In("data_points", index);
    } else if (has_temporality && tag == Tag(2, WireType::kVarint)) {
      if (!GetVarint(ctx, r, "aggregation_temporality", &v)) return false;
      b->metrics.aggregation_temporality[metric] = VarintToInt32(v);
    } else if (type == MetricType::kSum && tag == Tag(3, WireType::kVarint)) {
      if (!GetVarint(ctx, r, "is_monotonic", &v)) return false;
      b->metrics.is_monotonic[metric] = v != 0 ? 1 : 0;
    } else if (!SkipOrReject(ctx, r, tag, fields)) {
      return false;
    }
  }
  b->metrics.points[metric] = RangeFrom(begin, PointTableSize(*b, type));
  return true;
}

// Appends a Metric row with empty values, which DecodeMetric fills in place:
// its data points need the row index before the Metric is fully read.
uint32_t AppendMetricRow(MetricBatch* b, uint32_t scope) {
  MetricRow row;
  row.scope = scope;
  row.metadata = Range{static_cast<uint32_t>(b->metadata_attributes.size()), 0};
  return b->metrics.Append(row);
}

std::string_view DataFieldName(MetricType type) {
  return kMetricFields[static_cast<uint8_t>(type)];
}

[[nodiscard]] bool DecodeMetric(DecodeContext& ctx, std::string_view payload, MetricBatch* b,
                                uint32_t scope) {
  const uint32_t row = AppendMetricRow(b, scope);
  const size_t metadata_begin = b->metadata_attributes.size();
  MetricColumns& m = b->metrics;
  WireReader r(payload);
  while (!r.done()) {
    uint32_t tag;
    if (!r.ReadTag(&tag)) return ctx.FailWire(r);
    switch (tag) {
      case Tag(1, WireType::kLen):
        if (!GetString(ctx, r, "name", &m.name[row])) return false;
        break;
      case Tag(2, WireType::kLen):
        if (!GetString(ctx, r, "description", &m.description[row])) return false;
        break;
      case Tag(3, WireType::kLen):
        if (!GetString(ctx, r, "unit", &m.unit[row])) return false;
        break;
      case Tag(5, WireType::kLen):
      case Tag(7, WireType::kLen):
      case Tag(9, WireType::kLen):
      case Tag(10, WireType::kLen):
      case Tag(11, WireType::kLen): {
        const auto type = static_cast<MetricType>(tag >> 3);
        std::string_view sub;
        if (!r.ReadLen(&sub)) return ctx.FailWire(r, DataFieldName(type));
        if (m.type[row] != MetricType::kUnset) {
          // Protobuf would merge a repeated member, or let the last member
          // win; neither keeps the data points of one metric contiguous.
          return ctx.Fail(r.field_start(), DataFieldName(type),
                          "Metric.data is set more than once; protobuf merge semantics are not "
                          "supported");
        }
        m.type[row] = type;
        if (!DecodeData(ctx, sub, b, row, type)) return ctx.In(DataFieldName(type));
        break;
      }
      case Tag(12, WireType::kLen):
        if (!GetAttribute(ctx, r, "metadata", b, &b->metadata_attributes, metadata_begin)) {
          return false;
        }
        break;
      default:
        if (!SkipOrReject(ctx, r, tag, kMetricFields)) return false;
    }
  }
  m.metadata[row] = RangeFrom(metadata_begin, b->metadata_attributes.size());
  return true;
}

// Reserves capacity for number points and point attributes, the bulk of
// typical requests, from the request size (see proto_decode_traces.cc).
void ReserveForInput(MetricBatch* b, size_t input_bytes) {
  NumberPointColumns& n = b->number_points;
  proto::ReserveMore(input_bytes / 128, n.metric, n.attributes, n.start_time_unix_nano,
                     n.time_unix_nano, n.flags, n.exemplars, n.value_type, n.value_bits);
  proto::ReserveMore(input_bytes / 32, &b->point_attributes);
}

}  // namespace

absl::Status DecodeMetricsProto(std::string_view bytes, MetricBatch* batch,
                                const DecodeLimits& limits) {
  static constexpr proto::SignalNames kNames = {"ExportMetricsServiceRequest", "resource_metrics",
                                                "scope_metrics", "metrics"};
  ReserveForInput(batch, bytes.size());
  auto decode_metric = [batch](DecodeContext& ctx, std::string_view payload, uint32_t scope) {
    return DecodeMetric(ctx, payload, batch, scope);
  };
  return proto::DecodeRequest(bytes, batch, limits, kNames, decode_metric);
}

}  // namespace strata::otlp
