#pragma once

// The compact form of a large trace (GET /api/v1/traces/{id}?format=columns)
// as a client on loopback gets it, for `strata bench query`: a generated
// trace of kCompactTraceSpans spans is written into the bench's storage
// (unless one is there already), the REST API is served on 127.0.0.1 from
// the bench's own storage and query pool, and the answer is fetched over
// HTTP repeatedly, gzipped (as browsers ask) and plain. Also times the two
// steps inside the server, the trace lookup and the JSON encoding.
//
// Thread-safety: runs on the calling thread (plus the API's workers and the
// HTTP server's io thread, stopped before it returns).

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "io/file_system.h"
#include "query/query_pool.h"
#include "storage/storage.h"

namespace strata::bench {

inline constexpr int kCompactTraceSpans = 100'000;

struct CompactTraceResult {
  uint64_t spans = 0;
  double gzip_p50_ms = 0;  // GET with Accept-Encoding: gzip, wall time
  uint64_t gzip_bytes = 0;
  double plain_p50_ms = 0;  // GET without it
  uint64_t plain_bytes = 0;
  double lookup_p50_ms = 0;  // storage::LookupTrace alone, in process
  double encode_p50_ms = 0;  // api::TraceColumnsJson alone, in process
};

// Runs `runs` fetches of each kind (at least 1) after one warm-up.
// `dir`: the data directory `storage` runs on (absolute). A check that does
// not hold (the answer has another span count) is an Internal error.
[[nodiscard]] absl::Status MeasureCompactTrace(FileSystem& fs, storage::Storage& storage,
                                               query::QueryPool& pool, const std::string& dir,
                                               uint64_t seed, int runs, CompactTraceResult* result);

}  // namespace strata::bench
