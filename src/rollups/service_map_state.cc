// The service map's state file (service_map_state.h).

#include "rollups/service_map_state.h"

#include <xxhash.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "common/little_endian.h"
#include "fmt/format.h"

namespace strata::rollups {
namespace {

constexpr size_t kStateHeaderBytes = 12;  // magic and version
constexpr size_t kStateChecksumBytes = 8;

void PutStateString(std::string& out, std::string_view v) {
  PutU32(out, static_cast<uint32_t>(v.size()));
  out.append(v);
}

absl::Status BadState(std::string_view what) {
  return absl::DataLossError(fmt::format("service map state: {}", what));
}

// The progress section off the front of `*in`.
absl::Status DecodeProgress(std::string_view* in, ServiceMapProgress* out) {
  auto take = [&](size_t n, std::string_view* bytes) {
    if (in->size() < n) return false;
    *bytes = in->substr(0, n);
    in->remove_prefix(n);
    return true;
  };
  std::string_view field;
  if (!take(16, &field)) return BadState("truncated");
  out->resolved_from = LoadLittleEndian(field.data(), 8);
  out->unreadable = LoadLittleEndian(field.data() + 8, 8);
  if (!take(4, &field) || !take(LoadLittleEndian(field.data(), 4), &field)) {
    return BadState("truncated");
  }
  out->last_unreadable_error = std::string(field);
  if (!take(4, &field)) return BadState("truncated");
  const uint64_t count = LoadLittleEndian(field.data(), 4);
  if (count > in->size() / 12) return BadState("truncated");
  for (uint64_t i = 0; i < count; ++i) {
    std::string_view id;
    if (!take(4, &field) || !take(LoadLittleEndian(field.data(), 4), &id) || !take(8, &field)) {
      return BadState("truncated");
    }
    if (!out->resolved.try_emplace(std::string(id), LoadLittleEndian(field.data(), 8)).second) {
      return BadState("a batch twice");
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string EncodeServiceMapState(const EdgeResolver& resolver,
                                  const ServiceMapProgress& progress) {
  std::string out(kServiceMapStateMagic);
  PutU32(out, kServiceMapStateVersion);
  PutU64(out, progress.resolved_from);
  PutU64(out, progress.unreadable);
  PutStateString(out, progress.last_unreadable_error);
  std::vector<std::pair<std::string_view, uint64_t>> resolved(progress.resolved.begin(),
                                                              progress.resolved.end());
  std::sort(resolved.begin(), resolved.end());
  PutU32(out, static_cast<uint32_t>(resolved.size()));
  for (const auto& [id, age] : resolved) {
    PutStateString(out, id);
    PutU64(out, age);
  }
  resolver.EncodeState(&out);
  PutU64(out, XXH3_64bits(out.data(), out.size()));
  return out;
}

absl::Status DecodeServiceMapState(std::string_view bytes, EdgeResolver* resolver,
                                   ServiceMapProgress* progress) {
  *progress = ServiceMapProgress();
  std::string_view empty;
  (void)resolver->DecodeState(&empty);  // fails on no bytes, leaving it empty
  if (bytes.size() < kStateHeaderBytes + kStateChecksumBytes) return BadState("truncated");
  if (bytes.substr(0, kServiceMapStateMagic.size()) != kServiceMapStateMagic) {
    return BadState("not a service map state file (magic)");
  }
  const uint64_t version = LoadLittleEndian(bytes.data() + kServiceMapStateMagic.size(), 4);
  if (version != kServiceMapStateVersion) {
    return BadState(
        fmt::format("version {}, this strata reads {}", version, kServiceMapStateVersion));
  }
  const std::string_view body = bytes.substr(0, bytes.size() - kStateChecksumBytes);
  const uint64_t checksum = LoadLittleEndian(bytes.data() + body.size(), 8);
  if (XXH3_64bits(body.data(), body.size()) != checksum) return BadState("checksum mismatch");
  std::string_view in = body.substr(kStateHeaderBytes);
  absl::Status decoded = DecodeProgress(&in, progress);
  if (decoded.ok()) decoded = resolver->DecodeState(&in);
  if (decoded.ok() && !in.empty()) decoded = BadState("trailing bytes");
  if (!decoded.ok()) {
    *progress = ServiceMapProgress();
    (void)resolver->DecodeState(&empty);
  }
  return decoded;
}

}  // namespace strata::rollups
