#pragma once

// An object in a BatchStore as the Parquet reader's source (parquet::
// RandomAccessSource). Reads are served from aligned blocks of
// kObjectSourceBlockBytes, each fetched by one ranged Get the first time a
// read touches it and kept for the source's life (at most
// kObjectSourceMaxBlocks of them, least recently used evicted), so a
// reader that needs a footer, an offset index and a few pages fetches only
// the blocks holding those, in few round trips: the reader's many small
// reads of neighbouring pages share a block. Trace lookups read the
// spans.parquet of a batch whose local copy is gone this way
// (trace_lookup.h).
//
// Thread-safety: as parquet::FileReader, single owner (the store is safe
// for concurrent use). Errors: the store's; DataLoss when the object is
// shorter than `size` (meta.json's size of the file).

#include <cstdint>
#include <list>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "objectstore/batch_store.h"
#include "parquet/file_reader.h"

namespace strata::storage {

inline constexpr uint64_t kObjectSourceBlockBytes = 64 << 10;
inline constexpr size_t kObjectSourceMaxBlocks = 64;

class ObjectSource final : public parquet::RandomAccessSource {
 public:
  // `store` must outlive the source.
  ObjectSource(objectstore::BatchStore& store, std::string key, uint64_t size)
      : store_(store), key_(std::move(key)), size_(size) {}
  uint64_t size() const override { return size_; }
  absl::Status ReadAt(uint64_t offset, size_t length, std::string* out) override;

 private:
  // The block starting at `start` (a multiple of the block size), fetched
  // if it is not held.
  absl::StatusOr<const std::string*> Block(uint64_t start);

  objectstore::BatchStore& store_;
  const std::string key_;
  const uint64_t size_;
  // Most recently used first: (block start, bytes).
  std::list<std::pair<uint64_t, std::string>> blocks_;
};

}  // namespace strata::storage
