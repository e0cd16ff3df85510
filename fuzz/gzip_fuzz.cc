// libFuzzer target for gzip decompression (server::GunzipLimited), which
// the OTLP/HTTP listener runs on untrusted request bodies.
//
// Input: arbitrary bytes, used twice.
//  1. As a gzip body: GunzipLimited must refuse it with InvalidArgument or
//     OutOfRange only, never produce more than its limit, give the same
//     output again under a limit of exactly the output's size, and refuse
//     one byte less as OutOfRange.
//  2. As plain data: Gzip() at a level picked from the input must come back
//     unchanged, and every truncation of that gzip must be refused as
//     InvalidArgument.
// Seeds: fuzz/corpus/gzip/.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/check.h"
#include "server/gzip.h"

namespace {

constexpr size_t kMaxOut = 1 << 20;

void CheckAsGzip(std::string_view input) {
  using strata::server::GunzipLimited;
  const auto out = GunzipLimited(input, kMaxOut);
  if (!out.ok()) {
    const absl::StatusCode code = out.status().code();
    STRATA_CHECK(
        code == absl::StatusCode::kInvalidArgument || code == absl::StatusCode::kOutOfRange,
        out.status().ToString().c_str());
    return;
  }
  STRATA_CHECK(out->size() <= kMaxOut, "output over the limit");
  const auto exact = GunzipLimited(input, out->size());
  STRATA_CHECK(exact.ok() && *exact == *out,
               "a limit of exactly the output size changed the result");
  if (!out->empty()) {
    const auto under = GunzipLimited(input, out->size() - 1);
    STRATA_CHECK(!under.ok() && under.status().code() == absl::StatusCode::kOutOfRange,
                 "one byte under the output size was not OutOfRange");
  }
}

void CheckRoundTrip(std::string_view input) {
  const int level = input.empty() ? -1 : static_cast<int>(static_cast<uint8_t>(input[0]) % 11) - 1;
  const std::string gz = strata::server::Gzip(input, level);
  const auto back = strata::server::GunzipLimited(gz, input.size());
  STRATA_CHECK(back.ok() && *back == input, "Gzip did not round-trip");
  // A few truncations, spread over the member (all of them for short ones).
  const size_t step = gz.size() / 16 + 1;
  for (size_t cut = 0; cut < gz.size(); cut += step) {
    const auto truncated =
        strata::server::GunzipLimited(std::string_view(gz).substr(0, cut), input.size());
    STRATA_CHECK(!truncated.ok() && truncated.status().code() == absl::StatusCode::kInvalidArgument,
                 "a truncated gzip member was not refused as InvalidArgument");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  CheckAsGzip(input);
  CheckRoundTrip(input);
  return 0;
}
