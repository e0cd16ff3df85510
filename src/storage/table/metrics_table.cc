#include "storage/table/metrics_table.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include "common/check.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "otlp/decode.h"

namespace strata::storage {
namespace {

using metrics_internal::HasTemporality;
using metrics_internal::IsFamilyColumn;
using metrics_internal::kExemplarLists;
using otlp::MetricBatch;
using otlp::MetricType;
using otlp::NumberType;
using otlp::Range;
using parquet::ColumnSpec;
using parquet::ColumnVector;
using parquet::PhysicalType;

// ------------------------------------------------------------ the schema

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

ColumnSpec U8(std::string name, bool optional) {
  return ColumnSpec::Integer(std::move(name), 8, false, optional);
}
ColumnSpec U32(std::string name, bool optional) {
  return ColumnSpec::Integer(std::move(name), 32, false, optional);
}
ColumnSpec U64(std::string name, bool optional) {
  return ColumnSpec::Integer(std::move(name), 64, false, optional);
}
ColumnSpec OptionalList(ColumnSpec element) { return ColumnSpec::List(std::move(element), true); }

void AppendPointSpecs(std::vector<ColumnSpec>* s) {
  s->push_back(U64("start_time_unix_nano", true));
  s->push_back(U64("time_unix_nano", true));
  s->push_back(U32("point_flags", true));
  AppendAttributeFamilySpecs("attr", s);
  s->push_back(U8("value_type", true));
  s->push_back(ColumnSpec::Double("value_double", true));
  s->push_back(ColumnSpec::Int64("value_int", true));
  s->push_back(U64("count", true));
  s->push_back(ColumnSpec::Double("sum", true));
  s->push_back(ColumnSpec::Double("min", true));
  s->push_back(ColumnSpec::Double("max", true));
  s->push_back(OptionalList(U64("bucket_counts", false)));
  s->push_back(OptionalList(ColumnSpec::Double("explicit_bounds")));
  s->push_back(ColumnSpec::Int32("exp_scale", true));
  s->push_back(U64("exp_zero_count", true));
  s->push_back(ColumnSpec::Double("exp_zero_threshold", true));
  s->push_back(ColumnSpec::Int32("exp_positive_offset", true));
  s->push_back(OptionalList(U64("exp_positive_bucket_counts", false)));
  s->push_back(ColumnSpec::Int32("exp_negative_offset", true));
  s->push_back(OptionalList(U64("exp_negative_bucket_counts", false)));
  s->push_back(OptionalList(ColumnSpec::Double("summary_quantile")));
  s->push_back(OptionalList(ColumnSpec::Double("summary_value")));
}

void AppendExemplarSpecs(std::vector<ColumnSpec>* s) {
  s->push_back(ColumnSpec::List(U64("exemplar_time_unix_nano", false)));
  s->push_back(ColumnSpec::List(U8("exemplar_value_type", false)));
  s->push_back(ColumnSpec::List(ColumnSpec::Double("exemplar_value_double", true)));
  s->push_back(ColumnSpec::List(ColumnSpec::Int64("exemplar_value_int", true)));
  s->push_back(ColumnSpec::List(ColumnSpec::FixedBytes("exemplar_trace_id", 16, true)));
  s->push_back(ColumnSpec::List(ColumnSpec::FixedBytes("exemplar_span_id", 8, true)));
  AppendElementCountSpec("exemplar_attr_count", s);
  AppendAttributeFamilySpecs("exemplar_attr", s);
}

std::vector<ColumnSpec> BuildSchema() {
  std::vector<ColumnSpec> s;
  AppendRowKindSpec(&s);
  AppendResourceScopeSpecs(&s);
  s.push_back(U32("metric_index", true));
  s.push_back(ColumnSpec::String("metric_name", true));
  s.push_back(ColumnSpec::String("metric_description", true));
  s.push_back(ColumnSpec::String("metric_unit", true));
  AppendAttributeFamilySpecs("metric_metadata", &s);
  s.push_back(U8("metric_type", true));
  s.push_back(ColumnSpec::Int32("aggregation_temporality", true));
  s.push_back(ColumnSpec::Boolean("is_monotonic", true));
  AppendPointSpecs(&s);
  AppendExemplarSpecs(&s);
  AppendResourcePromotedSpecs(&s);
  STRATA_CHECK(s.size() == kMetricsColumnCount, "metrics schema column count");
  STRATA_CHECK(s[kMetricsIndex].name == "metric_index" && s[kMetricsType].name == "metric_type" &&
                   s[kMetricsValueType].name == "value_type" &&
                   s[kMetricsExemplarAttrCount].name == "exemplar_attr_count" &&
                   s[kMetricsPromoted].name == "service_name",
               "metrics schema column positions");
  return s;
}

// ------------------------------------------------- what the writer refuses

absl::Status Unstorable(size_t input, std::string_view what, size_t row, std::string_view why) {
  return absl::InvalidArgumentError(fmt::format(
      "metrics input {}: {}[{}]: {}; metrics.parquet cannot store it", input, what, row, why));
}

// A value_bits that a value type of kNone would drop, or an unknown type.
absl::Status CheckNumber(size_t input, std::string_view what, size_t row, NumberType type,
                         uint64_t bits) {
  if (type > NumberType::kInt) return Unstorable(input, what, row, "unknown value_type");
  if (type == NumberType::kNone && bits != 0) {
    return Unstorable(input, what, row, "value_bits set without a value_type");
  }
  return absl::OkStatus();
}

// A histogram point's optional members: only the three known bits, and no
// value hidden behind a clear bit.
absl::Status CheckPresent(size_t input, std::string_view what, size_t row, uint8_t present,
                          double sum, double min, double max) {
  if ((present & ~(otlp::kHasSum | otlp::kHasMin | otlp::kHasMax)) != 0) {
    return Unstorable(input, what, row, "unknown present bits");
  }
  const std::pair<uint8_t, double> members[] = {
      {otlp::kHasSum, sum}, {otlp::kHasMin, min}, {otlp::kHasMax, max}};
  for (const auto& [bit, value] : members) {
    if ((present & bit) == 0 && std::bit_cast<uint64_t>(value) != 0) {
      return Unstorable(input, what, row, "sum, min or max set while marked absent");
    }
  }
  return absl::OkStatus();
}

template <size_t N>
bool AllZero(const std::array<uint8_t, N>& id) {
  for (uint8_t b : id) {
    if (b != 0) return false;
  }
  return true;
}

absl::Status CheckMetricsStorable(size_t input, const MetricBatch& b) {
  const otlp::MetricColumns& m = b.metrics;
  // Points each table's rows are claimed by, to find rows no metric owns
  // (ValidateBatch has checked the ranges are disjoint, so counts suffice).
  size_t number = 0, histogram = 0, exponential = 0, summary = 0;
  for (size_t i = 0; i < m.size(); ++i) {
    const MetricType type = m.type[i];
    if (m.aggregation_temporality[i] != 0 && !HasTemporality(type)) {
      return Unstorable(input, "metrics", i, "aggregation_temporality on a type without one");
    }
    if (m.is_monotonic[i] > 1 || (m.is_monotonic[i] != 0 && type != MetricType::kSum)) {
      return Unstorable(input, "metrics", i, "is_monotonic not 0/1, or set on a non-sum");
    }
    const uint32_t count = m.points[i].count;
    switch (type) {
      case MetricType::kGauge:
      case MetricType::kSum:
        number += count;
        break;
      case MetricType::kHistogram:
        histogram += count;
        break;
      case MetricType::kExponentialHistogram:
        exponential += count;
        break;
      case MetricType::kSummary:
        summary += count;
        break;
      case MetricType::kUnset:
        break;
    }
  }
  if (number != b.number_points.size() || histogram != b.histogram_points.size() ||
      exponential != b.exponential_points.size() || summary != b.summary_points.size()) {
    return Unstorable(input, "metrics", m.size(), "a data point belongs to no metric");
  }
  return absl::OkStatus();
}

absl::Status CheckPointsStorable(size_t input, const MetricBatch& b) {
  const otlp::NumberPointColumns& n = b.number_points;
  for (size_t i = 0; i < n.size(); ++i) {
    STRATA_RETURN_IF_ERROR(
        CheckNumber(input, "number_points", i, n.value_type[i], n.value_bits[i]));
  }
  for (const auto* h : {static_cast<const otlp::HistogramStatsColumns*>(&b.histogram_points),
                        static_cast<const otlp::HistogramStatsColumns*>(&b.exponential_points)}) {
    for (size_t i = 0; i < h->size(); ++i) {
      STRATA_RETURN_IF_ERROR(CheckPresent(input, "histogram points", i, h->present[i], h->sum[i],
                                          h->min[i], h->max[i]));
    }
  }
  const otlp::ExemplarColumns& e = b.exemplars;
  for (size_t i = 0; i < e.size(); ++i) {
    STRATA_RETURN_IF_ERROR(CheckNumber(input, "exemplars", i, e.value_type[i], e.value_bits[i]));
    if (e.has_trace_id[i] > 1 || e.has_span_id[i] > 1 ||
        (e.has_trace_id[i] == 0 && !AllZero(e.trace_id[i])) ||
        (e.has_span_id[i] == 0 && !AllZero(e.span_id[i]))) {
      return Unstorable(input, "exemplars", i, "an id marked absent is not all zero");
    }
  }
  return absl::OkStatus();
}

// Validate before writing: batch.h's invariants (Internal), then what the
// file cannot hold (InvalidArgument).
absl::Status CheckInput(size_t input, const MetricBatch& b) {
  absl::Status valid = otlp::ValidateBatch(b);
  if (!valid.ok()) {
    return absl::InternalError(
        fmt::format("metrics input {}: {}", input, std::string(valid.message())));
  }
  STRATA_RETURN_IF_ERROR(CheckMetricsStorable(input, b));
  return CheckPointsStorable(input, b);
}

// ------------------------------------------------------------ the writer

// One run of consecutive file rows: a placeholder for a resource without
// scopes or a scope without metrics, or every row of one metric (its data
// points, or its one kind-1 row).
struct Segment {
  uint32_t input = 0;
  MetricsRowKind kind = kMetricsDataPointRow;  // kMetricsDataPointRow stands for a metric's rows
  uint32_t resource = 0;
  uint32_t scope = kNone;
  uint32_t metric = 0;
  uint32_t rows = 1;
};

// Placeholders of one input: per resource in order, a kind-3 row if it has
// no scopes, else a kind-2 row for each of its scopes without metrics.
void PlanPlaceholders(uint32_t input, const MetricBatch& b, std::vector<Segment>* plan) {
  const size_t resources = b.resources.size();
  const size_t scopes = b.scopes.size();
  std::vector<uint8_t> scope_used(scopes, 0);
  for (uint32_t s : b.metrics.scope) scope_used[s] = 1;
  // Scopes grouped by resource, each group in scope order (a counting sort).
  std::vector<uint32_t> group_end(resources + 1, 0);
  for (uint32_t s = 0; s < scopes; ++s) ++group_end[b.scopes.resource[s] + 1];
  for (size_t r = 0; r < resources; ++r) group_end[r + 1] += group_end[r];
  std::vector<uint32_t> next(group_end.begin(), group_end.end() - 1);
  std::vector<uint32_t> by_resource(scopes);
  for (uint32_t s = 0; s < scopes; ++s) by_resource[next[b.scopes.resource[s]]++] = s;
  for (uint32_t r = 0; r < resources; ++r) {
    if (group_end[r] == group_end[r + 1]) {
      plan->push_back({input, kMetricsEmptyResourceRow, r, kNone, 0, 1});
      continue;
    }
    for (uint32_t i = group_end[r]; i < group_end[r + 1]; ++i) {
      const uint32_t s = by_resource[i];
      if (scope_used[s] == 0) plan->push_back({input, kMetricsEmptyScopeRow, r, s, 0, 1});
    }
  }
}

// The file's rows in order (metrics-parquet.md "Row order"): every input's
// placeholders, then all metrics stable-sorted by name.
std::vector<Segment> PlanRows(std::span<const MetricBatch* const> batches) {
  std::vector<Segment> plan;
  size_t metric_count = 0;
  for (uint32_t k = 0; k < batches.size(); ++k) {
    PlanPlaceholders(k, *batches[k], &plan);
    metric_count += batches[k]->metrics.size();
  }
  const size_t first_metric = plan.size();
  plan.reserve(first_metric + metric_count);
  for (uint32_t k = 0; k < batches.size(); ++k) {
    const otlp::MetricColumns& m = batches[k]->metrics;
    for (uint32_t i = 0; i < m.size(); ++i) {
      const uint32_t scope = m.scope[i];
      plan.push_back({k, kMetricsDataPointRow, batches[k]->scopes.resource[scope], scope, i,
                      std::max<uint32_t>(1, m.points[i].count)});
    }
  }
  auto by_name = [batches](const Segment& a, const Segment& b) {
    return batches[a.input]->metrics.name[a.metric] < batches[b.input]->metrics.name[b.metric];
  };
  const auto metrics_begin = plan.begin() + static_cast<std::ptrdiff_t>(first_metric);
  if (!std::is_sorted(metrics_begin, plan.end(), by_name)) {
    std::stable_sort(metrics_begin, plan.end(), by_name);
  }
  return plan;
}

using WriteTotals = MetricsTableWriter::Sizes;

}  // namespace

// Builds the columns of the rows appended since the last flush of a
// MetricsTableWriter, one row at a time.
class MetricsBuilder {
 public:
  MetricsBuilder();
  void Reserve(const WriteTotals& totals);

