#pragma once

// Retention (docs/format/compaction.md, "Retention"): which whole days
// leave the live Snapshot. A day is the UTC day of ingest time (the day
// directory a batch lives in), never an event time a producer sent, so a
// producer's clock can neither keep data alive nor expire it early.
//
//   - Age: a day goes once every instant of it is older than `days` days
//     (its end plus the window has passed). 0 keeps everything.
//   - Size: with max_disk_bytes above 0, while the live batches' files
//     hold more than that, the oldest days go first. Today's day (the one
//     ingest writes) is never dropped for size: the cap bounds history,
//     not the current day.
//
// Dropped days leave the Snapshot; their files are deleted once no
// Snapshot names them (Maintenance). Pure and thread-safe.

#include <cstdint>
#include <string>
#include <vector>

#include "storage/commit/catalog.h"

namespace strata::storage {

struct RetentionPolicy {
  uint32_t days = 30;
  uint64_t max_disk_bytes = 0;
};

// The days of `snapshot` to drop now, oldest first. `now_nanos` is the
// current time (Unix nanoseconds, UTC).
std::vector<std::string> DaysToDrop(const Snapshot& snapshot, const RetentionPolicy& policy,
                                    uint64_t now_nanos);

}  // namespace strata::storage
