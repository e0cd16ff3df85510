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
  uint64_t time = 0;
  NumberType value_type = NumberType::kNone;
  uint64_t value_bits = 0;
  TraceId trace_id{};
  SpanId span_id{};
  uint8_t has_trace_id = 0;
  uint8_t has_span_id = 0;
  WireReader r(payload);
  while (!r.done()) {
    uint32_t tag;
    if (!r.ReadTag(&tag)) return ctx.FailWire(r);
    switch (tag) {
      case Tag(2, WireType::kFixed64):
        if (!GetFixed64(ctx, r, "time_unix_nano", &time)) return false;
        break;
      case Tag(3, WireType::kFixed64):
        if (!GetFixed64(ctx, r, "as_double", &value_bits)) return false;
        value_type = NumberType::kDouble;
        break;
      case Tag(4, WireType::kLen):
        if (!GetId(ctx, r, "span_id", true, &span_id, &has_span_id)) return false;
        break;
      case Tag(5, WireType::kLen):
        if (!GetId(ctx, r, "trace_id", true, &trace_id, &has_trace_id)) return false;
        break;
      case Tag(6, WireType::kFixed64):
        if (!GetFixed64(ctx, r, "as_int", &value_bits)) return false;
        value_type = NumberType::kInt;
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
  ExemplarColumns& e = b->exemplars;
  e.filtered_attributes.push_back(RangeFrom(attributes_begin, b->exemplar_attributes.size()));
  e.time_unix_nano.push_back(time);
  e.value_type.push_back(value_type);
  e.value_bits.push_back(value_bits);
  e.trace_id.push_back(trace_id);
  e.has_trace_id.push_back(has_trace_id);
  e.span_id.push_back(span_id);
  e.has_span_id.push_back(has_span_id);
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

struct PointBase {
  size_t attributes_begin = 0;
  size_t exemplars_begin = 0;
  uint64_t start = 0;
  uint64_t time = 0;
  uint32_t flags = 0;
};

PointBase StartPoint(const MetricBatch& b) {
  PointBase p;
  p.attributes_begin = b.point_attributes.size();
  p.exemplars_begin = b.exemplars.size();
  return p;
}

// Decodes a field every point type has, or skips/rejects any other field.
[[nodiscard]] bool DecodePointField(DecodeContext& ctx, WireReader& r, uint32_t tag,
                                    const PointLayout& layout, MetricBatch* b, PointBase* p) {
  if (tag == Tag(layout.attributes_field, WireType::kLen)) {
    return GetAttribute(ctx, r, "attributes", b, &b->point_attributes, p->attributes_begin);
  }
  if (tag == Tag(2, WireType::kFixed64)) return GetFixed64(ctx, r, "start_time_unix_nano", &p->start);
  if (tag == Tag(3, WireType::kFixed64)) return GetFixed64(ctx, r, "time_unix_nano", &p->time);
  if (tag == Tag(layout.flags_field, WireType::kVarint)) {
    uint64_t v;
    if (!GetVarint(ctx, r, "flags", &v)) return false;
    p->flags = VarintToUint32(v);
    return true;
  }
  if (layout.exemplars_field != 0 && tag == Tag(layout.exemplars_field, WireType::kLen)) {
    const size_t index = b->exemplars.size() - p->exemplars_begin;
    std::string_view sub;
    if (!r.ReadLen(&sub)) return ctx.FailWire(r, "exemplars", index);
    return DecodeExemplar(ctx, sub, b) || ctx.In("exemplars", index);
  }
  return SkipOrReject(ctx, r, tag, layout.names);
}

void AppendPointBase(PointColumnsBase* t, uint32_t metric, const PointBase& p,
                     const MetricBatch& b) {
  t->metric.push_back(metric);
  t->attributes.push_back(RangeFrom(p.attributes_begin, b.point_attributes.size()));
  t->start_time_unix_nano.push_back(p.start);
  t->time_unix_nano.push_back(p.time);
  t->flags.push_back(p.flags);
  t->exemplars.push_back(RangeFrom(p.exemplars_begin, b.exemplars.size()));
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
  PointBase p = StartPoint(*b);
  NumberType value_type = NumberType::kNone;
  uint64_t value_bits = 0;
  WireReader r(payload);
  while (!r.done()) {
    uint32_t tag;
    if (!r.ReadTag(&tag)) return ctx.FailWire(r);
    switch (tag) {
      case Tag(4, WireType::kFixed64):
        if (!GetFixed64(ctx, r, "as_double", &value_bits)) return false;
        value_type = NumberType::kDouble;
        break;
      case Tag(6, WireType::kFixed64):
        if (!GetFixed64(ctx, r, "as_int", &value_bits)) return false;
        value_type = NumberType::kInt;
        break;
      default:
        if (!DecodePointField(ctx, r, tag, kNumberLayout, b, &p)) return false;
    }
  }
  NumberPointColumns& t = b->number_points;
  AppendPointBase(&t, metric, p, *b);
  t.value_type.push_back(value_type);
  t.value_bits.push_back(value_bits);
  return true;
}

// --------------------------------------------------------- histogram points

// count, sum, min and max, which histogram types share.
struct HistogramStats {
  uint64_t count = 0;
  double sum = 0;
  double min = 0;
  double max = 0;
  uint8_t present = 0;
};

[[nodiscard]] bool GetOptionalDouble(DecodeContext& ctx, WireReader& r, std::string_view field,
                                     OptionalField bit, double* out, HistogramStats* stats) {
  if (!GetDouble(ctx, r, field, out)) return false;
  stats->present |= bit;
  return true;
}

[[nodiscard]] bool DecodeHistogramPoint(DecodeContext& ctx, std::string_view payload,
                                        MetricBatch* b, uint32_t metric) {
  PointBase p = StartPoint(*b);
  HistogramStats s;
  const size_t counts_begin = b->bucket_counts.size();
  const size_t bounds_begin = b->explicit_bounds.size();
  WireReader r(payload);
  while (!r.done()) {
    uint32_t tag;
    if (!r.ReadTag(&tag)) return ctx.FailWire(r);
    bool ok = true;
    switch (tag) {
      case Tag(4, WireType::kFixed64):
        ok = GetFixed64(ctx, r, "count", &s.count);
        break;
      case Tag(5, WireType::kFixed64):
        ok = GetOptionalDouble(ctx, r, "sum", kHasSum, &s.sum, &s);
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
        ok = GetOptionalDouble(ctx, r, "min", kHasMin, &s.min, &s);
        break;
      case Tag(12, WireType::kFixed64):
        ok = GetOptionalDouble(ctx, r, "max", kHasMax, &s.max, &s);
        break;
      default:
        ok = DecodePointField(ctx, r, tag, kHistogramLayout, b, &p);
    }
    if (!ok) return false;
  }
  HistogramPointColumns& t = b->histogram_points;
  AppendPointBase(&t, metric, p, *b);
  t.count.push_back(s.count);
  t.sum.push_back(s.sum);
  t.min.push_back(s.min);
  t.max.push_back(s.max);
  t.present.push_back(s.present);
  t.bucket_counts.push_back(RangeFrom(counts_begin, b->bucket_counts.size()));
  t.explicit_bounds.push_back(RangeFrom(bounds_begin, b->explicit_bounds.size()));
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

struct ExponentialRow {
  HistogramStats s;
  int32_t scale = 0;
  uint64_t zero_count = 0;
  double zero_threshold = 0;
  int32_t positive_offset = 0;
  int32_t negative_offset = 0;
  Range positive;
  Range negative;
  bool seen_positive = false;
  bool seen_negative = false;
};

[[nodiscard]] bool GetBuckets(DecodeContext& ctx, WireReader& r, MetricBatch* b, bool positive,
                              ExponentialRow* row) {
  const std::string_view field = positive ? "positive" : "negative";
  std::string_view sub;
  if (!r.ReadLen(&sub)) return ctx.FailWire(r, field);
  bool& seen = positive ? row->seen_positive : row->seen_negative;
  if (seen) return ctx.Fail(r.field_start(), field, proto::kDuplicateMessage);
  seen = true;
  return DecodeBuckets(ctx, sub, b, positive ? &row->positive_offset : &row->negative_offset,
                       positive ? &row->positive : &row->negative) ||
         ctx.In(field);
}

void AppendExponentialPoint(MetricBatch* b, uint32_t metric, const PointBase& p,
                            const ExponentialRow& row) {
  ExponentialPointColumns& t = b->exponential_points;
  AppendPointBase(&t, metric, p, *b);
  t.count.push_back(row.s.count);
  t.sum.push_back(row.s.sum);
  t.min.push_back(row.s.min);
  t.max.push_back(row.s.max);
  t.present.push_back(row.s.present);
  t.scale.push_back(row.scale);
  t.zero_count.push_back(row.zero_count);
  t.zero_threshold.push_back(row.zero_threshold);
  t.positive_offset.push_back(row.positive_offset);
  t.positive_bucket_counts.push_back(row.positive);
  t.negative_offset.push_back(row.negative_offset);
  t.negative_bucket_counts.push_back(row.negative);
}

[[nodiscard]] bool DecodeExponentialPoint(DecodeContext& ctx, std::string_view payload,
                                          MetricBatch* b, uint32_t metric) {
  PointBase p = StartPoint(*b);
  ExponentialRow row;
  row.positive = row.negative = Range{static_cast<uint32_t>(b->bucket_counts.size()), 0};
  WireReader r(payload);
  while (!r.done()) {
    uint32_t tag;
    if (!r.ReadTag(&tag)) return ctx.FailWire(r);
    bool ok = true;
    uint64_t v = 0;
    switch (tag) {
      case Tag(4, WireType::kFixed64):
        ok = GetFixed64(ctx, r, "count", &row.s.count);
        break;
      case Tag(5, WireType::kFixed64):
        ok = GetOptionalDouble(ctx, r, "sum", kHasSum, &row.s.sum, &row.s);
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
        ok = GetBuckets(ctx, r, b, tag == Tag(8, WireType::kLen), &row);
        break;
      case Tag(12, WireType::kFixed64):
        ok = GetOptionalDouble(ctx, r, "min", kHasMin, &row.s.min, &row.s);
        break;
      case Tag(13, WireType::kFixed64):
        ok = GetOptionalDouble(ctx, r, "max", kHasMax, &row.s.max, &row.s);
        break;
      case Tag(14, WireType::kFixed64):
        ok = GetDouble(ctx, r, "zero_threshold", &row.zero_threshold);
        break;
      default:
        ok = DecodePointField(ctx, r, tag, kExponentialLayout, b, &p);
    }
    if (!ok) return false;
  }
  AppendExponentialPoint(b, metric, p, row);
  return true;
}

// ----------------------------------------------------------- summary points

[[nodiscard]] bool DecodeQuantile(DecodeContext& ctx, std::string_view payload, MetricBatch* b) {
  double quantile = 0;
  double value = 0;
  WireReader r(payload);
  while (!r.done()) {
    uint32_t tag;
    if (!r.ReadTag(&tag)) return ctx.FailWire(r);
    switch (tag) {
      case Tag(1, WireType::kFixed64):
        if (!GetDouble(ctx, r, "quantile", &quantile)) return false;
        break;
      case Tag(2, WireType::kFixed64):
        if (!GetDouble(ctx, r, "value", &value)) return false;
        break;
      default:
        if (!SkipOrReject(ctx, r, tag, kQuantileFields)) return false;
    }
  }
  b->quantiles.quantile.push_back(quantile);
  b->quantiles.value.push_back(value);
  return true;
}

[[nodiscard]] bool DecodeSummaryPoint(DecodeContext& ctx, std::string_view payload,
                                      MetricBatch* b, uint32_t metric) {
  PointBase p = StartPoint(*b);
  const size_t quantiles_begin = b->quantiles.size();
  uint64_t count = 0;
  double sum = 0;
  WireReader r(payload);
  while (!r.done()) {
    uint32_t tag;
    if (!r.ReadTag(&tag)) return ctx.FailWire(r);
    switch (tag) {
      case Tag(4, WireType::kFixed64):
        if (!GetFixed64(ctx, r, "count", &count)) return false;
        break;
      case Tag(5, WireType::kFixed64):
        if (!GetDouble(ctx, r, "sum", &sum)) return false;
        break;
      case Tag(6, WireType::kLen): {
        const size_t index = b->quantiles.size() - quantiles_begin;
        std::string_view sub;
        if (!r.ReadLen(&sub)) return ctx.FailWire(r, "quantile_values", index);
        if (!DecodeQuantile(ctx, sub, b)) return ctx.In("quantile_values", index);
        break;
      }
      default:
        if (!DecodePointField(ctx, r, tag, kSummaryLayout, b, &p)) return false;
    }
  }
  SummaryPointColumns& t = b->summary_points;
  AppendPointBase(&t, metric, p, *b);
  t.count.push_back(count);
  t.sum.push_back(sum);
  t.quantiles.push_back(RangeFrom(quantiles_begin, b->quantiles.size()));
  return true;
}

// ------------------------------------------------------------------ metrics

size_t PointTableSize(const MetricBatch& b, MetricType type) {
  switch (type) {
    case MetricType::kGauge:
    case MetricType::kSum:
      return b.number_points.size();
    case MetricType::kHistogram:
      return b.histogram_points.size();
    case MetricType::kExponentialHistogram:
      return b.exponential_points.size();
    case MetricType::kSummary:
      return b.summary_points.size();
    case MetricType::kUnset:
      break;
  }
  return 0;
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

uint32_t AppendMetricRow(MetricBatch* b, uint32_t scope) {
  MetricColumns& m = b->metrics;
  const auto row = static_cast<uint32_t>(m.size());
  m.scope.push_back(scope);
  m.name.emplace_back();
  m.description.emplace_back();
  m.unit.emplace_back();
  m.metadata.push_back(Range{static_cast<uint32_t>(b->metadata_attributes.size()), 0});
  m.type.push_back(MetricType::kUnset);
  m.aggregation_temporality.push_back(0);
  m.is_monotonic.push_back(0);
  m.points.push_back(Range{});
  return row;
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
