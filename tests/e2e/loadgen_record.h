#pragma once

// Test helper: what a `strata loadgen --record` file says the server
// acknowledged (docs/format/loadgen-record.md), decoded into keys the
// e2e suites compare with the stored Parquet, and that comparison. A
// truncated last entry (a loadgen killed mid-write) is treated as absent.
// Single owner.

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "fmt/format.h"
#include "query/duckdb_engine.h"

namespace strata::testing {

template <size_t N>
std::string Hex(const std::array<uint8_t, N>& bytes) {
  std::string out;
  for (uint8_t b : bytes) out += fmt::format("{:02x}", b);
  return out;
}

// Acknowledged rows, each key with how often it was acknowledged.
struct AckedRows {
  std::map<std::string, int> spans;   // "<trace hex>/<span hex>"
  std::map<std::string, int> traces;  // "<trace hex>" -> spans
  std::map<std::string, int> logs;    // "<time>/<trace hex>/<span hex>" (zeros when absent)
  uint64_t metric_points = 0;
  uint64_t requests = 0;
};

// Adds the acknowledged requests of the record file at `path` to *acked.
// Fails the calling test (gtest assertions) when the file cannot be read
// or an entry does not decode.
void ReadLoadgenRecord(const std::string& path, AckedRows* acked);

// Waits (30 s at most) until the record file at `path` holds `min_bytes`
// (by default: some acknowledgement); false at the deadline.
bool WaitForRecordBytes(const std::string& path, uintmax_t min_bytes = 1);

// Over the `logs` view of CreateTableView (server_process.h): each stored
// log record's AckedRows::logs key and how many times it is stored.
inline constexpr char kStoredLogKeysSql[] =
    "SELECT time_unix_nano::VARCHAR || '/' || lower(hex(coalesce(trace_id, "
    "'\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00'::BLOB)))"
    " || '/' || lower(hex(coalesce(span_id, '\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00'::BLOB))),"
    " count(*) FROM logs WHERE row_kind = 0 GROUP BY 1";

// Runs `stored_keys_sql`, whose rows are a key and how many times it is
// stored (kStoredLogKeysSql), and expects every key of `acked` stored at
// least as many times as it was acknowledged; `what` names the rows in the
// failure ("log records"). Sets *stored_keys (when given) to the number of
// distinct keys stored.
void ExpectAckedStored(query::DuckDbEngine& engine, const std::string& stored_keys_sql,
                       const std::map<std::string, int>& acked, std::string_view what,
                       size_t* stored_keys = nullptr);

}  // namespace strata::testing
