#pragma once

// Attribute discovery for autocomplete (GET /api/v1/attributes,
// docs/api.md): the attribute keys seen on one signal in a window (and of
// one service), with their value types, how many sampled rows carry them,
// and their most frequent values.
//
// Bounded work, whatever the data: the answer reads only the newest
// kDiscoveryBatches batches whose rows of the signal meet the window (by
// meta.json's event times), and at most kDiscoveryRows rows of them that
// match the window and service (the first rows DuckDB's scan finds; a
// LIMIT stops the scan). So a key carried only by older batches, or by
// rows the sample did not reach, may be missing, and counts are those of
// the sample, not of the window. `complete` says whether the sample was
// the whole window: every batch meeting it read, and fewer rows than the
// cap found.
//
// With a key, a row counts the key once per family: its first occurrence
// there. A promoted key held by a single column (query::PromotedColumnOf)
// is read from that column, without the attribute lists, when the
// batches read recorded no promotion miss for it and no sampled row has
// the key in the other family (then the lists give the same answer).
//
// Thread-safety: reentrant. Errors: the pool's; Internal when a result does
// not have the expected shape.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/search.h"

namespace strata::api {

inline constexpr size_t kDiscoveryBatches = 4;
inline constexpr int64_t kDiscoveryRows = 10'000;
inline constexpr int64_t kDiscoveryKeysDefault = 200;
inline constexpr int64_t kDiscoveryKeysMax = 1'000;
inline constexpr int64_t kDiscoveryValuesDefault = 10;
inline constexpr int64_t kDiscoveryValuesMax = 100;

enum class Signal { kSpans, kLogs, kMetrics };
// "spans", "logs" or "metrics"; InvalidArgument naming `name` otherwise.
[[nodiscard]] absl::StatusOr<Signal> ParseSignal(std::string_view name, std::string_view value);

struct AttributeDiscoveryQuery {
  Signal signal = Signal::kSpans;
  int64_t start = 0;                   // the signal's time (span start, log or point time) >= start
  int64_t end = 0;                     // and < end
  std::optional<std::string> service;  // service_name
  // Only this key (in either family).
  std::optional<std::string> key;
  int64_t limit = kDiscoveryKeysDefault;     // keys
  int64_t values = kDiscoveryValuesDefault;  // most frequent values per key
};

struct AttributeValueCount {
  // As attr.<key>= takes it: the string, or the int, double or bool as
  // DuckDB writes it.
  std::string value;
  int64_t count = 0;
};

struct DiscoveredAttribute {
  // "attribute" (the span's, log record's or data point's own) or
  // "resource".
  std::string family;
  std::string key;
  // Type names seen, sorted: string, bool, int, double, array, kvlist,
  // bytes, empty.
  std::vector<std::string> types;
  int64_t count = 0;  // sampled rows carrying the key (every occurrence)
  // Most frequent first (ties by value); only string, int, double and bool
  // values are counted.
  std::vector<AttributeValueCount> values;
};

struct AttributeDiscovery {
  // Most frequent first (ties by family, then key); at most `limit`.
  std::vector<DiscoveredAttribute> attributes;
  bool keys_truncated = false;  // more keys than `limit` in the sample
  int64_t rows_sampled = 0;
  int64_t batches_read = 0;
  int64_t batches_in_window = 0;
  bool complete = false;
};

[[nodiscard]] absl::StatusOr<AttributeDiscovery> DiscoverAttributes(
    query::QueryPool& pool, const storage::Snapshot& snapshot, const std::string& data_dir,
    const AttributeDiscoveryQuery& q, const CallOptions& call = {});

std::string AttributeDiscoveryJson(const AttributeDiscoveryQuery& q,
                                   const AttributeDiscovery& discovery);

}  // namespace strata::api
