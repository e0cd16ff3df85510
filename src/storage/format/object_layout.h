#pragma once

// The object layout (docs/format/object-layout.md): the keys of a batch's
// files in an object store, Hive-partitioned by day so engines that read
// Parquet from S3 can prune by `day`. The names inside come from layout.h.
//
//   telemetry/days/day=<YYYY-MM-DD>/<id>.batch/<file>
//
// Pure functions; safe to call from any thread.

#include <optional>
#include <string>
#include <string_view>

#include "storage/format/batch_id.h"

namespace strata::storage {

inline constexpr char kDayPartitionPrefix[] = "day=";

// "telemetry/days/day=<day>/": the key prefix of a day's batches.
std::string DayObjectPrefix(std::string_view day);
// "telemetry/days/day=<day>/<id>.batch/": the key prefix of a batch.
std::string BatchObjectPrefix(std::string_view day, const BatchId& id);
// "telemetry/days/day=<day>/<id>.batch/<file>".
std::string BatchObjectKey(std::string_view day, const BatchId& id, std::string_view file);

// The day and batch of an object key of that form (any file, at any depth
// inside the batch), or nullopt for a key of another form or a batch id
// that does not parse.
struct BatchObjectName {
  std::string day;
  BatchId id;
};
std::optional<BatchObjectName> ParseBatchObjectKey(std::string_view key);

}  // namespace strata::storage
