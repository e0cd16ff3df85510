#pragma once

// The cluster member's calls (ClusterMember::Local) into a storage engine
// opened with StorageOptions::shared_catalog: what `strata serve --catalog`
// gives its member, and what tests of the member over a real data
// directory and object store use.

#include "absl/status/statusor.h"
#include "cluster/cluster_member.h"
#include "storage/storage.h"

namespace strata::cluster {

// `storage` must outlive the result. FailedPrecondition when it has no
// uploader (no object store) or reads no remote batches (no shared
// catalog).
[[nodiscard]] absl::StatusOr<ClusterMember::Local> LocalOfStorage(storage::Storage& storage);

}  // namespace strata::cluster
