// ValidateBatch: checks the invariants listed in batch.h, for decoders' tests
// and fuzzers and for the storage writer's pre-write check. Returns Internal
// naming the first broken invariant: a batch that fails came from a bug.

#include <algorithm>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/absl_view.h"
#include "otlp/decode.h"

namespace strata::otlp {
namespace {

// absl::StrCat takes absl::string_view, which is not std::string_view here.

// A child table and every Range that points into it, from any column.
struct RangeTable {
  std::string_view name;
  size_t size = 0;
  std::vector<Range> ranges;
};

class Checker {
 public:
  absl::Status status() const { return status_; }

  // Invariant 1: every column of `table` has the same length.
  void Columns(std::string_view table, std::initializer_list<size_t> sizes) {
    for (size_t n : sizes) {
      if (n != *sizes.begin()) {
        return Fail(absl::StrCat(Absl(table), ": columns differ in length (", *sizes.begin(),
                                 " vs ", n, ")"));
      }
    }
  }

  // Invariant 2: each Range of `column` lies inside `target`; remembered for
  // the disjointness check.
  void Refs(std::string_view column, const std::vector<Range>& ranges, RangeTable* target) {
    for (size_t i = 0; i < ranges.size(); ++i) Ref(column, i, ranges[i], target);
  }

  void Ref(std::string_view column, size_t row, Range r, RangeTable* target) {
    if (uint64_t{r.begin} + r.count > target->size) {
      return Fail(absl::StrCat(Absl(column), "[", row, "]: range [", r.begin, ", +", r.count,
                               ") outside ", Absl(target->name), " (", target->size, " rows)"));
    }
    if (r.count > 0) target->ranges.push_back(r);
  }

  // Invariant 4: each index of `column` names a row of a table of `size`.
  void Indexes(std::string_view column, const std::vector<uint32_t>& indexes, size_t size,
               std::string_view target) {
    for (size_t i = 0; i < indexes.size(); ++i) {
      if (indexes[i] >= size) {
        return Fail(absl::StrCat(Absl(column), "[", i, "] = ", indexes[i], ": no such row in ",
                                 Absl(target), " (", size, " rows)"));
      }
    }
  }

  // Invariant 3: no row of `t` is covered by two Ranges.
  void Disjoint(RangeTable* t) {
    std::vector<Range>& rs = t->ranges;
    auto by_begin = [](const Range& a, const Range& b) { return a.begin < b.begin; };
    if (!std::is_sorted(rs.begin(), rs.end(), by_begin)) std::sort(rs.begin(), rs.end(), by_begin);
    for (size_t i = 1; i < rs.size(); ++i) {
      if (uint64_t{rs[i - 1].begin} + rs[i - 1].count > rs[i].begin) {
        return Fail(absl::StrCat(Absl(t->name), ": rows ", rs[i].begin,
                                 " are covered by two parents' ranges"));
      }
    }
  }

  // Value kinds are known, and array/kvlist children are in bounds.
  void Values(std::string_view column, const ValueColumns& v, RangeTable* nested_values,
              RangeTable* nested_attributes) {
    Columns(column, {v.type.size(), v.str.size(), v.bits.size()});
    for (size_t i = 0; i < v.size() && ok(); ++i) {
      if (v.type[i] > ValueType::kBytes) {
        return Fail(absl::StrCat(Absl(column), "[", i, "]: unknown value type ",
                                 static_cast<int>(v.type[i])));
      }
      if (v.type[i] == ValueType::kArray) Ref(column, i, v.children_at(i), nested_values);
      if (v.type[i] == ValueType::kKvList) Ref(column, i, v.children_at(i), nested_attributes);
    }
  }

  void Attributes(std::string_view table, const AttributeColumns& a, RangeTable* nested_values,
                  RangeTable* nested_attributes) {
    Columns(table, {a.key.size(), a.value.size()});
    Values(table, a.value, nested_values, nested_attributes);
  }

  void Fail(std::string message) {
    if (status_.ok()) status_ = absl::InternalError(absl::StrCat("invalid batch: ", message));
  }
  bool ok() const { return status_.ok(); }

 private:
  absl::Status status_;
};

// Checks resources, scopes and nested values, and collects the Ranges of all
// attribute tables into `nested` (filled by the signal-specific part first).
class BaseChecker {
 public:
  explicit BaseChecker(const BatchBase& b)
      : b_(b),
        resource_attributes_{"resource_attributes", b.resource_attributes.size(), {}},
        entity_refs_{"entity_refs", b.entity_refs.size(), {}},
        entity_keys_{"entity_keys", b.entity_keys.size(), {}},
        scope_attributes_{"scope_attributes", b.scope_attributes.size(), {}},
        nested_values_{"nested_values", b.nested_values.size(), {}},
        nested_attributes_{"nested_attributes", b.nested_attributes.size(), {}} {}

