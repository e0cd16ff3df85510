// PostgresBatchCatalog (postgres_batch_catalog.h): the live list, swaps and
// removal records. Leases and nodes are in catalog_leases.cc.

#include "cluster/postgres_batch_catalog.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_join.h"
#include "cluster/catalog_checks.h"
#include "cluster/catalog_schema.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "postgres/pg_migrations.h"

namespace strata::cluster {

using postgres::PgConnection;
using postgres::PgRows;

absl::Status PostgresBatchCatalog::Annotate(const absl::Status& status,
                                            std::string_view what) const {
  if (status.ok() || absl::IsAlreadyExists(status) || absl::IsNotFound(status) ||
      absl::IsFailedPrecondition(status) || absl::IsInvalidArgument(status)) {
    return status;
  }
  return absl::Status(status.code(), fmt::format("batch catalog {}: {}: {}", db_->server(), what,
                                                 std::string(status.message())));
}

absl::StatusOr<std::unique_ptr<PostgresBatchCatalog>> PostgresBatchCatalog::Open(
    const std::string& url) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> db, PgConnection::Connect(url));
  STRATA_RETURN_IF_ERROR(ApplyCatalogMigrations(*db));
  return std::unique_ptr<PostgresBatchCatalog>(new PostgresBatchCatalog(std::move(db)));
}

absl::StatusOr<int64_t> PostgresBatchCatalog::Generation() {
  absl::StatusOr<PgRows> rows = db_->Query("SELECT generation FROM strata_catalog_state");
  if (!rows.ok()) return Annotate(rows.status(), "read the generation");
  if (rows->size() != 1 || (*rows)[0].size() != 1) {
    return Annotate(absl::DataLossError("strata_catalog_state has no row"), "read the generation");
  }
  return postgres::ColumnInt64((*rows)[0][0], "strata_catalog_state.generation");
}

