// Fuzz target for what Jaeger clients send /jaeger/api/* and what it answers
// (src/api/jaeger_params.cc, jaeger_model.cc): the input is read as a `tags`
// JSON object, a trace id, a whole query string of a search (classic and
// v3), and an OTLP/JSON traces request whose spans are converted to
// Jaeger's model. Every parser
// must return a value or an InvalidArgument error, never crash; a parsed
// trace id must print back to the same id; a parsed search must have a
// window and a limit in range; every converted answer must be valid JSON
// holding as many traces as it says.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "api/jaeger_model.h"
#include "api/jaeger_params.h"
#include "api/params.h"
#include "otlp/decode.h"
#include "simdjson.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata;
  using namespace strata::api;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto invalid_argument_only = [](const absl::Status& status) {
    if (!status.ok() && status.code() != absl::StatusCode::kInvalidArgument) __builtin_trap();
  };

  absl::StatusOr<JaegerTags> tags = ParseJaegerTags("tags", text);
  invalid_argument_only(tags.status());
  if (tags.ok() && tags->attributes.size() > kMaxJaegerTags) __builtin_trap();

  absl::StatusOr<otlp::TraceId> id = ParseJaegerTraceId(text);
  invalid_argument_only(id.status());
  if (id.ok()) {
    absl::StatusOr<otlp::TraceId> again = ParseJaegerTraceId(JaegerTraceIdHex(*id));
    if (!again.ok() || *again != *id) __builtin_trap();
  }
  invalid_argument_only(ParseJaegerLookback("lookback", text).status());

  if (absl::StatusOr<QueryParams> params = QueryParams::Parse(text); params.ok()) {
    absl::StatusOr<TraceSearch> v3 = TakeJaegerV3Search(*params);
    invalid_argument_only(v3.status());
    if (v3.ok() && (v3->start >= v3->end || v3->limit < 1)) __builtin_trap();
  }
  if (absl::StatusOr<QueryParams> params = QueryParams::Parse(text); params.ok()) {
    absl::StatusOr<TraceSearch> search =
        TakeJaegerTraceSearch(*params, [] { return int64_t{1'764'800'000'000'000'000}; });
    invalid_argument_only(search.status());
    if (search.ok() && (search->start >= search->end || search->limit < 1 ||
                        search->limit > kJaegerTraceLimit.max_value ||
                        (search->min_duration.has_value() && search->max_duration.has_value() &&
                         *search->min_duration > *search->max_duration))) {
      __builtin_trap();
    }
  }

  otlp::TraceBatch batch;
  if (otlp::DecodeTracesJson(text, &batch).ok()) {
    const std::string answer = JaegerTracesResponse(std::span<const otlp::TraceBatch>(&batch, 1));
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    if (parser.parse(answer).get(doc) != simdjson::SUCCESS) __builtin_trap();
    simdjson::dom::array traces;
    int64_t total = 0;
    if (doc["data"].get(traces) != simdjson::SUCCESS ||
        doc["total"].get(total) != simdjson::SUCCESS ||
        static_cast<int64_t>(traces.size()) != total) {
      __builtin_trap();
    }
  }
  return 0;
}
