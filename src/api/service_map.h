#pragma once

// The service map (docs/api.md, "Service map"): a rollups::EdgeResolver fed
// with every live batch's spans, each batch once, in ingest order, by a
// background thread that looks at the catalog's latest Snapshot every
// `poll` (1 s by default) and by each answer, which first resolves what its
// own pinned Snapshot holds beyond that (up to a budget of spans, so an
// answer never waits long). Edges are kept in memory per UTC minute; at
// boot the resolver reads the batches ingested within `horizon` of the
// newest one.
//
// Compaction: an output whose source batches were all resolved is marked
// resolved without being read; one with some unresolved sources is read
// whole, and spans already resolved (same trace and span id) count once.
// Retention: minutes before the oldest live span are dropped.
//
// Restarts: with `state_path` set, the background thread first loads the
// resolved state a previous run saved there (docs/format/service-map-
// state.md), so the batches it had resolved are not read again, and saves
// it (written to `state_temp_path`, synced, renamed) at most every
// `state_save_interval` while batches are being resolved, and when the
// map stops. A state file that cannot be read or fails its checks is
// logged and ignored: the map is then rebuilt from the batches.
//
// Thread-safety: safe for concurrent use. Errors: a batch whose spans
// cannot be read is left out, counted in the answer and named with its
// error there (the last one).

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "api/service_health.h"
#include "common/mutex.h"
#include "io/file_system.h"
#include "rollups/service_edges.h"
#include "storage/commit/catalog.h"

namespace strata::storage {
class Storage;
}

namespace strata::api {

struct ServiceMapOptions {
  rollups::EdgeResolverOptions resolver;
  // Batches ingested more than this before the newest batch are not read
  // (24 hours of ingest time: the server's clock, not the spans').
  uint64_t horizon_nanos = 24 * 3'600'000'000'000ull;
  // Spans an answer resolves itself before answering with what it has.
  uint64_t answer_catch_up_spans = 2'000'000;
  std::chrono::milliseconds poll{1000};
  // Where the resolved state survives a restart; empty: it does not.
  std::string state_path;
  std::string state_temp_path;
  std::chrono::milliseconds state_save_interval{600'000};
  // The background thread's nice value (Linux: per thread; 0 leaves it
  // unchanged), so that queries and ingest get the CPU first while it
  // catches up on a day of spans after a start.
  int nice = 10;
};

struct MapNode {
  rollups::Node node;
  // Services: their requests (SERVER and CONSUMER spans) from the
  // rollups. Virtual nodes: the calls of their incoming edges.
  Red requests;
  rollups::EdgeMeasures incoming;
};
struct MapEdge {
  uint32_t source = 0;  // index into ServiceMapAnswer::nodes
  uint32_t target = 0;
  rollups::EdgeType type = rollups::EdgeType::kCall;
  rollups::EdgeMeasures measures;
};
struct ServiceMapAnswer {
  std::vector<MapNode> nodes;
  std::vector<MapEdge> edges;
  // Batches of the snapshot not resolved yet, and batches left out
  // because their spans could not be read.
  size_t pending_batches = 0;
  size_t unreadable_batches = 0;
  std::string last_unreadable_error;
  // The first minute the resolver covers (0 when it covers all).
  uint64_t resolved_from = 0;
  // Edges left out past the answer's limit (the most called are kept).
  bool truncated = false;
  // The resolver's node table is full (rollups::kMaxNodes): spans of new
  // services and calls to new virtual nodes are no longer resolved.
  bool node_limit_reached = false;
};

// A readable, unique name of an edge: "<source> -> <target> <type>", each
// node "service:<namespace>/<name>" or "<node type>:<name>".
std::string EdgeName(const ServiceMapAnswer& map, const MapEdge& edge);

// The edges' definition (rollups/service_edges.h) as one DuckDB query over
// the `spans` view: a row per edge with EdgeName, calls, errors and the
// exact p50 and p99 of the counted spans' durations, for spans starting in
// [first, end). What the tests and `strata bench rollups` compare answers
// with (it reads every span: not for serving).
std::string ServiceMapReferenceSql(uint64_t first, uint64_t end);

// The edges of one minute with their nodes by value (ServiceMap::
// MinuteEdges).
struct MinuteEdge {
  uint64_t minute = 0;
  rollups::Node source;
  rollups::Node target;
  rollups::EdgeType type = rollups::EdgeType::kCall;
  rollups::EdgeMeasures measures;
};

class ServiceMap {
 public:
  explicit ServiceMap(ServiceMapOptions options = {});
  ~ServiceMap();
  ServiceMap(const ServiceMap&) = delete;
  ServiceMap& operator=(const ServiceMap&) = delete;

