#include "storage/log_feed.h"

#include <algorithm>
#include <utility>

namespace strata::storage {

LogFeed::LogFeed(LogFeedOptions options) : options_(options) {}

LogFeed::Subscription::~Subscription() {
  feed_->last_unsubscribe_ns_.store(Clock::now().time_since_epoch().count(),
                                    std::memory_order_release);
  feed_->subscribers_.fetch_sub(1, std::memory_order_acq_rel);
}

std::unique_ptr<LogFeed::Subscription> LogFeed::Subscribe() {
  subscribers_.fetch_add(1, std::memory_order_acq_rel);
  return std::make_unique<Subscription>(this);
}

bool LogFeed::recording() const {
  if (subscribers_.load(std::memory_order_acquire) > 0) return true;
  const int64_t left = last_unsubscribe_ns_.load(std::memory_order_acquire);
  if (left == 0) return false;
  return Clock::now().time_since_epoch().count() - left <
         std::chrono::duration_cast<Clock::duration>(options_.keep_for).count();
}

void LogFeed::Append(const Snapshot& snapshot, const BatchId& id, uint64_t rows) {
  const auto& batches = snapshot.batches();
  auto it = std::lower_bound(batches.begin(), batches.end(), id,
                             [](const std::shared_ptr<const LiveBatch>& batch, const BatchId& key) {
                               return batch->id() < key;
                             });
  if (it == batches.end() || (*it)->id() != id) return;
  std::shared_ptr<const std::function<void()>> listener;
  {
    MutexLock lock(&mu_);
    const Clock::time_point now = Clock::now();
    batches_.push_back(
        FedLogBatch{.sequence = ++last_sequence_, .batch = *it, .rows = rows, .published = now});
    while (batches_.size() > std::max<size_t>(1, options_.capacity)) batches_.pop_front();
    DropExpired(now);
    listener = listener_;
  }
  if (listener != nullptr && *listener) (*listener)();
}

void LogFeed::DropExpired(Clock::time_point now) {
  while (!batches_.empty() && now - batches_.front().published >= options_.keep_for) {
    batches_.pop_front();
  }
}

void LogFeed::Prune() {
  MutexLock lock(&mu_);
  DropExpired(Clock::now());
}

uint64_t LogFeed::last_sequence() const {
  MutexLock lock(&mu_);
  return last_sequence_;
}

std::vector<FedLogBatch> LogFeed::After(uint64_t after, size_t max, uint64_t* first_kept) const {
  MutexLock lock(&mu_);
  std::vector<FedLogBatch> out;
  const uint64_t first = batches_.empty() ? last_sequence_ + 1 : batches_.front().sequence;
  if (first_kept != nullptr) *first_kept = first;
  // Sequence numbers in batches_ are consecutive.
  size_t index = after >= first ? static_cast<size_t>(after - first + 1) : 0;
  for (; index < batches_.size() && out.size() < max; ++index) out.push_back(batches_[index]);
  return out;
}

std::optional<uint64_t> LogFeed::SequenceOf(const BatchId& id) const {
  MutexLock lock(&mu_);
  for (auto it = batches_.rbegin(); it != batches_.rend(); ++it) {
    if (it->batch->id() == id) return it->sequence;
  }
  return std::nullopt;
}

void LogFeed::SetListener(std::function<void()> listener) {
  MutexLock lock(&mu_);
  listener_ =
      listener ? std::make_shared<const std::function<void()>>(std::move(listener)) : nullptr;
}

}  // namespace strata::storage
