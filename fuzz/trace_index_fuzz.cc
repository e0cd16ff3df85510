// libFuzzer target for the spans.tidx readers (storage/trace_index.h), the
// decoders of an on-disk file that boot and `strata verify` read.
//
// Each input is tried twice: as given, and with its header checksum
// recomputed, so mutations also reach the checks behind the checksum.
// For each, the target aborts when:
//   - a rejection is not DataLoss with "<file>: " in front, or the
//     in-memory reader (TraceIndex::Open) and the streaming one
//     (TraceFilter::Open) disagree on the status;
//   - an accepted file does not re-serialise to the same bytes, fails
//     Validate() against its own counts, or some entry is not found (by
//     MayContain, TraceIndex::Find and TraceFilter::Find, which must agree)
//     at its own location, or a location is empty or outside the covered
//     rows;
//   - rebuilding the file from its entries (BuildTraceIndex) fails or gives
//     other entries, when the entries' times can be turned back into runs.
// Seeds: fuzz/corpus/trace_index/.

#include <xxhash.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "common/check.h"
#include "io/memory_file.h"
#include "storage/index/trace_index.h"

namespace {

using strata::storage::TraceFilter;
using strata::storage::TraceIndex;
using strata::storage::TraceLocation;

constexpr char kName[] = "fuzz/spans.tidx";
// Entries looked up per input; keeps each run fast on large inputs.
constexpr size_t kMaxLookups = 512;

void CheckRejection(const absl::Status& status) {
  const std::string message(status.message());
  if (status.code() != absl::StatusCode::kDataLoss ||
      message.rfind(std::string(kName) + ": ", 0) != 0) {
    STRATA_CHECK(false, status.ToString().c_str());
  }
}

void CheckLookups(const TraceIndex& index, const TraceFilter& filter,
                  const strata::MemoryFile& file) {
  const uint64_t row_end = filter.first_covered_row() + filter.span_rows();
  const size_t count = index.entries().size();
  const size_t step = std::max<size_t>(1, count / kMaxLookups);
  for (size_t i = 0; i < count; i += step) {
    const strata::otlp::TraceId& id = index.entries()[i].trace_id;
    const TraceLocation expected = index.LocationOf(i);
    STRATA_CHECK(expected.first_row < expected.end_row && expected.end_row <= row_end,
                 "a location outside the covered rows");
    STRATA_CHECK(filter.MayContain(id), "an entry fails the filter");
    const std::optional<TraceLocation> found = index.Find(id);
    STRATA_CHECK(found.has_value() && *found == expected, "TraceIndex::Find misses an entry");
    const absl::StatusOr<std::optional<TraceLocation>> in_file = filter.Find(file, id);
    STRATA_CHECK(in_file.ok() && *in_file == found, "TraceFilter::Find disagrees");
    // A neighbouring id: both lookups must agree whatever the answer.
    strata::otlp::TraceId other = id;
    other[15] ^= 0x5a;
    const absl::StatusOr<std::optional<TraceLocation>> other_in_file = filter.Find(file, other);
    STRATA_CHECK(other_in_file.ok() && *other_in_file == index.Find(other),
                 "lookups of an absent id disagree");
  }
}

// Runs back from entries: the rebuilt index (always the current version)
// holds the same entries.
void CheckRebuild(const TraceIndex& index) {
  std::vector<strata::storage::TraceRun> runs;
  for (const strata::storage::TraceIndexEntry& entry : index.entries()) {
    runs.push_back({entry.trace_id, entry.first_row});
  }
  const TraceFilter& filter = index.filter();
  const absl::StatusOr<std::string> rebuilt =
      strata::storage::BuildTraceIndex(runs, filter.span_rows(), filter.first_covered_row());
  STRATA_CHECK(rebuilt.ok(), rebuilt.status().ToString().c_str());
  const absl::StatusOr<TraceIndex> reopened = TraceIndex::Open(*rebuilt, kName);
  STRATA_CHECK(reopened.ok(), reopened.status().ToString().c_str());
  STRATA_CHECK(std::equal(reopened->entries().begin(), reopened->entries().end(),
                          index.entries().begin(), index.entries().end()),
               "rebuilt entries differ");
}

void CheckOne(std::string_view bytes) {
  const strata::MemoryFile file(std::string(bytes), kName);
  const absl::StatusOr<TraceIndex> index = TraceIndex::Open(bytes, kName);
  const absl::StatusOr<TraceFilter> filter = TraceFilter::Open(file);
  if (!index.ok()) {
    CheckRejection(index.status());
    STRATA_CHECK(!filter.ok() && filter.status() == index.status(),
                 "the two readers disagree on a rejected file");
    return;
  }
  STRATA_CHECK(filter.ok(), filter.status().ToString().c_str());
  STRATA_CHECK(filter->filter() == index->filter().filter(), "the readers load different filters");
  // A current-version file serializes to itself; an older one to the
  // current version of the same entries (CheckRebuild compares those).
  if (static_cast<uint8_t>(bytes[8]) == strata::storage::kTraceIndexVersion) {
    STRATA_CHECK(index->Serialize() == bytes, "re-serialised spans.tidx differs");
  }
  STRATA_CHECK(index->Validate(index->entries().size(), filter->span_rows()).ok(),
               "an accepted file fails Validate() against its own counts");
  STRATA_CHECK(!index->Validate(index->entries().size() + 1, filter->span_rows()).ok(),
               "Validate() accepts a wrong trace count");
  CheckLookups(*index, *filter, file);
  CheckRebuild(*index);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  CheckOne(bytes);
  if (bytes.size() >= strata::storage::kTraceIndexHeaderBytes) {
    std::string resealed = bytes;
    std::memset(resealed.data() + 56, 0, 8);
    const uint64_t checksum = XXH3_64bits(resealed.data(), resealed.size());
    for (int i = 0; i < 8; ++i) {
      resealed[56 + i] = static_cast<char>(checksum >> (8 * i));
    }
    if (resealed != bytes) {
      CheckOne(resealed);
    }
  }
  return 0;
}
