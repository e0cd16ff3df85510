#pragma once

// TraceQL (ast.h) as SQL over strata's spans view (docs/format/spans-parquet.md),
// for the trace search of the Tempo API.
//
// Each spanset filter `{ ... }` becomes one boolean expression over a row of
// the spans view, never NULL (a condition on an attribute a span lacks is
// false, so `!(.a = 1)` holds for a span without `a`, as in Tempo). The
// query as a whole becomes a condition on the trace, over
// `bool_or(<filter i>)` of its spans: `{A} && {B}` needs a span matching A
// and a span matching B, `{A} || {B}` either. The spans a trace shows as
// matched are those matching any of the filters.
//
// Semantics (docs/tempo.md):
//  * `.x` looks in the span's attributes and its resource's; `span.x`,
//    `resource.x`, `instrumentation.x` in one set; `event.x` and `link.x` in
//    any of the span's events or links. The first occurrence of a key in a
//    set is its value.
//  * Strings compare as strings (=, !=, <, <=, >, >=), `=~` / `!~` match
//    the whole string (RE2 syntax); numbers compare with int and double
//    attributes alike; `nil` is "has no such attribute" (`= nil`) or "has
//    it" (`!= nil`); durations are nanoseconds.
//  * Intrinsics: name, status, statusMessage, kind, duration, span:id,
//    span:parentID (lowercase hex), trace:id, event:name,
//    event:timeSinceStart, link:traceID, link:spanID, instrumentation:name
//    and :version are columns of the span; rootName, rootServiceName and
//    traceDuration come from the trace, over its spans in the searched
//    window (the root is its span with no parent, the earliest if several):
//    the caller provides them as the columns kTraceRootName,
//    kTraceRootService and kTraceDurationNano when `needs_trace_columns`.
//
// Thread-safety: reentrant. Errors: InvalidArgument for a comparison that
// cannot hold (a value of the wrong type for an intrinsic: `status = 5`,
// `name > 1s`, a regular expression against a number, a bare intrinsic).

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "compat/traceql/ast.h"

namespace strata::compat::traceql {

// The trace-level columns a translation may name.
inline constexpr char kTraceRootName[] = "trace_root_name";
inline constexpr char kTraceRootService[] = "trace_root_service";
inline constexpr char kTraceDurationNano[] = "trace_duration_nano";

// A value the SQL binds: the caller passes them to the query pool as
// parameters $n, numbered after the ones it had before (SqlParams).
using SqlValue = std::variant<std::string, int64_t, double, bool>;

struct SqlParams {
  size_t before = 0;             // parameters the caller already binds ($1..$before)
  std::vector<SqlValue> values;  // $before+1, ...
};

struct TraceQLSql {
  // One boolean SQL expression per spanset filter, in the order they are
  // written.
  std::vector<std::string> filters;
  // The trace's condition, with `{i}` standing for bool_or(filter i) (the
  // caller aggregates as it needs: Trace() below writes it).
  std::string trace_condition;
  // Whether a filter names kTraceRootName, kTraceRootService or
  // kTraceDurationNano.
  bool needs_trace_columns = false;

  // trace_condition with each {i} replaced by `aggregate(<name i>)` where
  // name i is `column_prefix` + i: for a query that has computed the
  // filters as columns f0, f1, ... and aggregates them per trace.
  std::string Trace(const std::string& aggregate, const std::string& column_prefix) const;
  // Any filter holds: the spans a matching trace shows as matched, over
  // the same columns.
  std::string AnyFilter(const std::string& column_prefix) const;
};

// Appends the values the SQL binds to `params`.
[[nodiscard]] absl::StatusOr<TraceQLSql> TraceQLToSql(const Query& query, SqlParams* params);

// The SQL of one field's value for `| select(...)`: text (VARCHAR) of the
// value as the spans view holds it, NULL when absent. Never fails for a
// field the parser accepted.
std::string SelectedFieldSql(const Field& field, SqlParams* params);

}  // namespace strata::compat::traceql
