#include "compat/traceql/to_sql.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/status_macros.h"

namespace strata::compat::traceql {
namespace {

std::string Param(SqlParams* params, SqlValue value) {
  params->values.push_back(std::move(value));
  return absl::StrCat("$", params->before + params->values.size());
}

struct OpSpelling {
  FieldOp op;
  const char* sql;      // for =, !=, <, <=, >, >=
  const char* traceql;  // as written, for messages
};

constexpr OpSpelling kOps[] = {
    {FieldOp::kEq, "=", "="},     {FieldOp::kNe, "<>", "!="},       {FieldOp::kGt, ">", ">"},
    {FieldOp::kGe, ">=", ">="},   {FieldOp::kLt, "<", "<"},         {FieldOp::kLe, "<=", "<="},
    {FieldOp::kRegex, "=", "=~"}, {FieldOp::kNotRegex, "<>", "!~"},
};

const OpSpelling& Spelling(FieldOp op) {
  for (const OpSpelling& spelling : kOps) {
    if (spelling.op == op) return spelling;
  }
  return kOps[0];
}

const char* SqlOp(FieldOp op) { return Spelling(op).sql; }
const char* OpText(FieldOp op) { return Spelling(op).traceql; }

bool IsRegex(FieldOp op) { return op == FieldOp::kRegex || op == FieldOp::kNotRegex; }
bool IsEquality(FieldOp op) { return op == FieldOp::kEq || op == FieldOp::kNe; }

// `value op param` for a string value (comparison or whole-string match).
std::string StringCompare(const std::string& value, FieldOp op, const std::string& param) {
  if (op == FieldOp::kRegex) return absl::StrCat("regexp_full_match(", value, ", ", param, ")");
  if (op == FieldOp::kNotRegex) {
    return absl::StrCat("NOT regexp_full_match(", value, ", ", param, ")");
  }
  return absl::StrCat(value, " ", SqlOp(op), " ", param);
}

absl::Status Mismatch(const Field& field, FieldOp op, const Static& value, std::string_view want) {
  return absl::InvalidArgumentError(absl::StrCat("TraceQL: ", field.text, " ", OpText(op), " ",
                                                 value.text, ": ", field.text, " takes ",
                                                 std::string(want)));
}

std::string Never(std::string condition) {
  return absl::StrCat("coalesce(", condition, ", false)");
}

// The value lists' prefixes of the attribute sets a scope looks in.
std::vector<std::string> Prefixes(Scope scope) {
  switch (scope) {
    case Scope::kUnscoped:
      return {"attr", "resource_attr"};
    case Scope::kSpan:
      return {"attr"};
    case Scope::kResource:
      return {"resource_attr"};
    case Scope::kInstrumentation:
      return {"scope_attr"};
    case Scope::kEvent:
      return {"event_attr"};
    case Scope::kLink:
      return {"link_attr"};
  }
  return {};
}

bool IsListScope(Scope scope) { return scope == Scope::kEvent || scope == Scope::kLink; }

class Translator {
 public:
  explicit Translator(SqlParams* params) : params_(params) {}

  bool needs_trace_columns() const { return needs_trace_columns_; }

  absl::StatusOr<std::string> Condition(const FieldExpr& node) {
    switch (node.kind) {
      case FieldExpr::Kind::kStatic:
        if (node.value.kind == StaticKind::kBool) return node.value.bool_value ? "true" : "false";
        return absl::InvalidArgumentError(
            absl::StrCat("TraceQL: ", node.value.text, " is not a condition"));
      case FieldExpr::Kind::kField:
        if (node.field.intrinsic != Intrinsic::kNone) {
          return absl::InvalidArgumentError(absl::StrCat(
              "TraceQL: ", node.field.text, " alone is not a condition; compare it with a value"));
        }
        return Attribute(node.field, FieldOp::kEq,
                         Static{.kind = StaticKind::kBool, .text = "true", .bool_value = true});
      case FieldExpr::Kind::kUnary: {
        STRATA_ASSIGN_OR_RETURN(const std::string inner, Condition(*node.lhs));
        return absl::StrCat("(NOT ", inner, ")");
      }
      case FieldExpr::Kind::kBinary:
        break;
    }
    if (node.op == FieldOp::kAnd || node.op == FieldOp::kOr) {
      STRATA_ASSIGN_OR_RETURN(const std::string lhs, Condition(*node.lhs));
      STRATA_ASSIGN_OR_RETURN(const std::string rhs, Condition(*node.rhs));
      return absl::StrCat("(", lhs, node.op == FieldOp::kAnd ? " AND " : " OR ", rhs, ")");
    }
    // The parser leaves only `field op value` here in queries it accepts.
    if (node.lhs->kind != FieldExpr::Kind::kField || node.rhs->kind != FieldExpr::Kind::kStatic) {
      return absl::InvalidArgumentError("TraceQL: a comparison needs a field and a value");
    }
    const Field& field = node.lhs->field;
    const Static& value = node.rhs->value;
    if (field.intrinsic == Intrinsic::kNone) return Attribute(field, node.op, value);
    return IntrinsicCondition(field, node.op, value);
  }

