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
#include "cluster/compaction_gate.h"
#include "cluster/postgres_batch_catalog.h"
#include "storage/storage.h"

namespace strata::cli {

// Declared in this order so the member (and its thread) goes first; the
// gate lets go of the member before that.
struct ServeCluster {
  ServeCluster() = default;
  ServeCluster(ServeCluster&&) = default;
  ServeCluster& operator=(ServeCluster&&) = default;
  ~ServeCluster() {
    if (gate != nullptr) gate->Detach();
  }
  std::unique_ptr<cluster::PostgresBatchCatalog> catalog;
  std::unique_ptr<cluster::ClusterMember> member;
  std::shared_ptr<cluster::ClusterCompactionGate> gate;
};

// Checks the --catalog URL's form (InvalidArgument otherwise).
[[nodiscard]] absl::Status ValidateCatalogUrl(const std::string& url);

// What `serve` tells JoinCluster.
struct ClusterSettings {
  std::string url;                                  // --catalog
  std::string node_id;                              // --node-id
  std::string address;                              // the API's, for other servers and people
  absl::Duration lease_time = absl::Seconds(30);    // --catalog-lease-sec
  absl::Duration delete_after = absl::Minutes(10);  // --catalog-delete-after-sec
  int keep_days = 0;                                // --retention-days (0: all)
  // The storage engine's compaction gate (StorageOptions::maintenance.gate),
  // attached to the member once its first sync listed the catalog.
  std::shared_ptr<cluster::ClusterCompactionGate> gate;
  // Test-only (ClusterMemberOptions::TEST_restore_step_delay): the
  // environment's STRATA_TEST_RESTORE_STEP_DELAY_MS.
  absl::Duration TEST_restore_step_delay = absl::ZeroDuration();
};

// Opens the catalog at `settings.url`, claims the node id for this process
// and starts the member's thread over `storage` (opened with
// shared_catalog: its uploader registers this node's batches,
// AdoptRemoteBatch reads the others'). A lost claim sends this process
// SIGTERM. Errors (their messages end with the runbook section that
// explains them): the catalog's; FailedPrecondition for a node id in use;
// InvalidArgument for a directory holding another node id's batches; the
// restore's (ClusterMember::RestoreOwnBatches) for a directory holding
// none of this node's, whose batches could not be restored. A directory
// with the restore marker (a restore cut short) gets its restore finished
// before anything syncs; when the catalog or the store cannot be reached
// for it, the start fails, changing nothing, with the catalog's or the
// store's error and the runbook section a-restore-was-cut-short.
[[nodiscard]] absl::StatusOr<ServeCluster> JoinCluster(const ClusterSettings& settings,
                                                       storage::Storage& storage);

}  // namespace strata::cli
