#pragma once

// Checks of what a node hands the batch catalog, made before anything is
// sent to the database, so the catalog holds only ids, days and meta.json
// that strata's own readers accept.
//
// Errors: InvalidArgument naming the value and what is wrong with it.
// Stateless and reentrant.

#include <string_view>

#include "absl/status/status.h"
#include "cluster/postgres_batch_catalog.h"

namespace strata::cluster {

[[nodiscard]] absl::Status CheckBatchId(std::string_view id);
[[nodiscard]] absl::Status CheckDay(std::string_view day);
// A node id: two characters 0-9 or a-z.
[[nodiscard]] absl::Status CheckNodeId(std::string_view node);
// A lease holder: "<node id>/<instance>", the instance 1 to 64 characters
// of [0-9a-z].
[[nodiscard]] absl::Status CheckHolder(std::string_view holder);
// The id and day well formed, bytes not negative, and meta_json a valid
// meta.json of that id and day.
[[nodiscard]] absl::Status CheckCatalogBatch(const CatalogBatch& batch);

}  // namespace strata::cluster