  // Registers a batch (MetricsTableWriter::AddBatch); `metric_index` as the
  // resource and scope maps, or empty with `metric_base`: metric m is file
  // metric metric_base + m.
  uint32_t AddBatch(const MetricBatch& batch, uint32_t metric_base);
  uint32_t AddBatch(const MetricBatch& batch, std::vector<uint32_t> resource_index,
                    std::vector<uint32_t> scope_index, std::vector<uint32_t> metric_index);
  const MetricBatch& batch(uint32_t number) const { return *batches_[number].batch; }
  size_t rows() const { return cols_[kMetricsRowKind].int32s.size(); }

  // A kind-2 or kind-3 placeholder row.
  void AppendPlaceholder(uint32_t batch, MetricsRowKind kind, uint32_t resource,
                         std::optional<uint32_t> scope);
  // One row of a metric: data point `point` (a row of the metric's point
  // table), or with nullopt the kind-1 row of a metric without points.
  void AppendMetricRow(uint32_t batch, uint32_t metric, std::optional<uint32_t> point);
  // The columns in schema order; the builder is spent.
  std::vector<ColumnVector> Finish();

  uint64_t data_rows() const { return data_rows_; }
  std::optional<NanosRange> event_time() const { return event_time_; }
  const PromotionMisses& misses() const { return misses_; }

