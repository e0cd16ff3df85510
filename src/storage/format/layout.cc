#include "storage/format/layout.h"

#include <utility>

#include "common/path.h"

namespace strata::storage {

DataDirPaths::DataDirPaths(std::string data_dir) : data_dir_(std::move(data_dir)) {
  while (data_dir_.size() > 1 && data_dir_.back() == '/') data_dir_.pop_back();
}

std::string DataDirPaths::Top(std::string_view name) const { return JoinPath(data_dir_, name); }
std::string DataDirPaths::Lock() const { return Top(kLockFileName); }
std::string DataDirPaths::Format() const { return Top(kFormatFileName); }
std::string DataDirPaths::FormatTemp() const { return Top(kFormatTempFileName); }
std::string DataDirPaths::Telemetry() const { return Top(kTelemetryDirName); }
std::string DataDirPaths::Staging() const { return JoinPath(Telemetry(), kStagingDirName); }
std::string DataDirPaths::Days() const { return JoinPath(Telemetry(), kDaysDirName); }
std::string DataDirPaths::Quarantine() const { return JoinPath(Telemetry(), kQuarantineDirName); }
std::string DataDirPaths::CompactionMarker() const {
  return JoinPath(Telemetry(), kCompactionMarkerFileName);
}
std::string DataDirPaths::CompactionMarkerTemp() const {
  return JoinPath(Telemetry(), kCompactionMarkerTempFileName);
}
std::string DataDirPaths::RestoreMarker() const {
  return JoinPath(Telemetry(), kRestoreMarkerFileName);
}
std::string DataDirPaths::QueryTemp() const {
  return JoinPath(Top(kQueryDirName), kQueryTempDirName);
}
std::string DataDirPaths::QueryCache() const {
  return JoinPath(Top(kQueryDirName), kQueryCacheDirName);
}
std::string DataDirPaths::ServiceMapState() const {
  return JoinPath(Top(kQueryDirName), kServiceMapStateFileName);
}
std::string DataDirPaths::ServiceMapStateTemp() const {
  return JoinPath(Top(kQueryDirName), kServiceMapStateTempFileName);
}
std::string DataDirPaths::ControlDb() const {
  return JoinPath(Top(kControlDirName), kControlDbFileName);
}
std::string DataDirPaths::StagingBatch(const BatchId& id) const {
  return JoinPath(Staging(), id.ToString());
}
std::string DataDirPaths::ScratchFor(const BatchId& id) const {
  return JoinPath(Staging(), id.ToString() + kScratchDirSuffix);
}
std::string DataDirPaths::RetiredBatch(const BatchId& id) const {
  return JoinPath(Staging(), id.ToString() + kRetiredDirSuffix);
}
std::string DataDirPaths::Day(std::string_view day) const { return JoinPath(Days(), day); }
std::string DataDirPaths::Batch(std::string_view day, const BatchId& id) const {
  return JoinPath(Day(day), id.ToString() + kBatchDirSuffix);
}

std::vector<std::string> DataDirPaths::InitialDirs() const {
  std::vector<std::string> dirs;
  for (std::string_view name : kTopLevelDirNames) {
    dirs.push_back(Top(name));
    if (name != kTelemetryDirName) continue;
    for (std::string_view child : kTelemetryDirNames) dirs.push_back(JoinPath(Telemetry(), child));
  }
  return dirs;
}

}  // namespace strata::storage
