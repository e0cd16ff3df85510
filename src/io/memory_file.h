// A RandomAccessFile over bytes held in memory, for tests and fuzz targets
// that hand file contents to code reading through the FileSystem interface.
// Reads at or past fail_reads_from fail as a broken disk would; reads
// counts the Read calls. Single owner.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "io/file_system.h"

namespace strata {

class MemoryFile final : public RandomAccessFile {
 public:
  MemoryFile(std::string bytes, std::string path)
      : bytes(std::move(bytes)), path_(std::move(path)) {}

  absl::StatusOr<size_t> Read(uint64_t offset, size_t n, char* out) const override {
    ++reads;
    if (offset + n > fail_reads_from) return absl::UnavailableError("pread: EIO");
    if (offset >= bytes.size()) return 0;
    const size_t count = std::min<uint64_t>(n, bytes.size() - offset);
    std::memcpy(out, bytes.data() + offset, count);
    return count;
  }
  absl::StatusOr<uint64_t> Size() const override { return bytes.size(); }
  const std::string& path() const override { return path_; }

  std::string bytes;
  uint64_t fail_reads_from = std::numeric_limits<uint64_t>::max();
  mutable int reads = 0;

 private:
  const std::string path_;
};

}  // namespace strata
