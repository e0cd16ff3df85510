#pragma once

// The numeric literals of LogQL, read from a kNumeric token's text (or a
// Loki HTTP parameter): numbers, durations and byte sizes, in the forms
// Grafana's LogQL grammar accepts.
//
// Thread-safety: pure functions.

#include <cstdint>
#include <optional>
#include <string_view>

namespace strata::compat::logql {

// 12, 1.5, 1., .5, 1e3, 2.5E-3, 0x1f.
std::optional<double> ParseLogQLNumber(std::string_view text);

// One or more number-and-unit pairs with units in the order y w d h m s ms
// us (or µs) ns, each at most once; y, w and d take whole numbers
// (1h30m, 1.5s, 2d, 100ms). A year is 365 days. Nanoseconds; nullopt for
// other text or a value past int64.
std::optional<int64_t> ParseLogQLDuration(std::string_view text);

// A number and one of B kB KB MB GB TB PB (powers of 1000) or KiB MiB GiB
// TiB PiB (powers of 1024): 10KB, 1.5MiB. Bytes.
std::optional<double> ParseLogQLBytes(std::string_view text);

}  // namespace strata::compat::logql
