#pragma once

// A FileSystem file as the Parquet reader's source (parquet::
// RandomAccessSource), for the storage code that reads table files through
// the FileSystem interface: boot's footer checks and trace lookups.
//
// Thread-safety: as parquet::FileReader, single owner. Errors: the
// FileSystem's, unchanged (a short read is its OutOfRange/DataLoss).

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "common/path.h"
#include "common/status_macros.h"
#include "io/file_system.h"
#include "parquet/file_reader.h"

namespace strata::storage {

class FileSource final : public parquet::RandomAccessSource {
 public:
  FileSource(std::unique_ptr<RandomAccessFile> file, uint64_t size)
      : file_(std::move(file)), size_(size) {}
  uint64_t size() const override { return size_; }
  absl::Status ReadAt(uint64_t offset, size_t length, std::string* out) override {
    STRATA_ASSIGN_OR_RETURN(*out, file_->ReadExact(offset, length));
    return absl::OkStatus();
  }

 private:
  std::unique_ptr<RandomAccessFile> file_;
  uint64_t size_;
};

// Opens `path` of `fs` as a source.
inline absl::StatusOr<std::unique_ptr<FileSource>> OpenFileSource(FileSystem& fs,
                                                                  const std::string& path) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file, fs.NewRandomAccessFile(path));
  STRATA_ASSIGN_OR_RETURN(uint64_t size, file->Size());
  return std::make_unique<FileSource>(std::move(file), size);
}

// Opens one data file of one batch (a name from format/layout.h) as a
// source. The readers that take one (rollups_table.h) read a batch wherever
// its files are: LocalDataFiles opens them in the batch directory;
// offload/data_file_resolver.h's DataFilesOf reads an evicted batch's back
// through the read cache.
using DataFileOpener = std::function<absl::StatusOr<std::unique_ptr<parquet::RandomAccessSource>>(
    std::string_view file)>;

// The files in `batch_dir` of `fs` (which must outlive the opener).
inline DataFileOpener LocalDataFiles(FileSystem& fs, std::string batch_dir) {
  return
      [&fs, batch_dir = std::move(batch_dir)](
          std::string_view file) -> absl::StatusOr<std::unique_ptr<parquet::RandomAccessSource>> {
        STRATA_ASSIGN_OR_RETURN(std::unique_ptr<FileSource> source,
                                OpenFileSource(fs, JoinPath(batch_dir, file)));
        return source;
      };
}

}  // namespace strata::storage
