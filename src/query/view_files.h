#pragma once

// The Parquet files a query's views read, taken from a pinned Snapshot:
// for every batch, in id order, the path of each table file it has.
// Nothing else names files for DuckDB, so queries never glob and never see
// a file outside the Snapshot they pinned.
//
// Thread-safety: reentrant. Errors: none.

#include "query/query_pool.h"
#include "storage/catalog.h"

namespace strata::query {

// ViewFiles whose sequence is the Snapshot's.
ViewFiles ViewFilesOf(const storage::Snapshot& snapshot);

}  // namespace strata::query