absl::StatusOr<CatalogListing> PostgresBatchCatalog::List() {
  CatalogListing listing;
  absl::Status status = db_->InTransaction(
      [&](PgConnection::Transaction& txn) -> absl::Status {
        STRATA_ASSIGN_OR_RETURN(const PgRows generation,
                                txn.Query("SELECT generation FROM strata_catalog_state"));
        if (generation.size() != 1 || generation[0].size() != 1) {
          return absl::DataLossError("strata_catalog_state has no row");
        }
        STRATA_ASSIGN_OR_RETURN(
            listing.generation,
            postgres::ColumnInt64(generation[0][0], "strata_catalog_state.generation"));
        STRATA_ASSIGN_OR_RETURN(
            const PgRows rows,
            txn.Query("SELECT id, day, meta_json, bytes FROM strata_catalog_batches ORDER BY id"));
        listing.batches.reserve(rows.size());
        for (const postgres::PgRow& row : rows) {
          if (row.size() != 4) return absl::InternalError("unexpected column count");
          CatalogBatch& batch = listing.batches.emplace_back();
          batch.id = row[0].value_or("");
          batch.day = row[1].value_or("");
          batch.meta_json = row[2].value_or("");
          STRATA_ASSIGN_OR_RETURN(batch.bytes,
                                  postgres::ColumnInt64(row[3], "strata_catalog_batches.bytes"));
        }
        return absl::OkStatus();
      },
      // One snapshot for both statements.
      "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  STRATA_RETURN_IF_ERROR(Annotate(status, "list batches"));
  return listing;
}

namespace {

// Bumps the generation; the row lock it takes also orders every change of
// the live list.
absl::Status BumpGeneration(PgConnection::Transaction& txn) {
  return txn.Exec("UPDATE strata_catalog_state SET generation = generation + 1");
}

// Inserts `batch` as live: FailedPrecondition when it was removed before,
// AlreadyExists when it is live.
absl::Status InsertLive(PgConnection::Transaction& txn, const CatalogBatch& batch,
                        std::string_view node, absl::Time now) {
  STRATA_ASSIGN_OR_RETURN(
      const PgRows removed,
      txn.Query("SELECT removed_by FROM strata_catalog_removed WHERE id = $1", {batch.id}));
  if (!removed.empty()) {
    return absl::FailedPreconditionError(
        fmt::format("batch {} was removed from the catalog by node {}; a removed batch is never "
                    "live again",
                    batch.id, removed[0][0].value_or("?")));
  }
  absl::Status inserted = txn.Exec(
      "INSERT INTO strata_catalog_batches(id, day, bytes, meta_json, added_at, added_by) "
      "VALUES ($1, $2, $3, $4, $5, $6)",
      {batch.id, batch.day, batch.bytes, batch.meta_json, absl::ToUnixMillis(now),
       std::string(node)});
  if (absl::IsAlreadyExists(inserted)) {
    return absl::AlreadyExistsError(fmt::format("batch {} is already live", batch.id));
  }
  return inserted;
}

}  // namespace

absl::Status PostgresBatchCatalog::AddBatch(const CatalogBatch& batch, std::string_view node,
                                            absl::Time now) {
  STRATA_RETURN_IF_ERROR(CheckCatalogBatch(batch));
  STRATA_RETURN_IF_ERROR(CheckNodeId(node));
  return Annotate(db_->InTransaction([&](PgConnection::Transaction& txn) -> absl::Status {
    STRATA_RETURN_IF_ERROR(BumpGeneration(txn));
    return InsertLive(txn, batch, node, now);
  }),
                  fmt::format("add batch {}", batch.id));
}

absl::StatusOr<PostgresBatchCatalog::BatchState> PostgresBatchCatalog::StateOf(
    std::string_view id) {
  STRATA_RETURN_IF_ERROR(CheckBatchId(id));
  absl::StatusOr<PgRows> rows = db_->Query(
      "SELECT (SELECT COUNT(*) FROM strata_catalog_batches WHERE id = $1), "
      "(SELECT COUNT(*) FROM strata_catalog_removed WHERE id = $1)",
      {std::string(id)});
  if (!rows.ok()) return Annotate(rows.status(), fmt::format("look up batch {}", id));
  if (rows->size() != 1 || (*rows)[0].size() != 2) {
    return Annotate(absl::InternalError("unexpected answer"), fmt::format("look up batch {}", id));
  }
  if ((*rows)[0][0] == "1") return BatchState::kLive;
  if ((*rows)[0][1] == "1") return BatchState::kRemoved;
  return BatchState::kUnknown;
}

absl::Status PostgresBatchCatalog::Swap(const DayLease& lease,
                                        const std::vector<std::string>& remove,
                                        const std::vector<CatalogBatch>& add, std::string_view node,
                                        absl::Time now) {
  STRATA_RETURN_IF_ERROR(CheckDay(lease.day));
  STRATA_RETURN_IF_ERROR(CheckNodeId(node));
  for (const std::string& id : remove) STRATA_RETURN_IF_ERROR(CheckBatchId(id));
  for (const CatalogBatch& batch : add) {
    STRATA_RETURN_IF_ERROR(CheckCatalogBatch(batch));
    if (batch.day != lease.day) {
      return absl::InvalidArgumentError(fmt::format(
          "batch {} is of day {}, not of the leased day {}", batch.id, batch.day, lease.day));
    }
  }
  std::vector<std::string> sorted = remove;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    return absl::InvalidArgumentError("a batch is removed twice in one swap");
  }
  return Annotate(db_->InTransaction([&](PgConnection::Transaction& txn) -> absl::Status {
    // The fence: the lease row locked until the swap commits, so no
    // other holder can take the day over in between.
    STRATA_ASSIGN_OR_RETURN(
        const PgRows held,
        txn.Query("SELECT holder, epoch FROM strata_catalog_leases WHERE day = $1 FOR UPDATE",
                  {lease.day}));
    if (held.empty() || held[0][0] != lease.holder || held[0][1] != std::to_string(lease.epoch)) {
      return absl::FailedPreconditionError(
          fmt::format("the lease of day {} at epoch {} is lost ({}); the swap is not made",
                      lease.day, lease.epoch,
                      held.empty() ? std::string("no lease")
                                   : fmt::format("held by {} at epoch {}", held[0][0].value_or("?"),
                                                 held[0][1].value_or("?"))));
    }
    STRATA_RETURN_IF_ERROR(BumpGeneration(txn));
    if (!sorted.empty()) {
      // Batch ids are [0-9a-z] only (checked above), so a comma list is exact.
      STRATA_ASSIGN_OR_RETURN(
          const PgRows deleted,
          txn.Query("DELETE FROM strata_catalog_batches "
                    "WHERE id = ANY(string_to_array($1, ',')) AND day = $2 RETURNING id",
                    {absl::StrJoin(sorted, ","), lease.day}));
      if (deleted.size() != sorted.size()) {
        std::vector<std::string> missing = sorted;
        for (const postgres::PgRow& row : deleted) {
          missing.erase(std::remove(missing.begin(), missing.end(), row[0].value_or("")),
                        missing.end());
        }
        return absl::NotFoundError(
            fmt::format("the swap removes batches that are not live in day {}: {}", lease.day,
                        absl::StrJoin(missing, ", ")));
      }
      STRATA_RETURN_IF_ERROR(txn.Exec(
          "INSERT INTO strata_catalog_removed(id, day, removed_at, removed_by, "
          "removed_generation) "
          "SELECT unnest(string_to_array($1, ',')), $2, $3, $4, "
          "(SELECT generation FROM strata_catalog_state)",
          {absl::StrJoin(sorted, ","), lease.day, absl::ToUnixMillis(now), std::string(node)}));
    }
    for (const CatalogBatch& batch : add) {
      STRATA_RETURN_IF_ERROR(InsertLive(txn, batch, node, now));
    }
    return absl::OkStatus();
  }),
                  fmt::format("swap batches of day {}", lease.day));
}

