#pragma once

// LocalBatchStore: a BatchStore on a local directory, through io/FileSystem
// (the reference the conformance suite holds S3 to). An object lives at
// <root>/<key>.
//
// Create-only put: the bytes are written and synced under a private name in
// <root>/.staging/, then link(2)ed to <root>/<key>, which fails with EEXIST
// if the key exists, so of racing writers exactly one wins; the winner syncs
// the key's directory and everyone removes its private name. Readers never
// see a partial object, and a crash leaves at most an unnamed file in
// .staging/ (no key may start a segment with '.', so it is never listed).
// Directories emptied by DeleteMany() stay.
//
// List() walks the directories under the prefix and sorts the keys; a page's
// continuation is the last key it returned. Fine for the thousands of
// objects a data directory holds; it reads the whole subtree per page.
//
// Thread-safety: safe for concurrent use. Errors: as BatchStore, with the
// file system's errors (naming the path) passed through.

#include <atomic>
#include <string>

#include "io/file_system.h"
#include "objectstore/batch_store.h"

namespace strata::objectstore {

// The bytes a streamed put reads and writes at a time.
inline constexpr size_t kLocalStreamChunkBytes = 8 << 20;

class LocalBatchStore final : public BatchStore {
 public:
  // `fs` must outlive the store. `root` is created if missing.
  static absl::StatusOr<std::unique_ptr<LocalBatchStore>> Open(FileSystem& fs, std::string root);

  absl::Status PutIfAbsent(std::string_view key, std::string_view data) override;
  absl::Status PutStreamIfAbsent(std::string_view key, uint64_t size,
                                 const PartReader& read) override;
  absl::StatusOr<std::string> Get(std::string_view key, uint64_t offset, uint64_t length) override;
  absl::StatusOr<ObjectInfo> Head(std::string_view key) override;
  absl::StatusOr<ListPage> List(std::string_view prefix, std::string_view continuation,
                                int max_keys) override;
  absl::Status DeleteMany(const std::vector<std::string>& keys) override;
  std::string Describe() const override { return "local:" + root_; }

 private:
  LocalBatchStore(FileSystem& fs, std::string root, std::string staging_name_prefix);
  std::string PathOf(std::string_view key) const;
  // The create-only put both puts share: `write` fills a private staged
  // file, which is synced and linked to the key's name.
  absl::Status PutStaged(std::string_view key,
                         const std::function<absl::Status(WritableFile&)>& write);
  // Appends every key under the directory `dir` (a key prefix ending in '/'
  // or empty for the root) that starts with `prefix` to `keys`.
  absl::Status CollectKeys(const std::string& dir, std::string_view prefix,
                           std::vector<std::string>& keys, int depth);

  // Constant after construction.
  FileSystem& fs_;
  const std::string root_;
  const std::string staging_name_prefix_;  // unique per store instance
  // Numbers private staging names; atomic because puts run concurrently and
  // each needs only a distinct value.
  std::atomic<uint64_t> next_staging_number_{0};
};

}  // namespace strata::objectstore