 private:
  std::string Bind(SqlValue value) { return Param(params_, std::move(value)); }

  // ---- intrinsics ----

  absl::StatusOr<std::string> IntrinsicCondition(const Field& field, FieldOp op,
                                                 const Static& value) {
    switch (field.intrinsic) {
      case Intrinsic::kName:
        return StringColumn("name", field, op, value);
      case Intrinsic::kStatusMessage:
        return StringColumn("status_message", field, op, value);
      case Intrinsic::kScopeName:
        return StringColumn("scope_name", field, op, value);
      case Intrinsic::kScopeVersion:
        return StringColumn("scope_version", field, op, value);
      case Intrinsic::kSpanId:
        return IdColumn("span_id", field, op, value);
      case Intrinsic::kParentId:
        return IdColumn("parent_span_id", field, op, value);
      case Intrinsic::kTraceId:
        return IdColumn("trace_id", field, op, value);
      case Intrinsic::kRootName:
        needs_trace_columns_ = true;
        return StringColumn(kTraceRootName, field, op, value);
      case Intrinsic::kRootServiceName:
        needs_trace_columns_ = true;
        return StringColumn(kTraceRootService, field, op, value);
      case Intrinsic::kStatus:
        return EnumColumn("status_code", StaticKind::kStatus, field, op, value,
                          "error, ok or unset");
      case Intrinsic::kKind:
        return EnumColumn("kind", StaticKind::kKind, field, op, value,
                          "unspecified, internal, server, client, producer or consumer");
      case Intrinsic::kDuration:
        return DurationValue("duration_nano", field, op, value);
      case Intrinsic::kTraceDuration:
        needs_trace_columns_ = true;
        return DurationValue(kTraceDurationNano, field, op, value);
      case Intrinsic::kEventName: {
        STRATA_ASSIGN_OR_RETURN(const std::string each, StringColumn("x", field, op, value));
        return Any("event_name", each);
      }
      case Intrinsic::kEventTimeSinceStart: {
        STRATA_ASSIGN_OR_RETURN(
            const std::string each,
            DurationValue("(CAST(x AS HUGEINT) - start_time_unix_nano)", field, op, value));
        return Any("event_time_unix_nano", each);
      }
      case Intrinsic::kLinkTraceId: {
        STRATA_ASSIGN_OR_RETURN(const std::string each, IdColumn("x", field, op, value));
        return Any("link_trace_id", each);
      }
      case Intrinsic::kLinkSpanId: {
        STRATA_ASSIGN_OR_RETURN(const std::string each, IdColumn("x", field, op, value));
        return Any("link_span_id", each);
      }
      case Intrinsic::kNone:
        break;
    }
    return absl::InternalError("TraceQL: an intrinsic without a translation");
  }

  // Some element x of `list` satisfies `each`.
  static std::string Any(const std::string& list, const std::string& each) {
    return Never(absl::StrCat("len(list_filter(", list, ", x -> ", each, ")) > 0"));
  }

  absl::StatusOr<std::string> StringColumn(const std::string& column, const Field& field,
                                           FieldOp op, const Static& value) {
    if (value.kind == StaticKind::kNil && IsEquality(op)) {
      return absl::StrCat(column, op == FieldOp::kEq ? " IS NULL" : " IS NOT NULL");
    }
    if (value.kind != StaticKind::kString) return Mismatch(field, op, value, "a string");
    return Never(StringCompare(column, op, Bind(value.text)));
  }

  // Ids compare as lowercase hex.
  absl::StatusOr<std::string> IdColumn(const std::string& column, const Field& field, FieldOp op,
                                       const Static& value) {
    if (value.kind == StaticKind::kNil && IsEquality(op)) {
      return absl::StrCat(column, op == FieldOp::kEq ? " IS NULL" : " IS NOT NULL");
    }
    if (value.kind != StaticKind::kString) return Mismatch(field, op, value, "a hex string");
    const std::string text = IsRegex(op) ? value.text : absl::AsciiStrToLower(value.text);
    return Never(StringCompare(absl::StrCat("lower(hex(", column, "))"), op, Bind(text)));
  }

