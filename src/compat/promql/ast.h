#pragma once

// The parsed form of a PromQL expression (parser.h), as Prometheus 2.42
// parses it: selectors, literals, function calls, aggregations, unary and
// binary operators, subqueries. The parser has type-checked the tree, so
// every node's `type` is the type Prometheus gives it.
//
// Plain values; an Expr owns its children.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compat/promql/series_source.h"

namespace strata::compat::promql {

enum class ValueType { kNone, kScalar, kVector, kMatrix, kString };

// "scalar", "vector", "matrix", "string" (as in the API's resultType); the
// parser's messages use the longer names of Prometheus ("instant vector").
const char* ValueTypeName(ValueType type);
const char* ValueTypeDocName(ValueType type);

enum class BinaryOp {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kPow,
  kAtan2,
  kEq,
  kNe,
  kGt,
  kLt,
  kGe,
  kLe,
  kAnd,
  kOr,
  kUnless,
};

bool IsComparison(BinaryOp op);
bool IsSetOperator(BinaryOp op);
const char* BinaryOpText(BinaryOp op);

enum class AggregateOp {
  kSum,
  kAvg,
  kMin,
  kMax,
  kCount,
  kGroup,
  kStddev,
  kStdvar,
  kTopk,
  kBottomk,
  kQuantile,
  kCountValues,
};

const char* AggregateOpText(AggregateOp op);

enum class Cardinality { kOneToOne, kManyToOne, kOneToMany, kManyToMany };

// How the two sides of a binary operation between vectors are matched.
struct VectorMatching {
  Cardinality card = Cardinality::kOneToOne;
  bool on = false;                   // on(...) rather than ignoring(...)
  std::vector<std::string> labels;   // the on/ignoring list
  std::vector<std::string> include;  // group_left/group_right(...) labels
};

// The `@` modifier.
enum class AtKind { kNone, kTime, kStart, kEnd };

struct Function;  // functions.h

struct Expr {
  enum class Kind {
    kNumber,
    kString,
    kVectorSelector,
    kMatrixSelector,  // `selector` holds the vector selector, `range_ms` the range
    kSubquery,        // `lhs` is the inner expression
    kCall,
    kAggregate,
    kUnary,  // unary minus (unary plus is dropped); `lhs` the operand
    kBinary,
    kParen,  // `lhs`
  };

  Kind kind = Kind::kNumber;
  ValueType type = ValueType::kNone;

  double number = 0;  // kNumber
  std::string text;   // kString

  // kVectorSelector (and the inner selector of kMatrixSelector).
  std::string metric_name;             // empty when only matchers name it
  std::vector<LabelMatcher> matchers;  // includes __name__="metric_name"
  int64_t offset_ms = 0;               // also for kSubquery
  AtKind at = AtKind::kNone;           // also for kSubquery
  int64_t at_ms = 0;                   // for AtKind::kTime

  int64_t range_ms = 0;  // kMatrixSelector, kSubquery
  int64_t step_ms = 0;   // kSubquery; 0: the query's default step

  const Function* function = nullptr;  // kCall
  std::vector<std::unique_ptr<Expr>> args;

  // kAggregate: `lhs` the aggregated expression, `param` the parameter.
  AggregateOp aggregate = AggregateOp::kSum;
  std::unique_ptr<Expr> param;
  std::vector<std::string> grouping;
  bool without = false;

  // kBinary: `lhs` and `rhs`.
  BinaryOp op = BinaryOp::kAdd;
  bool return_bool = false;
  bool has_matching = false;  // the two sides are vectors
  VectorMatching matching;

  std::unique_ptr<Expr> selector;  // kMatrixSelector
  std::unique_ptr<Expr> lhs;
  std::unique_ptr<Expr> rhs;
};

// The expression back as PromQL text (for messages and tests; not
// necessarily the text it was parsed from).
std::string ExprToString(const Expr& expr);

}  // namespace strata::compat::promql
