#pragma once

// PostgresBatchCatalog: the batch catalog that several strata nodes share
// (docs/format/postgres-catalog.md). The object store holds the batches;
// this catalog says which of them are live, which node may compact or
// expire each day, and which nodes are alive.
//
//   - Live batches: a node adds each batch it committed once the batch's
//     objects are all in the store (AddBatch). A batch removed by
//     compaction or retention leaves a removal record: the batch can never
//     be added again (a node that still holds a copy cannot bring back
//     rows a compaction output also holds), and RemovedBefore() lists it
//     until its objects are deleted from the store (ObjectsDeleted()).
//     The records stay after that (about 60 bytes each) until their day
//     is past retention (PruneRemovals()).
//   - Generation: one number that grows with every change of the live
//     list, so a node polls it cheaply and lists only when it moved.
//   - Day leases with a fencing epoch: compaction and retention of a day
//     run on one node at a time. AcquireLease() gives a holder an epoch;
//     a holder that stopped renewing loses the day once the lease expires,
//     and the next holder's epoch is one more. Swap() changes a day's
//     batches only for the holder of the current epoch, checked in the
//     swap's own transaction, so a holder that paused past its lease (and
//     lost it) can never swap: correctness does not rest on clocks, only
//     the moment a lease is taken over does.
//   - Nodes: each serving process claims its node id (the two characters
//     of its batch ids) with a random instance string and heartbeats; a
//     second process claiming a node id whose owner heartbeated within the
//     lease time is refused, so two nodes never issue batch ids in one
//     id space.
//
// Times are the caller's clock (Unix milliseconds in the database);
// nodes' clocks should agree to well within the lease time.
//
// Invariants (each checked in one transaction, under row locks that other
// nodes' transactions take too):
//   1. A batch id is live at most once, and never again after its removal.
//   2. Swap() removes and adds batches of one day atomically: every node
//      lists either all of the inputs or all of the outputs.
//   3. Only the holder of a day's current epoch swaps that day; epochs of a
//      day only increase.
//   4. The generation grows with every AddBatch() and Swap() and with
//      nothing else; List() returns the live batches and the generation
//      they are at, read in one snapshot.
//
// Thread-safety: safe for concurrent use (one connection, statements
// serialised). Several catalogs, in one process or many, may share one
// database.
//
// Errors: AlreadyExists for a batch id that is live; FailedPrecondition
// for a batch id removed before, a lease held by another node, a lost
// lease (Swap, RenewLease) or a node id in use; NotFound for a removed id
// that is not live; InvalidArgument for a malformed id, day or record; the
// connection's errors (Unavailable when the server cannot be reached),
// prefixed with the server and what was being done.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "postgres/pg_connection.h"

namespace strata::cluster {

// One live batch as the catalog keeps it.
struct CatalogBatch {
  std::string id;         // the 23-character batch id
  std::string day;        // "YYYY-MM-DD", its day partition
  std::string meta_json;  // the batch's meta.json, as in the store
  int64_t bytes = 0;      // its data files' total size
  friend bool operator==(const CatalogBatch&, const CatalogBatch&) = default;
};

struct CatalogListing {
  int64_t generation = 0;
  std::vector<CatalogBatch> batches;  // sorted by id
};

// A batch removed from the live list whose objects may still be in the
// store.
struct RemovedBatch {
  std::string id;
  std::string day;
  absl::Time removed_at;
  std::string removed_by;  // the node id that removed it
};

struct DayLease {
  std::string day;
  std::string holder;  // "<node id>/<instance>"
  int64_t epoch = 0;   // 1 for the first holder of a day, then one more each
  absl::Time expires_at;
};

struct NodeRecord {
  std::string node;  // "00".."zz"
  std::string instance;
  std::string address;  // where its API answers, as it said
  absl::Time started_at;
  absl::Time heartbeat_at;
};

class PostgresBatchCatalog {
 public:
  // Connects to `url` and applies the catalog's migrations.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<PostgresBatchCatalog>> Open(
      const std::string& url);
  PostgresBatchCatalog(const PostgresBatchCatalog&) = delete;
  PostgresBatchCatalog& operator=(const PostgresBatchCatalog&) = delete;

  const std::string& server() const { return db_->server(); }

