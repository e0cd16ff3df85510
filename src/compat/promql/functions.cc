#include "compat/promql/functions.h"

#include "absl/container/flat_hash_map.h"

namespace strata::compat::promql {
namespace {

constexpr ValueType kS = ValueType::kScalar;
constexpr ValueType kV = ValueType::kVector;
constexpr ValueType kM = ValueType::kMatrix;
constexpr ValueType kStr = ValueType::kString;

const std::vector<Function>& AllFunctions() {
  static const auto* functions = new std::vector<Function>{
      {"abs", {kV}, 0, kV},
      {"absent", {kV}, 0, kV},
      {"absent_over_time", {kM}, 0, kV},
      {"acos", {kV}, 0, kV},
      {"acosh", {kV}, 0, kV},
      {"asin", {kV}, 0, kV},
      {"asinh", {kV}, 0, kV},
      {"atan", {kV}, 0, kV},
      {"atanh", {kV}, 0, kV},
      {"avg_over_time", {kM}, 0, kV},
      {"ceil", {kV}, 0, kV},
      {"changes", {kM}, 0, kV},
      {"clamp", {kV, kS, kS}, 0, kV},
      {"clamp_max", {kV, kS}, 0, kV},
      {"clamp_min", {kV, kS}, 0, kV},
      {"cos", {kV}, 0, kV},
      {"cosh", {kV}, 0, kV},
      {"count_over_time", {kM}, 0, kV},
      {"days_in_month", {kV}, 1, kV},
      {"day_of_month", {kV}, 1, kV},
      {"day_of_week", {kV}, 1, kV},
      {"day_of_year", {kV}, 1, kV},
      {"deg", {kV}, 0, kV},
      {"delta", {kM}, 0, kV},
      {"deriv", {kM}, 0, kV},
      {"exp", {kV}, 0, kV},
      {"floor", {kV}, 0, kV},
      {"histogram_count", {kV}, 0, kV},
      {"histogram_sum", {kV}, 0, kV},
      {"histogram_fraction", {kS, kS, kV}, 0, kV},
      {"histogram_quantile", {kS, kV}, 0, kV},
      {"holt_winters", {kM, kS, kS}, 0, kV},
      {"hour", {kV}, 1, kV},
      {"idelta", {kM}, 0, kV},
      {"increase", {kM}, 0, kV},
      {"irate", {kM}, 0, kV},
      {"label_replace", {kV, kStr, kStr, kStr, kStr}, 0, kV},
      {"label_join", {kV, kStr, kStr, kStr}, -1, kV},
      {"last_over_time", {kM}, 0, kV},
      {"ln", {kV}, 0, kV},
      {"log10", {kV}, 0, kV},
      {"log2", {kV}, 0, kV},
      {"max_over_time", {kM}, 0, kV},
      {"min_over_time", {kM}, 0, kV},
      {"minute", {kV}, 1, kV},
      {"month", {kV}, 1, kV},
      {"pi", {}, 0, kS},
      {"predict_linear", {kM, kS}, 0, kV},
      {"present_over_time", {kM}, 0, kV},
      {"quantile_over_time", {kS, kM}, 0, kV},
      {"rad", {kV}, 0, kV},
      {"rate", {kM}, 0, kV},
      {"resets", {kM}, 0, kV},
      {"round", {kV, kS}, 1, kV},
      {"scalar", {kV}, 0, kS},
      {"sgn", {kV}, 0, kV},
      {"sin", {kV}, 0, kV},
      {"sinh", {kV}, 0, kV},
      {"sort", {kV}, 0, kV},
      {"sort_desc", {kV}, 0, kV},
      {"sqrt", {kV}, 0, kV},
      {"stddev_over_time", {kM}, 0, kV},
      {"stdvar_over_time", {kM}, 0, kV},
      {"sum_over_time", {kM}, 0, kV},
      {"tan", {kV}, 0, kV},
      {"tanh", {kV}, 0, kV},
      {"time", {}, 0, kS},
      {"timestamp", {kV}, 0, kV},
      {"vector", {kS}, 0, kV},
      {"year", {kV}, 1, kV},
  };
  return *functions;
}

}  // namespace

const Function* LookupFunction(absl::string_view name) {
  static const auto* by_name = [] {
    auto* map = new absl::flat_hash_map<absl::string_view, const Function*>();
    for (const Function& f : AllFunctions()) (*map)[f.name] = &f;
    return map;
  }();
  auto it = by_name->find(name);
  return it == by_name->end() ? nullptr : it->second;
}

}  // namespace strata::compat::promql
