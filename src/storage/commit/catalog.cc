#include "storage/commit/catalog.h"

#include <algorithm>
#include <utility>

#include "fmt/format.h"

namespace strata::storage {
namespace {

bool IdLess(const std::shared_ptr<const LiveBatch>& batch, const BatchId& id) {
  return batch->id() < id;
}

// InvalidArgument if `ids` (sorted) repeats one.
absl::Status CheckDistinct(const std::vector<BatchId>& ids, std::string_view what) {
  auto repeated = std::adjacent_find(ids.begin(), ids.end());
  if (repeated == ids.end()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      fmt::format("publish: batch {} is {} twice", repeated->ToString(), what));
}

}  // namespace

const LiveBatch* Snapshot::Find(const BatchId& id) const {
  auto it = std::lower_bound(batches_.begin(), batches_.end(), id, IdLess);
  return it != batches_.end() && (*it)->id() == id ? it->get() : nullptr;
}

absl::StatusOr<std::unique_ptr<Catalog>> Catalog::Create(std::vector<BatchRecord> initial,
                                                         RetireCallback on_retire,
                                                         ReplaceCallback on_replace) {
  auto retire = std::make_shared<RetireState>();
  retire->callback = std::move(on_retire);
  retire->on_replace = std::move(on_replace);
  const Snapshot empty(0, {});
  std::unique_ptr<Catalog> catalog(new Catalog(retire, nullptr));
  absl::StatusOr<std::shared_ptr<const Snapshot>> first =
      catalog->BuildNext(empty, /*sequence=*/0, std::move(initial), {});
  if (!first.ok()) return first.status();
  MutexLock lock(&catalog->current_mu_);
  catalog->current_ = *std::move(first);
  return catalog;
}

Catalog::Catalog(std::shared_ptr<RetireState> retire, std::shared_ptr<const Snapshot> first)
    : retire_(std::move(retire)), current_(std::move(first)) {}

std::shared_ptr<const Snapshot> Catalog::Pin() const {
  MutexLock lock(&current_mu_);
  return current_;
}

std::shared_ptr<const LiveBatch> Catalog::MakeLiveBatch(BatchRecord record) const {
  std::shared_ptr<RetireState> retire = retire_;
  return std::shared_ptr<const LiveBatch>(
      new LiveBatch(std::move(record)), [retire](const LiveBatch* batch) {
        // The last reference is gone. The acquire pairs with Publish()'s
        // release store, which happened before Publish() let go of its own
        // reference.
        if (batch->retired_.load(std::memory_order_acquire)) {
          {
            MutexLock lock(&retire->mu);
            auto it = retire->retired_alive.find(batch->id());
            if (it != retire->retired_alive.end() && --it->second == 0) {
              retire->retired_alive.erase(it);
            }
          }
          if (retire->callback) retire->callback(*batch);
        }
        if (batch->successor_ != nullptr && retire->on_replace) retire->on_replace(*batch);
        // Releases the successor only now (invariant 4).
        delete batch;
      });
}

absl::StatusOr<std::shared_ptr<const Snapshot>> Catalog::BuildNext(
    const Snapshot& current, uint64_t sequence, std::vector<BatchRecord> add,
    const std::vector<BatchId>& remove) const {
  std::sort(add.begin(), add.end(),
            [](const BatchRecord& a, const BatchRecord& b) { return a.id < b.id; });
  std::vector<BatchId> added_ids;
  for (const BatchRecord& record : add) added_ids.push_back(record.id);
  std::vector<BatchId> removed_ids = remove;
  std::sort(removed_ids.begin(), removed_ids.end());
  if (absl::Status distinct = CheckDistinct(added_ids, "added"); !distinct.ok()) return distinct;
  if (absl::Status distinct = CheckDistinct(removed_ids, "removed"); !distinct.ok()) {
    return distinct;
  }
  for (const BatchId& id : added_ids) {
    if (current.Find(id) != nullptr ||
        std::binary_search(removed_ids.begin(), removed_ids.end(), id)) {
      return absl::AlreadyExistsError(
          fmt::format("publish: batch {} is live already", id.ToString()));
    }
  }
  for (const BatchId& id : removed_ids) {
    if (current.Find(id) == nullptr) {
      return absl::NotFoundError(fmt::format("publish: batch {} is not live", id.ToString()));
    }
  }
  // Merge the surviving batches with the added ones; both are sorted.
  std::vector<std::shared_ptr<const LiveBatch>> next;
  next.reserve(current.size() - removed_ids.size() + add.size());
  auto added = add.begin();
  for (const std::shared_ptr<const LiveBatch>& batch : current.batches()) {
    if (std::binary_search(removed_ids.begin(), removed_ids.end(), batch->id())) continue;
    for (; added != add.end() && added->id < batch->id(); ++added) {
      next.push_back(MakeLiveBatch(std::move(*added)));
    }
    next.push_back(batch);
  }
  for (; added != add.end(); ++added) next.push_back(MakeLiveBatch(std::move(*added)));
  return std::make_shared<const Snapshot>(sequence, std::move(next));
}

absl::StatusOr<std::shared_ptr<const Snapshot>> Catalog::Publish(
    std::vector<BatchRecord> add, const std::vector<BatchId>& remove) {
  // Released only after both locks: dropping it may run retire callbacks,
  // which must be free to call into the catalog.
  std::shared_ptr<const Snapshot> previous;
  std::shared_ptr<const Snapshot> next;
  {
    MutexLock publish_lock(&publish_mu_);
    previous = Pin();
    absl::StatusOr<std::shared_ptr<const Snapshot>> built =
        BuildNext(*previous, previous->sequence() + 1, std::move(add), remove);
    if (!built.ok()) return built.status();
    next = *std::move(built);
    // `previous` still names every removed batch, so none can have been
    // released yet (invariant 3).
    {
      MutexLock lock(&retire_->mu);
      for (const BatchId& id : remove) ++retire_->retired_alive[id];
    }
    for (const BatchId& id : remove) {
      previous->Find(id)->retired_.store(true, std::memory_order_release);
    }
    std::shared_ptr<const Snapshot> replaced = next;
    {
      MutexLock current_lock(&current_mu_);
      current_.swap(replaced);
    }
  }
  return next;
}

bool Catalog::HoldsRecordOf(const BatchId& id) const {
  // The Snapshot first: Publish() counts a removed record before it swaps
  // the Snapshot that no longer names it in.
  if (Pin()->Find(id) != nullptr) return true;
  MutexLock lock(&retire_->mu);
  return retire_->retired_alive.contains(id);
}

absl::StatusOr<std::shared_ptr<const Snapshot>> Catalog::Replace(BatchRecord record) {
  // Released only after both locks, as in Publish().
  std::shared_ptr<const Snapshot> previous;
  std::shared_ptr<const Snapshot> next;
  {
    MutexLock publish_lock(&publish_mu_);
    previous = Pin();
    const std::vector<std::shared_ptr<const LiveBatch>>& batches = previous->batches();
    auto it = std::lower_bound(batches.begin(), batches.end(), record.id, IdLess);
    if (it == batches.end() || (*it)->id() != record.id) {
      return absl::NotFoundError(
          fmt::format("replace: batch {} is not live", record.id.ToString()));
    }
    if (record.day != (*it)->day() || record.dir != (*it)->dir()) {
      return absl::InvalidArgumentError(fmt::format(
          "replace: batch {} moves from {} to {}", record.id.ToString(), (*it)->dir(), record.dir));
    }
    std::vector<std::shared_ptr<const LiveBatch>> batches_next = batches;
    std::shared_ptr<const LiveBatch> successor = MakeLiveBatch(std::move(record));
    batches_next[it - batches.begin()] = successor;
    (*it)->successor_ = std::move(successor);
    next = std::make_shared<const Snapshot>(previous->sequence() + 1, std::move(batches_next));
    std::shared_ptr<const Snapshot> replaced = next;
    {
      MutexLock current_lock(&current_mu_);
      current_.swap(replaced);
    }
  }
  return next;
}

}  // namespace strata::storage
