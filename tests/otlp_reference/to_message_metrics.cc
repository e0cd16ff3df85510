// ToMetricsRequest (to_message.h): metrics batch -> ExportMetricsServiceRequest.

#include <bit>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "otlp_reference/batch_converter.h"
#include "otlp_reference/to_message.h"

namespace strata::otlp_reference {
namespace {

namespace metrics = opentelemetry::proto::metrics::v1;

using absl::Status;
using google::protobuf::RepeatedField;
using google::protobuf::RepeatedPtrField;
using internal::BaseConverter;
using internal::CheckAttributeColumns;
using internal::CheckRange;
using internal::CheckSizes;
using internal::OptionalId;
using internal::Unsupported;
using otlp::MetricBatch;
using otlp::Range;

Status CheckPointBase(absl::string_view table, const otlp::PointColumnsBase& p,
                      std::initializer_list<size_t> more) {
  Status s = CheckSizes(table, p.size(),
                        {p.attributes.size(), p.start_time_unix_nano.size(),
                         p.time_unix_nano.size(), p.flags.size(), p.exemplars.size()});
  return s.ok() ? CheckSizes(table, p.size(), more) : s;
}

Status CheckMetricColumns(const MetricBatch& b) {
  const otlp::MetricColumns& m = b.metrics;
  Status s = CheckSizes(
      "metrics", m.size(),
      {m.scope.size(), m.description.size(), m.unit.size(), m.metadata.size(), m.type.size(),
       m.aggregation_temporality.size(), m.is_monotonic.size(), m.points.size()});
  if (s.ok()) {
    const otlp::NumberPointColumns& n = b.number_points;
    s = CheckPointBase("number_points", n, {n.value_type.size(), n.value_bits.size()});
  }
  if (s.ok()) {
    const otlp::HistogramPointColumns& h = b.histogram_points;
    s = CheckPointBase("histogram_points", h,
                       {h.count.size(), h.sum.size(), h.min.size(), h.max.size(), h.present.size(),
                        h.bucket_counts.size(), h.explicit_bounds.size()});
  }
  if (s.ok()) {
    const otlp::ExponentialPointColumns& e = b.exponential_points;
    s = CheckPointBase("exponential_points", e,
                       {e.count.size(), e.sum.size(), e.min.size(), e.max.size(), e.present.size(),
                        e.scale.size(), e.zero_count.size(), e.zero_threshold.size(),
                        e.positive_offset.size(), e.positive_bucket_counts.size(),
                        e.negative_offset.size(), e.negative_bucket_counts.size()});
  }
  if (s.ok()) {
    const otlp::SummaryPointColumns& p = b.summary_points;
    s = CheckPointBase("summary_points", p, {p.count.size(), p.sum.size(), p.quantiles.size()});
  }
  if (s.ok()) s = CheckSizes("quantiles", b.quantiles.size(), {b.quantiles.value.size()});
  if (s.ok()) {
    const otlp::ExemplarColumns& e = b.exemplars;
    s = CheckSizes(
        "exemplars", e.size(),
        {e.filtered_attributes.size(), e.value_type.size(), e.value_bits.size(), e.trace_id.size(),
         e.has_trace_id.size(), e.span_id.size(), e.has_span_id.size()});
  }
  for (const auto& [name, table] : {std::pair{"metadata_attributes", &b.metadata_attributes},
                                    std::pair{"point_attributes", &b.point_attributes},
                                    std::pair{"exemplar_attributes", &b.exemplar_attributes}}) {
    if (s.ok()) s = CheckAttributeColumns(name, *table);
  }
  return s;
}

// Converts the data points of one metric; `points` is its range in the
// table of its type.
class PointConverter {
 public:
  PointConverter(const BaseConverter& base, const MetricBatch& batch) : c_(base), b_(batch) {}

  Status Number(size_t metric, RepeatedPtrField<metrics::NumberDataPoint>* out) const;
  Status Histogram(size_t metric, RepeatedPtrField<metrics::HistogramDataPoint>* out) const;
  Status Exponential(size_t metric,
                     RepeatedPtrField<metrics::ExponentialHistogramDataPoint>* out) const;
  Status Summary(size_t metric, RepeatedPtrField<metrics::SummaryDataPoint>* out) const;

