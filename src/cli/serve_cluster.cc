#include "cli/serve_cluster.h"

#include <signal.h>
#include <unistd.h>

#include <optional>
#include <random>
#include <string>
#include <utility>

#include "cluster/storage_local.h"
#include "common/runbook.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "spdlog/spdlog.h"
#include "storage/format/batch_id.h"
#include "storage/offload/data_file_resolver.h"

namespace strata::cli {

absl::Status ValidateCatalogUrl(const std::string& url) {
  if (url.rfind("postgres://", 0) != 0 && url.rfind("postgresql://", 0) != 0) {
    return absl::InvalidArgumentError(
        "--catalog must be a PostgreSQL URL: postgres://user[:password]@host:port/database");
  }
  return absl::OkStatus();
}

namespace {

// `status` with `runbook_ref` (RunbookRef(), written out at each call so
// runbook_test.cc checks its anchor) at the end of its message.
absl::Status WithRunbookRef(const absl::Status& status, const std::string& runbook_ref) {
  return absl::Status(status.code(), std::string(status.message()) + "; " + runbook_ref);
}

}  // namespace

absl::StatusOr<ServeCluster> JoinCluster(const ClusterSettings& settings,
                                         storage::Storage& storage) {
  const std::string& node_id = settings.node_id;
  if (storage.uploader() == nullptr) {
    return WithRunbookRef(absl::FailedPreconditionError("--catalog needs --object-store"),
                          RunbookRef("invalid-configuration"));
  }
  if (storage.resolver() == nullptr) {
    return WithRunbookRef(
        absl::FailedPreconditionError("--catalog: the storage engine reads no remote batches"),
        RunbookRef("invalid-configuration"));
  }
  // A restore of this node's batches cut short (the restore marker): the
  // directory is not the node's whole state, and nothing may start before
  // the restore is finished. Any failure to finish it leaves everything as
  // it is and names its own runbook section.
  absl::StatusOr<bool> restore_marked = storage.RestoreMarked();
  if (!restore_marked.ok()) {
    return WithRunbookRef(restore_marked.status(), RunbookRef("a-restore-was-cut-short"));
  }
  auto cut_short = [&](const absl::Status& status) {
    return WithRunbookRef(
        absl::Status(status.code(),
                     fmt::format("the data directory holds a restore of node id {}'s batches cut "
                                 "short (telemetry/RESTORING), which this start cannot finish: {}",
                                 node_id, std::string(status.message()))),
        RunbookRef("a-restore-was-cut-short"));
  };
  ServeCluster cluster;
  absl::StatusOr<std::unique_ptr<cluster::PostgresBatchCatalog>> catalog =
      cluster::PostgresBatchCatalog::Open(settings.url);
  if (!catalog.ok()) {
    if (*restore_marked) return cut_short(catalog.status());
    return WithRunbookRef(catalog.status(), RunbookRef("catalog-unusable"));
  }
  cluster.catalog = *std::move(catalog);
  cluster::ClusterMemberOptions options;
  options.node = node_id;
  std::random_device random;
  options.instance = fmt::format("{:08x}{:08x}", random(), random());
  options.address = settings.address;
  options.on_error = [](const absl::Status& status) {
    spdlog::warn("strata serve: batch catalog: {} (retried)", status.ToString());
  };
  options.on_claim_lost = [](const absl::Status& status) {
    spdlog::error("strata serve: {}; stopping", std::string(status.message()));
    kill(getpid(), SIGTERM);
  };
  options.keep_days = settings.keep_days;
  options.lease_time = settings.lease_time;
  options.delete_after = settings.delete_after;
  options.TEST_restore_step_delay = settings.TEST_restore_step_delay;
  // Batches of another node id here are taken for another server's
  // (adopted, read from the store, dropped when it no longer lists them):
  // refuse a directory that holds such a batch it has not uploaded.
  const std::optional<int> node = [&]() -> std::optional<int> {
    absl::StatusOr<int> parsed = storage::ParseBatchIdNode(node_id);
    return parsed.ok() ? std::optional<int>(*parsed) : std::nullopt;
  }();
  for (const auto& batch : storage.Pin()->batches()) {
    if (node.has_value() && batch->id().node() != *node &&
        !storage.resolver()->IsEvicted(batch->id())) {
      return WithRunbookRef(
          absl::InvalidArgumentError(fmt::format(
              "the data directory holds batch {} of node id {}, not this server's {}, and not "
              "adopted from the catalog; serve it with --node-id {}",
              batch->id().ToString(), batch->id().ToString().substr(21), node_id,
              batch->id().ToString().substr(21))),
          RunbookRef("batches-of-another-node-id"));
    }
  }
  STRATA_ASSIGN_OR_RETURN(cluster::ClusterMember::Local local, cluster::LocalOfStorage(storage));
  absl::StatusOr<std::unique_ptr<cluster::ClusterMember>> member =
      cluster::ClusterMember::Join(*cluster.catalog, std::move(local), std::move(options));
  if (!member.ok()) {
    if (absl::IsFailedPrecondition(member.status())) {
      return WithRunbookRef(member.status(), RunbookRef("node-id-in-use"));
    }
    if (*restore_marked) return cut_short(member.status());
    return WithRunbookRef(member.status(), RunbookRef("catalog-unusable"));
  }
  cluster.member = *std::move(member);
  // A data directory holding none of this node's batches (lost, or
  // replaced by an empty one) gets back those the catalog lists, rather
  // than the member taking them for replaced and removing them. When one
  // cannot be restored, none is kept and the start fails; the node id is
  // given up so that the next start need not wait out the lease.
  // A restore cut short before (the restore marker) is finished first,
  // whatever the directory holds.
  absl::StatusOr<size_t> restored = cluster.member->RestoreOwnBatches();
  if (!restored.ok()) {
    // Should giving it up fail, the claim ends after the lease time.
    (void)cluster.member->Leave();
    if (*restore_marked) return cut_short(restored.status());
    return WithRunbookRef(restored.status(), RunbookRef("restoring-this-nodes-batches-failed"));
  }
  if (*restore_marked) {
    spdlog::warn(
        "strata serve: finished the restore of node id {}'s batches cut short before: restored "
        "{} more from the batch catalog (read from the object store)",
        node_id, *restored);
  } else if (*restored > 0) {
    spdlog::warn(
        "strata serve: the data directory held no batch of node id {}; restored {} from the "
        "batch catalog (read from the object store)",
        node_id, *restored);
  }
  // One sync before the server answers: adopted batches the catalog no
  // longer lists (removed while this server was stopped, their objects
  // deleted after the grace) are dropped, and those listed since adopted,
  // so no query reads a batch whose objects are gone. Errors are retried
  // by the thread.
  if (absl::Status synced = cluster.member->Sync(); !synced.ok()) {
    spdlog::warn("strata serve: batch catalog: first sync: {} (retried)", synced.ToString());
  }
  // Compaction takes what the catalog lists, one server per day.
  if (settings.gate != nullptr) {
    cluster.gate = settings.gate;
    cluster.gate->Attach(cluster.member.get());
  }
  cluster.member->Start();
  return cluster;
}

}  // namespace strata::cli
