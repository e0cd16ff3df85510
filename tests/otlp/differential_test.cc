// Differential tests of strata's OTLP decoders and encoders against
// libprotobuf, over thousands of seeded random requests per signal
// (otlp_reference/generator.h).
//
// For every seed, with `original` the generated request and `expected` its
// normalized copy (otlp_reference/normalize.h):
//   1. DecodeXProto(libprotobuf's serialization) converts back to `expected`.
//   1b. So does DecodeXProto of the same request in a wire form libprotobuf
//      never writes: fields reordered, packed scalars unpacked, unknown
//      fields inserted (otlp_reference/wire_scrambler.h).
//   2. DecodeXJson(libprotobuf's OTLP/JSON) converts back to `expected`; the
//      JSON is compact or pretty, with or without default values, 64-bit
//      integers as strings or numbers, by seed.
//   3. EncodeXProto of the decoded batch parses in libprotobuf to `expected`,
//      and decodes to a batch that converts to the same message.
//   4. EncodeXJson of the decoded batch parses in libprotobuf to `expected`,
//      and DecodeXJson of it converts to the same message.
//   5. Decoding two requests into one batch (protobuf, JSON, or one of each,
//      by seed) converts to the concatenation of the two.
//   6. A few large realistic requests pass 1 to 4.
// Every decoded batch must also pass ValidateBatch().
//
// Environment: STRATA_DIFF_CASES (seeds per test, default 2000) and
// STRATA_DIFF_SEED (first seed, default 1). A failure prints its seed and
// the differences; STRATA_DIFF_SEED=<seed> STRATA_DIFF_CASES=1 replays it.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "otlp/batch.h"
#include "otlp/decode.h"
#include "otlp/encode.h"
#include "otlp_reference/compare.h"
#include "otlp_reference/generator.h"
#include "otlp_reference/normalize.h"
#include "otlp_reference/otlp_json.h"
#include "otlp_reference/to_message.h"
#include "otlp_reference/wire_scrambler.h"

namespace strata::otlp_reference {
namespace {

// Failing seeds reported in full per test; the rest are only counted.
constexpr int kMaxReportedFailures = 5;

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  return std::strtoull(value, nullptr, 10);
}

uint64_t CaseCount() { return EnvOr("STRATA_DIFF_CASES", 2000); }
uint64_t FirstSeed() { return EnvOr("STRATA_DIFF_SEED", 1); }

// Rows per realistic request; large enough for multi-byte length prefixes
// at every nesting level.
constexpr int kRealisticRows = 300;

// The second request of a pair, from the same seed.
uint64_t PartnerSeed(uint64_t seed) { return seed ^ 0x9e3779b97f4a7c15ULL; }

struct Traces {
  using Request = TraceRequest;
  using Batch = otlp::TraceBatch;
  static Request Random(uint64_t seed) { return RandomTraceRequest(seed); }
  static Request Realistic(uint64_t seed) { return RealisticTraceRequest(seed, kRealisticRows); }
  static absl::Status DecodeProto(std::string_view bytes, Batch* batch) {
    return otlp::DecodeTracesProto(bytes, batch);
  }
  static absl::Status DecodeJson(std::string_view json, Batch* batch) {
    return otlp::DecodeTracesJson(json, batch);
  }
  static std::string EncodeProto(const Batch& batch) { return otlp::EncodeTracesProto(batch); }
  static std::string EncodeJson(const Batch& batch) { return otlp::EncodeTracesJson(batch); }
  static absl::StatusOr<Request> ToMessage(const Batch& batch) { return ToTraceRequest(batch); }
};

struct Logs {
  using Request = LogsRequest;
  using Batch = otlp::LogBatch;
  static Request Random(uint64_t seed) { return RandomLogsRequest(seed); }
  static Request Realistic(uint64_t seed) { return RealisticLogsRequest(seed, kRealisticRows); }
  static absl::Status DecodeProto(std::string_view bytes, Batch* batch) {
    return otlp::DecodeLogsProto(bytes, batch);
  }
  static absl::Status DecodeJson(std::string_view json, Batch* batch) {
    return otlp::DecodeLogsJson(json, batch);
  }
  static std::string EncodeProto(const Batch& batch) { return otlp::EncodeLogsProto(batch); }
  static std::string EncodeJson(const Batch& batch) { return otlp::EncodeLogsJson(batch); }
  static absl::StatusOr<Request> ToMessage(const Batch& batch) { return ToLogsRequest(batch); }
};

struct Metrics {
  using Request = MetricsRequest;
  using Batch = otlp::MetricBatch;
  static Request Random(uint64_t seed) { return RandomMetricsRequest(seed); }
  static Request Realistic(uint64_t seed) { return RealisticMetricsRequest(seed, kRealisticRows); }
  static absl::Status DecodeProto(std::string_view bytes, Batch* batch) {
    return otlp::DecodeMetricsProto(bytes, batch);
  }
  static absl::Status DecodeJson(std::string_view json, Batch* batch) {
    return otlp::DecodeMetricsJson(json, batch);
  }
  static std::string EncodeProto(const Batch& batch) { return otlp::EncodeMetricsProto(batch); }
  static std::string EncodeJson(const Batch& batch) { return otlp::EncodeMetricsJson(batch); }
  static absl::StatusOr<Request> ToMessage(const Batch& batch) { return ToMetricsRequest(batch); }
};

// Which decoder reads an input.
enum class Format { kProto, kJson };

// One seed's inputs: the generated request, its normalized copy, and both
// wire forms of it (the JSON one printed on first use).
template <typename S>
class Case {
 public:
  // The JSON layout varies with the seed: compact or pretty, with or
  // without defaults, 64-bit integers as strings or numbers.
  explicit Case(uint64_t seed)
      : Case(S::Random(seed), OtlpJsonStyle{.pretty = seed % 4 >= 2,
                                            .print_defaults = seed % 2 == 1,
                                            .int64_as_numbers = seed % 8 >= 4}) {}
  Case(typename S::Request request, const OtlpJsonStyle& style)
      : original(std::move(request)), json_style(style) {
    expected = original;
    Normalize(&expected);
    proto = original.SerializeAsString();
  }

