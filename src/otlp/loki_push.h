#pragma once

// The decoders of a Loki push (POST /loki/api/v1/push): Loki's protobuf
// PushRequest (after SnappyUncompress, snappy_block.h) and its JSON form,
// both into LokiPush, and the label-set text a protobuf stream carries
// (`{service_name="cart", level="info"}`).
//
// PushRequest { repeated StreamAdapter streams = 1; }
// StreamAdapter { string labels = 1; repeated EntryAdapter entries = 2; }
// EntryAdapter { Timestamp timestamp = 1; string line = 2;
//                repeated LabelPairAdapter structuredMetadata = 3; }
// LabelPairAdapter { string name = 1; string value = 2; }
// Timestamp { int64 seconds = 1; int32 nanos = 2; }
// JSON: {"streams":[{"stream":{"k":"v"},"values":[["<ns>","<line>",
//        {"k":"v"}]]}]}, the timestamp a string of unix nanoseconds.
//
// Limits (LokiPushLimits): the streams and entries of a push are capped;
// past either cap the whole push is refused with ResourceExhausted, and a
// body that does not parse with InvalidArgument. Unknown protobuf fields
// and JSON members are skipped.
//
// Partial pushes: as Loki does, a well-formed push keeps what it can store
// and counts the rest in LokiPush::rejected (docs/loki.md, "Push"):
//   - a stream whose label set does not parse (the protobuf form's text)
//     or holds more than labels_max labels is dropped with its entries
//     (RowRejectReason::kLokiStreamLabels);
//   - an entry whose line is over line_bytes_max bytes, with more than
//     labels_max metadata pairs, or (protobuf) with a timestamp out of range
//     is dropped (RowRejectReason::kLokiEntry).
// Dropped entries still count against entries_max, so the work a push
// costs stays bounded.
//
// Thread-safety: reentrant.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "otlp/batch.h"

namespace strata::otlp {

using LokiLabelPairs = std::vector<std::pair<std::string, std::string>>;

struct LokiPushEntry {
  int64_t time_unix_nano = 0;
  std::string line;
  LokiLabelPairs metadata;
};

struct LokiPushStream {
  LokiLabelPairs labels;
  std::vector<LokiPushEntry> entries;
};

struct LokiPush {
  std::vector<LokiPushStream> streams;  // only what can be stored
  size_t entries = 0;                   // entries in `streams`
  RowRejections rejected;               // entries dropped, with the first reason
};

struct LokiPushLimits {
  size_t streams_max = 10'000;
  size_t entries_max = 100'000;
  size_t labels_max = 64;  // per stream and per entry's metadata
  size_t line_bytes_max = 256 * 1024;
};

[[nodiscard]] absl::StatusOr<LokiPush> DecodeLokiPushProto(std::string_view bytes,
                                                           const LokiPushLimits& limits);
[[nodiscard]] absl::StatusOr<LokiPush> DecodeLokiPushJson(std::string_view bytes,
                                                          const LokiPushLimits& limits);

// `{name="value", ...}` with Go's string escapes (\" \\ \n \t); names are
// [A-Za-z_][A-Za-z0-9_]*. At most `labels_max` pairs.
[[nodiscard]] absl::StatusOr<LokiLabelPairs> ParseLokiLabelSet(std::string_view text,
                                                               size_t labels_max);

}  // namespace strata::otlp