  absl::StatusOr<std::string> EnumColumn(const std::string& column, StaticKind kind,
                                         const Field& field, FieldOp op, const Static& value,
                                         std::string_view names) {
    if (value.kind != kind || !IsEquality(op)) {
      return Mismatch(field, op, value, absl::StrCat("= or != with ", std::string(names)));
    }
    return Never(absl::StrCat(column, " ", SqlOp(op), " ", Bind(value.int_value)));
  }

  absl::StatusOr<std::string> DurationValue(const std::string& column, const Field& field,
                                            FieldOp op, const Static& value) {
    if (IsRegex(op)) return Mismatch(field, op, value, "a duration");
    if (value.kind == StaticKind::kDuration || value.kind == StaticKind::kInt) {
      return Never(absl::StrCat(column, " ", SqlOp(op), " ", Bind(value.int_value)));
    }
    if (value.kind == StaticKind::kFloat) {
      return Never(absl::StrCat(column, " ", SqlOp(op), " ", Bind(value.float_value)));
    }
    return Mismatch(field, op, value, "a duration such as 100ms");
  }

  // ---- attributes ----

  absl::StatusOr<std::string> Attribute(const Field& field, FieldOp op, const Static& value) {
    switch (value.kind) {
      case StaticKind::kStatus:
      case StaticKind::kKind:
        return absl::InvalidArgumentError(absl::StrCat(
            "TraceQL: ", value.text, " is a value of ",
            value.kind == StaticKind::kStatus ? "status" : "kind", ", not of ", field.text));
      case StaticKind::kBool:
      case StaticKind::kNil:
        if (!IsEquality(op)) return Mismatch(field, op, value, "= or != with true, false or nil");
        break;
      case StaticKind::kInt:
      case StaticKind::kFloat:
      case StaticKind::kDuration:
        if (IsRegex(op)) return Mismatch(field, op, value, "a string after =~ and !~");
        break;
      case StaticKind::kString:
        break;
    }
    // `resource.service.name` is a column of its own (the same value,
    // dictionary-encoded and read without the attribute lists).
    if (field.scope == Scope::kResource && field.name == "service.name" &&
        value.kind == StaticKind::kString) {
      return Never(StringCompare("service_name", op, Bind(value.text)));
    }
    const std::string key = Bind(field.name);
    std::vector<std::string> terms;
    for (const std::string& prefix : Prefixes(field.scope)) {
      if (IsListScope(field.scope)) {
        terms.push_back(ListAttribute(prefix, key, op, value));
      } else {
        terms.push_back(SetAttribute(prefix, key, op, value));
      }
    }
    std::string out = terms[0];
    for (size_t i = 1; i < terms.size(); ++i) out = absl::StrCat("(", out, " OR ", terms[i], ")");
    return out;
  }

  // The first occurrence of `key` in one attribute set.
  std::string SetAttribute(const std::string& prefix, const std::string& key, FieldOp op,
                           const Static& value) {
    const std::string position = absl::StrCat("list_position(", prefix, "_keys, ", key, ")");
    if (value.kind == StaticKind::kNil) {
      return absl::StrCat("(coalesce(", position, ", 0) ", op == FieldOp::kEq ? "=" : ">", " 0)");
    }
    return Never(Compare(prefix, position, op, value));
  }

  // Any occurrence of `key` in the concatenated sets of events or links.
  std::string ListAttribute(const std::string& prefix, const std::string& key, FieldOp op,
                            const Static& value) {
    const std::string keys = absl::StrCat(prefix, "_keys");
    if (value.kind == StaticKind::kNil) {
      return absl::StrCat("(", op == FieldOp::kEq ? "NOT " : "", "coalesce(list_contains(", keys,
                          ", ", key, "), false))");
    }
    return Never(absl::StrCat("len(list_filter(range(1, len(", keys, ") + 1), i -> ", keys,
                              "[i] = ", key, " AND ", Compare(prefix, "i", op, value), ")) > 0"));
  }

  // The element at `index` of a set's value lists against `value`.
  std::string Compare(const std::string& prefix, const std::string& index, FieldOp op,
                      const Static& value) {
    auto at = [&](std::string_view list) {
      return absl::StrCat(prefix, "_", std::string(list), "[", index, "]");
    };
    switch (value.kind) {
      case StaticKind::kString:
        return StringCompare(at("str"), op, Bind(value.text));
      case StaticKind::kBool:
        return absl::StrCat(at("bool"), " ", SqlOp(op), " ", Bind(value.bool_value));
      case StaticKind::kInt:
      case StaticKind::kDuration: {
        const std::string number = Bind(value.int_value);
        return absl::StrCat("(", at("int"), " ", SqlOp(op), " ", number, " OR ", at("double"), " ",
                            SqlOp(op), " ", number, ")");
      }
      case StaticKind::kFloat: {
        const std::string number = Bind(value.float_value);
        return absl::StrCat("(", at("int"), " ", SqlOp(op), " ", number, " OR ", at("double"), " ",
                            SqlOp(op), " ", number, ")");
      }
      default:
        return "false";
    }
  }