  // Live batches.
  [[nodiscard]] absl::StatusOr<int64_t> Generation();
  [[nodiscard]] absl::StatusOr<CatalogListing> List();
  // Adds a batch whose objects are all in the store; `node` is the adding
  // node's id.
  [[nodiscard]] absl::Status AddBatch(const CatalogBatch& batch, std::string_view node,
                                      absl::Time now);
  // Whether `id` is live, removed (objects maybe still in the store), or
  // unknown to the catalog.
  enum class BatchState { kUnknown, kLive, kRemoved };
  [[nodiscard]] absl::StatusOr<BatchState> StateOf(std::string_view id);

  // Day leases. AcquireLease() returns the lease (a new epoch when the day
  // was free or its lease expired; the same epoch, extended, when `holder`
  // holds it) or nullopt while another holder's lease runs.
  [[nodiscard]] absl::StatusOr<std::optional<DayLease>> AcquireLease(std::string_view day,
                                                                     std::string_view holder,
                                                                     absl::Time now,
                                                                     absl::Duration ttl);
  // Extends `lease`; FailedPrecondition when its epoch is no longer the
  // day's (another holder took it over).
  [[nodiscard]] absl::StatusOr<DayLease> RenewLease(const DayLease& lease, absl::Time now,
                                                    absl::Duration ttl);
  // Ends `lease` at once (nothing when it was lost).
  [[nodiscard]] absl::Status ReleaseLease(const DayLease& lease);

  // Removes `remove` from and adds `add` to `lease.day` in one transaction,
  // fenced by `lease`'s epoch. Every id in `remove` must be live in that
  // day and every batch of `add` must be of that day.
  [[nodiscard]] absl::Status Swap(const DayLease& lease, const std::vector<std::string>& remove,
                                  const std::vector<CatalogBatch>& add, std::string_view node,
                                  absl::Time now);
  // Removal records made by node `node` before `before` whose objects are
  // not deleted yet and which every live node (a heartbeat after
  // `alive_after`) has applied (ReportSynced() with the removal's
  // generation or a later one), oldest first, at most `limit`.
  [[nodiscard]] absl::StatusOr<std::vector<RemovedBatch>> RemovedBefore(std::string_view node,
                                                                        absl::Time before,
                                                                        absl::Time alive_after,
                                                                        size_t limit);
  // Records that the objects of removed batches `ids` are deleted from the
  // store (RemovedBefore() no longer lists them).
  [[nodiscard]] absl::Status ObjectsDeleted(const std::vector<std::string>& ids, absl::Time now);
  // Deletes the removal records of days before `first_day_kept`
  // ("YYYY-MM-DD") whose objects are deleted: days past retention, which
  // no node holds a copy of any more. Returns how many went.
  [[nodiscard]] absl::StatusOr<int64_t> PruneRemovals(std::string_view first_day_kept);

  // Nodes. ClaimNode() registers this process as `node` (FailedPrecondition
  // naming the other instance while its heartbeat is younger than `ttl`);
  // Heartbeat() refreshes the claim (FailedPrecondition when another
  // instance has claimed the node since).
  [[nodiscard]] absl::Status ClaimNode(const NodeRecord& node, absl::Duration ttl);
  [[nodiscard]] absl::Status Heartbeat(std::string_view node, std::string_view instance,
                                       absl::Time now);
  // Records that `instance` of `node` has applied the listing of
  // `generation` to its local catalog: no batch that listing lacks is
  // read there from now on (a claim starts at 0).
  [[nodiscard]] absl::Status ReportSynced(std::string_view node, std::string_view instance,
                                          int64_t generation);
  // Gives up the claim of `instance` (a clean stop): its heartbeat time
  // becomes 0, so the node id can be claimed again at once. OK when
  // another instance holds the claim (nothing changes).
  [[nodiscard]] absl::Status ReleaseNode(std::string_view node, std::string_view instance);
  // Every node that ever claimed an id, by node id.
  [[nodiscard]] absl::StatusOr<std::vector<NodeRecord>> Nodes();

 private:
  explicit PostgresBatchCatalog(std::unique_ptr<postgres::PgConnection> db) : db_(std::move(db)) {}
  // Prefixes the server and `what` to errors other than the catalog's own
  // answers (AlreadyExists, NotFound, FailedPrecondition, InvalidArgument).
  absl::Status Annotate(const absl::Status& status, std::string_view what) const;

  const std::unique_ptr<postgres::PgConnection> db_;
};

}  // namespace strata::cluster
