// The Loki push decoders (otlp/loki_push.h) on arbitrary bytes, as
// protobuf (after the snappy block decoder, as the endpoint reads it, and
// without it) and as JSON: never a crash, and an accepted push stays
// within its limits: every kept stream and entry within the per-stream and
// per-entry caps, kept plus dropped entries within the push's.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/check.h"
#include "otlp/loki_push.h"
#include "otlp/snappy_block.h"

namespace {

void CheckWithinLimits(const absl::StatusOr<strata::otlp::LokiPush>& push,
                       const strata::otlp::LokiPushLimits& limits) {
  if (!push.ok()) return;
  STRATA_CHECK(push->streams.size() <= limits.streams_max, "streams within the cap");
  STRATA_CHECK(push->entries + push->rejected.rows <= limits.entries_max,
               "kept and dropped entries within the cap");
  size_t kept = 0;
  for (const strata::otlp::LokiPushStream& stream : push->streams) {
    STRATA_CHECK(stream.labels.size() <= limits.labels_max, "a kept stream within the label cap");
    for (const strata::otlp::LokiPushEntry& entry : stream.entries) {
      STRATA_CHECK(entry.line.size() <= limits.line_bytes_max, "a kept line within the cap");
      STRATA_CHECK(entry.metadata.size() <= limits.labels_max, "kept metadata within the cap");
      STRATA_CHECK(entry.time_unix_nano >= 0, "a kept time is not negative");
      ++kept;
    }
  }
  STRATA_CHECK(kept == push->entries, "entries counts the kept entries");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const strata::otlp::LokiPushLimits limits{
      .streams_max = 50, .entries_max = 200, .labels_max = 8, .line_bytes_max = 4096};
  CheckWithinLimits(strata::otlp::DecodeLokiPushProto(bytes, limits), limits);
  CheckWithinLimits(strata::otlp::DecodeLokiPushJson(bytes, limits), limits);
  const auto block = strata::otlp::SnappyUncompress(bytes, 1 << 20);
  if (block.ok()) CheckWithinLimits(strata::otlp::DecodeLokiPushProto(*block, limits), limits);
  return 0;
}