  // libprotobuf's OTLP/JSON of `original`, or why it could not be printed.
  const absl::StatusOr<std::string>& json() const {
    if (!json_) json_ = ToOtlpJson(original, json_style);
    return *json_;
  }

  typename S::Request original;
  typename S::Request expected;
  std::string proto;
  OtlpJsonStyle json_style;

 private:
  mutable std::optional<absl::StatusOr<std::string>> json_;
};

// JSON text for a failure report, elided when too long to read.
std::string Excerpt(std::string_view json) {
  constexpr size_t kMaxBytes = 4000;
  if (json.size() <= kMaxBytes) return std::string(json);
  return absl::StrCat(std::string(json.substr(0, kMaxBytes)), "... (", json.size(),
                      " bytes; regenerate from the seed)");
}

// Decodes `input` into `batch` (which may already hold rows) and checks the
// batch's invariants; on failure returns what went wrong.
template <typename S>
std::string Decode(Format format, std::string_view input, typename S::Batch* batch) {
  absl::Status status =
      format == Format::kProto ? S::DecodeProto(input, batch) : S::DecodeJson(input, batch);
  const char* what = format == Format::kProto ? "DecodeProto" : "DecodeJson";
  if (!status.ok()) return absl::StrCat(what, " failed: ", status.ToString());
  status = otlp::ValidateBatch(*batch);
  if (!status.ok()) return absl::StrCat("ValidateBatch after ", what, ": ", status.ToString());
  return "";
}

// Converts `batch` and compares it with `expected`.
template <typename S>
std::string Compare(const typename S::Request& expected, const typename S::Batch& batch) {
  absl::StatusOr<typename S::Request> actual = S::ToMessage(batch);
  if (!actual.ok()) return absl::StrCat("to_message failed: ", actual.status().ToString());
  std::string diff = MessageDifferences(expected, *actual);
  return diff.empty() ? "" : absl::StrCat("differences (expected -> actual):\n", diff);
}

template <typename S>
std::string DecodeAndCompare(Format format, std::string_view input,
                             const typename S::Request& expected) {
  typename S::Batch batch;
  std::string error = Decode<S>(format, input, &batch);
  return error.empty() ? Compare<S>(expected, batch) : error;
}

template <typename S>
std::string CheckProtoDecode(const Case<S>& c) {
  return DecodeAndCompare<S>(Format::kProto, c.proto, c.expected);
}

// The same request in a wire form libprotobuf never writes (field order,
// unpacked scalars, unknown fields; wire_scrambler.h).
template <typename S>
std::string CheckScrambledProtoDecode(const Case<S>& c, uint64_t seed) {
  absl::StatusOr<std::string> wire = ScrambleWire(c.proto, S::Request::descriptor(), seed);
  if (!wire.ok()) return absl::StrCat("harness: ScrambleWire: ", wire.status().ToString());
  typename S::Request reparsed;
  if (!reparsed.ParseFromString(*wire)) return "harness: libprotobuf rejects the scrambled wire";
  reparsed.DiscardUnknownFields();
  Normalize(&reparsed);
  if (std::string diff = MessageDifferences(c.expected, reparsed); !diff.empty()) {
    return absl::StrCat("harness: the scrambled wire means something else:\n", diff);
  }
  return DecodeAndCompare<S>(Format::kProto, *wire, c.expected);
}

template <typename S>
std::string CheckJsonDecode(const Case<S>& c) {
  if (!c.json().ok()) return absl::StrCat("ToOtlpJson: ", c.json().status().ToString());
  std::string error = DecodeAndCompare<S>(Format::kJson, *c.json(), c.expected);
  return error.empty() ? "" : absl::StrCat(error, "\nOTLP/JSON input: ", Excerpt(*c.json()));
}

// Checks one encoder's output of the batch decoded from `c.proto`: it parses
// in libprotobuf to `c.expected`, and decodes to the same message again.
template <typename S>
std::string CheckEncoder(const Case<S>& c, Format format) {
  typename S::Batch batch;
  std::string error = Decode<S>(Format::kProto, c.proto, &batch);
  if (!error.empty()) return error;
  absl::StatusOr<typename S::Request> decoded = S::ToMessage(batch);
  if (!decoded.ok()) return absl::StrCat("to_message failed: ", decoded.status().ToString());
  std::string encoded = format == Format::kProto ? S::EncodeProto(batch) : S::EncodeJson(batch);
  std::string what = format == Format::kProto ? "EncodeProto" : "EncodeJson";

  typename S::Request parsed;
  if (format == Format::kProto) {
    if (!parsed.ParseFromString(encoded)) return what + " output does not parse in libprotobuf";
  } else if (absl::Status s = FromOtlpJson(encoded, &parsed); !s.ok()) {
    return absl::StrCat(what, " output does not parse in libprotobuf: ", s.ToString(),
                        "\noutput: ", Excerpt(encoded));
  }
  Normalize(&parsed);
  std::string diff = MessageDifferences(c.expected, parsed);
  if (!diff.empty()) {
    return absl::StrCat(what, " output parsed by libprotobuf differs (expected -> actual):\n",
                        diff);
  }
  error = DecodeAndCompare<S>(format, encoded, *decoded);
  return error.empty() ? "" : absl::StrCat("decoding ", what, " output: ", error);
}

// Decodes `first` and then `second` into one batch.
template <typename S>
std::string CheckAppend(const Case<S>& first, Format first_format, const Case<S>& second,
                        Format second_format) {
  if (!first.json().ok() || !second.json().ok()) return "ToOtlpJson failed";
  typename S::Request expected = first.expected;
  expected.MergeFrom(second.expected);  // repeated fields concatenate
  typename S::Batch batch;
  std::string error =
      Decode<S>(first_format, first_format == Format::kProto ? first.proto : *first.json(), &batch);
  if (error.empty()) {
    error = Decode<S>(second_format,
                      second_format == Format::kProto ? second.proto : *second.json(), &batch);
  }
  return error.empty() ? Compare<S>(expected, batch) : error;
}

// One combination of formats per seed, rotating: protobuf + protobuf,
// JSON + JSON, protobuf + JSON.
template <typename S>
std::string CheckAppends(const Case<S>& first, const Case<S>& second, uint64_t seed) {
  static constexpr std::pair<Format, Format> kCombinations[] = {{Format::kProto, Format::kProto},
                                                                {Format::kJson, Format::kJson},
                                                                {Format::kProto, Format::kJson}};
  auto [a, b] = kCombinations[seed % 3];
  std::string error = CheckAppend(first, a, second, b);
  if (error.empty()) return "";
  return absl::StrCat(a == Format::kProto ? "protobuf" : "JSON", " then ",
                      b == Format::kProto ? "protobuf" : "JSON", ": ", error);
}

// Runs `check` on every seed and reports failing seeds.
template <typename Check>
void ForEachSeed(const char* property, Check check) {
  uint64_t cases = CaseCount();
  uint64_t first = FirstSeed();
  int failures = 0;
  for (uint64_t seed = first; seed < first + cases; ++seed) {
    std::string error = check(seed);
    if (error.empty()) continue;
    if (++failures <= kMaxReportedFailures) {
      ADD_FAILURE() << property << ", seed " << seed << " (replay: STRATA_DIFF_SEED=" << seed
                    << " STRATA_DIFF_CASES=1):\n"
                    << error;
    }
  }
  EXPECT_EQ(failures, 0) << property << ": " << failures << " of " << cases
                         << " seeds failed, starting at seed " << first;
}

template <typename S>
class DifferentialTest : public testing::Test {};

class SignalNames {
 public:
  template <typename T>
  static std::string GetName(int) {
    if constexpr (std::is_same_v<T, Traces>) return "Traces";
    if constexpr (std::is_same_v<T, Logs>) return "Logs";
    return "Metrics";
  }
};

using Signals = testing::Types<Traces, Logs, Metrics>;
TYPED_TEST_SUITE(DifferentialTest, Signals, SignalNames);

TYPED_TEST(DifferentialTest, ProtoDecodeMatchesLibprotobuf) {
  ForEachSeed("proto decode",
              [](uint64_t seed) { return CheckProtoDecode(Case<TypeParam>(seed)); });
}

TYPED_TEST(DifferentialTest, ScrambledProtoDecodeMatchesLibprotobuf) {
  ForEachSeed("scrambled proto decode",
              [](uint64_t seed) { return CheckScrambledProtoDecode(Case<TypeParam>(seed), seed); });
}

TYPED_TEST(DifferentialTest, JsonDecodeMatchesLibprotobuf) {
  ForEachSeed("JSON decode", [](uint64_t seed) { return CheckJsonDecode(Case<TypeParam>(seed)); });
}

TYPED_TEST(DifferentialTest, ProtoEncodeRoundTripsThroughLibprotobufAndDecoder) {
  ForEachSeed("proto encode",
              [](uint64_t seed) { return CheckEncoder(Case<TypeParam>(seed), Format::kProto); });
}

TYPED_TEST(DifferentialTest, JsonEncodeRoundTripsThroughLibprotobufAndDecoder) {
  ForEachSeed("JSON encode",
              [](uint64_t seed) { return CheckEncoder(Case<TypeParam>(seed), Format::kJson); });
}

// Realistic requests are large (multi-byte lengths, many rows per scope),
// where random ones are small; one per 200 random cases.
TYPED_TEST(DifferentialTest, RealisticRequestsPassEveryCheck) {
  uint64_t cases = std::max<uint64_t>(1, CaseCount() / 200);
  uint64_t first = FirstSeed();
  for (uint64_t seed = first; seed < first + cases; ++seed) {
    Case<TypeParam> c(TypeParam::Realistic(seed), OtlpJsonStyle{});
    for (auto [name, error] : {std::pair{"proto decode", CheckProtoDecode(c)},
                               std::pair{"JSON decode", CheckJsonDecode(c)},
                               std::pair{"proto encode", CheckEncoder(c, Format::kProto)},
                               std::pair{"JSON encode", CheckEncoder(c, Format::kJson)}}) {
      EXPECT_EQ(error, "") << name << ", realistic seed " << seed;
    }
  }
}

TYPED_TEST(DifferentialTest, DecodingTwoRequestsIntoOneBatchConcatenates) {
  ForEachSeed("append", [](uint64_t seed) {
    return CheckAppends(Case<TypeParam>(seed), Case<TypeParam>(PartnerSeed(seed)), seed);
  });
}

}  // namespace
}  // namespace strata::otlp_reference
