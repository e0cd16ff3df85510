#pragma once

// OTLP/JSON through libprotobuf, for the differential tests.
//
// OTLP/JSON is protobuf's canonical JSON mapping with three changes (the
// "JSON Protobuf Encoding" section of the OTLP specification): trace and
// span ids are hex strings instead of base64, enums are integers, and keys
// are lowerCamelCase. ToOtlpJson() runs libprotobuf's JSON printer with
// integer enums and lowerCamelCase names, then rewrites the values of the
// keys traceId, spanId and parentSpanId from base64 to lowercase hex (and,
// if asked, 64-bit integers from strings to numbers).
// FromOtlpJson() does the reverse: hex ids back to base64, then libprotobuf's
// JSON parser. These keys hold ids wherever they appear in the OTLP protos,
// and no other bytes field uses them; bytes AnyValues stay base64.
//
// Thread-safety: reentrant. Errors: Internal when libprotobuf's printer
// fails; InvalidArgument when the JSON is malformed, an id is not valid
// base64 or hex, or libprotobuf's parser rejects the input.

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/message.h"

namespace strata::otlp_reference {

// Layout choices that OTLP/JSON leaves open, so decoders see each of them.
struct OtlpJsonStyle {
  // Newlines and indentation instead of the compact form.
  bool pretty = false;
  // Also print fields at their default value (0, "", [], with empty ids as
  // ""), which a decoder must read as absent where presence matters.
  bool print_defaults = false;
  // 64-bit integers (times, counts, int values) as JSON numbers instead of
  // decimal strings; protobuf's JSON mapping lets parsers accept both, and
  // some exporters send numbers.
  bool int64_as_numbers = false;
};

[[nodiscard]] absl::StatusOr<std::string> ToOtlpJson(const google::protobuf::Message& message,
                                                     const OtlpJsonStyle& style = {});

// Parses OTLP/JSON into `message`. Keys the 0.38 protos do not know (fields
// added by later OTLP versions) are ignored; a comparison of the result
// still notices anything lost.
[[nodiscard]] absl::Status FromOtlpJson(std::string_view json, google::protobuf::Message* message);

}  // namespace strata::otlp_reference
