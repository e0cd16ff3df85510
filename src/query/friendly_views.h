#pragma once

// The friendly columns of the SQL views `spans`, `logs` and `metrics`
// (docs/sql.md): ids as lowercase hex, times as TIMESTAMP_NS, enum names,
// bodies, attribute sets, events, links and exemplars as JSON, beside the
// storage columns, which the views keep unchanged. Each is an expression
// over the storage columns and strata's scalar functions (otlp_value_json,
// otlp_attributes_json, ...; duckdb_engine.h), computed only when a query
// names it.
//
// Thread-safety: reentrant. Errors: none.

#include <string>
#include <string_view>

namespace strata::query {

// ", <expression> AS <name>, ..." for view `view` ("spans", "logs" or
// "metrics"), to follow "SELECT *" over the view's storage columns.
std::string FriendlyColumnsSql(std::string_view view);

}  // namespace strata::query
