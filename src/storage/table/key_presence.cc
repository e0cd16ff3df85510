#include "storage/table/key_presence.h"

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/status_macros.h"
#include "io/posix_file_system.h"
#include "parquet/file_reader.h"
#include "spdlog/spdlog.h"
#include "storage/table/file_source.h"

namespace strata::storage {
namespace {

// Reads the answer; errors for a file that cannot be read.
absl::StatusOr<bool> ReadMayHoldKey(const std::string& path,
                                    std::span<const std::string_view> columns,
                                    std::string_view key) {
  PosixFileSystem fs;
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<FileSource> source, OpenFileSource(fs, path));
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<parquet::FileReader> reader,
                          parquet::FileReader::Open(source.get(), {.file_name = path}));
  for (const std::string_view name : columns) {
    const int column = reader->FindColumn(name);
    if (column < 0) continue;  // a table without this family holds no such key
    for (size_t group = 0; group < reader->metadata().row_groups.size(); ++group) {
      STRATA_ASSIGN_OR_RETURN(const bool may, reader->ChunkMayHold(static_cast<int>(group), column,
                                                                   key, kKeyPresenceReadBytes));
      if (may) return true;
    }
  }
  return false;
}

class KeyPresenceCache {
 public:
  bool MayHold(const std::string& path, std::span<const std::string_view> columns,
               std::string_view key) {
    std::string entry = path;
    for (const std::string_view column : columns) entry.append("\n").append(column);
    entry.append("\n\n").append(key);
    {
      absl::MutexLock lock(&mu_);
      if (auto it = answers_.find(entry); it != answers_.end()) return it->second;
    }
    absl::StatusOr<bool> may = ReadMayHoldKey(path, columns, key);
    if (!may.ok()) {
      spdlog::warn("reading the key lists of {} for '{}': {}; reading its rows instead", path, key,
                   may.status().ToString());
      return true;
    }
    absl::MutexLock lock(&mu_);
    if (answers_.size() >= kMaxKeyPresenceEntries) answers_.clear();
    answers_.emplace(std::move(entry), *may);
    return *may;
  }

 private:
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, bool> answers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

bool FileMayHoldKey(const std::string& path, std::span<const std::string_view> columns,
                    std::string_view key) {
  static KeyPresenceCache* const cache = new KeyPresenceCache();
  return cache->MayHold(path, columns, key);
}

}  // namespace strata::storage