absl::StatusOr<std::vector<RemovedBatch>> PostgresBatchCatalog::RemovedBefore(
    std::string_view node, absl::Time before, absl::Time alive_after, size_t limit) {
  STRATA_RETURN_IF_ERROR(CheckNodeId(node));
  // A removal made before migration 2 has no generation: only the time
  // counts for it.
  absl::StatusOr<PgRows> rows = db_->Query(
      "SELECT id, day, removed_at, removed_by FROM strata_catalog_removed "
      "WHERE removed_by = $1 AND removed_at < $2 AND objects_deleted_at IS NULL "
      "AND (removed_generation IS NULL OR removed_generation <= "
      "  (SELECT COALESCE(MIN(synced_generation), removed_generation) FROM strata_catalog_nodes "
      "   WHERE instance <> '' AND heartbeat_at > $3)) "
      "ORDER BY removed_at, id LIMIT $4",
      {std::string(node), absl::ToUnixMillis(before), absl::ToUnixMillis(alive_after),
       static_cast<int64_t>(limit)});
  if (!rows.ok()) return Annotate(rows.status(), "list removed batches");
  std::vector<RemovedBatch> removed;
  removed.reserve(rows->size());
  for (const postgres::PgRow& row : *rows) {
    if (row.size() != 4) {
      return Annotate(absl::InternalError("unexpected column count"), "list removed batches");
    }
    absl::StatusOr<int64_t> at = postgres::ColumnInt64(row[2], "strata_catalog_removed.removed_at");
    if (!at.ok()) return Annotate(at.status(), "list removed batches");
    removed.push_back(RemovedBatch{.id = row[0].value_or(""),
                                   .day = row[1].value_or(""),
                                   .removed_at = absl::FromUnixMillis(*at),
                                   .removed_by = row[3].value_or("")});
  }
  return removed;
}

absl::StatusOr<int64_t> PostgresBatchCatalog::PruneRemovals(std::string_view first_day_kept) {
  STRATA_RETURN_IF_ERROR(CheckDay(first_day_kept));
  absl::StatusOr<PgRows> pruned = db_->Query(
      "DELETE FROM strata_catalog_removed WHERE day < $1 "
      "AND objects_deleted_at IS NOT NULL RETURNING id",
      {std::string(first_day_kept)});
  if (!pruned.ok()) return Annotate(pruned.status(), "prune removal records");
  return static_cast<int64_t>(pruned->size());
}

absl::Status PostgresBatchCatalog::ObjectsDeleted(const std::vector<std::string>& ids,
                                                  absl::Time now) {
  if (ids.empty()) return absl::OkStatus();
  for (const std::string& id : ids) STRATA_RETURN_IF_ERROR(CheckBatchId(id));
  return Annotate(db_->Exec("UPDATE strata_catalog_removed SET objects_deleted_at = $2 "
                            "WHERE id = ANY(string_to_array($1, ',')) "
                            "AND objects_deleted_at IS NULL",
                            {absl::StrJoin(ids, ","), absl::ToUnixMillis(now)}),
                  "record deleted objects");
}

}  // namespace strata::cluster
