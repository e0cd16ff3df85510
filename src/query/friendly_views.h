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

// ", <expression> AS <name>, ..." for view `view` ("spans", "logs",
// "metrics" or "rollups"), to follow "SELECT *" over the view's storage
// columns.
std::string FriendlyColumnsSql(std::string_view view);

// The macros over the rollups view's histograms (docs/sql.md, "Service
// health"): rollup_bucket_value(index), the duration a bucket reports
// (rollups-parquet.md), and rollup_quantile(indexes, counts, q), the
// nearest-rank quantile of the buckets listed (repeats added up; q
// rounded to thousandths, as the API computes it), NULL without counts.
std::string RollupMacrosSql();

// The rows of the rollups view as docs/sql.md lists them, from `stored`, a
// relation with rollups.parquet's columns (meta.json format 3) plus
// `filename` and `file_row_number` (read_parquet's): an endpoint row
// that points at an operation row (measures_row) gets that row's
// measures, and each histogram is given as the list of its nonzero
// buckets' indexes (`hist_index`) beside their counts.
std::string RollupsResolvedSql(std::string_view stored);

}  // namespace strata::query
