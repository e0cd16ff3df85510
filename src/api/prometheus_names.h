#pragma once

// How OTLP metrics are named in the Prometheus API (docs/prometheus.md,
// "How OTLP metrics become series"): the OpenTelemetry specification's
// Prometheus compatibility rules for metric names, units and label names.

#include <string>
#include <string_view>

namespace strata::api {

// The OTLP metric kinds that name differently.
enum class PromKind {
  kGauge,      // gauges, and sums that are not monotonic
  kCounter,    // monotonic sums: `_total`
  kHistogram,  // explicit-bucket and exponential histograms: `_bucket`, `_sum`, `_count`
  kSummary,    // `{quantile}`, `_sum`, `_count`
};

// The family name of an OTLP metric: the name split into words at every
// character outside [A-Za-z0-9:], the unit's words appended (UCUM units as
// Prometheus spells them, `{annotations}` dropped, "a/b" as `a_per_b`) when
// the name does not already hold them, `total` last for counters, `ratio`
// for gauges of unit "1"; joined by `_`, with `_` in front of a leading
// digit.
std::string PromMetricName(std::string_view otlp_name, std::string_view unit, PromKind kind);

// An attribute key as a label name: characters outside [A-Za-z0-9_] become
// `_`; `key_` in front of a leading digit, `key` in front of a single
// leading `_`.
std::string PromLabelName(std::string_view key);

// Whether `name` is a valid Prometheus label name.
bool IsPromLabelName(std::string_view name);

}  // namespace strata::api
