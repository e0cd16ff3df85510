#include "control/saved_queries.h"

#include "absl/strings/numbers.h"
#include "common/status_macros.h"
#include "control/text_checks.h"
#include "fmt/format.h"

namespace strata::control {
namespace {

constexpr size_t kMaxQueryNameBytes = 200;

absl::Status CheckFields(const std::optional<std::string>& name,
                         const std::optional<std::string>& parameters,
                         const std::optional<std::string>& time_range) {
  if (name.has_value()) {
    STRATA_RETURN_IF_ERROR(ValidatePlainText("a saved query's name", *name, kMaxQueryNameBytes));
  }
  if (parameters.has_value() && parameters->size() > kMaxSavedQueryParameterBytes) {
    return absl::InvalidArgumentError(fmt::format("a saved query's parameters are at most {} bytes",
                                                  kMaxSavedQueryParameterBytes));
  }
  if (time_range.has_value()) STRATA_RETURN_IF_ERROR(ValidateTimeRange(*time_range));
  return absl::OkStatus();
}

bool MayShare(const User& user) { return RoleAllows(user.role, Role::kOperator); }

absl::Status SharingNeedsOperator() {
  return absl::PermissionDeniedError("sharing a saved query needs the operator or admin role");
}

}  // namespace

absl::Status ValidateTimeRange(std::string_view range) {
  auto bad = [&] {
    return absl::InvalidArgumentError(fmt::format(
        "time range \"{}\": expected now-<N><s|m|h|d|w> (e.g. now-1h) or <RFC 3339>/<RFC 3339>",
        range.substr(0, 100)));
  };
  if (range.starts_with("now-")) {
    std::string_view amount = range.substr(4);
    if (amount.size() < 2 || amount.size() > 6) return bad();
    const char unit = amount.back();
    if (std::string_view("smhdw").find(unit) == std::string_view::npos) return bad();
    amount.remove_suffix(1);
    int64_t n = 0;
    for (char c : amount) {
      if (c < '0' || c > '9') return bad();
    }
    if (!absl::SimpleAtoi(absl::string_view(amount.data(), amount.size()), &n) || n < 1) {
      return bad();
    }
    return absl::OkStatus();
  }
  const size_t slash = range.find('/');
  if (slash == std::string_view::npos || range.size() > 100) return bad();
  absl::Time start;
  absl::Time end;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, std::string(range.substr(0, slash)), &start, &error) ||
      !absl::ParseTime(absl::RFC3339_full, std::string(range.substr(slash + 1)), &end, &error)) {
    return bad();
  }
  if (!(start < end)) {
    return absl::InvalidArgumentError(
        fmt::format("time range \"{}\": the start must be before the end", range));
  }
  return absl::OkStatus();
}

absl::StatusOr<SavedQuery> SavedQueries::Create(const User& user, SavedQuery query) {
  STRATA_RETURN_IF_ERROR(CheckFields(query.name, query.parameters, query.time_range));
  if (query.shared && !MayShare(user)) return SharingNeedsOperator();
  STRATA_ASSIGN_OR_RETURN(const int64_t count, store_->CountSavedQueries(user.id));
  if (count >= kMaxSavedQueriesPerUser) {
    return absl::ResourceExhaustedError(fmt::format(
        "you have {} saved queries, the most one person may keep; delete some first", count));
  }
  query.owner_id = user.id;
  return store_->CreateSavedQuery(query, clock_());
}

absl::StatusOr<std::vector<SavedQuery>> SavedQueries::List(const User& user) {
  return store_->ListSavedQueries(user.id);
}

absl::StatusOr<SavedQuery> SavedQueries::Visible(const User& user, int64_t id) {
  absl::StatusOr<SavedQuery> query = store_->GetSavedQuery(id);
  if (query.ok() && query->owner_id != user.id && !query->shared) {
    return absl::NotFoundError(fmt::format("no saved query has id {}", id));
  }
  return query;
}

absl::Status SavedQueries::MayModify(const User& user, const SavedQuery& query) {
  if (query.shared && !MayShare(user)) {
    return absl::PermissionDeniedError(
        "changing a shared saved query needs the operator or admin role");
  }
  if (!query.shared && query.owner_id != user.id) {
    return absl::PermissionDeniedError("only its owner may change a private saved query");
  }
  return absl::OkStatus();
}

absl::StatusOr<SavedQuery> SavedQueries::Get(const User& user, int64_t id) {
  return Visible(user, id);
}

absl::StatusOr<SavedQuery> SavedQueries::Change(const User& user, int64_t id,
                                                const SavedQueryChange& change) {
  STRATA_RETURN_IF_ERROR(CheckFields(change.name, change.parameters, change.time_range));
  STRATA_ASSIGN_OR_RETURN(const SavedQuery query, Visible(user, id));
  STRATA_RETURN_IF_ERROR(MayModify(user, query));
  if (change.shared.value_or(false) && !MayShare(user)) return SharingNeedsOperator();
  return store_->ChangeSavedQuery(id, change, clock_());
}

absl::Status SavedQueries::Delete(const User& user, int64_t id) {
  STRATA_ASSIGN_OR_RETURN(const SavedQuery query, Visible(user, id));
  STRATA_RETURN_IF_ERROR(MayModify(user, query));
  return store_->DeleteSavedQuery(id);
}

}  // namespace strata::control