 private:
  struct BatchState {
    const MetricBatch* batch = nullptr;
    uint32_t metric_base = 0;
    std::vector<uint32_t> metric_index;  // when not empty, replaces metric_base
    // Per metric: its metadata elements once written (shared by its rows).
    std::vector<std::optional<FamilyElements>> metadata;
  };

  void AppendMetricColumns(BatchState& state, uint32_t metric);
  // Null (or a null list) in every column of [first, last].
  void AppendNulls(int first, int last);
  void AppendNoPoint();
  void AppendPointBase(const MetricBatch& b, const otlp::PointColumnsBase& t, uint32_t p);
  void AppendNumber(const otlp::NumberPointColumns& t, uint32_t p);
  void AppendStats(const otlp::HistogramStatsColumns& t, uint32_t p);
  void AppendHistogram(const MetricBatch& b, uint32_t p);
  void AppendExponential(const MetricBatch& b, uint32_t p);
  void AppendSummary(const MetricBatch& b, uint32_t p);
  void AppendExemplars(const MetricBatch& b, Range exemplars);
  void AppendEmptyExemplars();

  void U64(int column, uint64_t v) { cols_[column].AppendInt64(static_cast<int64_t>(v)); }
  void U32(int column, uint32_t v) { cols_[column].AppendInt32(static_cast<int32_t>(v)); }
  void OptionalDouble(int column, bool present, double v) {
    if (present) {
      cols_[column].AppendDouble(v);
    } else {
      cols_[column].AppendNull();
    }
  }
  template <typename T>
  void U64List(int column, const std::vector<T>& values, Range r) {
    ColumnVector& c = cols_[column];
    c.AppendList(c.int64s.size(), r.count);
    for (uint32_t i = r.begin; i < r.end(); ++i) {
      c.int64s.push_back(static_cast<int64_t>(values[i]));
    }
  }
  void DoubleList(int column, const std::vector<double>& values, Range r) {
    ColumnVector& c = cols_[column];
    c.AppendList(c.doubles.size(), r.count);
    c.doubles.insert(c.doubles.end(), values.begin() + r.begin, values.begin() + r.end());
  }

