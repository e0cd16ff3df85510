// libFuzzer target for the OTLP/JSON decoders (DecodeTracesJson,
// DecodeLogsJson, DecodeMetricsJson).
//
// Input: one control byte, then the JSON text. The control byte picks the
// signal (byte % 3), whether tight DecodeLimits are used (bit 2), and whether
// the text is decoded twice into the same batch (bit 3, exercising append).
// The seeds in fuzz/corpus/json/ therefore start with that byte ('0' traces,
// '1' logs, '2' metrics; '<' and '5' also set the limit bit).
// The target aborts when a decode succeeds but ValidateBatch() fails, and
// when a decode fails with anything but InvalidArgument carrying the
// "otlp/json: ... (at byte N)" message decode.h promises, and when
// re-encoding is unstable: EncodeJson(DecodeJson(EncodeJson(batch))) must
// equal EncodeJson(batch).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/check.h"
#include "otlp/batch.h"
#include "otlp/decode.h"
#include "otlp/encode.h"

namespace {

using strata::otlp::DecodeLimits;

void CheckError(const absl::Status& s) {
  const std::string message(s.message());
  if (s.code() != absl::StatusCode::kInvalidArgument || message.rfind("otlp/json: ", 0) != 0 ||
      message.find(" (at byte ") == std::string::npos || message.back() != ')') {
    STRATA_CHECK(false, s.ToString().c_str());
  }
}

template <typename Batch>
void Run(absl::Status (*decode)(std::string_view, Batch*, const DecodeLimits&),
         std::string (*encode)(const Batch&), std::string_view json, const DecodeLimits& limits,
         bool twice) {
  Batch batch;
  for (int round = 0; round < (twice ? 2 : 1); ++round) {
    const absl::Status s = decode(json, &batch, limits);
    if (!s.ok()) {
      CheckError(s);
      return;
    }
    const absl::Status valid = strata::otlp::ValidateBatch(batch);
    STRATA_CHECK(valid.ok(), valid.ToString().c_str());
  }
  const std::string encoded = encode(batch);
  Batch again;
  const absl::Status redecoded = decode(encoded, &again, DecodeLimits{});
  STRATA_CHECK(redecoded.ok(), redecoded.ToString().c_str());
  STRATA_CHECK(encode(again) == encoded, "re-encoding decoded JSON changed the text");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t control = data[0];
  const std::string_view json(reinterpret_cast<const char*>(data + 1), size - 1);
  DecodeLimits limits;
  if (control & 4) {
    limits.max_value_depth = 3;
    limits.max_json_depth = 12;
  }
  const bool twice = (control & 8) != 0;
  switch (control % 3) {
    case 0:
      Run(strata::otlp::DecodeTracesJson, strata::otlp::EncodeTracesJson, json, limits, twice);
      break;
    case 1:
      Run(strata::otlp::DecodeLogsJson, strata::otlp::EncodeLogsJson, json, limits, twice);
      break;
    default:
      Run(strata::otlp::DecodeMetricsJson, strata::otlp::EncodeMetricsJson, json, limits, twice);
      break;
  }
  return 0;
}
