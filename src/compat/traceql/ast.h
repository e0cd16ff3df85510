#pragma once

// The parsed form of a TraceQL query (parser.h), for the part of the
// language strata answers: spanset filters `{ ... }` combined with `&&` and
// `||`, conditions over intrinsics and attributes inside them, and
// `| select(...)`. docs/tempo.md lists what is answered and what is refused.
//
// Plain values; a Query owns its whole tree.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace strata::compat::traceql {

// Where an attribute is looked up.
enum class Scope {
  kUnscoped,         // `.x`: the span's attributes, then its resource's
  kSpan,             // `span.x`
  kResource,         // `resource.x`
  kEvent,            // `event.x`: any of the span's events
  kLink,             // `link.x`: any of the span's links
  kInstrumentation,  // `instrumentation.x`: the instrumentation scope's attributes
};

// The intrinsics, in any of the spellings TraceQL has for them (`name` and
// `span:name` are both kName).
enum class Intrinsic {
  kNone,  // an attribute
  kName,
  kStatus,
  kStatusMessage,
  kKind,
  kDuration,
  kSpanId,
  kParentId,
  kTraceId,
  kRootName,
  kRootServiceName,
  kTraceDuration,
  kEventName,
  kEventTimeSinceStart,
  kLinkTraceId,
  kLinkSpanId,
  kScopeName,
  kScopeVersion,
};

// An intrinsic or an attribute, with the text it was written as (for error
// messages and for naming selected attributes in answers).
struct Field {
  Intrinsic intrinsic = Intrinsic::kNone;
  Scope scope = Scope::kUnscoped;  // attributes only
  std::string name;                // attributes only: the key, unquoted
  std::string text;                // as written
};

enum class StaticKind { kString, kInt, kFloat, kBool, kNil, kDuration, kStatus, kKind };

// Status and kind values, numbered as OTLP numbers them.
inline constexpr int kStatusUnset = 0;
inline constexpr int kStatusOk = 1;
inline constexpr int kStatusError = 2;

struct Static {
  StaticKind kind = StaticKind::kNil;
  std::string text;           // kString: the value, unescaped; otherwise as written
  int64_t int_value = 0;      // kInt; kDuration in nanoseconds; kStatus, kKind: the number
  double float_value = 0;     // kFloat
  bool bool_value = false;    // kBool
  bool int_overflow = false;  // kInt written larger than int64 holds
};

enum class FieldOp {
  kEq,
  kNe,
  kGt,
  kGe,
  kLt,
  kLe,
  kRegex,     // =~
  kNotRegex,  // !~
  kAnd,
  kOr,
  kNot,  // unary
};

// A condition inside `{ ... }`.
struct FieldExpr {
  enum class Kind {
    kField,   // a bare field: `{ .flag }`
    kStatic,  // a bare value: `{ true }`
    kUnary,   // `!` applied to lhs
    kBinary,  // lhs op rhs
  };
  Kind kind = Kind::kStatic;
  Field field;
  Static value;
  FieldOp op = FieldOp::kEq;
  std::unique_ptr<FieldExpr> lhs;
  std::unique_ptr<FieldExpr> rhs;
};

// Spanset filters combined into the traces a query selects.
struct SpansetExpr {
  enum class Kind {
    kFilter,  // `{ condition }`; condition null for `{ }` (every span)
    kAnd,     // both sides match spans of the trace
    kOr,      // either side does
  };
  Kind kind = Kind::kFilter;
  std::unique_ptr<FieldExpr> condition;
  std::unique_ptr<SpansetExpr> lhs;
  std::unique_ptr<SpansetExpr> rhs;
};

struct Query {
  std::unique_ptr<SpansetExpr> spansets;
  // The fields of `| select(...)` stages, in order.
  std::vector<Field> select;
};

}  // namespace strata::compat::traceql
