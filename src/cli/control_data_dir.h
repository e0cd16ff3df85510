#pragma once

// What `strata token` and `strata user` do before they open a data
// directory's control database: make sure it is a strata data directory, so
// they never leave a control/ folder in a directory the server would then
// refuse. A directory with FORMAT is only checked (nothing is written; a
// running server may own it). Without FORMAT, `may_initialize` initialises
// it exactly as the server's boot does, under its LOCK; otherwise it is
// FailedPrecondition, as there is nothing to show.
//
// Thread-safety: main thread only, like the rest of the CLI.

#include <string>

#include "absl/status/status.h"

namespace strata::cli {

[[nodiscard]] absl::Status PrepareControlDataDir(const std::string& data_dir, bool may_initialize);

}  // namespace strata::cli