 private:
  // Checks the metric's point range against `table` and each point's
  // back-reference to the metric.
  Status CheckPoints(size_t metric, const otlp::PointColumnsBase& table,
                     absl::string_view what) const;
  // The fields every point type has, onto `out`.
  template <typename Point>
  Status Common(const otlp::PointColumnsBase& table, absl::string_view what, size_t row,
                Point* out) const;
  Status Exemplars(Range range, size_t row, RepeatedPtrField<metrics::Exemplar>* out) const;
  Status Counts(Range range, absl::string_view what, size_t row,
                RepeatedField<uint64_t>* out) const;

  const BaseConverter& c_;
  const MetricBatch& b_;
};

template <typename Message>
Status SetNumber(otlp::NumberType type, uint64_t bits, absl::string_view what, size_t row,
                 Message* out) {
  switch (type) {
    case otlp::NumberType::kNone:
      return absl::OkStatus();
    case otlp::NumberType::kDouble:
      out->set_as_double(std::bit_cast<double>(bits));
      break;
    case otlp::NumberType::kInt:
      out->set_as_int(static_cast<int64_t>(bits));
      break;
    default:
      return absl::InternalError(
          absl::StrCat(what, "[", row, "]: number type ", static_cast<int>(type), " unknown"));
  }
  return absl::OkStatus();
}

// Optional sum, min and max of the histogram point types.
template <typename Columns, typename Message>
Status SetOptional(const Columns& t, absl::string_view what, size_t i, Message* out) {
  uint8_t present = t.present[i];
  if ((present & ~(otlp::kHasSum | otlp::kHasMin | otlp::kHasMax)) != 0) {
    return absl::InternalError(absl::StrCat(what, "[", i, "]: presence bits ", present));
  }
  if ((present & otlp::kHasSum) != 0) out->set_sum(t.sum[i]);
  if ((present & otlp::kHasMin) != 0) out->set_min(t.min[i]);
  if ((present & otlp::kHasMax) != 0) out->set_max(t.max[i]);
  return absl::OkStatus();
}

Status PointConverter::CheckPoints(size_t metric, const otlp::PointColumnsBase& table,
                                   absl::string_view what) const {
  Range range = b_.metrics.points[metric];
  Status s = CheckRange(range, table.size(), "metrics.points", metric);
  for (uint32_t p = range.begin; s.ok() && p < range.end(); ++p) {
    if (table.metric[p] != metric) {
      s = absl::InternalError(absl::StrCat(what, "[", p, "].metric = ", table.metric[p],
                                           ", but metrics[", metric, "] covers it"));
    }
  }
  return s;
}

template <typename Point>
Status PointConverter::Common(const otlp::PointColumnsBase& t, absl::string_view what, size_t i,
                              Point* out) const {
  Status s =
      c_.Attributes(b_.point_attributes, t.attributes[i], what, i, out->mutable_attributes());
  if (!s.ok()) return s;
  out->set_start_time_unix_nano(t.start_time_unix_nano[i]);
  out->set_time_unix_nano(t.time_unix_nano[i]);
  out->set_flags(t.flags[i]);
  if constexpr (std::is_same_v<Point, metrics::SummaryDataPoint>) {
    if (t.exemplars[i].count != 0) return Unsupported("summary_points.exemplars", i);
    return absl::OkStatus();
  } else {
    return Exemplars(t.exemplars[i], i, out->mutable_exemplars());
  }
}

Status PointConverter::Exemplars(Range range, size_t row,
                                 RepeatedPtrField<metrics::Exemplar>* out) const {
  const otlp::ExemplarColumns& e = b_.exemplars;
  Status s = CheckRange(range, e.size(), "points.exemplars", row);
  for (uint32_t i = range.begin; s.ok() && i < range.end(); ++i) {
    metrics::Exemplar* exemplar = out->Add();
    s = c_.Attributes(b_.exemplar_attributes, e.filtered_attributes[i],
                      "exemplars.filtered_attributes", i, exemplar->mutable_filtered_attributes());
    exemplar->set_time_unix_nano(e.time_unix_nano[i]);
    if (s.ok()) s = SetNumber(e.value_type[i], e.value_bits[i], "exemplars", i, exemplar);
    if (s.ok()) {
      s = OptionalId(e.span_id[i], e.has_span_id[i], "exemplars.span_id", i,
                     exemplar->mutable_span_id());
    }
    if (s.ok()) {
      s = OptionalId(e.trace_id[i], e.has_trace_id[i], "exemplars.trace_id", i,
                     exemplar->mutable_trace_id());
    }
  }
  return s;
}

Status PointConverter::Counts(Range range, absl::string_view what, size_t row,
                              RepeatedField<uint64_t>* out) const {
  Status s = CheckRange(range, b_.bucket_counts.size(), what, row);
  if (!s.ok()) return s;
  for (uint32_t i = range.begin; i < range.end(); ++i) out->Add(b_.bucket_counts[i]);
  return absl::OkStatus();
}

Status PointConverter::Number(size_t metric,
                              RepeatedPtrField<metrics::NumberDataPoint>* out) const {
  const otlp::NumberPointColumns& t = b_.number_points;
  Status s = CheckPoints(metric, t, "number_points");
  Range range = b_.metrics.points[metric];
  for (uint32_t i = range.begin; s.ok() && i < range.end(); ++i) {
    metrics::NumberDataPoint* point = out->Add();
    s = Common(t, "number_points", i, point);
    if (s.ok()) s = SetNumber(t.value_type[i], t.value_bits[i], "number_points", i, point);
  }
  return s;
}

Status PointConverter::Histogram(size_t metric,
                                 RepeatedPtrField<metrics::HistogramDataPoint>* out) const {
  const otlp::HistogramPointColumns& t = b_.histogram_points;
  Status s = CheckPoints(metric, t, "histogram_points");
  Range range = b_.metrics.points[metric];
  for (uint32_t i = range.begin; s.ok() && i < range.end(); ++i) {
    metrics::HistogramDataPoint* point = out->Add();
    s = Common(t, "histogram_points", i, point);
    point->set_count(t.count[i]);
    if (s.ok()) s = SetOptional(t, "histogram_points", i, point);
    if (s.ok()) {
      s = Counts(t.bucket_counts[i], "histogram_points.bucket_counts", i,
                 point->mutable_bucket_counts());
    }
    if (s.ok()) {
      s = CheckRange(t.explicit_bounds[i], b_.explicit_bounds.size(),
                     "histogram_points.explicit_bounds", i);
    }
    if (!s.ok()) break;
    for (uint32_t k = t.explicit_bounds[i].begin; k < t.explicit_bounds[i].end(); ++k) {
      point->add_explicit_bounds(b_.explicit_bounds[k]);
    }
  }
  return s;
}

Status PointConverter::Exponential(
    size_t metric, RepeatedPtrField<metrics::ExponentialHistogramDataPoint>* out) const {
  const otlp::ExponentialPointColumns& t = b_.exponential_points;
  Status s = CheckPoints(metric, t, "exponential_points");
  Range range = b_.metrics.points[metric];
  for (uint32_t i = range.begin; s.ok() && i < range.end(); ++i) {
    if (std::bit_cast<uint64_t>(t.zero_threshold[i]) != 0) {
      return Unsupported("exponential_points.zero_threshold", i);
    }
    metrics::ExponentialHistogramDataPoint* point = out->Add();
    s = Common(t, "exponential_points", i, point);
    point->set_count(t.count[i]);
    if (s.ok()) s = SetOptional(t, "exponential_points", i, point);
    point->set_scale(t.scale[i]);
    point->set_zero_count(t.zero_count[i]);
    point->mutable_positive()->set_offset(t.positive_offset[i]);
    point->mutable_negative()->set_offset(t.negative_offset[i]);
    if (s.ok()) {
      s = Counts(t.positive_bucket_counts[i], "exponential_points.positive", i,
                 point->mutable_positive()->mutable_bucket_counts());
    }
    if (s.ok()) {
      s = Counts(t.negative_bucket_counts[i], "exponential_points.negative", i,
                 point->mutable_negative()->mutable_bucket_counts());
    }
  }
  return s;
}

Status PointConverter::Summary(size_t metric,
                               RepeatedPtrField<metrics::SummaryDataPoint>* out) const {
  const otlp::SummaryPointColumns& t = b_.summary_points;
  Status s = CheckPoints(metric, t, "summary_points");
  Range range = b_.metrics.points[metric];
  for (uint32_t i = range.begin; s.ok() && i < range.end(); ++i) {
    metrics::SummaryDataPoint* point = out->Add();
    s = Common(t, "summary_points", i, point);
    point->set_count(t.count[i]);
    point->set_sum(t.sum[i]);
    if (s.ok()) s = CheckRange(t.quantiles[i], b_.quantiles.size(), "summary_points.quantiles", i);
    if (!s.ok()) break;
    for (uint32_t k = t.quantiles[i].begin; k < t.quantiles[i].end(); ++k) {
      metrics::SummaryDataPoint::ValueAtQuantile* q = point->add_quantile_values();
      q->set_quantile(b_.quantiles.quantile[k]);
      q->set_value(b_.quantiles.value[k]);
    }
  }
  return s;
}

Status ConvertMetric(const PointConverter& points, const MetricBatch& b, size_t i,
                     metrics::Metric* out) {
  const otlp::MetricColumns& m = b.metrics;
  if (m.metadata[i].count != 0) return Unsupported("metrics.metadata", i);
  out->set_name(std::string(m.name[i]));
  out->set_description(std::string(m.description[i]));
  out->set_unit(std::string(m.unit[i]));
  otlp::MetricType type = m.type[i];
  auto temporality = static_cast<metrics::AggregationTemporality>(m.aggregation_temporality[i]);
  bool has_temporality = type == otlp::MetricType::kSum || type == otlp::MetricType::kHistogram ||
                         type == otlp::MetricType::kExponentialHistogram;
  if (!has_temporality && temporality != 0) {
    return Unsupported("metrics.aggregation_temporality", i);
  }
  if (type != otlp::MetricType::kSum && m.is_monotonic[i] != 0) {
    return Unsupported("metrics.is_monotonic", i);
  }
  switch (type) {
    case otlp::MetricType::kUnset:
      if (m.points[i].count == 0) return absl::OkStatus();
      return absl::InternalError(absl::StrCat("metrics[", i, "] has no type but has points"));
    case otlp::MetricType::kGauge:
      return points.Number(i, out->mutable_gauge()->mutable_data_points());
    case otlp::MetricType::kSum:
      out->mutable_sum()->set_aggregation_temporality(temporality);
      out->mutable_sum()->set_is_monotonic(m.is_monotonic[i] != 0);
      return points.Number(i, out->mutable_sum()->mutable_data_points());
    case otlp::MetricType::kHistogram:
      out->mutable_histogram()->set_aggregation_temporality(temporality);
      return points.Histogram(i, out->mutable_histogram()->mutable_data_points());
    case otlp::MetricType::kExponentialHistogram:
      out->mutable_exponential_histogram()->set_aggregation_temporality(temporality);
      return points.Exponential(i, out->mutable_exponential_histogram()->mutable_data_points());
    case otlp::MetricType::kSummary:
      return points.Summary(i, out->mutable_summary()->mutable_data_points());
  }
  return absl::InternalError(
      absl::StrCat("metrics[", i, "]: type ", static_cast<int>(type), " unknown"));
}

}  // namespace

absl::StatusOr<MetricsRequest> ToMetricsRequest(const MetricBatch& batch) {
  BaseConverter c(batch);
  Status s = c.Check();
  if (s.ok()) s = CheckMetricColumns(batch);
  if (!s.ok()) return s;
  absl::StatusOr<std::vector<std::vector<uint32_t>>> rows =
      c.RowsByScope(batch.metrics.scope, "metrics");
  if (!rows.ok()) return rows.status();
  std::vector<std::vector<uint32_t>> scopes = c.ScopesByResource();
  PointConverter points(c, batch);
  MetricsRequest request;
  for (size_t r = 0; r < scopes.size(); ++r) {
    metrics::ResourceMetrics* rm = request.add_resource_metrics();
    s = c.Resource(r, rm->mutable_resource(), rm->mutable_schema_url());
    for (size_t k = 0; s.ok() && k < scopes[r].size(); ++k) {
      uint32_t scope = scopes[r][k];
      metrics::ScopeMetrics* sm = rm->add_scope_metrics();
      s = c.Scope(scope, sm->mutable_scope(), sm->mutable_schema_url());
      for (size_t j = 0; s.ok() && j < (*rows)[scope].size(); ++j) {
        s = ConvertMetric(points, batch, (*rows)[scope][j], sm->add_metrics());
      }
    }
    if (!s.ok()) return s;
  }
  return request;
}

}  // namespace strata::otlp_reference
