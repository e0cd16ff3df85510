#include "cluster/storage_local.h"

#include <string>
#include <vector>

#include "storage/offload/data_file_resolver.h"
#include "storage/offload/uploader.h"

namespace strata::cluster {

absl::StatusOr<ClusterMember::Local> LocalOfStorage(storage::Storage& storage) {
  storage::Uploader* uploader = storage.uploader();
  const storage::DataFileResolver* resolver = storage.resolver();
  if (uploader == nullptr || resolver == nullptr) {
    return absl::FailedPreconditionError(
        "a cluster member needs a storage engine with an object store and a shared catalog");
  }
  objectstore::BatchStore& store = resolver->store();
  return ClusterMember::Local{
      .pin = [&storage] { return storage.Pin(); },
      .uploaded = [uploader](const storage::BatchId& id) { return uploader->IsUploaded(id); },
      .adopt =
          [&storage](const std::string& meta_json) { return storage.AdoptRemoteBatch(meta_json); },
      .restore =
          [&storage](const std::string& meta_json) { return storage.RestoreOwnBatch(meta_json); },
      .forget = [&storage](const storage::BatchId& id) { return storage.ForgetRestoredBatch(id); },
      .restore_marked = [&storage] { return storage.RestoreMarked(); },
      .set_restore_marked = [&storage](bool marked) { return storage.SetRestoreMarked(marked); },
      .drop = [&storage](const storage::BatchId& id) { return storage.DropRemoteBatch(id); },
      .replace =
          [&storage](const std::vector<std::string>& stored,
                     const std::vector<storage::BatchId>& drop) {
            return storage.ReplaceWithStoredBatches(stored, drop);
          },
      .stored_batches = [&store] { return storage::ListStoredBatches(store); },
      .delete_objects =
          [&store](const storage::BatchId& id, const std::string& day) {
            return storage::DeleteBatchObjects(store, id, day);
          },
  };
}

}  // namespace strata::cluster
