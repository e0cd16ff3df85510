#pragma once

// One AnyValue on its own, in the protobuf wire format: the storage tables
// keep array and kvlist attribute values (and log bodies) as the encoded
// `opentelemetry.proto.common.v1.AnyValue` message (docs/format/
// attributes.md "Arrays and kvlists"). Both directions reuse the request
// encoder's and decoder's AnyValue code, so the bytes follow the same rules
// (proto_encode_common.h, proto_decode_common.h): every oneof member is
// written even at its default, an empty value is an empty message, and
// decoding enforces DecodeLimits::max_value_depth.
//
// Thread-safety: reentrant; the batch passed to a call has a single owner.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "otlp/batch.h"
#include "otlp/decode.h"

namespace strata::otlp {

// Appends the AnyValue message body of values[row] to *out (no tag or
// length prefix). Array and kvlist children are read from
// batch.nested_values / batch.nested_attributes. Precondition: the batch
// satisfies batch.h's invariants.
void EncodeAnyValueProto(const BatchBase& batch, const ValueColumns& values, size_t row,
                         std::string* out);

// Decodes one AnyValue message body into *out, appending array and kvlist
// children to batch->nested_values / nested_attributes (each value's
// children contiguous). `depth` is the nesting depth an array or kvlist at
// this position has: 1 for an attribute's value or a log body. Strings and
// bytes in the result view `bytes`, which the caller keeps alive as long as
// the batch (for example through BatchBase::Retain). On error the nested
// tables may hold rows nothing refers to.
//
// Errors: InvalidArgument naming the field path and byte offset, as the
// request decoders report.
[[nodiscard]] absl::Status DecodeAnyValueProto(std::string_view bytes, BatchBase* batch,
                                               ValueRow* out, const DecodeLimits& limits = {},
                                               uint32_t depth = 1);

// Appends to *out the string values inside one encoded AnyValue message
// body, depth first in message order: the value itself when it is a
// string, else every string element of an array and every string value of
// a kvlist, at any depth. Keys, bytes and values of other types are not
// strings here. The views point into `bytes`. Errors: DecodeAnyValueProto's
// (on error *out may hold some of the strings).
[[nodiscard]] absl::Status AppendAnyValueStrings(std::string_view bytes,
                                                 std::vector<std::string_view>* out,
                                                 const DecodeLimits& limits = {});

}  // namespace strata::otlp