  Checker& checker() { return c_; }

  // An attribute table of the signal, whose values may nest.
  void SignalAttributes(std::string_view table, const AttributeColumns& a) {
    c_.Attributes(table, a, &nested_values_, &nested_attributes_);
  }
  void SignalValues(std::string_view column, const ValueColumns& v) {
    c_.Values(column, v, &nested_values_, &nested_attributes_);
  }

  absl::Status Finish() {
    const ResourceColumns& r = b_.resources;
    c_.Columns("resources", {r.attributes.size(), r.dropped_attributes_count.size(),
                             r.entity_refs.size(), r.schema_url.size()});
    c_.Refs("resources.attributes", r.attributes, &resource_attributes_);
    c_.Refs("resources.entity_refs", r.entity_refs, &entity_refs_);
    const EntityRefColumns& e = b_.entity_refs;
    c_.Columns("entity_refs",
               {e.schema_url.size(), e.type.size(), e.id_keys.size(), e.description_keys.size()});
    c_.Refs("entity_refs.id_keys", e.id_keys, &entity_keys_);
    c_.Refs("entity_refs.description_keys", e.description_keys, &entity_keys_);
    const ScopeColumns& s = b_.scopes;
    c_.Columns("scopes", {s.resource.size(), s.name.size(), s.version.size(), s.attributes.size(),
                          s.dropped_attributes_count.size(), s.schema_url.size()});
    c_.Indexes("scopes.resource", s.resource, r.attributes.size(), "resources");
    c_.Refs("scopes.attributes", s.attributes, &scope_attributes_);
    c_.Attributes("resource_attributes", b_.resource_attributes, &nested_values_,
                  &nested_attributes_);
    c_.Attributes("scope_attributes", b_.scope_attributes, &nested_values_, &nested_attributes_);
    c_.Values("nested_values", b_.nested_values, &nested_values_, &nested_attributes_);
    c_.Attributes("nested_attributes", b_.nested_attributes, &nested_values_, &nested_attributes_);
    for (RangeTable* t : {&resource_attributes_, &entity_refs_, &entity_keys_, &scope_attributes_,
                          &nested_values_, &nested_attributes_}) {
      if (c_.ok()) c_.Disjoint(t);
    }
    return c_.status();
  }

 private:
  const BatchBase& b_;
  Checker c_;
  RangeTable resource_attributes_;
  RangeTable entity_refs_;
  RangeTable entity_keys_;
  RangeTable scope_attributes_;
  RangeTable nested_values_;
  RangeTable nested_attributes_;
};

RangeTable TableOf(std::string_view name, size_t size) { return RangeTable{name, size, {}}; }

}  // namespace

absl::Status ValidateBatch(const TraceBatch& b) {
  BaseChecker base(b);
  Checker& c = base.checker();
  const SpanColumns& s = b.spans;
  c.Columns("spans",
            {s.scope.size(), s.trace_id.size(), s.span_id.size(), s.trace_state.size(),
             s.parent_span_id.size(), s.has_parent_span_id.size(), s.flags.size(), s.name.size(),
             s.kind.size(), s.start_time_unix_nano.size(), s.end_time_unix_nano.size(),
             s.attributes.size(), s.dropped_attributes_count.size(), s.events.size(),
             s.dropped_events_count.size(), s.links.size(), s.dropped_links_count.size(),
             s.status_message.size(), s.status_code.size()});
  c.Indexes("spans.scope", s.scope, b.scopes.size(), "scopes");
  const EventColumns& e = b.events;
  c.Columns("events", {e.time_unix_nano.size(), e.name.size(), e.attributes.size(),
                       e.dropped_attributes_count.size()});
  const LinkColumns& l = b.links;
  c.Columns("links", {l.trace_id.size(), l.span_id.size(), l.trace_state.size(),
                      l.attributes.size(), l.dropped_attributes_count.size(), l.flags.size()});
  RangeTable span_attributes = TableOf("span_attributes", b.span_attributes.size());
  RangeTable events = TableOf("events", e.size());
  RangeTable event_attributes = TableOf("event_attributes", b.event_attributes.size());
  RangeTable links = TableOf("links", l.size());
  RangeTable link_attributes = TableOf("link_attributes", b.link_attributes.size());
  c.Refs("spans.attributes", s.attributes, &span_attributes);
  c.Refs("spans.events", s.events, &events);
  c.Refs("spans.links", s.links, &links);
  c.Refs("events.attributes", e.attributes, &event_attributes);
  c.Refs("links.attributes", l.attributes, &link_attributes);
  base.SignalAttributes("span_attributes", b.span_attributes);
  base.SignalAttributes("event_attributes", b.event_attributes);
  base.SignalAttributes("link_attributes", b.link_attributes);
  for (RangeTable* t : {&span_attributes, &events, &event_attributes, &links, &link_attributes}) {
    if (c.ok()) c.Disjoint(t);
  }
  return base.Finish();
}

absl::Status ValidateBatch(const LogBatch& b) {
  BaseChecker base(b);
  Checker& c = base.checker();
  const LogRecordColumns& l = b.logs;
  c.Columns("logs",
            {l.scope.size(), l.time_unix_nano.size(), l.observed_time_unix_nano.size(),
             l.severity_number.size(), l.severity_text.size(), l.body.size(), l.attributes.size(),
             l.dropped_attributes_count.size(), l.flags.size(), l.trace_id.size(),
             l.has_trace_id.size(), l.span_id.size(), l.has_span_id.size(), l.event_name.size()});
  c.Indexes("logs.scope", l.scope, b.scopes.size(), "scopes");
  RangeTable log_attributes = TableOf("log_attributes", b.log_attributes.size());
  c.Refs("logs.attributes", l.attributes, &log_attributes);
  base.SignalValues("logs.body", l.body);
  base.SignalAttributes("log_attributes", b.log_attributes);
  if (c.ok()) c.Disjoint(&log_attributes);
  return base.Finish();
}

namespace {

// The point tables of a MetricBatch and the child tables they share.
struct MetricTables {
  RangeTable number_points;
  RangeTable histogram_points;
  RangeTable exponential_points;
  RangeTable summary_points;
  RangeTable point_attributes;
  RangeTable exemplars;
  RangeTable bucket_counts;
  RangeTable explicit_bounds;
  RangeTable quantiles;

