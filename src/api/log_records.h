#pragma once

// The records of a log search's page, read by strata's own Parquet reader
// (log_search.cc). DuckDB names the matching records by position (file and
// row number, from the cheap filter columns alone); this reads only those
// rows' pages (storage::ReadLogsRowsAt), turns each record into the
// LogEntry a page shows, and gives it the key that orders records of equal
// time.
//
// The key is a hash of the record's whole content (times, severity, body,
// attributes, ids, flags, event name, scope and resource), computed the
// same way by every strata version that writes "v2." cursors, so it is the
// same for a record whichever batch holds it: compaction moves records
// between files without moving them in a search's order.
//
// Thread-safety: reentrant. Errors: the FileSystem's; DataLoss for a file
// strata's reader rejects; Internal when a position names a file that is
// not a logs file of the search's snapshot.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/search.h"
#include "io/file_system.h"
#include "otlp/batch.h"
#include "storage/commit/catalog.h"

namespace strata::api::internal {

// A matching record, as the positions query names it.
struct LogPosition {
  std::string file;   // the logs.parquet path, as ViewFilesFor lists it
  uint64_t row = 0;   // its file row number
  uint64_t time = 0;  // time_unix_nano
};

// A record read for a page, with its ordering key.
struct KeyedLogEntry {
  LogEntry entry;
  uint64_t key = 0;
};

// The batch id of each logs.parquet of `snapshot`, by the path ViewFilesFor
// gives it.
std::map<std::string, std::string> LogsFileBatchIds(const storage::Snapshot& snapshot,
                                                    const std::string& data_dir);

// Reads the records at `positions` (any order, no position twice), their
// values appended to `values`; one entry per position, in no particular
// order.
[[nodiscard]] absl::StatusOr<std::vector<KeyedLogEntry>> ReadLogRecords(
    FileSystem& fs, const std::map<std::string, std::string>& batch_ids,
    const std::vector<LogPosition>& positions, LogValues* values);

// The key of record `record` of `batch` (see above).
uint64_t LogRecordKey(const otlp::LogBatch& batch, size_t record);

}  // namespace strata::api::internal
