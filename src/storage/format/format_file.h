#pragma once

// The FORMAT file at the root of a data directory (docs/format/layout.md,
// "FORMAT"): `{"format":1}` and a newline. Boot calls
// CheckOrInitializeDataDir() before touching anything else in the
// directory. It initialises a new (missing or empty) directory, finishes an
// initialisation a crash interrupted, accepts a format-1 directory, and
// refuses everything else without writing anything.
//
// Initialisation creates telemetry/{staging,days,quarantine}/, query/ and
// control/, makes them durable, then writes FORMAT.tmp, syncs it, renames it
// to FORMAT and syncs the data directory. FORMAT therefore exists only once
// everything before it is durable; a directory without FORMAT that holds
// nothing but those (empty) directories, FORMAT.tmp and LOCK is an
// interrupted initialisation and is initialised again.
//
// Errors: FailedPrecondition for every refusal, naming the data directory,
// what was found and the runbook section (docs/operations.md, "Data
// directory"); the FileSystem's errors (with their codes) when I/O fails.
// Stateless; safe to call from any thread, but only one process may own a
// data directory at a time (LOCK).

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "io/file_system.h"
#include "storage/format/layout.h"

namespace strata::storage {

inline constexpr int kFormatVersion = 1;
// The exact bytes strata writes to FORMAT.
inline constexpr std::string_view kFormatFileContents = "{\"format\":1}\n";

enum class DataDirState {
  kInitialized,  // the directory was new (or its initialisation was interrupted) and now holds
                 // FORMAT
  kExisting,     // FORMAT says format 1; nothing was written
};

[[nodiscard]] absl::StatusOr<DataDirState> CheckOrInitializeDataDir(FileSystem& fs,
                                                                    const std::string& data_dir);

// Checks, without writing anything, that `data_dir` is a directory holding
// a FORMAT of format 1: for commands that must not initialise a directory
// (`strata verify`, `strata quarantine`). FailedPrecondition naming the
// directory when it does not exist, is not a directory or has no FORMAT,
// and for every FORMAT CheckOrInitializeDataDir() refuses; the
// FileSystem's errors when I/O fails.
[[nodiscard]] absl::Status CheckExistingDataDir(FileSystem& fs, const std::string& data_dir);

// Checks the contents of a FORMAT file read from `data_dir` (which only
// names the directory in errors). OK for format 1; FailedPrecondition
// otherwise, as CheckOrInitializeDataDir() describes.
[[nodiscard]] absl::Status CheckFormatFileContents(std::string_view contents,
                                                   std::string_view data_dir);

}  // namespace strata::storage
