#include "storage/format/object_layout.h"

#include "storage/format/layout.h"

namespace strata::storage {

std::string DayObjectPrefix(std::string_view day) {
  std::string prefix;
  prefix.append(kTelemetryDirName).append("/").append(kDaysDirName).append("/");
  prefix.append(kDayPartitionPrefix).append(day).append("/");
  return prefix;
}

std::string BatchObjectPrefix(std::string_view day, const BatchId& id) {
  std::string prefix = DayObjectPrefix(day);
  prefix.append(id.ToString()).append(kBatchDirSuffix).append("/");
  return prefix;
}

std::string BatchObjectKey(std::string_view day, const BatchId& id, std::string_view file) {
  return BatchObjectPrefix(day, id).append(file);
}

std::optional<BatchObjectName> ParseBatchObjectKey(std::string_view key) {
  std::string days;
  days.append(kTelemetryDirName).append("/").append(kDaysDirName).append("/");
  days.append(kDayPartitionPrefix);
  if (!key.starts_with(days)) return std::nullopt;
  key.remove_prefix(days.size());
  const size_t day_end = key.find('/');
  if (day_end == std::string_view::npos) return std::nullopt;
  const std::string_view day = key.substr(0, day_end);
  key.remove_prefix(day_end + 1);
  const size_t batch_end = key.find('/');
  if (batch_end == std::string_view::npos) return std::nullopt;
  std::string_view name = key.substr(0, batch_end);
  if (!name.ends_with(kBatchDirSuffix)) return std::nullopt;
  name.remove_suffix(std::string_view(kBatchDirSuffix).size());
  absl::StatusOr<BatchId> id = BatchId::Parse(name);
  if (!id.ok() || id->Day() != day) return std::nullopt;
  return BatchObjectName{.day = std::string(day), .id = *id};
}

}  // namespace strata::storage
