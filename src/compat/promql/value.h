#pragma once

// What a PromQL query answers: one of Prometheus's four result types.
// Plain values.

#include <cstdint>
#include <string>
#include <vector>

#include "compat/promql/ast.h"
#include "compat/promql/series_source.h"

namespace strata::compat::promql {

struct Point {
  int64_t t_ms = 0;
  double v = 0;
};

// One series of a vector result: its labels and its one sample.
struct VectorElement {
  Labels labels;
  int64_t t_ms = 0;
  double v = 0;
};

// One series of a matrix result.
struct MatrixSeries {
  Labels labels;
  std::vector<Point> points;  // ascending t_ms
};

struct QueryResult {
  ValueType type = ValueType::kNone;  // kScalar, kVector, kMatrix or kString
  std::vector<VectorElement> vector;  // kVector
  std::vector<MatrixSeries> matrix;   // kMatrix (range queries, range vectors)
  int64_t t_ms = 0;                   // kScalar, kString
  double scalar = 0;                  // kScalar
  std::string text;                   // kString
};

}  // namespace strata::compat::promql
