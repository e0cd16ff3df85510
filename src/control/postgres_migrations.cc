#include "control/postgres_migrations.h"

#include <string_view>

#include "postgres/pg_migrations.h"

namespace strata::control {
namespace {

// Migration n is kPostgresMigrations[n - 1]. Never edit one that has shipped;
// add the next.
constexpr std::string_view kPostgresMigrations[] = {
    // 1: tokens, as the SQLite control database keeps them.
    "CREATE TABLE strata_tokens ("
    "  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    "  name TEXT NOT NULL UNIQUE,"
    "  scope TEXT NOT NULL,"
    "  token_hash BYTEA NOT NULL,"
    "  created_at BIGINT NOT NULL,"
    "  last_used_at BIGINT,"
    "  revoked_at BIGINT)",
    // 2: users, sessions, password links, the audit log and saved queries,
    // as the SQLite control database keeps them.
    "DO $$ BEGIN "
    "CREATE TABLE strata_users ("
    "  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    "  email TEXT NOT NULL UNIQUE,"
    "  name TEXT NOT NULL,"
    "  role TEXT NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),"
    "  password_hash TEXT,"
    "  active INTEGER NOT NULL CHECK (active IN (0, 1)),"
    "  created_at BIGINT NOT NULL,"
    "  updated_at BIGINT NOT NULL,"
    "  last_sign_in_at BIGINT);"
    "CREATE TABLE strata_sessions ("
    "  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    "  user_id BIGINT NOT NULL REFERENCES strata_users(id) ON DELETE CASCADE,"
    "  token_hash BYTEA NOT NULL UNIQUE CHECK (length(token_hash) = 32),"
    "  created_at BIGINT NOT NULL,"
    "  last_seen_at BIGINT NOT NULL,"
    "  address TEXT NOT NULL,"
    "  user_agent TEXT NOT NULL);"
    "CREATE INDEX strata_sessions_by_user ON strata_sessions(user_id);"
    "CREATE TABLE strata_password_links ("
    "  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    "  user_id BIGINT NOT NULL REFERENCES strata_users(id) ON DELETE CASCADE,"
    "  token_hash BYTEA NOT NULL UNIQUE CHECK (length(token_hash) = 32),"
    "  created_at BIGINT NOT NULL,"
    "  expires_at BIGINT NOT NULL,"
    "  used_at BIGINT);"
    "CREATE TABLE strata_audit_events ("
    "  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    "  at BIGINT NOT NULL,"
    "  actor TEXT NOT NULL,"
    "  action TEXT NOT NULL,"
    "  target TEXT NOT NULL,"
    "  outcome TEXT NOT NULL CHECK (outcome IN ('ok', 'failed', 'denied')),"
    "  address TEXT NOT NULL,"
    "  user_agent TEXT NOT NULL,"
    "  detail TEXT NOT NULL);"
    "CREATE INDEX strata_audit_events_by_time ON strata_audit_events(at);"
    "CREATE TABLE strata_saved_queries ("
    "  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    "  owner_id BIGINT NOT NULL REFERENCES strata_users(id) ON DELETE CASCADE,"
    "  name TEXT NOT NULL,"
    "  kind TEXT NOT NULL CHECK (kind IN ('traces', 'logs', 'metrics', 'sql')),"
    "  parameters TEXT NOT NULL,"
    "  time_range TEXT NOT NULL,"
    "  shared INTEGER NOT NULL CHECK (shared IN (0, 1)),"
    "  created_at BIGINT NOT NULL,"
    "  updated_at BIGINT NOT NULL,"
    "  UNIQUE (owner_id, name));"
    "END $$",
    // 3: MCP's OAuth clients, codes, grants and tokens, as the SQLite
    // control database keeps them (its migration 3).
    "DO $$ BEGIN "
    "CREATE TABLE strata_oauth_clients ("
    "  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    "  client_id TEXT NOT NULL UNIQUE,"
    "  name TEXT NOT NULL,"
    "  redirect_uris TEXT NOT NULL,"
    "  created_at BIGINT NOT NULL);"
    "CREATE TABLE strata_oauth_grants ("
    "  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    "  client_id TEXT NOT NULL REFERENCES strata_oauth_clients(client_id) ON DELETE CASCADE,"
    "  user_id BIGINT NOT NULL REFERENCES strata_users(id) ON DELETE CASCADE,"
    "  resource TEXT NOT NULL,"
    "  created_at BIGINT NOT NULL,"
    "  revoked_at BIGINT);"
    "CREATE INDEX strata_oauth_grants_by_client ON strata_oauth_grants(client_id);"
    "CREATE INDEX strata_oauth_grants_by_user ON strata_oauth_grants(user_id);"
    "CREATE TABLE strata_oauth_codes ("
    "  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    "  code_hash BYTEA NOT NULL UNIQUE CHECK (length(code_hash) = 32),"
    "  client_id TEXT NOT NULL REFERENCES strata_oauth_clients(client_id) ON DELETE CASCADE,"
    "  user_id BIGINT NOT NULL REFERENCES strata_users(id) ON DELETE CASCADE,"
    "  redirect_uri TEXT NOT NULL,"
    "  code_challenge TEXT NOT NULL,"
    "  resource TEXT NOT NULL,"
    "  created_at BIGINT NOT NULL,"
    "  expires_at BIGINT NOT NULL,"
    "  used_at BIGINT,"
    "  grant_id BIGINT REFERENCES strata_oauth_grants(id) ON DELETE CASCADE);"
    "CREATE INDEX strata_oauth_codes_by_client ON strata_oauth_codes(client_id);"
    "CREATE TABLE strata_oauth_tokens ("
    "  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    "  grant_id BIGINT NOT NULL REFERENCES strata_oauth_grants(id) ON DELETE CASCADE,"
    "  kind TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),"
    "  token_hash BYTEA NOT NULL UNIQUE CHECK (length(token_hash) = 32),"
    "  created_at BIGINT NOT NULL,"
    "  expires_at BIGINT NOT NULL,"
    "  used_at BIGINT);"
    "CREATE INDEX strata_oauth_tokens_by_grant ON strata_oauth_tokens(grant_id);"
    "END $$",
};
static_assert(std::size(kPostgresMigrations) == kPostgresControlSchemaVersion);

// Any constant both sides agree on; it only keeps concurrent migrators apart.
constexpr int64_t kMigrationLockKey = 0x7374726174610001;  // "strata" + 1

}  // namespace

absl::Status ApplyPostgresMigrations(postgres::PgConnection& db) {
  return postgres::ApplyMigrations(db, postgres::MigrationSet{
                                           .what = "control store",
                                           .versions_table = "strata_schema_migrations",
                                           .lock_key = kMigrationLockKey,
                                           .statements = kPostgresMigrations,
                                       });
}

}  // namespace strata::control