  std::vector<BatchState> batches_;
  // Indexed by Column; the entries of the columns below stay empty.
  std::vector<ColumnVector> cols_;
  ResourceScopeWriter resource_scope_;
  ResourcePromotedWriter promoted_;
  PromotionMisses misses_;
  AttributeFamilyWriter metadata_;
  AttributeFamilyWriter attributes_;
  AttributeFamilyWriter exemplar_attributes_;
  uint64_t data_rows_ = 0;
  std::optional<NanosRange> event_time_;
};

namespace {

bool IsSharedColumn(int c) {
  return (c >= kMetricsResourceScope && c < kMetricsResourceScope + kResourceScopeColumns) ||
         c >= kMetricsPromoted;
}

}  // namespace

MetricsBuilder::MetricsBuilder() {
  const std::vector<ColumnSpec>& schema = MetricsTableColumns();
  cols_.resize(kMetricsColumnCount);
  for (int c = 0; c < kMetricsColumnCount; ++c) {
    if (IsFamilyColumn(c) || IsSharedColumn(c)) continue;
    const ColumnSpec& spec = schema[c];
    cols_[c] = spec.list ? ColumnVector::List(spec.type) : ColumnVector(spec.type);
  }
}

void MetricsBuilder::Reserve(const WriteTotals& totals) {
  resource_scope_.Reserve(totals.rows);
  promoted_.Reserve(totals.rows);
  const std::vector<ColumnSpec>& schema = MetricsTableColumns();
  for (int c = 0; c < kMetricsColumnCount; ++c) {
    if (IsFamilyColumn(c) || IsSharedColumn(c)) continue;
    const ColumnSpec& spec = schema[c];
    cols_[c].Reserve(totals.rows);
    if (spec.optional() && !spec.list) cols_[c].validity.reserve(totals.rows);
    if (spec.list_optional()) cols_[c].list_validity.reserve(totals.rows);
  }
  for (int c : kExemplarLists) {
    ColumnVector& v = cols_[c];
    if (v.type == PhysicalType::kInt64) v.int64s.reserve(totals.exemplars);
  }
  metadata_.Reserve(totals.rows, 0);
  attributes_.Reserve(totals.rows, totals.point_attributes);
  exemplar_attributes_.Reserve(totals.rows, totals.exemplar_attributes);
}

uint32_t MetricsBuilder::AddBatch(const MetricBatch& batch, uint32_t metric_base) {
  const uint32_t number = resource_scope_.AddBatch(batch);
  STRATA_CHECK(promoted_.AddBatch(batch) == number, "batch numbers agree");
  batches_.push_back({&batch, metric_base, {}, {}});
  batches_.back().metadata.resize(batch.metrics.size());
  return number;
}

uint32_t MetricsBuilder::AddBatch(const MetricBatch& batch, std::vector<uint32_t> resource_index,
                                  std::vector<uint32_t> scope_index,
                                  std::vector<uint32_t> metric_index) {
  STRATA_CHECK(metric_index.size() == batch.metrics.size(), "one file index per metric");
  const uint32_t number =
      resource_scope_.AddBatch(batch, std::move(resource_index), std::move(scope_index));
  STRATA_CHECK(promoted_.AddBatch(batch) == number, "batch numbers agree");
  batches_.push_back({&batch, 0, std::move(metric_index), {}});
  batches_.back().metadata.resize(batch.metrics.size());
  return number;
}

void MetricsBuilder::AppendNulls(int first, int last) {
  for (int c = first; c <= last; ++c) {
    if (cols_[c].is_list) {
      cols_[c].AppendNullList();
    } else {
      cols_[c].AppendNull();
    }
  }
}

void MetricsBuilder::AppendPlaceholder(uint32_t batch, MetricsRowKind kind, uint32_t resource,
                                       std::optional<uint32_t> scope) {
  U32(kMetricsRowKind, static_cast<uint32_t>(kind));
  resource_scope_.AppendRow(batch, resource, scope);
  promoted_.AppendNullRow();
  AppendNulls(kMetricsIndex, kMetricsUnit);
  metadata_.AppendEmptyRow();
  AppendNulls(kMetricsType, kMetricsIsMonotonic);
  AppendNoPoint();
}

// The point columns of a row without a data point.
void MetricsBuilder::AppendNoPoint() {
  AppendNulls(kMetricsStartTime, kMetricsPointFlags);
  attributes_.AppendEmptyRow();
  AppendNulls(kMetricsValueType, kMetricsSummaryValue);
  AppendEmptyExemplars();
}

void MetricsBuilder::AppendMetricColumns(BatchState& state, uint32_t metric) {
  const MetricBatch& b = *state.batch;
  const otlp::MetricColumns& m = b.metrics;
  U32(kMetricsIndex,
      state.metric_index.empty() ? state.metric_base + metric : state.metric_index[metric]);
  cols_[kMetricsName].AppendBytes(m.name[metric]);
  cols_[kMetricsDescription].AppendBytes(m.description[metric]);
  cols_[kMetricsUnit].AppendBytes(m.unit[metric]);
  std::optional<FamilyElements>& metadata = state.metadata[metric];
  if (metadata.has_value()) {
    metadata_.AppendSharedRow(*metadata);
  } else {
    metadata = metadata_.AppendRow(b, b.metadata_attributes, m.metadata[metric]);
  }
  const MetricType type = m.type[metric];
  U32(kMetricsType, static_cast<uint32_t>(type));
  if (HasTemporality(type)) {
    cols_[kMetricsAggregationTemporality].AppendInt32(m.aggregation_temporality[metric]);
  } else {
    cols_[kMetricsAggregationTemporality].AppendNull();
  }
  if (type == MetricType::kSum) {
    cols_[kMetricsIsMonotonic].AppendBool(m.is_monotonic[metric] != 0);
  } else {
    cols_[kMetricsIsMonotonic].AppendNull();
  }
}

void MetricsBuilder::AppendMetricRow(uint32_t batch, uint32_t metric,
                                     std::optional<uint32_t> point) {
  STRATA_CHECK(batch < batches_.size(), "batch number not registered");
  BatchState& state = batches_[batch];
  const MetricBatch& b = *state.batch;
  const uint32_t scope = b.metrics.scope[metric];
  const uint32_t resource = b.scopes.resource[scope];
  if (!point.has_value()) {
    U32(kMetricsRowKind, kMetricsEmptyMetricRow);
    resource_scope_.AppendRow(batch, resource, scope);
    promoted_.AppendNullRow();
    AppendMetricColumns(state, metric);
    AppendNoPoint();
    return;
  }
  const uint32_t p = *point;
  const MetricType type = b.metrics.type[metric];
  const otlp::PointColumnsBase& table = *b.points_of(type);
  U32(kMetricsRowKind, kMetricsDataPointRow);
  resource_scope_.AppendRow(batch, resource, scope);
  promoted_.AppendRow(batch, resource, &misses_);
  AppendMetricColumns(state, metric);
  AppendPointBase(b, table, p);
  switch (type) {
    case MetricType::kGauge:
    case MetricType::kSum:
      AppendNumber(b.number_points, p);
      break;
    case MetricType::kHistogram:
      AppendHistogram(b, p);
      break;
    case MetricType::kExponentialHistogram:
      AppendExponential(b, p);
      break;
    case MetricType::kSummary:
      AppendSummary(b, p);
      break;
    case MetricType::kUnset:
      STRATA_CHECK(false, "an unset metric has no points (checked before writing)");
  }
  AppendExemplars(b, table.exemplars[p]);
}

void MetricsBuilder::AppendPointBase(const MetricBatch& b, const otlp::PointColumnsBase& t,
                                     uint32_t p) {
  const uint64_t time = t.time_unix_nano[p];
  U64(kMetricsStartTime, t.start_time_unix_nano[p]);
  U64(kMetricsTime, time);
  U32(kMetricsPointFlags, t.flags[p]);
  attributes_.AppendRow(b, b.point_attributes, t.attributes[p]);
  ++data_rows_;
  if (!event_time_.has_value()) {
    event_time_ = NanosRange{time, time};
  } else {
    event_time_->min = std::min(event_time_->min, time);
    event_time_->max = std::max(event_time_->max, time);
  }
}

void MetricsBuilder::AppendNumber(const otlp::NumberPointColumns& t, uint32_t p) {
  const NumberType type = t.value_type[p];
  U32(kMetricsValueType, static_cast<uint32_t>(type));
  OptionalDouble(kMetricsValueDouble, type == NumberType::kDouble, t.double_at(p));
  if (type == NumberType::kInt) {
    cols_[kMetricsValueInt].AppendInt64(t.int_at(p));
  } else {
    cols_[kMetricsValueInt].AppendNull();
  }
  AppendNulls(kMetricsCount, kMetricsSummaryValue);
}

void MetricsBuilder::AppendStats(const otlp::HistogramStatsColumns& t, uint32_t p) {
  AppendNulls(kMetricsValueType, kMetricsValueInt);
  U64(kMetricsCount, t.count[p]);
  const uint8_t present = t.present[p];
  OptionalDouble(kMetricsSum, (present & otlp::kHasSum) != 0, t.sum[p]);
  OptionalDouble(kMetricsMin, (present & otlp::kHasMin) != 0, t.min[p]);
  OptionalDouble(kMetricsMax, (present & otlp::kHasMax) != 0, t.max[p]);
}

void MetricsBuilder::AppendHistogram(const MetricBatch& b, uint32_t p) {
  const otlp::HistogramPointColumns& t = b.histogram_points;
  AppendStats(t, p);
  U64List(kMetricsBucketCounts, b.bucket_counts, t.bucket_counts[p]);
  DoubleList(kMetricsExplicitBounds, b.explicit_bounds, t.explicit_bounds[p]);
  AppendNulls(kMetricsExpScale, kMetricsSummaryValue);
}

void MetricsBuilder::AppendExponential(const MetricBatch& b, uint32_t p) {
  const otlp::ExponentialPointColumns& t = b.exponential_points;
  AppendStats(t, p);
  AppendNulls(kMetricsBucketCounts, kMetricsExplicitBounds);
  cols_[kMetricsExpScale].AppendInt32(t.scale[p]);
  U64(kMetricsExpZeroCount, t.zero_count[p]);
  cols_[kMetricsExpZeroThreshold].AppendDouble(t.zero_threshold[p]);
  cols_[kMetricsExpPositiveOffset].AppendInt32(t.positive_offset[p]);
  U64List(kMetricsExpPositiveBucketCounts, b.bucket_counts, t.positive_bucket_counts[p]);
  cols_[kMetricsExpNegativeOffset].AppendInt32(t.negative_offset[p]);
  U64List(kMetricsExpNegativeBucketCounts, b.bucket_counts, t.negative_bucket_counts[p]);
  AppendNulls(kMetricsSummaryQuantile, kMetricsSummaryValue);
}

void MetricsBuilder::AppendSummary(const MetricBatch& b, uint32_t p) {
  const otlp::SummaryPointColumns& t = b.summary_points;
  AppendNulls(kMetricsValueType, kMetricsValueInt);
  U64(kMetricsCount, t.count[p]);
  cols_[kMetricsSum].AppendDouble(t.sum[p]);
  AppendNulls(kMetricsMin, kMetricsExpNegativeBucketCounts);
  DoubleList(kMetricsSummaryQuantile, b.quantiles.quantile, t.quantiles[p]);
  DoubleList(kMetricsSummaryValue, b.quantiles.value, t.quantiles[p]);
}

void MetricsBuilder::AppendExemplars(const MetricBatch& b, Range r) {
  const otlp::ExemplarColumns& e = b.exemplars;
  for (int c : kExemplarLists) {
    if (c != kMetricsExemplarAttrCount) cols_[c].AppendList(cols_[c].element_count(), r.count);
  }
  ColumnVector& time = cols_[kMetricsExemplarTime];
  ColumnVector& type = cols_[kMetricsExemplarValueType];
  ColumnVector& value_double = cols_[kMetricsExemplarValueDouble];
  ColumnVector& value_int = cols_[kMetricsExemplarValueInt];
  ColumnVector& trace_id = cols_[kMetricsExemplarTraceId];
  ColumnVector& span_id = cols_[kMetricsExemplarSpanId];
  for (uint32_t i = r.begin; i < r.end(); ++i) {
    time.AppendInt64(static_cast<int64_t>(e.time_unix_nano[i]));
    const NumberType vt = e.value_type[i];
    type.AppendInt32(static_cast<int32_t>(vt));
    if (vt == NumberType::kDouble) {
      value_double.AppendDouble(std::bit_cast<double>(e.value_bits[i]));
    } else {
      value_double.AppendNull();
    }
    if (vt == NumberType::kInt) {
      value_int.AppendInt64(static_cast<int64_t>(e.value_bits[i]));
    } else {
      value_int.AppendNull();
    }
    if (e.has_trace_id[i] != 0) {
      trace_id.AppendBytes(std::string_view(reinterpret_cast<const char*>(e.trace_id[i].data()),
                                            e.trace_id[i].size()));
    } else {
      trace_id.AppendNull();
    }
    if (e.has_span_id[i] != 0) {
      span_id.AppendBytes(std::string_view(reinterpret_cast<const char*>(e.span_id[i].data()),
                                           e.span_id[i].size()));
    } else {
      span_id.AppendNull();
    }
  }
  const std::span<const Range> attributes(e.filtered_attributes.data() + r.begin, r.count);
  AppendElementCounts(attributes, &cols_[kMetricsExemplarAttrCount]);
  exemplar_attributes_.AppendConcatenatedRow(b, b.exemplar_attributes, attributes);
}

void MetricsBuilder::AppendEmptyExemplars() {
  for (int c : kExemplarLists) cols_[c].AppendList(cols_[c].element_count(), 0);
  exemplar_attributes_.AppendEmptyRow();
}

std::vector<ColumnVector> MetricsBuilder::Finish() {
  std::vector<ColumnVector> columns(kMetricsColumnCount);
  for (int c = 0; c < kMetricsColumnCount; ++c) {
    if (!IsFamilyColumn(c) && !IsSharedColumn(c)) columns[c] = std::move(cols_[c]);
  }
  // Each writer appends its columns in spec order.
  std::vector<ColumnVector> moved;
  resource_scope_.MoveColumnsTo(&moved);
  for (int i = 0; i < kResourceScopeColumns; ++i) {
    columns[kMetricsResourceScope + i] = std::move(moved[i]);
  }
  moved.clear();
  promoted_.MoveColumnsTo(&moved);
  for (int i = 0; i < kResourcePromotedColumns; ++i) {
    columns[kMetricsPromoted + i] = std::move(moved[i]);
  }
  const std::pair<AttributeFamilyWriter*, int> families[] = {
      {&metadata_, kMetricsMetadata},
      {&attributes_, kMetricsPointAttributes},
      {&exemplar_attributes_, kMetricsExemplarAttributes}};
  for (const auto& [family, first] : families) {
    moved.clear();
    family->MoveColumnsTo(&moved);
    for (int i = 0; i < kAttributeFamilyColumns; ++i) columns[first + i] = std::move(moved[i]);
  }
  return columns;
}

namespace {

WriteTotals CountTotals(std::span<const MetricBatch* const> batches,
                        const std::vector<Segment>& plan) {
  WriteTotals totals;
  for (const Segment& s : plan) totals.rows += s.rows;
  for (const MetricBatch* b : batches) {
    totals.point_attributes += b->point_attributes.size();
    totals.exemplars += b->exemplars.size();
    totals.exemplar_attributes += b->exemplar_attributes.size();
  }
  return totals;
}

}  // namespace

namespace metrics_internal {

const std::string& ColumnName(int column) { return MetricsTableColumns()[column].name; }

bool IsKnownMetricType(int32_t code) {
  if (code < 0 || code > 255) return false;
  switch (static_cast<MetricType>(code)) {
    case MetricType::kUnset:
    case MetricType::kGauge:
    case MetricType::kSum:
    case MetricType::kHistogram:
    case MetricType::kExponentialHistogram:
    case MetricType::kSummary:
      return true;
  }
  return false;
}

bool HasTemporality(MetricType type) {
  return type == MetricType::kSum || type == MetricType::kHistogram ||
         type == MetricType::kExponentialHistogram;
}

bool IsNumberType(MetricType type) {
  return type == MetricType::kGauge || type == MetricType::kSum;
}

bool IsFamilyColumn(int c) {
  for (int first : {kMetricsMetadata, kMetricsPointAttributes, kMetricsExemplarAttributes}) {
    if (c >= first && c < first + kAttributeFamilyColumns) return true;
  }
  return false;
}

}  // namespace metrics_internal

const std::vector<parquet::ColumnSpec>& MetricsTableColumns() {
  static const std::vector<ColumnSpec>* const schema = new std::vector<ColumnSpec>(BuildSchema());
  return *schema;
}

// ------------------------------------------------------ MetricsTableWriter

MetricsRowOrder MetricsTableRowOrder(const parquet::FileMetaData& metadata) {
  const std::vector<parquet::SortingColumn> name_time = {{kMetricsName, false, true},
                                                         {kMetricsTime, false, true}};
  if (metadata.row_groups.empty()) return MetricsRowOrder::kName;
  for (const parquet::RowGroup& group : metadata.row_groups) {
    if (group.sorting_columns != name_time) return MetricsRowOrder::kName;
  }
  return MetricsRowOrder::kNameTime;
}

absl::StatusOr<std::unique_ptr<MetricsTableWriter>> MetricsTableWriter::Open(
    std::string_view batch_id, const TableOptions& options, MetricsRowOrder order,
    parquet::ByteSink* sink) {
  std::vector<parquet::SortingColumn> sorting = {{kMetricsName, false, true}};
  if (order == MetricsRowOrder::kNameTime) sorting.push_back({kMetricsTime, false, true});
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<parquet::FileWriter> writer,
                          parquet::FileWriter::Open(
                              MetricsTableColumns(),
                              MakeWriterOptions(options, kMetricsSchema, batch_id, sorting), sink));
  return std::unique_ptr<MetricsTableWriter>(new MetricsTableWriter(order, std::move(writer)));
}

