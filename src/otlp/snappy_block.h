#pragma once

// SnappyUncompress: the decoder of Snappy's block format (the raw format,
// not the framing format), which Loki clients use for the body of
// POST /loki/api/v1/push and Prometheus remote write for theirs.
//
// The block is a varint of the uncompressed length, then elements: a
// literal (tag low bits 00; its length in the tag or in 1-4 bytes after
// it) or a copy of earlier output (01: 1-byte offset, 10: 2-byte, 11:
// 4-byte), which may overlap what it writes.
//
// Errors: InvalidArgument for a malformed block (truncated, a copy from
// before the start or at offset 0, output longer or shorter than declared);
// OutOfRange when the declared length is above `max_bytes`, before
// anything is allocated. The decoder never reads outside its input nor
// writes past the declared length.
//
// Thread-safety: reentrant.

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace strata::otlp {

[[nodiscard]] absl::StatusOr<std::string> SnappyUncompress(std::string_view block,
                                                           size_t max_bytes);

}  // namespace strata::otlp
