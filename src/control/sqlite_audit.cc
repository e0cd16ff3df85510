// SqliteAccountStore: the audit log (docs/format/control-db.md,
// "audit_events").

#include "common/status_macros.h"
#include "control/control_db.h"
#include "control/sqlite_account_store.h"
#include "fmt/format.h"

namespace strata::control {
namespace {

absl::StatusOr<AuditOutcome> ParseOutcome(const std::optional<std::string>& value) {
  for (AuditOutcome outcome : {AuditOutcome::kOk, AuditOutcome::kFailed, AuditOutcome::kDenied}) {
    if (value == AuditOutcomeName(outcome)) return outcome;
  }
  return absl::DataLossError(fmt::format("audit_events.outcome is \"{}\"", value.value_or("NULL")));
}

}  // namespace

std::string_view AuditOutcomeName(AuditOutcome outcome) {
  switch (outcome) {
    case AuditOutcome::kOk:
      return "ok";
    case AuditOutcome::kFailed:
      return "failed";
    case AuditOutcome::kDenied:
      return "denied";
  }
  return "ok";
}

absl::Status SqliteAccountStore::AppendAudit(const AuditEvent& event) {
  return Annotate(db_->Exec("INSERT INTO audit_events(at, actor, action, target, outcome, address, "
                            "user_agent, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                            {DbMillis(event.at), event.actor, event.action, event.target,
                             std::string(AuditOutcomeName(event.outcome)), event.address,
                             event.user_agent, event.detail}),
                  "append audit event");
}

absl::StatusOr<std::vector<AuditEvent>> SqliteAccountStore::ListAudit(
    std::optional<int64_t> before_id, size_t limit) {
  absl::StatusOr<SqlRows> rows = db_->Query(
      "SELECT id, at, actor, action, target, outcome, address, user_agent, detail "
      "FROM audit_events WHERE id < ? ORDER BY id DESC LIMIT ?",
      {before_id.value_or(INT64_MAX), static_cast<int64_t>(limit)});
  if (!rows.ok()) return Annotate(rows.status(), "list audit events");
  std::vector<AuditEvent> events;
  events.reserve(rows->size());
  for (const SqlRow& row : *rows) {
    if (row.size() != 9) return absl::InternalError("audit_events: unexpected column count");
    AuditEvent event;
    STRATA_ASSIGN_OR_RETURN(event.id, ColumnInt(row[0], "audit_events.id"));
    STRATA_ASSIGN_OR_RETURN(event.at, ColumnTime(row[1], "audit_events.at"));
    event.actor = row[2].value_or("");
    event.action = row[3].value_or("");
    event.target = row[4].value_or("");
    STRATA_ASSIGN_OR_RETURN(event.outcome, ParseOutcome(row[5]));
    event.address = row[6].value_or("");
    event.user_agent = row[7].value_or("");
    event.detail = row[8].value_or("");
    events.push_back(std::move(event));
  }
  return events;
}

absl::StatusOr<int64_t> SqliteAccountStore::PruneAudit(absl::Time before) {
  absl::StatusOr<SqlRows> rows =
      db_->Query("DELETE FROM audit_events WHERE at < ? RETURNING id", {DbMillis(before)});
  if (!rows.ok()) return Annotate(rows.status(), "prune audit events");
  return static_cast<int64_t>(rows->size());
}

}  // namespace strata::control