  SqlParams* params_;
  bool needs_trace_columns_ = false;
};

// Collects the filters left to right and writes the trace condition.
absl::StatusOr<std::string> Spansets(const SpansetExpr& node, Translator& translator,
                                     std::vector<std::string>* filters) {
  if (node.kind == SpansetExpr::Kind::kFilter) {
    std::string condition = "true";
    if (node.condition != nullptr) {
      STRATA_ASSIGN_OR_RETURN(condition, translator.Condition(*node.condition));
    }
    filters->push_back(std::move(condition));
    return absl::StrCat("{", filters->size() - 1, "}");
  }
  STRATA_ASSIGN_OR_RETURN(const std::string lhs, Spansets(*node.lhs, translator, filters));
  STRATA_ASSIGN_OR_RETURN(const std::string rhs, Spansets(*node.rhs, translator, filters));
  return absl::StrCat("(", lhs, node.kind == SpansetExpr::Kind::kAnd ? " AND " : " OR ", rhs, ")");
}

}  // namespace

std::string TraceQLSql::Trace(const std::string& aggregate,
                              const std::string& column_prefix) const {
  std::vector<std::pair<std::string, std::string>> replacements;
  for (size_t i = 0; i < filters.size(); ++i) {
    replacements.emplace_back(absl::StrCat("{", i, "}"),
                              absl::StrCat(aggregate, "(", column_prefix, i, ")"));
  }
  return absl::StrReplaceAll(trace_condition, replacements);
}

std::string TraceQLSql::AnyFilter(const std::string& column_prefix) const {
  std::string out;
  for (size_t i = 0; i < filters.size(); ++i) {
    absl::StrAppend(&out, i == 0 ? "(" : " OR ", column_prefix, i);
  }
  absl::StrAppend(&out, ")");
  return out;
}

absl::StatusOr<TraceQLSql> TraceQLToSql(const Query& query, SqlParams* params) {
  if (query.spansets == nullptr) return absl::InvalidArgumentError("TraceQL: an empty query");
  Translator translator(params);
  TraceQLSql out;
  STRATA_ASSIGN_OR_RETURN(out.trace_condition, Spansets(*query.spansets, translator, &out.filters));
  out.needs_trace_columns = translator.needs_trace_columns();
  return out;
}

std::string SelectedFieldSql(const Field& field, SqlParams* params) {
  auto hex = [](const std::string& column) { return absl::StrCat("lower(hex(", column, "))"); };
  switch (field.intrinsic) {
    case Intrinsic::kName:
      return "name";
    case Intrinsic::kStatus:
      return "CAST(status_code AS VARCHAR)";
    case Intrinsic::kStatusMessage:
      return "status_message";
    case Intrinsic::kKind:
      return "CAST(kind AS VARCHAR)";
    case Intrinsic::kDuration:
      return "CAST(duration_nano AS VARCHAR)";
    case Intrinsic::kSpanId:
      return hex("span_id");
    case Intrinsic::kParentId:
      return hex("parent_span_id");
    case Intrinsic::kTraceId:
      return hex("trace_id");
    case Intrinsic::kScopeName:
      return "scope_name";
    case Intrinsic::kScopeVersion:
      return "scope_version";
    case Intrinsic::kEventName:
      return "array_to_string(event_name, ',')";
    case Intrinsic::kRootName:
    case Intrinsic::kRootServiceName:
    case Intrinsic::kTraceDuration:
    case Intrinsic::kEventTimeSinceStart:
    case Intrinsic::kLinkTraceId:
    case Intrinsic::kLinkSpanId:
      return "NULL";
    case Intrinsic::kNone:
      break;
  }
  if (IsListScope(field.scope)) return "NULL";
  const std::string key = Param(params, field.name);
  std::string out = "coalesce(";
  bool first = true;
  for (const std::string& prefix : Prefixes(field.scope)) {
    const std::string at = absl::StrCat("[list_position(", prefix, "_keys, ", key, ")]");
    absl::StrAppend(&out, first ? "" : ", ", prefix, "_str", at, ", CAST(", prefix, "_int", at,
                    " AS VARCHAR), CAST(", prefix, "_double", at, " AS VARCHAR), CAST(", prefix,
                    "_bool", at, " AS VARCHAR)");
    first = false;
  }
  absl::StrAppend(&out, ")");
  return out;
}

}  // namespace strata::compat::traceql
