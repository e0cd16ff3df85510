#include "storage/maintenance/retention.h"

#include <map>

#include "storage/format/batch_id.h"
#include "storage/maintenance/compaction.h"

namespace strata::storage {

std::vector<std::string> DaysToDrop(const Snapshot& snapshot, const RetentionPolicy& policy,
                                    uint64_t now_nanos) {
  constexpr uint64_t kNanosPerDay = uint64_t{86'400} * 1'000'000'000;
  std::map<std::string, uint64_t> day_bytes;  // ordered: oldest first
  uint64_t total = 0;
  for (const std::shared_ptr<const LiveBatch>& batch : snapshot.batches()) {
    const uint64_t bytes = BatchBytes(batch->meta());
    day_bytes[batch->day()] += bytes;
    total += bytes;
  }
  const std::string today = DayOfNanos(now_nanos);
  std::vector<std::string> drop;
  for (const auto& [day, bytes] : day_bytes) {
    bool expired = false;
    if (policy.days > 0) {
      absl::StatusOr<DayBoundsNanos> bounds = DayBounds(day);
      const uint64_t window = uint64_t{policy.days} * kNanosPerDay;
      expired = bounds.ok() && bounds->end <= now_nanos && now_nanos - bounds->end >= window;
    }
    const bool over_size =
        policy.max_disk_bytes > 0 && total > policy.max_disk_bytes && day < today;
    if (!expired && !over_size) continue;
    drop.push_back(day);
    total -= bytes;
  }
  return drop;
}

}  // namespace strata::storage
