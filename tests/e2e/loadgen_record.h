#pragma once

// Test helper: what a `strata loadgen --record` file says the server
// acknowledged (docs/format/loadgen-record.md), decoded into keys the
// e2e suites compare with the stored Parquet. A truncated last entry (a
// loadgen killed mid-write) is treated as absent. Single owner.

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "fmt/format.h"

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

}  // namespace strata::testing
