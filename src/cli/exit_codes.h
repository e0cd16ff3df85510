#pragma once

// The process exit codes of `strata` commands (docs/operations.md, "Exit
// codes"). Constants only.

namespace strata::cli {

inline constexpr int kExitOk = 0;
// A runtime failure, or a refusal that says why.
inline constexpr int kExitFailure = 1;
// Bad usage or configuration; nothing was started.
inline constexpr int kExitUsage = 2;
// `strata verify` found corruption: a corrupt batch, or an entry or marker
// that boot would refuse.
inline constexpr int kExitCorruption = 3;

}  // namespace strata::cli
