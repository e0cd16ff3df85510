#pragma once

// DataFileResolver: the one place a reader turns a batch and one of its
// data files into a path it can open (docs/operations.md, "Evicting local
// copies"). For a batch whose local Parquet files were evicted after
// upload (format/evicted_marker.h) the path is a ReadCache file holding the
// whole object, kept while the returned hold lives; for any other batch it
// is the file in the batch directory.
//
// Readers call ResolveDataFile(), which asks the resolver the storage
// engine installed while eviction is on (--evict-after) and otherwise
// returns the local path, so a server without eviction opens exactly the
// files it did before. A reader keeps ResolvedFile::hold for as long as it
// reads the file (a query keeps it with its view file list).
//
// Evicted ids are added before the catalog names the batch's evicted
// record and before its local files go (evictor.h), so a reader that gets
// a local path from the resolver holds a record whose files stay until it
// lets go.
//
// Thread-safety: safe for concurrent use. Errors: the cache's (the
// store's NotFound, DataLoss for a length mismatch); NotFound for a file
// the batch's meta.json does not declare.

#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"
#include "objectstore/batch_store.h"
#include "storage/commit/catalog.h"
#include "storage/offload/read_cache.h"
#include "storage/table/file_source.h"

namespace strata::storage {

struct ResolvedFile {
  std::string path;
  // Keeps a cached file in the cache while a reader uses it; null for a
  // local file.
  std::shared_ptr<const void> hold;
};

class DataFileResolver {
 public:
  // `store` must outlive the resolver.
  DataFileResolver(std::unique_ptr<ReadCache> cache, objectstore::BatchStore& store)
      : cache_(std::move(cache)), store_(store) {}
  DataFileResolver(const DataFileResolver&) = delete;
  DataFileResolver& operator=(const DataFileResolver&) = delete;

  void MarkEvicted(const BatchId& id) ABSL_LOCKS_EXCLUDED(mu_);
  bool IsEvicted(const BatchId& id) const ABSL_LOCKS_EXCLUDED(mu_);
  // `file` of `batch` (a name from layout.h) as a path to open.
  [[nodiscard]] absl::StatusOr<ResolvedFile> Resolve(const LiveBatch& batch,
                                                     std::string_view file) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // The path Resolve() answers for `file` of `batch`, without fetching:
  // for matching a path a query reported back to its batch.
  std::string PathOf(const LiveBatch& batch, std::string_view file) const ABSL_LOCKS_EXCLUDED(mu_);

  objectstore::BatchStore& store() const { return store_; }
  ReadCacheStats CacheStats() const { return cache_->Stats(); }

 private:
  const std::unique_ptr<ReadCache> cache_;
  objectstore::BatchStore& store_;
  mutable Mutex mu_;
  std::set<BatchId> evicted_ ABSL_GUARDED_BY(mu_);
};

// `file` of `batch` as ResolveDataFile() would name it, without fetching.
std::string DataFilePathOf(const LiveBatch& batch, std::string_view file);

// The resolver readers use; null (the default) for none. The storage
// engine installs its own and removes it before destroying it.
void InstallDataFileResolver(DataFileResolver* resolver);
DataFileResolver* InstalledDataFileResolver();

// `file` of `batch` through the installed resolver, or the local path
// (batch.dir()/file) when none is installed.
[[nodiscard]] absl::StatusOr<ResolvedFile> ResolveDataFile(const LiveBatch& batch,
                                                           std::string_view file);

// `batch`'s data files through ResolveDataFile, as the readers that take a
// DataFileOpener (table/rollups_table.h) want them: each source opened in
// `fs` and keeping its cached copy held while it lives. `fs` and `batch`
// must outlive the opener.
DataFileOpener DataFilesOf(FileSystem& fs, const LiveBatch& batch);

}  // namespace strata::storage
