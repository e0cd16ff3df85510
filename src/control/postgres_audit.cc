// PostgresAccountStore (postgres_account_store.h): the audit log.

#include <cstdint>

#include "common/status_macros.h"
#include "control/control_db.h"
#include "control/postgres_account_store.h"
#include "fmt/format.h"

namespace strata::control {
namespace {

absl::StatusOr<AuditOutcome> PgAuditOutcome(const std::optional<std::string>& value) {
  for (AuditOutcome outcome : {AuditOutcome::kOk, AuditOutcome::kFailed, AuditOutcome::kDenied}) {
    if (value == AuditOutcomeName(outcome)) return outcome;
  }
  return absl::DataLossError(
      fmt::format("strata_audit_events.outcome is \"{}\"", value.value_or("NULL")));
}

}  // namespace

absl::Status PostgresAccountStore::AppendAudit(const AuditEvent& event) {
  return Annotate(
      db_->Exec("INSERT INTO strata_audit_events(at, actor, action, target, outcome, address, "
                "user_agent, detail) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                {DbMillis(event.at), event.actor, event.action, event.target,
                 std::string(AuditOutcomeName(event.outcome)), event.address, event.user_agent,
                 event.detail}),
      "append audit event");
}

absl::StatusOr<std::vector<AuditEvent>> PostgresAccountStore::ListAudit(
    std::optional<int64_t> before_id, size_t limit) {
  absl::StatusOr<postgres::PgRows> rows = db_->Query(
      "SELECT id, at, actor, action, target, outcome, address, user_agent, detail "
      "FROM strata_audit_events WHERE id < $1 ORDER BY id DESC LIMIT $2",
      {before_id.value_or(INT64_MAX), static_cast<int64_t>(limit)});
  if (!rows.ok()) return Annotate(rows.status(), "list audit events");
  std::vector<AuditEvent> events;
  events.reserve(rows->size());
  for (const postgres::PgRow& row : *rows) {
    if (row.size() != 9) return absl::InternalError("strata_audit_events: unexpected column count");
    AuditEvent event;
    STRATA_ASSIGN_OR_RETURN(event.id, ColumnInt(row[0], "strata_audit_events.id"));
    STRATA_ASSIGN_OR_RETURN(event.at, ColumnTime(row[1], "strata_audit_events.at"));
    event.actor = row[2].value_or("");
    event.action = row[3].value_or("");
    event.target = row[4].value_or("");
    STRATA_ASSIGN_OR_RETURN(event.outcome, PgAuditOutcome(row[5]));
    event.address = row[6].value_or("");
    event.user_agent = row[7].value_or("");
    event.detail = row[8].value_or("");
    events.push_back(std::move(event));
  }
  return events;
}

absl::StatusOr<int64_t> PostgresAccountStore::PruneAudit(absl::Time before) {
  absl::StatusOr<postgres::PgRows> rows =
      db_->Query("DELETE FROM strata_audit_events WHERE at < $1 RETURNING id", {DbMillis(before)});
  if (!rows.ok()) return Annotate(rows.status(), "prune audit events");
  return static_cast<int64_t>(rows->size());
}

}  // namespace strata::control
