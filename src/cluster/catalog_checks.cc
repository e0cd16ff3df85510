#include "cluster/catalog_checks.h"

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "storage/format/batch_id.h"
#include "storage/format/batch_meta.h"

namespace strata::cluster {
namespace {

std::string Escaped(std::string_view text) {
  return absl::CEscape(absl::string_view(text.data(), text.size()));
}

}  // namespace

absl::Status CheckBatchId(std::string_view id) { return storage::BatchId::Parse(id).status(); }

absl::Status CheckDay(std::string_view day) { return storage::ValidateDay(day); }

absl::Status CheckNodeId(std::string_view node) { return storage::ParseBatchIdNode(node).status(); }

absl::Status CheckHolder(std::string_view holder) {
  const size_t slash = holder.find('/');
  if (slash == std::string_view::npos) {
    return absl::InvalidArgumentError(
        fmt::format("lease holder \"{}\" is not <node id>/<instance>", Escaped(holder)));
  }
  STRATA_RETURN_IF_ERROR(CheckNodeId(holder.substr(0, slash)));
  const std::string_view instance = holder.substr(slash + 1);
  bool valid = !instance.empty() && instance.size() <= 64;
  for (char c : instance) {
    valid = valid && (absl::ascii_isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'z'));
  }
  if (!valid) {
    return absl::InvalidArgumentError(
        fmt::format("lease holder \"{}\": the instance must be 1 to 64 characters of 0-9 and a-z",
                    Escaped(holder)));
  }
  return absl::OkStatus();
}

absl::Status CheckCatalogBatch(const CatalogBatch& batch) {
  STRATA_RETURN_IF_ERROR(CheckBatchId(batch.id));
  STRATA_RETURN_IF_ERROR(CheckDay(batch.day));
  if (batch.bytes < 0) {
    return absl::InvalidArgumentError(
        fmt::format("batch {}: {} bytes is negative", batch.id, batch.bytes));
  }
  absl::StatusOr<storage::BatchMeta> meta = storage::ParseBatchMeta(batch.meta_json, batch.id);
  if (!meta.ok()) {
    return absl::InvalidArgumentError(fmt::format("batch {}: meta.json is not valid: {}", batch.id,
                                                  std::string(meta.status().message())));
  }
  if (meta->id != batch.id || meta->day != batch.day) {
    return absl::InvalidArgumentError(
        fmt::format("batch {} of day {}: its meta.json names batch {} of day {}", batch.id,
                    batch.day, meta->id, meta->day));
  }
  return absl::OkStatus();
}

}  // namespace strata::cluster
