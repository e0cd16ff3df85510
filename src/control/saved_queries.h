#pragma once

// SavedQueries holds the rules for what people save (docs/api.md, "Saved
// queries"): a name, a kind (trace search, log search, metric query, SQL),
// the search's parameters as a JSON object, and a time range, either
// relative ("now-1h") or absolute ("<RFC 3339>/<RFC 3339>").
//
// Who may do what: everyone signed in sees their own queries and every
// shared one. A viewer creates, changes and deletes their own private
// queries; an operator or admin may also share them and change or delete
// any shared query. A query someone may not see is NotFound, so ids do not
// reveal others' private queries.
//
// Limits: kMaxSavedQueriesPerUser per owner, names up to 200 bytes,
// parameters up to 64 KiB.
//
// Thread-safety: safe for concurrent use. The store must outlive it.
//
// Errors: InvalidArgument for a bad name, kind, time range or parameters;
// PermissionDenied for sharing or changing what the role does not allow;
// NotFound; AlreadyExists for a name the owner already uses;
// ResourceExhausted past the per-user limit; the store's errors otherwise.

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "control/account_store.h"

namespace strata::control {

inline constexpr int64_t kMaxSavedQueriesPerUser = 1000;
inline constexpr size_t kMaxSavedQueryParameterBytes = 64 << 10;

// OK for "now-<N><unit>" (unit s, m, h, d or w; N from 1 to 99999) and for
// "<RFC 3339>/<RFC 3339>" with the start before the end.
[[nodiscard]] absl::Status ValidateTimeRange(std::string_view range);

class SavedQueries {
 public:
  SavedQueries(
      AccountStore* store, std::function<absl::Time()> clock = [] { return absl::Now(); })
      : store_(store), clock_(std::move(clock)) {}

  // `query.owner_id` and times are set from `user`; `parameters` must be a
  // JSON object (the API checks the syntax).
  [[nodiscard]] absl::StatusOr<SavedQuery> Create(const User& user, SavedQuery query);
  [[nodiscard]] absl::StatusOr<std::vector<SavedQuery>> List(const User& user);
  [[nodiscard]] absl::StatusOr<SavedQuery> Get(const User& user, int64_t id);
  [[nodiscard]] absl::StatusOr<SavedQuery> Change(const User& user, int64_t id,
                                                  const SavedQueryChange& change);
  [[nodiscard]] absl::Status Delete(const User& user, int64_t id);

 private:
  // The query when `user` may see it; NotFound otherwise.
  absl::StatusOr<SavedQuery> Visible(const User& user, int64_t id);
  // PermissionDenied unless `user` may change or delete `query`.
  static absl::Status MayModify(const User& user, const SavedQuery& query);

  AccountStore* const store_;
  const std::function<absl::Time()> clock_;
};

}  // namespace strata::control
