#pragma once

// Building blocks of the batch -> libprotobuf converters (to_message.h):
// column-length and range checks, optional ids, and BaseConverter, which
// converts what every signal's batch shares (resources, scopes, attributes
// and nested AnyValues). Internal to otlp_reference.
//
// Thread-safety: reentrant; the batch is only read. Errors: as to_message.h
// describes (InvalidArgument for fields 0.38 cannot hold, Internal for a
// batch that breaks its invariants).

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "opentelemetry/proto/common/v1/common.pb.h"
#include "opentelemetry/proto/resource/v1/resource.pb.h"
#include "otlp/batch.h"

namespace strata::otlp_reference::internal {

// Internal unless every size in `sizes` equals `expected`.
absl::Status CheckSizes(absl::string_view table, size_t expected,
                        std::initializer_list<size_t> sizes);
// Internal unless `range` lies inside a table of `table_size` rows.
absl::Status CheckRange(otlp::Range range, size_t table_size, absl::string_view what, size_t row);
absl::Status CheckValueColumns(absl::string_view table, const otlp::ValueColumns& values,
                               size_t expected);
absl::Status CheckAttributeColumns(absl::string_view table,
                                   const otlp::AttributeColumns& attributes);
// InvalidArgument: `what` of `row` is set and 0.38 has no field for it.
absl::Status Unsupported(absl::string_view what, size_t row);

template <size_t N>
std::string IdBytes(const std::array<uint8_t, N>& id) {
  return std::string(reinterpret_cast<const char*>(id.data()), N);
}

// An optional id: its bytes when present; an absent id must be all zero.
template <size_t N>
absl::Status OptionalId(const std::array<uint8_t, N>& id, uint8_t present, absl::string_view what,
                        size_t row, std::string* out) {
  if (present != 0) {
    *out = IdBytes(id);
    return absl::OkStatus();
  }
  for (uint8_t b : id) {
    if (b != 0) {
      return absl::InternalError(absl::StrCat(what, "[", row, "] is marked absent but not zero"));
    }
  }
  return absl::OkStatus();
}

// Converts the parts every signal's batch shares.
class BaseConverter {
 public:
  using KeyValues = google::protobuf::RepeatedPtrField<opentelemetry::proto::common::v1::KeyValue>;

  explicit BaseConverter(const otlp::BatchBase& base) : base_(base) {}

  // Column lengths of the shared tables and every scope's resource index.
  absl::Status Check() const;

  // Row `row` of `table`; children come from the batch's nested tables.
  absl::Status Value(const otlp::ValueColumns& table, size_t row,
                     opentelemetry::proto::common::v1::AnyValue* out, int depth) const;
  // The attributes `range` of `table` names; `what` and `row` name the
  // owner in errors. Every KeyValue gets a value (possibly empty).
  absl::Status Attributes(const otlp::AttributeColumns& table, otlp::Range range,
                          absl::string_view what, size_t row, KeyValues* out, int depth = 0) const;
  absl::Status Resource(size_t row, opentelemetry::proto::resource::v1::Resource* out,
                        std::string* schema_url) const;
  absl::Status Scope(size_t row, opentelemetry::proto::common::v1::InstrumentationScope* out,
                     std::string* schema_url) const;

  // Scope rows of each resource row, in order.
  std::vector<std::vector<uint32_t>> ScopesByResource() const;
  // Rows of a table grouped by their scope index, in order.
  absl::StatusOr<std::vector<std::vector<uint32_t>>> RowsByScope(
      const std::vector<uint32_t>& scope_of_row, absl::string_view what) const;

 private:
  const otlp::BatchBase& base_;
};

}  // namespace strata::otlp_reference::internal
