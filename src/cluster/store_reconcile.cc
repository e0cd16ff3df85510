// ClusterMember::ReconcileStore (cluster_member.h): objects of this node's
// batches that neither catalog names.

#include <set>
#include <string>
#include <vector>

#include "cluster/cluster_member.h"
#include "common/status_macros.h"
#include "fmt/format.h"

namespace strata::cluster {

absl::Status ClusterMember::ReconcileStore() {
  MutexLock reconciling(&reconcile_mu_);
  // The local catalog is pinned and the shared one listed before the store
  // is: a batch published and uploaded in between is in the store and in
  // neither list, and is kept by the next listing finding it listed.
  const std::shared_ptr<const storage::Snapshot> snapshot = local_.pin();
  STRATA_ASSIGN_OR_RETURN(const CatalogListing listing, catalog_.List());
  STRATA_ASSIGN_OR_RETURN(const auto stored, local_.stored_batches());
  std::set<std::string> named;
  for (const CatalogBatch& batch : listing.batches) named.insert(batch.id);
  const absl::Time now = options_.clock();
  std::map<storage::BatchId, absl::Time> orphans;
  struct Due {
    storage::BatchId id;
    std::string day;
    absl::Time since;
  };
  std::vector<Due> due;
  for (const auto& [id, day] : stored) {
    if (id.node() != node_number_ || snapshot->Find(id) != nullptr ||
        named.contains(id.ToString())) {
      continue;
    }
    const auto found = orphans_.find(id);
    const absl::Time since = found == orphans_.end() ? now : found->second;
    if (now - since >= options_.delete_after) {
      due.push_back(Due{.id = id, .day = day, .since = since});
    } else {
      orphans.emplace(id, since);
    }
  }
  absl::Status first_error;
  uint64_t deleted = 0;
  for (const auto& [id, day, since] : due) {
    absl::Status status = local_.delete_objects(id, day);
    if (status.ok()) {
      ++deleted;
    } else {
      orphans.emplace(id, since);  // tried again at the next listing
      if (first_error.ok()) {
        first_error = absl::Status(
            status.code(), fmt::format("deleting the objects of batch {}, in no catalog: {}",
                                       id.ToString(), std::string(status.message())));
      }
    }
  }
  orphans_ = std::move(orphans);
  // Removal records of days past retention (and a day more), whose
  // objects are gone: no node holds a copy of those batches any more.
  if (options_.keep_days > 0) {
    const std::string before = absl::FormatTime(
        "%Y-%m-%d", now - absl::Hours(24) * (options_.keep_days + 1), absl::UTCTimeZone());
    absl::StatusOr<int64_t> pruned = catalog_.PruneRemovals(before);
    if (!pruned.ok() && first_error.ok()) first_error = pruned.status();
  }
  MutexLock lock(&mu_);
  stats_.orphans_deleted += deleted;
  stats_.orphans_waiting = orphans_.size();
  return first_error;
}

}  // namespace strata::cluster
