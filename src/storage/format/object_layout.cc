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

}  // namespace strata::storage
