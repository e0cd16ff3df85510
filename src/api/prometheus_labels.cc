// Labels from metrics rows (prometheus_labels.h).

#include "api/prometheus_labels.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "api/prometheus_names.h"
#include "api/search.h"

namespace strata::api::internal {

void AddResourceLabels(const std::string& service, const std::string& service_namespace,
                       const std::string& instance, compat::promql::Labels* labels) {
  if (!service.empty()) {
    labels->push_back({"job", service_namespace.empty()
                                  ? service
                                  : absl::StrCat(service_namespace, "/", service)});
  }
  if (!instance.empty()) labels->push_back({"instance", instance});
}

void AddAttributeLabels(std::string_view text, compat::promql::Labels* labels) {
  Attributes attributes = SplitAttributeSet(text);
  std::sort(attributes.begin(), attributes.end());
  std::map<std::string, std::string> by_name;
  for (const auto& [key, value] : attributes) {
    if (value.empty()) continue;
    std::string name = PromLabelName(key);
    auto [it, inserted] = by_name.emplace(std::move(name), value);
    if (!inserted) absl::StrAppend(&it->second, ";", value);
  }
  for (auto& [name, value] : by_name) {
    if (name == "job" || name == "instance" || name == "__name__") continue;
    labels->push_back({name, std::move(value)});
  }
}

std::string PromBoundText(double value) {
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (std::isnan(value)) return "NaN";
  char buffer[400];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::fixed);
  return std::string(buffer, ec == std::errc() ? end : buffer);
}

}  // namespace strata::api::internal
