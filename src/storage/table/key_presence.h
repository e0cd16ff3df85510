#pragma once

// Whether a table file of a batch may hold an attribute key, answered from
// its Parquet footer, page headers and dictionary pages alone
// (parquet::FileReader::ChunkMayHold over every row group of the named key
// list columns), never from the rows. A query that computes an attribute
// (say Loki's `level` label, docs/loki.md) can then use a constant for the
// files that cannot hold its key and read the key lists of the others only.
//
// "No" is exact: the key is in no row's list. "Yes" may be wrong (the key is
// between the chunk's min and max of a chunk over kKeyPresenceReadBytes
// whose dictionary fell back to PLAIN), and is also the answer when the file
// cannot be read (logged).
// Answers are cached per file and key: batch files never change once
// written, and a file's path names its batch. The cache is bounded
// (kMaxKeyPresenceEntries; it starts over when full).
//
// Thread-safety: safe for concurrent use.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace strata::storage {

inline constexpr size_t kMaxKeyPresenceEntries = 65'536;
// A key list chunk the dictionary cannot settle (an all-empty list column
// has none) is read when at most this many bytes compressed.
inline constexpr int64_t kKeyPresenceReadBytes = 1 << 20;

// Whether some row of the Parquet file at `path` may hold `key` in one of
// `columns` (names of LIST<STRING> columns, e.g. "attr_keys").
bool FileMayHoldKey(const std::string& path, std::span<const std::string_view> columns,
                    std::string_view key);

}  // namespace strata::storage
