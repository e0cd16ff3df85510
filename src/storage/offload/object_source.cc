#include "storage/offload/object_source.h"

#include <algorithm>

#include "fmt/format.h"

namespace strata::storage {

absl::StatusOr<const std::string*> ObjectSource::Block(uint64_t start) {
  for (auto it = blocks_.begin(); it != blocks_.end(); ++it) {
    if (it->first != start) continue;
    blocks_.splice(blocks_.begin(), blocks_, it);
    return &blocks_.front().second;
  }
  const uint64_t want = std::min(kObjectSourceBlockBytes, size_ - start);
  absl::StatusOr<std::string> bytes = store_.Get(key_, start, want);
  if (!bytes.ok()) return bytes.status();
  if (bytes->size() != want) {
    return absl::DataLossError(
        fmt::format("{} in {}: {} bytes at offset {} wanted, {} read (the object is shorter than "
                    "meta.json says)",
                    key_, store_.Describe(), want, start, bytes->size()));
  }
  if (blocks_.size() >= kObjectSourceMaxBlocks) blocks_.pop_back();
  blocks_.emplace_front(start, *std::move(bytes));
  return &blocks_.front().second;
}

absl::Status ObjectSource::ReadAt(uint64_t offset, size_t length, std::string* out) {
  out->clear();
  if (length == 0) return absl::OkStatus();
  if (offset > size_ || length > size_ - offset) {
    return absl::OutOfRangeError(
        fmt::format("{} in {}: {} bytes at offset {} are past its {} bytes", key_,
                    store_.Describe(), length, offset, size_));
  }
  out->reserve(length);
  uint64_t at = offset;
  const uint64_t end = offset + length;
  while (at < end) {
    const uint64_t start = at - at % kObjectSourceBlockBytes;
    absl::StatusOr<const std::string*> block = Block(start);
    if (!block.ok()) return block.status();
    const uint64_t take = std::min<uint64_t>(end, start + (*block)->size()) - at;
    out->append(**block, at - start, take);
    at += take;
  }
  return absl::OkStatus();
}

}  // namespace strata::storage
