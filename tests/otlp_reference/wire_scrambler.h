#pragma once

// ScrambleWire() re-encodes a serialized message in another valid protobuf
// wire form with the same meaning, to check that a decoder accepts what the
// protobuf encoding allows and libprotobuf never produces:
//   - fields in a random order: fields of different numbers interleave at
//     random, while elements of one repeated field keep their order;
//   - packed repeated scalars (bucket counts, explicit bounds) sometimes
//     written unpacked, one tag per element;
//   - unknown fields (numbers 4000-4099, every wire type) inserted at random.
// libprotobuf parses the result to the original message plus unknown fields.
//
// The message's descriptor tells which length-delimited fields are
// submessages (scrambled recursively) and which are packed scalars.
//
// Thread-safety: reentrant. Errors: InvalidArgument if `bytes` is not a
// well-formed serialization of `descriptor`'s message.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "google/protobuf/descriptor.h"

namespace strata::otlp_reference {

[[nodiscard]] absl::StatusOr<std::string> ScrambleWire(
    std::string_view bytes, const google::protobuf::Descriptor* descriptor, uint64_t seed);

}  // namespace strata::otlp_reference
