#pragma once

// How the columns of a metrics row become Prometheus labels
// (docs/prometheus.md, "How OTLP metrics become series"), shared by the
// series a query reads and the delta baselines before its window.

#include <string>
#include <string_view>

#include "compat/promql/series_source.h"

namespace strata::api::internal {

// job and instance from the resource, as the specification says: job is
// service.name (prefixed by "namespace/" when service.namespace is set),
// instance is service.instance.id; each left out when empty.
void AddResourceLabels(const std::string& service, const std::string& service_namespace,
                       const std::string& instance, compat::promql::Labels* labels);

// Attributes (AttributeSetSql's text) as labels: names translated, values
// of keys that translate to the same name joined with ';' in key order;
// empty values dropped; job, instance and __name__ never added.
void AddAttributeLabels(std::string_view text, compat::promql::Labels* labels);

// Prometheus's text for an `le` or `quantile` label value: the shortest
// decimal that reads back as the same double, without an exponent.
std::string PromBoundText(double value);

}  // namespace strata::api::internal
