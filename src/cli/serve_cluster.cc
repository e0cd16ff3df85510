#include "cli/serve_cluster.h"

#include <signal.h>
#include <unistd.h>

#include <random>
#include <utility>

#include "common/status_macros.h"
#include "fmt/format.h"
#include "spdlog/spdlog.h"
#include "storage/format/batch_id.h"
#include "storage/offload/data_file_resolver.h"
#include "storage/offload/uploader.h"

namespace strata::cli {

absl::Status ValidateCatalogUrl(const std::string& url) {
  if (url.rfind("postgres://", 0) != 0 && url.rfind("postgresql://", 0) != 0) {
    return absl::InvalidArgumentError(
        "--catalog must be a PostgreSQL URL: postgres://user[:password]@host:port/database");
  }
  return absl::OkStatus();
}

absl::StatusOr<ServeCluster> JoinCluster(const ClusterSettings& settings,
                                         storage::Storage& storage) {
  const std::string& node_id = settings.node_id;
  storage::Uploader* uploader = storage.uploader();
  if (uploader == nullptr) {
    return absl::FailedPreconditionError("--catalog needs --object-store");
  }
  ServeCluster cluster;
  STRATA_ASSIGN_OR_RETURN(cluster.catalog, cluster::PostgresBatchCatalog::Open(settings.url));
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
  const storage::DataFileResolver* resolver = storage.resolver();
  if (resolver == nullptr) {
    return absl::FailedPreconditionError("--catalog: the storage engine reads no remote batches");
  }
  // Batches of another node id here are taken for another server's
  // (adopted, read from the store, dropped when it no longer lists them):
  // refuse a directory that holds such a batch it has not uploaded.
  const std::optional<int> node = [&]() -> std::optional<int> {
    absl::StatusOr<int> parsed = storage::ParseBatchIdNode(node_id);
    return parsed.ok() ? std::optional<int>(*parsed) : std::nullopt;
  }();
  for (const auto& batch : storage.Pin()->batches()) {
    if (node.has_value() && batch->id().node() != *node && !resolver->IsEvicted(batch->id())) {
      return absl::InvalidArgumentError(fmt::format(
          "the data directory holds batch {} of node id {}, not this server's {}, and not "
          "adopted from the catalog; serve it with --node-id {}",
          batch->id().ToString(), batch->id().ToString().substr(21), node_id,
          batch->id().ToString().substr(21)));
    }
  }
  objectstore::BatchStore& store = resolver->store();
  cluster::ClusterMember::Local local{
      .pin = [&storage] { return storage.Pin(); },
      .uploaded = [uploader](const storage::BatchId& id) { return uploader->IsUploaded(id); },
      .adopt =
          [&storage](const std::string& meta_json) { return storage.AdoptRemoteBatch(meta_json); },
      .restore =
          [&storage](const std::string& meta_json) { return storage.RestoreOwnBatch(meta_json); },
      .drop = [&storage](const storage::BatchId& id) { return storage.DropRemoteBatch(id); },
      .stored_batches = [&store] { return storage::ListStoredBatches(store); },
      .delete_objects =
          [&store](const storage::BatchId& id, const std::string& day) {
            return storage::DeleteBatchObjects(store, id, day);
          },
  };
  STRATA_ASSIGN_OR_RETURN(
      cluster.member,
      cluster::ClusterMember::Join(*cluster.catalog, std::move(local), std::move(options)));
  // A data directory holding none of this node's batches (lost, or
  // replaced by an empty one) gets back those the catalog lists, rather
  // than the member taking them for replaced and removing them.
  STRATA_ASSIGN_OR_RETURN(const size_t restored, cluster.member->RestoreOwnBatches());
  if (restored > 0) {
    spdlog::warn(
        "strata serve: the data directory held no batch of node id {}; restored {} from the "
        "batch catalog (read from the object store)",
        node_id, restored);
  }
  // One sync before the server answers: adopted batches the catalog no
  // longer lists (removed while this server was stopped, their objects
  // deleted after the grace) are dropped, and those listed since adopted,
  // so no query reads a batch whose objects are gone. Errors are retried
  // by the thread.
  if (absl::Status synced = cluster.member->Sync(); !synced.ok()) {
    spdlog::warn("strata serve: batch catalog: first sync: {} (retried)", synced.ToString());
  }
  cluster.member->Start();
  return cluster;
}

}  // namespace strata::cli
