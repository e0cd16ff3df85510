#pragma once

// The EVICTED marker of a batch directory (docs/format/commit.md,
// "Evicting a batch's data files"). With offload, a batch whose objects are
// in the store may lose its local Parquet files; the marker, written
// durably before the first of them is removed, tells boot that their
// absence is not corruption. meta.json and spans.tidx always stay local
// (trace lookups keep their filter and index on this disk).
//
// The marker holds the batch id and a newline. It is written as
// EVICTED.tmp, synced, renamed to EVICTED and the directory synced; a
// crash leaves either no marker (the batch is whole) or the marker (its
// Parquet files may be whole, partly removed or gone). A leftover
// EVICTED.tmp means the rename never happened: boot removes it.
//
// Thread-safety: reentrant. Errors: the file system's, with the path;
// DataLoss for a marker naming another batch or a broken kept file.

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "io/file_system.h"
#include "storage/format/batch_meta.h"

namespace strata::storage {

inline constexpr char kEvictedMarkerFileName[] = "EVICTED";
inline constexpr char kEvictedMarkerTempFileName[] = "EVICTED.tmp";

// True for the data files eviction removes (the Parquet files); false for
// meta.json and spans.tidx, which stay.
bool IsEvictableFile(std::string_view name);

// Whether `batch_dir` holds the marker.
[[nodiscard]] absl::StatusOr<bool> HasEvictedMarker(FileSystem& fs, const std::string& batch_dir);

// Writes the marker for batch `id` durably (temporary, sync, rename, sync
// the directory).
[[nodiscard]] absl::Status WriteEvictedMarker(FileSystem& fs, const std::string& batch_dir,
                                              std::string_view id);

// Removes a leftover EVICTED.tmp (boot, before validation).
[[nodiscard]] absl::Status RemoveEvictedMarkerTemp(FileSystem& fs, const std::string& batch_dir);

// Rule 9 for an evicted batch (meta-json.md rule 11): the marker names
// `meta.id`; the directory holds nothing but meta.json, the marker and the
// files `files` declares present; spans.tidx, when declared, exists with
// its size and xxh3-64; the Parquet files may be missing or partial.
[[nodiscard]] absl::Status CheckEvictedBatchFiles(FileSystem& fs, const std::string& batch_dir,
                                                  const BatchMeta& meta);

// Removes the Parquet files of an evicted batch that are still there, then
// syncs the directory. Returns the bytes removed.
[[nodiscard]] absl::StatusOr<uint64_t> RemoveEvictedFiles(FileSystem& fs,
                                                          const std::string& batch_dir);

}  // namespace strata::storage
