// libFuzzer target for COMPACTION.json parsing
// (storage::ParseCompactionMarker), an on-disk file boot reads before it
// touches any batch.
//
// Input: the bytes of a marker. The target aborts when a parse fails with
// anything but InvalidArgument, and when an accepted marker breaks what the
// parser promises: a valid day, an output of generation 1 or more, a
// non-empty list of distinct inputs none equal to the output, every id
// valid by the one batch-id grammar.
// Seeds: fuzz/corpus/compaction_marker/.

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "common/check.h"
#include "storage/commit/recovery.h"
#include "storage/format/batch_id.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using strata::storage::BatchId;
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  const auto marker = strata::storage::ParseCompactionMarker(json);
  if (!marker.ok()) {
    STRATA_CHECK(marker.status().code() == absl::StatusCode::kInvalidArgument,
                 marker.status().ToString().c_str());
    return 0;
  }
  STRATA_CHECK(strata::storage::ValidateDay(marker->day).ok(), "accepted marker has a bad day");
  STRATA_CHECK(marker->output.generation() >= 1, "accepted marker output of generation 0");
  STRATA_CHECK(!marker->inputs.empty(), "accepted marker without inputs");
  std::set<std::string> seen;
  for (const BatchId& input : marker->inputs) {
    const std::string id = input.ToString();
    STRATA_CHECK(strata::storage::ValidateBatchId(id).ok(), "accepted marker input fails grammar");
    STRATA_CHECK(seen.insert(id).second, "accepted marker repeats an input");
    STRATA_CHECK(!(input == marker->output), "accepted marker lists its output as an input");
  }
  return 0;
}
