#pragma once

// ReadCache: a bounded local directory of whole objects fetched back from a
// BatchStore, for readers that need a local file (DuckDB's views) of a
// batch whose local data files were evicted after upload
// (docs/operations.md, "Offload to an object store"). One ReadCache owns
// its directory; nothing else writes there.
//
// Fetch(key, size) returns a handle naming a local file that holds the
// whole object. A miss downloads the object by ranged gets into a private
// temporary name in the directory, checks its length against `size`
// (meta.json's size of the file), syncs it and renames it to its cache
// name, so a partial download is never visible under a cache name.
// Concurrent fetches of one key share one download: the first caller
// downloads, the others wait for it and take its result.
//
// The bound is on bytes: after each download, the least recently used
// files not held by any handle are removed until the cached bytes are at
// most `max_bytes`. Files held by a handle are never removed, so the cache
// may exceed its bound while more than `max_bytes` are in use at once; the
// excess is removed as the handles are dropped. An object larger than
// `max_bytes` is still fetched (a query needs it) and removed once
// released.
//
// Start: Open() removes every temporary file a crash left and adopts the
// complete cache files already there (least recently used first, in name
// order); a cache file whose length differs from the size a later Fetch()
// asks for is fetched again.
//
// Invariants:
//   1. A file under a cache name holds a whole object of the size checked
//      when it was renamed there.
//   2. A file is never removed while a CachedFile handle names it.
//   3. At most one download per key runs at a time.
//   4. Once no handle is held, cached bytes <= max_bytes.
//
// Thread-safety: safe for concurrent use; downloads run on the caller's
// thread without holding the lock; a caller waiting for another's download
// that failed downloads itself. Errors: the store's (NotFound for a
// missing object); DataLoss when the object's length is not `size`; the
// file system's, with the path.

#include <atomic>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "io/file_system.h"
#include "objectstore/batch_store.h"

namespace strata::storage {

struct ReadCacheOptions {
  // The bound on cached bytes (--cache-size).
  uint64_t max_bytes = 1ull << 30;
  // Bytes per ranged get of a download.
  uint64_t fetch_chunk_bytes = 8ull << 20;
};

struct ReadCacheStats {
  uint64_t hits = 0;           // fetches answered by a cached file
  uint64_t misses = 0;         // fetches that downloaded (or waited for a download)
  uint64_t bytes_fetched = 0;  // downloaded from the store
  uint64_t files_removed = 0;  // removed to keep the bound
  uint64_t bytes_cached = 0;   // now, complete files only
  uint64_t files_cached = 0;
};

class ReadCache;

// A cached file, kept in the cache while the handle lives.
class CachedFile {
 public:
  ~CachedFile();
  CachedFile(const CachedFile&) = delete;
  CachedFile& operator=(const CachedFile&) = delete;

  const std::string& path() const { return path_; }

 private:
  friend class ReadCache;
  CachedFile(ReadCache* cache, std::string name, std::string path)
      : cache_(cache), name_(std::move(name)), path_(std::move(path)) {}

  ReadCache* const cache_;
  const std::string name_;
  const std::string path_;
};

class ReadCache {
 public:
  // Creates `dir` if missing, removes the temporaries in it and adopts its
  // complete files. `fs` and `store` must outlive the cache, and the cache
  // every handle it returns.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<ReadCache>> Open(
      FileSystem& fs, std::string dir, objectstore::BatchStore& store, ReadCacheOptions options);
  ReadCache(const ReadCache&) = delete;
  ReadCache& operator=(const ReadCache&) = delete;

  // The object `key` of `size` bytes as a local file, downloaded unless it
  // is cached whole.
  [[nodiscard]] absl::StatusOr<std::unique_ptr<CachedFile>> Fetch(const std::string& key,
                                                                  uint64_t size)
      ABSL_LOCKS_EXCLUDED(mu_);

  ReadCacheStats Stats() const ABSL_LOCKS_EXCLUDED(mu_);

  // The file name under the directory that caches `key` ('/' -> '+', a
  // character keys never hold, so distinct keys get distinct names).
  // Temporaries are named "~<n>.tmp"; no cache name starts with '~'.
  static std::string NameOf(const std::string& key);
  // The path of the cache file `name` (whether or not it is cached).
  std::string PathOf(const std::string& name) const { return dir_ + "/" + name; }

 private:
  friend class CachedFile;

  enum class State { kDownloading, kReady };
  struct Entry {
    State state = State::kDownloading;
    uint64_t size = 0;
    int handles = 0;
    // Position in lru_ (kReady only).
    std::list<std::string>::iterator lru_position;
  };

  ReadCache(FileSystem& fs, std::string dir, objectstore::BatchStore& store,
            ReadCacheOptions options)
      : fs_(fs), dir_(std::move(dir)), store_(store), options_(options) {}

  // Downloads `key` to a temporary and renames it to `path`.
  absl::Status Download(const std::string& key, uint64_t size, const std::string& path);
  void Release(const std::string& name) ABSL_LOCKS_EXCLUDED(mu_);
  // Removes least recently used unheld files until the bound holds.
  void TrimLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  FileSystem& fs_;
  const std::string dir_;
  objectstore::BatchStore& store_;
  const ReadCacheOptions options_;
  // Distinct temporary names; atomic because downloads run unlocked.
  std::atomic<uint64_t> next_temp_{0};

  mutable Mutex mu_;
  CondVar downloaded_cv_;  // a download ended
  std::map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
  // Ready names, least recently used first.
  std::list<std::string> lru_ ABSL_GUARDED_BY(mu_);
  ReadCacheStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace strata::storage