  explicit MetricTables(const MetricBatch& b)
      : number_points(TableOf("number_points", b.number_points.size())),
        histogram_points(TableOf("histogram_points", b.histogram_points.size())),
        exponential_points(TableOf("exponential_points", b.exponential_points.size())),
        summary_points(TableOf("summary_points", b.summary_points.size())),
        point_attributes(TableOf("point_attributes", b.point_attributes.size())),
        exemplars(TableOf("exemplars", b.exemplars.size())),
        bucket_counts(TableOf("bucket_counts", b.bucket_counts.size())),
        explicit_bounds(TableOf("explicit_bounds", b.explicit_bounds.size())),
        quantiles(TableOf("quantiles", b.quantiles.size())) {}

  RangeTable* PointsOf(MetricType type) {
    switch (type) {
      case MetricType::kGauge:
      case MetricType::kSum:
        return &number_points;
      case MetricType::kHistogram:
        return &histogram_points;
      case MetricType::kExponentialHistogram:
        return &exponential_points;
      case MetricType::kSummary:
        return &summary_points;
      case MetricType::kUnset:
        break;
    }
    return nullptr;
  }
};

void CheckPointBase(Checker& c, std::string_view table, const PointColumnsBase& p,
                    const MetricBatch& b, MetricTables* t, std::initializer_list<size_t> more) {
  std::vector<size_t> sizes = {
      p.metric.size(),         p.attributes.size(), p.start_time_unix_nano.size(),
      p.time_unix_nano.size(), p.flags.size(),      p.exemplars.size()};
  sizes.insert(sizes.end(), more.begin(), more.end());
  for (size_t n : sizes) {
    if (n != sizes[0]) return c.Fail(absl::StrCat(Absl(table), ": columns differ in length"));
  }
  c.Indexes(absl::StrCat(Absl(table), ".metric"), p.metric, b.metrics.size(), "metrics");
  c.Refs(absl::StrCat(Absl(table), ".attributes"), p.attributes, &t->point_attributes);
  c.Refs(absl::StrCat(Absl(table), ".exemplars"), p.exemplars, &t->exemplars);
}

// Each metric's points lie in the table of its type and name it as their metric.
void CheckMetricPoints(Checker& c, const MetricBatch& b, MetricTables* t) {
  const MetricColumns& m = b.metrics;
  for (size_t i = 0; i < m.size() && c.ok(); ++i) {
    const MetricType type = m.type[i];
    const PointColumnsBase* points = b.points_of(type);
    if (points == nullptr) {
      if (type != MetricType::kUnset) {
        return c.Fail(absl::StrCat("metrics[", i, "]: unknown type ", static_cast<int>(type)));
      }
      if (m.points[i].count != 0)
        return c.Fail(absl::StrCat("metrics[", i, "]: unset with points"));
      continue;
    }
    c.Ref("metrics.points", i, m.points[i], t->PointsOf(type));
    for (uint32_t p = m.points[i].begin; p < m.points[i].end() && c.ok(); ++p) {
      if (p < points->metric.size() && points->metric[p] != i) {
        c.Fail(
            absl::StrCat("metrics[", i, "]: point ", p, " belongs to metric ", points->metric[p]));
      }
    }
  }
}

void CheckNumberTypes(Checker& c, std::string_view column, const std::vector<NumberType>& types) {
  for (size_t i = 0; i < types.size(); ++i) {
    if (types[i] > NumberType::kInt) {
      return c.Fail(absl::StrCat(Absl(column), "[", i, "]: unknown number type"));
    }
  }
}

}  // namespace

absl::Status ValidateBatch(const MetricBatch& b) {
  BaseChecker base(b);
  Checker& c = base.checker();
  MetricTables t(b);
  const MetricColumns& m = b.metrics;
  c.Columns("metrics", {m.scope.size(), m.name.size(), m.description.size(), m.unit.size(),
                        m.metadata.size(), m.type.size(), m.aggregation_temporality.size(),
                        m.is_monotonic.size(), m.points.size()});
  c.Indexes("metrics.scope", m.scope, b.scopes.size(), "scopes");
  RangeTable metadata = TableOf("metadata_attributes", b.metadata_attributes.size());
  c.Refs("metrics.metadata", m.metadata, &metadata);
  const NumberPointColumns& n = b.number_points;
  CheckPointBase(c, "number_points", n, b, &t, {n.value_type.size(), n.value_bits.size()});
  CheckNumberTypes(c, "number_points.value_type", n.value_type);
  const HistogramPointColumns& h = b.histogram_points;
  CheckPointBase(c, "histogram_points", h, b, &t,
                 {h.count.size(), h.sum.size(), h.min.size(), h.max.size(), h.present.size(),
                  h.bucket_counts.size(), h.explicit_bounds.size()});
  c.Refs("histogram_points.bucket_counts", h.bucket_counts, &t.bucket_counts);
  c.Refs("histogram_points.explicit_bounds", h.explicit_bounds, &t.explicit_bounds);
  const ExponentialPointColumns& x = b.exponential_points;
  CheckPointBase(
      c, "exponential_points", x, b, &t,
      {x.count.size(), x.sum.size(), x.min.size(), x.max.size(), x.present.size(), x.scale.size(),
       x.zero_count.size(), x.zero_threshold.size(), x.positive_offset.size(),
       x.positive_bucket_counts.size(), x.negative_offset.size(), x.negative_bucket_counts.size()});
  c.Refs("exponential_points.positive_bucket_counts", x.positive_bucket_counts, &t.bucket_counts);
  c.Refs("exponential_points.negative_bucket_counts", x.negative_bucket_counts, &t.bucket_counts);
  const SummaryPointColumns& s = b.summary_points;
  CheckPointBase(c, "summary_points", s, b, &t, {s.count.size(), s.sum.size(), s.quantiles.size()});
  c.Refs("summary_points.quantiles", s.quantiles, &t.quantiles);
  c.Columns("quantiles", {b.quantiles.quantile.size(), b.quantiles.value.size()});
  const ExemplarColumns& e = b.exemplars;
  c.Columns("exemplars", {e.filtered_attributes.size(), e.time_unix_nano.size(),
                          e.value_type.size(), e.value_bits.size(), e.trace_id.size(),
                          e.has_trace_id.size(), e.span_id.size(), e.has_span_id.size()});
  CheckNumberTypes(c, "exemplars.value_type", e.value_type);
  RangeTable exemplar_attributes = TableOf("exemplar_attributes", b.exemplar_attributes.size());
  c.Refs("exemplars.filtered_attributes", e.filtered_attributes, &exemplar_attributes);
  if (c.ok()) CheckMetricPoints(c, b, &t);
  base.SignalAttributes("metadata_attributes", b.metadata_attributes);
  base.SignalAttributes("point_attributes", b.point_attributes);
  base.SignalAttributes("exemplar_attributes", b.exemplar_attributes);
  for (RangeTable* r : {&metadata, &t.number_points, &t.histogram_points, &t.exponential_points,
                        &t.summary_points, &t.point_attributes, &t.exemplars, &t.bucket_counts,
                        &t.explicit_bounds, &t.quantiles, &exemplar_attributes}) {
    if (c.ok()) c.Disjoint(r);
  }
  return base.Finish();
}

}  // namespace strata::otlp
