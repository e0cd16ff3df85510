// Numbers the resources and scopes of one table file by content, so that
// every request's copy of the same resource (and of the same scope of that
// resource) shares one index (spans-parquet.md, "Resources and scopes").
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "otlp/batch.h"

namespace strata::storage {

class OwnerNumbering {
 public:
  // Bytes of content keys remembered per file; past it, owners not seen yet
  // get fresh indexes (still correct, no longer shared).
  static constexpr size_t kDefaultKeyBudget = 8 << 20;

  explicit OwnerNumbering(size_t key_budget = kDefaultKeyBudget) : key_budget_(key_budget) {}

  // The file indexes of one batch's resource rows and scope rows.
  struct Assigned {
    std::vector<uint32_t> resource;
    std::vector<uint32_t> scope;
  };

  // Numbers every resource and scope row of `batch`: equal content gets the
  // index it got first in this file, new content the next free one. Fails
  // when either count would pass 2^31 - 1.
  absl::StatusOr<Assigned> Number(const otlp::BatchBase& batch);

  uint32_t resources() const { return next_resource_; }
  uint32_t scopes() const { return next_scope_; }
  size_t key_bytes() const { return key_bytes_; }

 private:
  uint32_t Find(absl::flat_hash_map<std::string, uint32_t>& seen, std::optional<std::string> key,
                uint32_t* next);

  size_t key_budget_;
  size_t key_bytes_ = 0;
  uint32_t next_resource_ = 0;
  uint32_t next_scope_ = 0;
  absl::flat_hash_map<std::string, uint32_t> resources_;
  absl::flat_hash_map<std::string, uint32_t> scopes_;
};

}  // namespace strata::storage
