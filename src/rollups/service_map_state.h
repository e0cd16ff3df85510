#pragma once

// The service map's resolved state as one file (docs/format/service-map-
// state.md): what api::ServiceMap writes to <data>/query/service_map.state
// so that a restart does not read again the batches it had resolved. The
// file is derived data: one that is missing, short, of another version or
// failing its checksum is refused here (DataLoss or NotFound) and the map
// is rebuilt from the batches.
//
// Thread-safety: free functions over values the caller owns.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "rollups/service_edges.h"

namespace strata::rollups {

// "STRATASM": the first bytes of a service map state file.
inline constexpr std::string_view kServiceMapStateMagic = "STRATASM";
inline constexpr uint32_t kServiceMapStateVersion = 1;

// What the service map knows besides its resolver: which batches it has
// resolved (or skipped) and what it reports of them.
struct ServiceMapProgress {
  // Batch id -> its newest ingest time (unix nanos).
  absl::flat_hash_map<std::string, uint64_t> resolved;
  uint64_t resolved_from = 0;
  uint64_t unreadable = 0;
  std::string last_unreadable_error;
  friend bool operator==(const ServiceMapProgress&, const ServiceMapProgress&) = default;
};

// The file's bytes: magic, version, progress, resolver state, xxh3-64.
std::string EncodeServiceMapState(const EdgeResolver& resolver, const ServiceMapProgress& progress);

// Reads a file EncodeServiceMapState wrote into `*resolver` (keeping its
// options) and `*progress`. DataLoss, naming what is wrong, when the bytes
// are short, have trailing bytes, another magic or version, or fail the
// checksum or the resolver's checks; both are then left empty.
[[nodiscard]] absl::Status DecodeServiceMapState(std::string_view bytes, EdgeResolver* resolver,
                                                 ServiceMapProgress* progress);

}  // namespace strata::rollups
