#pragma once

// The live tail's latency for `strata bench query`: how long a log record
// takes from its acknowledgement (Storage::Write returning OK, after the
// batch is published) to its event arriving on a GET /api/v1/logs/tail
// stream, through the real Api on a loopback listener.
//
// Thread-safety: single caller. Errors: Unavailable when the listener or
// the stream cannot be set up, DeadlineExceeded when an event does not
// arrive within 10 s, the storage engine's errors for a failed write.

#include <string>

#include "absl/status/statusor.h"
#include "query/query_pool.h"
#include "storage/storage.h"

namespace strata::bench {

struct LogTailLatency {
  int records = 0;
  double p50_ms = 0;
  double max_ms = 0;
};

// Writes `records` requests of one log record each, one after another,
// into `storage` while one tail reads them. `data_dir` is the storage
// engine's (absolute), `pool` a query pool over it.
[[nodiscard]] absl::StatusOr<LogTailLatency> MeasureLogTailLatency(storage::Storage& storage,
                                                                   query::QueryPool& pool,
                                                                   const std::string& data_dir,
                                                                   int records);

}  // namespace strata::bench