MetricsTableWriter::MetricsTableWriter(MetricsRowOrder order,
                                       std::unique_ptr<parquet::FileWriter> writer)
    : TableFileWriter("metrics", std::move(writer)),
      order_(order),
      builder_(std::make_unique<MetricsBuilder>()) {}

MetricsTableWriter::~MetricsTableWriter() = default;

uint32_t MetricsTableWriter::AddBatch(const otlp::MetricBatch& batch) {
  STRATA_CHECK(meta().file_rows == 0, "consecutive numbering only before the first Flush");
  const uint32_t number = builder_->AddBatch(batch, next_metric_base_);
  next_metric_base_ += static_cast<uint32_t>(batch.metrics.size());
  return number;
}

uint32_t MetricsTableWriter::AddBatch(const otlp::MetricBatch& batch,
                                      std::vector<uint32_t> resource_index,
                                      std::vector<uint32_t> scope_index,
                                      std::vector<uint32_t> metric_index) {
  return builder_->AddBatch(batch, std::move(resource_index), std::move(scope_index),
                            std::move(metric_index));
}

void MetricsTableWriter::Reserve(const WriteTotals& totals) { builder_->Reserve(totals); }

size_t MetricsTableWriter::buffered_rows() const { return builder_->rows(); }

void MetricsTableWriter::AppendPlaceholder(uint32_t batch, MetricsRowKind kind, uint32_t resource,
                                           std::optional<uint32_t> scope) {
  STRATA_CHECK((kind == kMetricsEmptyScopeRow) == scope.has_value() &&
                   (kind == kMetricsEmptyScopeRow || kind == kMetricsEmptyResourceRow),
               "a placeholder of kind 2 names a scope, of kind 3 none");
  if (seen_metric_row_) Fail("a resource or scope placeholder after metric rows");
  builder_->AppendPlaceholder(batch, kind, resource, scope);
  ++placeholders_;
}

