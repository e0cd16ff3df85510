#include "cluster/catalog_schema.h"

#include <string_view>

#include "postgres/pg_migrations.h"

namespace strata::cluster {
namespace {

// Migration n is kCatalogMigrations[n - 1], one statement each (a DO block
// for several). Never edit one that has shipped; add the next.
constexpr std::string_view kCatalogMigrations[] = {
    // 1: the live list, removal records, day leases, nodes.
    "DO $$ BEGIN "
    "CREATE TABLE strata_catalog_state ("
    "  singleton BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (singleton),"
    "  generation BIGINT NOT NULL);"
    "INSERT INTO strata_catalog_state(generation) VALUES (0);"
    "CREATE TABLE strata_catalog_batches ("
    "  id TEXT PRIMARY KEY,"
    "  day TEXT NOT NULL,"
    "  bytes BIGINT NOT NULL,"
    "  meta_json TEXT NOT NULL,"
    "  added_at BIGINT NOT NULL,"
    "  added_by TEXT NOT NULL);"
    "CREATE INDEX strata_catalog_batches_day ON strata_catalog_batches(day);"
    "CREATE TABLE strata_catalog_removed ("
    "  id TEXT PRIMARY KEY,"
    "  day TEXT NOT NULL,"
    "  removed_at BIGINT NOT NULL,"
    "  removed_by TEXT NOT NULL,"
    "  objects_deleted_at BIGINT);"
    "CREATE INDEX strata_catalog_removed_pending ON strata_catalog_removed(removed_at) "
    "  WHERE objects_deleted_at IS NULL;"
    "CREATE TABLE strata_catalog_leases ("
    "  day TEXT PRIMARY KEY,"
    "  holder TEXT NOT NULL,"
    "  epoch BIGINT NOT NULL,"
    "  expires_at BIGINT NOT NULL);"
    "CREATE TABLE strata_catalog_nodes ("
    "  node TEXT PRIMARY KEY,"
    "  instance TEXT NOT NULL,"
    "  address TEXT NOT NULL,"
    "  started_at BIGINT NOT NULL,"
    "  heartbeat_at BIGINT NOT NULL);"
    "END $$",
    // 2: the generation each removal made, and the newest listing each node
    // has applied, so a removal's objects wait for every live node.
    "DO $$ BEGIN "
    "ALTER TABLE strata_catalog_removed ADD COLUMN removed_generation BIGINT;"
    "ALTER TABLE strata_catalog_nodes ADD COLUMN synced_generation BIGINT NOT NULL DEFAULT 0;"
    "END $$",
};

// Any constant no other schema uses: "strata" + 2 (the control store's is + 1).
constexpr int64_t kCatalogLockKey = 0x7374726174610002;

}  // namespace

absl::Status ApplyCatalogMigrations(postgres::PgConnection& db) {
  return postgres::ApplyMigrations(db, postgres::MigrationSet{
                                           .what = "batch catalog",
                                           .versions_table = "strata_catalog_migrations",
                                           .lock_key = kCatalogLockKey,
                                           .statements = kCatalogMigrations,
                                       });
}

}  // namespace strata::cluster
