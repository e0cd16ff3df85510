#pragma once

// `strata serve --catalog postgres://...`: the batch catalog several servers
// share (docs/format/postgres-catalog.md) and this server's membership in
// it (cluster/cluster_member.h). Kept out of serve.cc, which only calls
// JoinCluster() once the storage engine is open and stops the member
// before the engine closes.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "cluster/cluster_member.h"
#include "cluster/postgres_batch_catalog.h"
#include "storage/storage.h"

namespace strata::cli {

// Declared in this order so the member (and its thread) goes first.
struct ServeCluster {
  std::unique_ptr<cluster::PostgresBatchCatalog> catalog;
  std::unique_ptr<cluster::ClusterMember> member;
};

// Checks the --catalog URL's form (InvalidArgument otherwise).
[[nodiscard]] absl::Status ValidateCatalogUrl(const std::string& url);

// Opens the catalog at `url`, claims `node_id` for this process and starts
// the member's thread over `storage` (opened with shared_catalog: its
// uploader registers this node's batches, AdoptRemoteBatch reads the
// others'). `address` is the API's, for other servers and people;
// `keep_days` the retention (0: all). A lost claim sends this process
// SIGTERM. Errors: the catalog's; FailedPrecondition for a node id in use.
[[nodiscard]] absl::StatusOr<ServeCluster> JoinCluster(const std::string& url,
                                                       const std::string& node_id,
                                                       const std::string& address,
                                                       absl::Duration lease_time, int keep_days,
                                                       storage::Storage& storage);

}  // namespace strata::cli