void MetricsTableWriter::AppendMetricRow(uint32_t batch, uint32_t metric,
                                         std::optional<uint32_t> point) {
  const otlp::MetricBatch& b = builder_->batch(batch);
  const std::string_view name = b.metrics.name[metric];
  MetricsOrderKey key{name, point.has_value(), 0};
  if (point.has_value()) key.time = b.points_of(b.metrics.type[metric])->time_unix_nano[*point];
  if (seen_metric_row_) {
    const MetricsOrderKey last{last_name_, last_point_, last_time_};
    const bool out_of_order =
        order_ == MetricsRowOrder::kNameTime ? key < last : key.name < last.name;
    if (out_of_order) Fail(fmt::format("metric row of '{}' out of order", name));
  }
  seen_metric_row_ = true;
  if (last_name_ != name) last_name_.assign(name.data(), name.size());
  last_point_ = key.point;
  last_time_ = key.time;
  builder_->AppendMetricRow(batch, metric, point);
}

void MetricsTableWriter::AppendMetric(uint32_t batch, uint32_t metric) {
  const otlp::MetricBatch& b = builder_->batch(batch);
  const Range points = b.metrics.points[metric];
  if (points.count == 0) {
    AppendMetricRow(batch, metric, std::nullopt);
    return;
  }
  for (uint32_t p = points.begin; p < points.end(); ++p) AppendMetricRow(batch, metric, p);
}

