// PostgresBatchCatalog (postgres_batch_catalog.h): day leases and nodes.

#include <string>
#include <utility>

#include "cluster/catalog_checks.h"
#include "cluster/postgres_batch_catalog.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "postgres/pg_migrations.h"

namespace strata::cluster {

using postgres::PgConnection;
using postgres::PgRows;

namespace {

absl::Status CheckTtl(absl::Duration ttl) {
  if (ttl <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        fmt::format("lease time {} is not positive", absl::FormatDuration(ttl)));
  }
  return absl::OkStatus();
}

// The day's lease row, locked until the transaction ends (a free row is
// made first, so there is always one to lock): holder, epoch, expires_at.
absl::StatusOr<DayLease> LockLease(PgConnection::Transaction& txn, std::string_view day) {
  STRATA_RETURN_IF_ERROR(
      txn.Exec("INSERT INTO strata_catalog_leases(day, holder, epoch, expires_at) "
               "VALUES ($1, '', 0, 0) ON CONFLICT (day) DO NOTHING",
               {std::string(day)}));
  STRATA_ASSIGN_OR_RETURN(const PgRows rows,
                          txn.Query("SELECT holder, epoch, expires_at FROM strata_catalog_leases "
                                    "WHERE day = $1 FOR UPDATE",
                                    {std::string(day)}));
  if (rows.size() != 1 || rows[0].size() != 3) {
    return absl::InternalError(fmt::format("the lease row of day {} is missing", day));
  }
  DayLease lease{.day = std::string(day), .holder = rows[0][0].value_or("")};
  STRATA_ASSIGN_OR_RETURN(lease.epoch,
                          postgres::ColumnInt64(rows[0][1], "strata_catalog_leases.epoch"));
  STRATA_ASSIGN_OR_RETURN(const int64_t expires,
                          postgres::ColumnInt64(rows[0][2], "strata_catalog_leases.expires_at"));
  lease.expires_at = absl::FromUnixMillis(expires);
  return lease;
}

absl::Status StoreLease(PgConnection::Transaction& txn, const DayLease& lease) {
  return txn.Exec(
      "UPDATE strata_catalog_leases SET holder = $2, epoch = $3, expires_at = $4 WHERE day = $1",
      {lease.day, lease.holder, lease.epoch, absl::ToUnixMillis(lease.expires_at)});
}

}  // namespace

absl::StatusOr<std::optional<DayLease>> PostgresBatchCatalog::AcquireLease(std::string_view day,
                                                                           std::string_view holder,
                                                                           absl::Time now,
                                                                           absl::Duration ttl) {
  STRATA_RETURN_IF_ERROR(CheckDay(day));
  STRATA_RETURN_IF_ERROR(CheckHolder(holder));
  STRATA_RETURN_IF_ERROR(CheckTtl(ttl));
  std::optional<DayLease> acquired;
  absl::Status status = db_->InTransaction([&](PgConnection::Transaction& txn) -> absl::Status {
    STRATA_ASSIGN_OR_RETURN(DayLease lease, LockLease(txn, day));
    if (lease.holder != holder) {
      // Another holder's lease runs until expires_at; a free row has
      // holder "" and expires_at 0.
      if (!lease.holder.empty() && lease.expires_at > now) return absl::OkStatus();
      lease.holder = std::string(holder);
      lease.epoch += 1;
    }
    lease.expires_at = absl::FromUnixMillis(absl::ToUnixMillis(now + ttl));
    STRATA_RETURN_IF_ERROR(StoreLease(txn, lease));
    acquired = std::move(lease);
    return absl::OkStatus();
  });
  STRATA_RETURN_IF_ERROR(Annotate(status, fmt::format("acquire the lease of day {}", day)));
  return acquired;
}

absl::StatusOr<DayLease> PostgresBatchCatalog::RenewLease(const DayLease& lease, absl::Time now,
                                                          absl::Duration ttl) {
  STRATA_RETURN_IF_ERROR(CheckDay(lease.day));
  STRATA_RETURN_IF_ERROR(CheckTtl(ttl));
  DayLease renewed;
  absl::Status status = db_->InTransaction([&](PgConnection::Transaction& txn) -> absl::Status {
    STRATA_ASSIGN_OR_RETURN(renewed, LockLease(txn, lease.day));
    if (renewed.holder != lease.holder || renewed.epoch != lease.epoch) {
      return absl::FailedPreconditionError(fmt::format(
          "the lease of day {} at epoch {} is lost: {} holds epoch {}", lease.day, lease.epoch,
          renewed.holder.empty() ? "nobody" : renewed.holder, renewed.epoch));
    }
    renewed.expires_at = absl::FromUnixMillis(absl::ToUnixMillis(now + ttl));
    return StoreLease(txn, renewed);
  });
  STRATA_RETURN_IF_ERROR(Annotate(status, fmt::format("renew the lease of day {}", lease.day)));
  return renewed;
}

absl::Status PostgresBatchCatalog::ReleaseLease(const DayLease& lease) {
  STRATA_RETURN_IF_ERROR(CheckDay(lease.day));
  // The epoch stays: the next holder's is one more.
  return Annotate(db_->Exec("UPDATE strata_catalog_leases SET holder = '', expires_at = 0 "
                            "WHERE day = $1 AND holder = $2 AND epoch = $3",
                            {lease.day, lease.holder, lease.epoch}),
                  fmt::format("release the lease of day {}", lease.day));
}