  const ServiceMapOptions& options() const { return options_; }

  // Starts the background thread (once); `storage` returns null while the
  // server recovers. `fs` must outlive the ServiceMap.
  void Start(std::function<storage::Storage*()> storage, FileSystem* fs) ABSL_LOCKS_EXCLUDED(mu_);

  // Resolves the batches of `snapshot` not resolved yet, oldest ingest
  // first, until `max_spans` spans were read; returns how many remain.
  size_t CatchUp(FileSystem& fs, const storage::Snapshot& snapshot, uint64_t max_spans)
      ABSL_LOCKS_EXCLUDED(feed_mu_, mu_);

  // Writes the resolved state to `temp_path`, syncs it and renames it to
  // `path` (then syncs its folder), so `path` holds a whole state or the
  // one before. Encoding waits for a batch being fed to finish.
  [[nodiscard]] absl::Status SaveState(FileSystem& fs, const std::string& path,
                                       const std::string& temp_path)
      ABSL_LOCKS_EXCLUDED(feed_mu_, mu_);
  // Replaces the resolved state with the one saved at `path`; call before
  // feeding batches. NotFound without a file; DataLoss (the map is then
  // empty, as new) when it fails its checks (rollups/service_map_state.h).
  [[nodiscard]] absl::Status LoadState(FileSystem& fs, const std::string& path)
      ABSL_LOCKS_EXCLUDED(feed_mu_, mu_);

  // Whether the batch `id` was resolved (or skipped as too old).
  bool Resolved(const std::string& id) const ABSL_LOCKS_EXCLUDED(mu_);

  // The map over `window`: catches up on `snapshot` (answer_catch_up_spans),
  // then adds the nodes' RED from `rollups`. At most `limit` edges (the
  // most called) and, besides their ends, `limit` services.
  ServiceMapAnswer Answer(FileSystem& fs, const storage::Snapshot& snapshot,
                          const MinuteWindow& window, const RollupSet& rollups,
                          size_t limit = 10'000) ABSL_LOCKS_EXCLUDED(feed_mu_, mu_);

  // The edges of every minute in [first, end) the resolver holds, minutes
  // ascending, after catching up on `snapshot` as Answer does.
  std::vector<MinuteEdge> MinuteEdges(FileSystem& fs, const storage::Snapshot& snapshot,
                                      uint64_t end, uint64_t first = 0)
      ABSL_LOCKS_EXCLUDED(feed_mu_, mu_);

 private:
  void Loop(std::function<storage::Storage*()> storage, FileSystem* fs) ABSL_LOCKS_EXCLUDED(mu_);
  // Saves to options_.state_path when something was resolved since the
  // last save, logging a failure.
  void SaveIfChanged(FileSystem& fs) ABSL_LOCKS_EXCLUDED(feed_mu_, mu_);

  const ServiceMapOptions options_;
  // Held by whoever is feeding batches (they are read outside mu_).
  Mutex feed_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable Mutex mu_;
  CondVar stop_cv_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  rollups::EdgeResolver resolver_ ABSL_GUARDED_BY(mu_);
  // Batches resolved (or skipped: older than the horizon, unreadable), by
  // id, with their newest ingest time.
  absl::flat_hash_map<std::string, uint64_t> done_ ABSL_GUARDED_BY(mu_);
  size_t unreadable_ ABSL_GUARDED_BY(mu_) = 0;
  std::string last_unreadable_error_ ABSL_GUARDED_BY(mu_);
  uint64_t resolved_from_ ABSL_GUARDED_BY(mu_) = 0;
  // Counts the changes to done_ (and so to the resolver): the state saved
  // last was that of `saved_changes_`.
  uint64_t changes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t saved_changes_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace strata::api
