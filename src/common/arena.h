#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

namespace strata {

// Arena owns copies of byte strings whose views must outlive the buffer they
// were decoded from (JSON strings with escapes, hex ids turned into bytes).
// Memory is released only when the arena is destroyed; views returned by
// Copy() stay valid until then, even if the Arena object is moved.
//
// Thread-safety: single owner.
class Arena {
 public:
  Arena() = default;
  Arena(Arena&&) noexcept = default;
  Arena& operator=(Arena&&) noexcept = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // Returns a stable view of a copy of `bytes`.
  std::string_view Copy(std::string_view bytes) {
    if (bytes.empty()) return {};
    char* p = Allocate(bytes.size());
    std::memcpy(p, bytes.data(), bytes.size());
    return {p, bytes.size()};
  }

  // Returns `size` writable bytes, stable until the arena is destroyed.
  char* Allocate(size_t size) {
    if (size > remaining_) NewBlock(size);
    char* p = cursor_;
    cursor_ += size;
    remaining_ -= size;
    bytes_used_ += size;
    return p;
  }

  // Bytes handed out so far.
  size_t bytes_used() const { return bytes_used_; }

  // Heap bytes the arena holds: its blocks, used or not, and their index.
  size_t bytes_reserved() const {
    return bytes_in_blocks_ + blocks_.capacity() * sizeof(blocks_[0]);
  }

 private:
  static constexpr size_t kBlockBytes = 64 * 1024;

  void NewBlock(size_t at_least) {
    size_t size = at_least > kBlockBytes ? at_least : kBlockBytes;
    // Not zeroed: every byte handed out is written before it is read.
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(size));
    bytes_in_blocks_ += size;
    cursor_ = blocks_.back().get();
    remaining_ = size;
  }

  std::vector<std::unique_ptr<char[]>> blocks_;
  char* cursor_ = nullptr;
  size_t remaining_ = 0;
  size_t bytes_used_ = 0;
  size_t bytes_in_blocks_ = 0;
};

}  // namespace strata