absl::Status PostgresBatchCatalog::ClaimNode(const NodeRecord& node, absl::Duration ttl) {
  STRATA_RETURN_IF_ERROR(CheckNodeId(node.node));
  STRATA_RETURN_IF_ERROR(CheckHolder(node.node + "/" + node.instance));
  STRATA_RETURN_IF_ERROR(CheckTtl(ttl));
  return Annotate(db_->InTransaction([&](PgConnection::Transaction& txn) -> absl::Status {
    STRATA_RETURN_IF_ERROR(txn.Exec(
        "INSERT INTO strata_catalog_nodes(node, instance, address, started_at, heartbeat_at) "
        "VALUES ($1, '', '', 0, 0) ON CONFLICT (node) DO NOTHING",
        {node.node}));
    STRATA_ASSIGN_OR_RETURN(
        const PgRows rows,
        txn.Query("SELECT instance, address, heartbeat_at FROM strata_catalog_nodes "
                  "WHERE node = $1 FOR UPDATE",
                  {node.node}));
    if (rows.size() != 1 || rows[0].size() != 3) {
      return absl::InternalError(fmt::format("the row of node {} is missing", node.node));
    }
    STRATA_ASSIGN_OR_RETURN(const int64_t heartbeat,
                            postgres::ColumnInt64(rows[0][2], "strata_catalog_nodes.heartbeat_at"));
    const std::string other = rows[0][0].value_or("");
    if (!other.empty() && other != node.instance &&
        absl::FromUnixMillis(heartbeat) + ttl > node.heartbeat_at) {
      return absl::FailedPreconditionError(fmt::format(
          "node id {} is in use by another strata (instance {} at {}, last heartbeat {}); "
          "give each node its own --node-id",
          node.node, other, rows[0][1].value_or("?"),
          absl::FormatTime(absl::RFC3339_sec, absl::FromUnixMillis(heartbeat),
                           absl::UTCTimeZone())));
    }
    return txn.Exec(
        "UPDATE strata_catalog_nodes SET instance = $2, address = $3, started_at = $4, "
        "heartbeat_at = $5, synced_generation = 0 WHERE node = $1",
        {node.node, node.instance, node.address, absl::ToUnixMillis(node.started_at),
         absl::ToUnixMillis(node.heartbeat_at)});
  }),
                  fmt::format("claim node id {}", node.node));
}

absl::Status PostgresBatchCatalog::Heartbeat(std::string_view node, std::string_view instance,
                                             absl::Time now) {
  STRATA_RETURN_IF_ERROR(CheckNodeId(node));
  absl::StatusOr<PgRows> updated = db_->Query(
      "UPDATE strata_catalog_nodes SET heartbeat_at = GREATEST(heartbeat_at, $3) "
      "WHERE node = $1 AND instance = $2 RETURNING node",
      {std::string(node), std::string(instance), absl::ToUnixMillis(now)});
  if (!updated.ok()) return Annotate(updated.status(), fmt::format("heartbeat of node {}", node));
  if (updated->empty()) {
    return absl::FailedPreconditionError(
        fmt::format("node id {} was claimed by another strata since this one started; "
                    "give each node its own --node-id",
                    node));
  }
  return absl::OkStatus();
}

absl::Status PostgresBatchCatalog::ReportSynced(std::string_view node, std::string_view instance,
                                                int64_t generation) {
  STRATA_RETURN_IF_ERROR(CheckNodeId(node));
  return Annotate(
      db_->Exec("UPDATE strata_catalog_nodes SET synced_generation = GREATEST(synced_generation, "
                "$3) WHERE node = $1 AND instance = $2",
                {std::string(node), std::string(instance), generation}),
      fmt::format("the listing node {} applied", node));
}

absl::Status PostgresBatchCatalog::ReleaseNode(std::string_view node, std::string_view instance) {
  STRATA_RETURN_IF_ERROR(CheckNodeId(node));
  absl::StatusOr<PgRows> updated = db_->Query(
      "UPDATE strata_catalog_nodes SET heartbeat_at = 0 WHERE node = $1 AND instance = $2 "
      "RETURNING node",
      {std::string(node), std::string(instance)});
  if (!updated.ok()) return Annotate(updated.status(), fmt::format("release of node {}", node));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<NodeRecord>> PostgresBatchCatalog::Nodes() {
  absl::StatusOr<PgRows> rows = db_->Query(
      "SELECT node, instance, address, started_at, heartbeat_at FROM strata_catalog_nodes "
      "WHERE instance <> '' ORDER BY node");
  if (!rows.ok()) return Annotate(rows.status(), "list nodes");
  std::vector<NodeRecord> nodes;
  for (const postgres::PgRow& row : *rows) {
    if (row.size() != 5)
      return Annotate(absl::InternalError("unexpected column count"), "list nodes");
    NodeRecord& node = nodes.emplace_back();
    node.node = row[0].value_or("");
    node.instance = row[1].value_or("");
    node.address = row[2].value_or("");
    absl::StatusOr<int64_t> started =
        postgres::ColumnInt64(row[3], "strata_catalog_nodes.started_at");
    absl::StatusOr<int64_t> heartbeat =
        postgres::ColumnInt64(row[4], "strata_catalog_nodes.heartbeat_at");
    if (!started.ok()) return Annotate(started.status(), "list nodes");
    if (!heartbeat.ok()) return Annotate(heartbeat.status(), "list nodes");
    node.started_at = absl::FromUnixMillis(*started);
    node.heartbeat_at = absl::FromUnixMillis(*heartbeat);
  }
  return nodes;
}

}  // namespace strata::cluster
