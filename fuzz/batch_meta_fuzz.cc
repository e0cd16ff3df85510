// libFuzzer target for meta.json parsing (storage::ParseBatchMeta), the
// decoder of an on-disk file that boot and `strata verify` read.
//
// Input: the bytes of a meta.json. The target aborts when a parse fails
// with anything but DataLoss carrying the "batch <name>: meta.json rule N"
// message batch_meta.h promises, and when an accepted document does not
// round-trip: SerializeBatchMeta() of it must parse back to an equal struct,
// serialise to the same bytes, and pass ValidateBatchMeta().
// Seeds: fuzz/corpus/batch_meta/.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/check.h"
#include "storage/format/batch_meta.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using strata::storage::BatchMeta;
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  const absl::StatusOr<BatchMeta> meta = strata::storage::ParseBatchMeta(json, "fuzz");
  if (!meta.ok()) {
    const std::string message(meta.status().message());
    if (meta.status().code() != absl::StatusCode::kDataLoss || message.rfind("batch ", 0) != 0 ||
        message.find(": meta.json rule ") == std::string::npos) {
      STRATA_CHECK(false, meta.status().ToString().c_str());
    }
    return 0;
  }
  STRATA_CHECK(strata::storage::ValidateBatchMeta(*meta).ok(), "accepted meta fails validation");
  const std::string serialized = strata::storage::SerializeBatchMeta(*meta);
  const absl::StatusOr<BatchMeta> again = strata::storage::ParseBatchMeta(serialized, "fuzz");
  STRATA_CHECK(again.ok(), again.status().ToString().c_str());
  STRATA_CHECK(*again == *meta, "re-parsed meta.json differs from the original");
  STRATA_CHECK(strata::storage::SerializeBatchMeta(*again) == serialized,
               "re-serialised meta.json differs");
  return 0;
}