absl::Status MetricsTableWriter::Flush() {
  const size_t rows = builder_->rows();
  STRATA_RETURN_IF_ERROR(CheckRoom(rows));
  if (rows > 0) {
    meta().rows += builder_->data_rows();
    if (const std::optional<NanosRange> times = builder_->event_time(); times.has_value()) {
      ExtendEventTime(*times);
    }
    builder_->misses().AddTo(&meta().promotion_misses);
    const std::vector<ColumnVector> columns = builder_->Finish();
    STRATA_RETURN_IF_ERROR(file().WriteBatch(columns));
    meta().file_rows += rows;
  }
  builder_ = std::make_unique<MetricsBuilder>();
  // A streaming caller flushes about as many rows each time: room for as
  // many as the last flush saves growing every column row by row.
  if (rows > 0) builder_->Reserve(Sizes{rows, 0, 0, 0});
  return absl::OkStatus();
}

absl::StatusOr<SignalMeta> MetricsTableWriter::Finish() {
  STRATA_RETURN_IF_ERROR(Flush());
  return FinishFile();
}

absl::StatusOr<MetricsTable> WriteMetricsTable(std::span<const otlp::MetricBatch* const> batches,
                                               std::string_view batch_id,
                                               const TableOptions& options) {
  uint64_t metric_total = 0;
  for (size_t k = 0; k < batches.size(); ++k) {
    STRATA_RETURN_IF_ERROR(CheckInput(k, *batches[k]));
    metric_total += batches[k]->metrics.size();
  }
  const std::vector<Segment> plan = PlanRows(batches);
  const WriteTotals totals = CountTotals(batches, plan);
  if (totals.rows >= std::numeric_limits<uint32_t>::max() ||
      metric_total >= std::numeric_limits<uint32_t>::max()) {
    return absl::InvalidArgumentError(
        fmt::format("metrics: {} rows do not fit one metrics.parquet", totals.rows));
  }
  MetricsTable out;
  out.meta.file_rows = totals.rows;
  if (totals.rows == 0) return out;

  parquet::StringSink sink(&out.file);
  STRATA_ASSIGN_OR_RETURN(
      std::unique_ptr<MetricsTableWriter> writer,
      MetricsTableWriter::Open(batch_id, options, MetricsRowOrder::kName, &sink));
  writer->Reserve(totals);
  for (const MetricBatch* b : batches) writer->AddBatch(*b);
  for (const Segment& s : plan) {
    if (s.kind == kMetricsDataPointRow) {
      writer->AppendMetric(s.input, s.metric);
    } else {
      writer->AppendPlaceholder(s.input, s.kind, s.resource,
                                s.scope == kNone ? std::nullopt : std::optional<uint32_t>(s.scope));
    }
  }
  STRATA_ASSIGN_OR_RETURN(out.meta, writer->Finish());
  return out;
}

absl::Status CheckMetricsTableFooter(parquet::RandomAccessSource* source, std::string_view batch_id,
                                     uint64_t expected_file_rows, std::string_view file_name) {
  return CheckTableFooter(source, MetricsTableColumns(), kMetricsSchema, batch_id,
                          expected_file_rows, file_name);
}

}  // namespace strata::storage
