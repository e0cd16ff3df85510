#pragma once

// Status propagation helpers for functions that return absl::Status or
// absl::StatusOr<T>.
//
//   STRATA_RETURN_IF_ERROR(file->Sync());
//   STRATA_ASSIGN_OR_RETURN(auto meta, ParseMeta(bytes));

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define STRATA_STATUS_CONCAT_INNER(a, b) a##b
#define STRATA_STATUS_CONCAT(a, b) STRATA_STATUS_CONCAT_INNER(a, b)

#define STRATA_RETURN_IF_ERROR(expr)                         \
  do {                                                       \
    ::absl::Status strata_status_ = (expr);                  \
    if (!strata_status_.ok()) return strata_status_;         \
  } while (0)

#define STRATA_ASSIGN_OR_RETURN(lhs, expr) \
  STRATA_ASSIGN_OR_RETURN_IMPL(STRATA_STATUS_CONCAT(strata_status_or_, __LINE__), lhs, expr)

#define STRATA_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(*tmp)
