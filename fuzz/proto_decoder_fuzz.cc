// libFuzzer target for the protobuf OTLP decoders (decode.h).
//
// The first input byte picks the signal (traces, logs or metrics, modulo 3)
// and bit 2 of it a small max_value_depth; the rest is the request. Any
// input may be rejected, but none may crash, read out of bounds or leak, and
// every accepted request must produce a batch that passes ValidateBatch, and
// re-encoding is stable: encode(decode(encode(batch))) == encode(batch).
// Seeds: fuzz/corpus/proto/.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/check.h"
#include "otlp/batch.h"
#include "otlp/decode.h"
#include "otlp/encode.h"

namespace {

using strata::otlp::AttributeColumns;
using strata::otlp::BatchBase;
using strata::otlp::ValueColumns;

// Reads the last byte of every view, so that ASan reports any view that
// points outside the input.
size_t Touch(const std::vector<std::string_view>& views) {
  size_t sum = 0;
  for (std::string_view s : views) sum += s.empty() ? 0 : static_cast<uint8_t>(s.back());
  return sum;
}
size_t Touch(const AttributeColumns& a) { return Touch(a.key) + Touch(a.value.str); }

size_t TouchBase(const BatchBase& b) {
  return Touch(b.resource_attributes) + Touch(b.scope_attributes) + Touch(b.nested_attributes) +
         Touch(b.nested_values.str) + Touch(b.scopes.name) + Touch(b.entity_keys);
}
size_t TouchAll(const strata::otlp::TraceBatch& b) {
  return TouchBase(b) + Touch(b.span_attributes) + Touch(b.spans.name) + Touch(b.events.name);
}
size_t TouchAll(const strata::otlp::LogBatch& b) {
  return TouchBase(b) + Touch(b.log_attributes) + Touch(b.logs.body.str);
}
size_t TouchAll(const strata::otlp::MetricBatch& b) {
  return TouchBase(b) + Touch(b.point_attributes) + Touch(b.metrics.name);
}

template <typename Batch, typename Decode, typename Encode>
void Check(std::string_view bytes, const strata::otlp::DecodeLimits& limits, Decode decode,
           Encode encode) {
  Batch batch;
  absl::Status status = decode(bytes, &batch, limits);
  if (!status.ok()) {
    STRATA_CHECK(status.code() == absl::StatusCode::kInvalidArgument,
                 status.ToString().c_str());
    return;
  }
  absl::Status valid = strata::otlp::ValidateBatch(batch);
  STRATA_CHECK(valid.ok(), valid.ToString().c_str());
  volatile size_t sink = TouchAll(batch);
  (void)sink;

  const std::string encoded = encode(batch);
  Batch again;
  absl::Status redecoded = decode(encoded, &again, limits);
  STRATA_CHECK(redecoded.ok(), redecoded.ToString().c_str());
  STRATA_CHECK(encode(again) == encoded, "re-encoding a decoded encoding changed the bytes");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  strata::otlp::DecodeLimits limits;
  if (data[0] & 4) limits.max_value_depth = 3;
  switch (data[0] % 3) {
    case 0:
      Check<strata::otlp::TraceBatch>(bytes, limits, strata::otlp::DecodeTracesProto,
                                      strata::otlp::EncodeTracesProto);
      break;
    case 1:
      Check<strata::otlp::LogBatch>(bytes, limits, strata::otlp::DecodeLogsProto,
                                    strata::otlp::EncodeLogsProto);
      break;
    default:
      Check<strata::otlp::MetricBatch>(bytes, limits, strata::otlp::DecodeMetricsProto,
                                       strata::otlp::EncodeMetricsProto);
      break;
  }
  return 0;
}
