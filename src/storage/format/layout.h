#pragma once

// The data directory's layout (docs/format/layout.md) in one place: every
// file and folder name strata writes, the folders initialisation creates,
// and DataDirPaths, the one way to spell a path inside a data directory.
// Nothing else in the tree spells these names; tests may.
//
//   <data>/LOCK, FORMAT (FORMAT.tmp while initialising)
//   <data>/telemetry/staging/<id>[.retired|.scratch]
//   <data>/telemetry/days/<day>/<id>.batch/{meta.json, spans.parquet,
//                                           spans.tidx, logs.parquet,
//                                           metrics.parquet}
//   <data>/telemetry/quarantine/, telemetry/COMPACTION.json[.tmp]
//   <data>/telemetry/RESTORING  (a restore of this node's batches under way)
//   <data>/query/tmp/  (DuckDB's spill space)
//   <data>/query/cache/  (with eviction: the ReadCache of evicted files)
//   <data>/query/service_map.state[.tmp]  (the service map's resolved state)
//   <data>/control/strata.sqlite
//
// Constants and a value type; safe to use from any thread.

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "storage/format/batch_id.h"

namespace strata::storage {

// ---- The top of a data directory ----
inline constexpr char kLockFileName[] = "LOCK";
inline constexpr char kFormatFileName[] = "FORMAT";
inline constexpr char kFormatTempFileName[] = "FORMAT.tmp";
inline constexpr char kTelemetryDirName[] = "telemetry";
inline constexpr char kQueryDirName[] = "query";
inline constexpr char kControlDirName[] = "control";

// ---- Under telemetry/ ----
inline constexpr char kStagingDirName[] = "staging";
inline constexpr char kDaysDirName[] = "days";
inline constexpr char kQuarantineDirName[] = "quarantine";
inline constexpr char kCompactionMarkerFileName[] = "COMPACTION.json";
inline constexpr char kCompactionMarkerTempFileName[] = "COMPACTION.json.tmp";
// Present while a restore of this node's batches from the shared catalog
// (ClusterMember::RestoreOwnBatches) is under way: the batches here are
// not yet the node's whole state.
inline constexpr char kRestoreMarkerFileName[] = "RESTORING";

// ---- Batch directories and their files ----
inline constexpr char kBatchDirSuffix[] = ".batch";
inline constexpr char kRetiredDirSuffix[] = ".retired";
inline constexpr char kScratchDirSuffix[] = ".scratch";
inline constexpr char kBatchMetaFileName[] = "meta.json";
inline constexpr char kSpansFileName[] = "spans.parquet";
inline constexpr char kTraceIndexFileName[] = "spans.tidx";
inline constexpr char kLogsFileName[] = "logs.parquet";
inline constexpr char kMetricsFileName[] = "metrics.parquet";
inline constexpr char kRollupsFileName[] = "rollups.parquet";
// The data files meta.json's `files` knows, in member order (format 1 has
// all but the last).
inline constexpr const char* kBatchFileNames[] = {
    kSpansFileName, kTraceIndexFileName, kLogsFileName, kMetricsFileName, kRollupsFileName};

// ---- Elsewhere ----
inline constexpr char kQueryTempDirName[] = "tmp";             // under query/
inline constexpr char kQueryCacheDirName[] = "cache";          // under query/
inline constexpr char kControlDbFileName[] = "strata.sqlite";  // under control/
// The service map's resolved state (service-map-state.md), under query/.
inline constexpr char kServiceMapStateFileName[] = "service_map.state";
inline constexpr char kServiceMapStateTempFileName[] = "service_map.state.tmp";

// The folders initialisation creates: these at the top of the data
// directory, and telemetry/'s children below.
inline constexpr std::array<std::string_view, 3> kTopLevelDirNames = {
    kTelemetryDirName, kQueryDirName, kControlDirName};
inline constexpr std::array<std::string_view, 3> kTelemetryDirNames = {
    kStagingDirName, kDaysDirName, kQuarantineDirName};

// The paths of the layout under one data directory (given without trailing
// '/', which the constructor trims).
class DataDirPaths {
 public:
  explicit DataDirPaths(std::string data_dir);

  const std::string& data_dir() const { return data_dir_; }
  // <data>/<name>: a name at the top of the data directory.
  std::string Top(std::string_view name) const;
  std::string Lock() const;
  std::string Format() const;
  std::string FormatTemp() const;
  std::string Telemetry() const;
  std::string Staging() const;
  std::string Days() const;
  std::string Quarantine() const;
  std::string CompactionMarker() const;
  std::string CompactionMarkerTemp() const;
  // telemetry/RESTORING
  std::string RestoreMarker() const;
  // query/tmp
  std::string QueryTemp() const;
  // query/cache: the ReadCache of evicted batches' files
  std::string QueryCache() const;
  // query/service_map.state and the temporary file it is written as
  std::string ServiceMapState() const;
  std::string ServiceMapStateTemp() const;
  // control/strata.sqlite
  std::string ControlDb() const;
  // staging/<id>
  std::string StagingBatch(const BatchId& id) const;
  // staging/<id>.retired
  std::string RetiredBatch(const BatchId& id) const;
  // staging/<id>.scratch: temporary files of the compaction writing <id>
  std::string ScratchFor(const BatchId& id) const;
  // days/<day>
  std::string Day(std::string_view day) const;
  // days/<day>/<id>.batch
  std::string Batch(std::string_view day, const BatchId& id) const;
  // Every folder initialisation creates (kTopLevelDirNames and
  // kTelemetryDirNames), parents before children.
  std::vector<std::string> InitialDirs() const;

 private:
  std::string data_dir_;
};

}  // namespace strata::storage
