#pragma once

// The id of a live tail's record event (GET /api/v1/logs/tail, docs/api.md):
// "<batch id>-<row>", the batch that holds the record and its row in that
// batch's logs.parquet. Clients send it back in Last-Event-ID, so parsing
// it is parsing untrusted text (fuzz/tail_event_id_fuzz.cc).
//
// Thread-safety: reentrant. Errors: ParseTailEventId returns
// InvalidArgument naming Last-Event-ID and quoting the text.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "storage/format/batch_id.h"

namespace strata::api {

struct TailEventId {
  storage::BatchId batch;
  uint64_t row = 0;
};

std::string FormatTailEventId(const storage::BatchId& batch, uint64_t row);
[[nodiscard]] absl::StatusOr<TailEventId> ParseTailEventId(std::string_view text);

}  // namespace strata::api
