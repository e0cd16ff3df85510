// libFuzzer target for the service map's state file
// (rollups::DecodeServiceMapState, docs/format/service-map-state.md), the
// decoder of an on-disk file every `strata serve` start reads.
//
// Input: file bytes, decoded as they are and, so that the fuzzer reaches
// past the checksum, framed as a valid file around them (magic, version,
// the input as the body, its xxh3-64). The target aborts when a refusal is
// anything but DataLoss, when a refused decode leaves state behind, and
// when an accepted state does not survive encoding: it must decode again
// to the same progress, the same node count and an encoding of the same
// size.
// Seeds: fuzz/corpus/service_map_state/.

#include <xxhash.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/check.h"
#include "common/little_endian.h"
#include "rollups/service_map_state.h"

namespace {

void CheckDecode(std::string_view bytes) {
  using strata::rollups::EdgeResolver;
  using strata::rollups::ServiceMapProgress;
  EdgeResolver resolver;
  ServiceMapProgress progress;
  const absl::Status decoded = strata::rollups::DecodeServiceMapState(bytes, &resolver, &progress);
  if (!decoded.ok()) {
    STRATA_CHECK(decoded.code() == absl::StatusCode::kDataLoss, decoded.ToString().c_str());
    STRATA_CHECK(progress == ServiceMapProgress(), "a refused state left progress behind");
    STRATA_CHECK(resolver.nodes().size() == 0 && resolver.indexed_spans() == 0,
                 "a refused state left the resolver non-empty");
    return;
  }
  const std::string encoded = strata::rollups::EncodeServiceMapState(resolver, progress);
  EdgeResolver again;
  ServiceMapProgress again_progress;
  const absl::Status redecoded =
      strata::rollups::DecodeServiceMapState(encoded, &again, &again_progress);
  STRATA_CHECK(redecoded.ok(), redecoded.ToString().c_str());
  STRATA_CHECK(again_progress == progress, "re-decoded progress differs");
  STRATA_CHECK(again.nodes().size() == resolver.nodes().size(), "re-decoded nodes differ");
  STRATA_CHECK(again.indexed_spans() == resolver.indexed_spans(), "re-decoded spans differ");
  STRATA_CHECK(
      strata::rollups::EncodeServiceMapState(again, again_progress).size() == encoded.size(),
      "re-encoded state differs in size");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  CheckDecode(input);
  std::string framed(strata::rollups::kServiceMapStateMagic);
  strata::PutU32(framed, strata::rollups::kServiceMapStateVersion);
  framed.append(input);
  strata::PutU64(framed, XXH3_64bits(framed.data(), framed.size()));
  CheckDecode(framed);
  return 0;
}
