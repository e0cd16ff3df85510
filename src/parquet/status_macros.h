#pragma once

// Status propagation helpers private to src/parquet (strata has no shared
// macros yet; these are prefixed so they cannot clash with one added later).

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define STRATA_PQ_CONCAT_INNER(a, b) a##b
#define STRATA_PQ_CONCAT(a, b) STRATA_PQ_CONCAT_INNER(a, b)

#define STRATA_PQ_RETURN_IF_ERROR(expr)                    \
  do {                                                     \
    ::absl::Status strata_pq_status_ = (expr);             \
    if (!strata_pq_status_.ok()) return strata_pq_status_; \
  } while (0)

#define STRATA_PQ_ASSIGN_OR_RETURN(lhs, expr) \
  STRATA_PQ_ASSIGN_OR_RETURN_IMPL(STRATA_PQ_CONCAT(strata_pq_or_, __LINE__), lhs, expr)

#define STRATA_PQ_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                    \
  if (!tmp.ok()) return tmp.status();                   \
  lhs = std::move(*tmp)
