#pragma once

// The checks of one batch's data files beyond meta.json and checksums
// (docs/format/meta-json.md, rule 10), shared by boot (Storage::Open) and
// `strata verify`: each Parquet footer parses with its exact schema,
// key-value metadata and row count, and spans.tidx passes its own checks and
// agrees with meta.json. Stateless; safe from any thread. Errors: the
// FileSystem's, or the failed check's (DataLoss / InvalidArgument), naming
// the batch directory.

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "io/file_system.h"
#include "storage/format/batch_meta.h"

namespace strata::storage {

// Every check below, for every file meta.json declares.
[[nodiscard]] absl::Status CheckBatchContents(FileSystem& fs, const std::string& batch_dir,
                                              const BatchMeta& meta);

// The checks of one file, `file_name` one of kBatchFileNames: the Parquet
// footer check of a table file, the checks of spans.tidx. OK when meta.json
// declares the file absent; InvalidArgument for another name.
[[nodiscard]] absl::Status CheckBatchFileContents(FileSystem& fs, const std::string& batch_dir,
                                                  const BatchMeta& meta,
                                                  std::string_view file_name);

}  // namespace strata::storage
