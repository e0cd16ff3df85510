// ClusterMember::FollowOthersCompactions, SyncOthers and OthersChanges
// (cluster_member.h): this node's local catalog follows what other nodes
// list, and what their compactions replaced, one Snapshot per day, so a
// reader of this node never misses a row another node's output took over
// nor sees it twice.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "cluster/cluster_member.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "storage/format/batch_meta.h"

namespace strata::cluster {

std::map<std::string, ClusterMember::OthersChange> ClusterMember::OthersChanges(
    const CatalogListing& listing, const storage::Snapshot& snapshot,
    const std::set<std::string>& consumed) const {
  // Retention drops older days here: not adopted.
  const std::string first_day = FirstDayKept();
  std::map<std::string, OthersChange> changes;
  std::set<std::string> listed;
  for (const CatalogBatch& batch : listing.batches) {
    absl::StatusOr<storage::BatchId> id = storage::BatchId::Parse(batch.id);
    if (!id.ok() || id->node() == node_number_) continue;
    listed.insert(batch.id);
    if (snapshot.Find(*id) != nullptr || batch.day < first_day) continue;
    // An input of this node's output: its rows are here already.
    if (consumed.contains(batch.id)) continue;
    changes[batch.day].adopt.push_back(&batch);
  }
  for (const auto& batch : snapshot.batches()) {
    if (batch->id().node() == node_number_ || listed.contains(batch->id().ToString())) continue;
    changes[batch->day()].drop.push_back(batch->id());
  }
  return changes;
}

absl::StatusOr<bool> ClusterMember::FollowOthersCompactions(const CatalogListing& listing,
                                                            const storage::Snapshot& snapshot) {
  std::map<std::string, const CatalogBatch*> live;
  for (const CatalogBatch& batch : listing.batches) live[batch.id] = &batch;
  std::vector<storage::BatchId> drop;
  std::set<std::string> dropped, days;
  std::vector<std::string> put_back;
  std::set<std::string> putting_back;
  uint64_t replaced = 0, discarded = 0;
  for (const auto& batch : snapshot.batches()) {
    if (batch->id().node() != node_number_) continue;
    const std::string id = batch->id().ToString();
    if (live.contains(id)) continue;
    // Registered once (so uploaded), then removed by a swap this node did
    // not make: another node's output holds its rows.
    if (local_.uploaded(batch->id())) {
      STRATA_ASSIGN_OR_RETURN(const PostgresBatchCatalog::BatchState state, catalog_.StateOf(id));
      if (state == PostgresBatchCatalog::BatchState::kRemoved) {
        drop.push_back(batch->id());
        dropped.insert(id);
        days.insert(batch->day());
        ++replaced;
        continue;
      }
    }
    // An output of this node: an input neither listed nor here was removed
    // by another node's compaction of the day (this node's lease was lost
    // meanwhile), so the output holds rows listed elsewhere too.
    bool doomed = false;
    for (const std::string& source : batch->meta().sources) {
      if (live.contains(source)) continue;
      absl::StatusOr<storage::BatchId> source_id = storage::BatchId::Parse(source);
      if (!source_id.ok() || snapshot.Find(*source_id) != nullptr) continue;
      STRATA_ASSIGN_OR_RETURN(const PostgresBatchCatalog::BatchState state,
                              catalog_.StateOf(source));
      if (state == PostgresBatchCatalog::BatchState::kRemoved) {
        doomed = true;
        break;
      }
    }
    if (!doomed) continue;
    drop.push_back(batch->id());
    dropped.insert(id);
    days.insert(batch->day());
    ++discarded;
    // Its inputs still listed come back from the store in the same
    // Snapshot, so no reader misses their rows.
    for (const std::string& source : batch->meta().sources) {
      auto it = live.find(source);
      if (it != live.end() && putting_back.insert(source).second) {
        put_back.push_back(it->second->meta_json);
      }
    }
  }
  if (drop.empty()) return false;
  // The rows of what goes are in other nodes' outputs listed for the same
  // days: those are adopted, and other nodes' batches of those days no
  // longer listed (the outputs' other inputs) dropped, in the same
  // Snapshot too, so no reader of this node misses the rows or sees them
  // twice. The inputs of this node's outputs that stay are not adopted.
  std::set<std::string> consumed;
  for (const auto& batch : snapshot.batches()) {
    const std::string id = batch->id().ToString();
    if (batch->id().node() != node_number_ || live.contains(id) || dropped.contains(id)) continue;
    consumed.insert(batch->meta().sources.begin(), batch->meta().sources.end());
  }
  std::vector<std::string> stored = put_back;
  std::vector<storage::BatchId> gone = drop;
  const std::map<std::string, OthersChange> others = OthersChanges(listing, snapshot, consumed);
  for (const std::string& day : days) {
    auto it = others.find(day);
    if (it == others.end()) continue;
    for (const CatalogBatch* batch : it->second.adopt) {
      if (putting_back.insert(batch->id).second) stored.push_back(batch->meta_json);
    }
    gone.insert(gone.end(), it->second.drop.begin(), it->second.drop.end());
  }
  absl::Status status = local_.replace(stored, gone);
  if (!status.ok() && (stored.size() != put_back.size() || gone.size() != drop.size())) {
    // One of the other nodes' batches failed (SyncOthers reports it): what
    // this node must drop goes without them, read back where it must be.
    status = local_.replace(put_back, drop);
  }
  if (!status.ok()) {
    return absl::Status(status.code(),
                        fmt::format("dropping {} batches of node id {} that another node's "
                                    "compaction replaced: {}",
                                    drop.size(), options_.node, std::string(status.message())));
  }
  MutexLock lock(&mu_);
  stats_.batches_replaced_elsewhere += replaced;
  stats_.outputs_discarded += discarded;
  return true;
}

absl::Status ClusterMember::SyncOthers(const CatalogListing& listing,
                                       const storage::Snapshot& snapshot,
                                       const std::set<std::string>& consumed, bool* applied) {
  absl::Status first_error;
  auto failed = [&first_error](const absl::Status& status) {
    if (first_error.ok()) first_error = status;
  };
  uint64_t adopted = 0, dropped = 0;
  *applied = true;
  for (const auto& [day, change] : OthersChanges(listing, snapshot, consumed)) {
    // Listed all the same when stopping: nothing listed is dropped.
    const bool adopting = !change.adopt.empty() && !stopping();
    if (adopting && !change.drop.empty()) {
      // An output and the inputs it replaced (or what retention drops) go
      // in one Snapshot: no reader sees the rows twice, or misses them.
      std::vector<std::string> stored;
      for (const CatalogBatch* batch : change.adopt) stored.push_back(batch->meta_json);
      if (local_.replace(stored, change.drop).ok()) {
        adopted += change.adopt.size();
        dropped += change.drop.size();
        continue;
      }
      // Then each on its own, so one batch that fails holds back no other.
    }
    for (const CatalogBatch* batch : change.adopt) {
      if (!adopting) break;
      absl::Status status = local_.adopt(batch->meta_json);
      if (status.ok()) {
        ++adopted;
      } else {
        failed(absl::Status(status.code(), fmt::format("adopting batch {}: {}", batch->id,
                                                       std::string(status.message()))));
      }
    }
    for (const storage::BatchId& id : change.drop) {
      absl::Status status = local_.drop(id);
      if (status.ok()) {
        ++dropped;
      } else {
        *applied = false;
        failed(status);
      }
    }
  }
  MutexLock lock(&mu_);
  stats_.batches_adopted += adopted;
  stats_.batches_dropped += dropped;
  return first_error;
}

}  // namespace strata::cluster
