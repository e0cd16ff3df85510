// An EdgeResolver's state as bytes and back (service_edges.h, EncodeState
// and DecodeState; docs/format/service-map-state.md, "Resolver").

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/little_endian.h"
#include "fmt/format.h"
#include "rollups/duration_histogram.h"
#include "rollups/service_edges.h"

namespace strata::rollups {
namespace {

constexpr size_t kSpanKeyBytes = 24;
constexpr size_t kEdgeKeyBytes = 9;
// The smallest encoding of each repeated record, to refuse counts the
// bytes left cannot hold before anything is allocated for them.
constexpr size_t kNodeBytesMin = 9;
constexpr size_t kMinuteBytesMin = 12;
constexpr size_t kMeasuresBytesMin = kEdgeKeyBytes + 36;
constexpr size_t kBucketBytes = 12;
constexpr size_t kIndexedBytes = kSpanKeyBytes + 14;
constexpr size_t kWaitingListBytesMin = kSpanKeyBytes + 4;
constexpr size_t kWaitingBytes = kSpanKeyBytes + 30;
constexpr size_t kExitBytes = kSpanKeyBytes + kEdgeKeyBytes + 25;

void PutU8(std::string& out, uint8_t v) { out.push_back(static_cast<char>(v)); }

void PutString(std::string& out, std::string_view v) {
  PutU32(out, static_cast<uint32_t>(v.size()));
  out.append(v);
}

void PutSpanKey(std::string& out, const SpanKey& key) {
  PutU64(out, key.trace_hi);
  PutU64(out, key.trace_lo);
  PutU64(out, key.span);
}

void PutEdgeKey(std::string& out, const EdgeKey& edge) {
  PutU32(out, edge.source);
  PutU32(out, edge.target);
  PutU8(out, static_cast<uint8_t>(edge.type));
}

void PutMeasures(std::string& out, const EdgeMeasures& m) {
  PutU64(out, static_cast<uint64_t>(m.calls));
  PutU64(out, static_cast<uint64_t>(m.errors));
  const auto sum = static_cast<unsigned __int128>(m.duration_sum);
  PutU64(out, static_cast<uint64_t>(sum));
  PutU64(out, static_cast<uint64_t>(sum >> 64));
  std::vector<std::pair<uint32_t, int64_t>> buckets(m.buckets.begin(), m.buckets.end());
  std::sort(buckets.begin(), buckets.end());
  PutU32(out, static_cast<uint32_t>(buckets.size()));
  for (const auto& [bucket, count] : buckets) {
    PutU32(out, bucket);
    PutU64(out, static_cast<uint64_t>(count));
  }
}

// Reads fixed-width fields off the front of a string_view; after the first
// short read every read returns 0 and ok() is false.
class StateReader {
 public:
  explicit StateReader(std::string_view* in) : in_(in) {}
  bool ok() const { return ok_; }
  uint64_t Fixed(int width) {
    if (!ok_ || in_->size() < static_cast<size_t>(width)) {
      ok_ = false;
      return 0;
    }
    const uint64_t v = LoadLittleEndian(in_->data(), width);
    in_->remove_prefix(static_cast<size_t>(width));
    return v;
  }
  uint8_t U8() { return static_cast<uint8_t>(Fixed(1)); }
  uint32_t U32() { return static_cast<uint32_t>(Fixed(4)); }
  uint64_t U64() { return Fixed(8); }
  std::string String() {
    const uint32_t size = U32();
    if (!ok_ || in_->size() < size) {
      ok_ = false;
      return {};
    }
    std::string out(in_->substr(0, size));
    in_->remove_prefix(size);
    return out;
  }
  // A count of records of at least `record_bytes` each; fails when the
  // bytes left cannot hold that many.
  uint64_t Count(int width, size_t record_bytes) {
    const uint64_t n = Fixed(width);
    if (ok_ && n > in_->size() / record_bytes) ok_ = false;
    return ok_ ? n : 0;
  }
  SpanKey Key() {
    SpanKey key;
    key.trace_hi = U64();
    key.trace_lo = U64();
    key.span = U64();
    return key;
  }
  EdgeKey Edge() {
    EdgeKey edge;
    edge.source = U32();
    edge.target = U32();
    edge.type = static_cast<EdgeType>(U8());
    return edge;
  }

 private:
  std::string_view* in_;
  bool ok_ = true;
};

absl::Status Malformed(std::string_view what) {
  return absl::DataLossError(fmt::format("service map state: resolver: {}", what));
}

bool ValidEdgeType(EdgeType type) {
  return type == EdgeType::kCall || type == EdgeType::kDatabase || type == EdgeType::kMessaging;
}

}  // namespace

void EdgeResolver::EncodeState(std::string* out_ptr) const {
  std::string& out = *out_ptr;
  PutU64(out, newest_age_);
  PutU8(out, nodes_.full_ ? 1 : 0);
  PutU32(out, static_cast<uint32_t>(nodes_.size()));
  for (const Node& node : nodes_.nodes_) {
    PutU8(out, static_cast<uint8_t>(node.type));
    PutString(out, node.ns);
    PutString(out, node.name);
  }
  PutU32(out, static_cast<uint32_t>(minutes_.size()));
  for (const auto& [minute, edges] : minutes_) {
    PutU64(out, minute);
    std::vector<std::pair<EdgeKey, const EdgeMeasures*>> sorted;
    for (const auto& [edge, measures] : edges) sorted.push_back({edge, &measures});
    std::sort(sorted.begin(), sorted.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    PutU32(out, static_cast<uint32_t>(sorted.size()));
    for (const auto& [edge, measures] : sorted) {
      PutEdgeKey(out, edge);
      PutMeasures(out, *measures);
    }
  }
  PutU64(out, index_.size());
  for (const auto& [key, indexed] : index_) {
    PutSpanKey(out, key);
    PutU32(out, indexed.service);
    PutU8(out, indexed.kind);
    PutU8(out, (indexed.remote_child ? 1 : 0) | (indexed.remote_source ? 2 : 0));
    PutU64(out, indexed.age);
  }
  PutU64(out, waiting_.size());
  for (const auto& [key, list] : waiting_) {
    PutSpanKey(out, key);
    PutU32(out, static_cast<uint32_t>(list.size()));
    for (const Waiting& w : list) {
      PutSpanKey(out, w.key);
      PutU32(out, w.service);
      PutU8(out, w.kind);
      PutU8(out, (w.error ? 1 : 0) | (w.via_link ? 2 : 0));
      PutU64(out, w.minute);
      PutU64(out, static_cast<uint64_t>(w.duration));
      PutU64(out, w.age);
    }
  }
  for (const auto* exits : {&exits_, &entries_}) {
    PutU64(out, exits->size());
    for (const auto& [key, exit] : *exits) {
      PutSpanKey(out, key);
      PutEdgeKey(out, exit.edge);
      PutU64(out, exit.minute);
      PutU64(out, static_cast<uint64_t>(exit.duration));
      PutU8(out, exit.error ? 1 : 0);
      PutU64(out, exit.age);
    }
  }
}

absl::Status EdgeResolver::DecodeState(std::string_view* in) {
  EdgeResolver fresh(options_);
  absl::Status decoded = fresh.DecodeInto(in);
  // Swapped member by member: options_ is const.
  nodes_ = decoded.ok() ? std::move(fresh.nodes_) : NodeTable();
  index_ = decoded.ok() ? std::move(fresh.index_) : decltype(index_)();
  waiting_ = decoded.ok() ? std::move(fresh.waiting_) : decltype(waiting_)();
  exits_ = decoded.ok() ? std::move(fresh.exits_) : decltype(exits_)();
  entries_ = decoded.ok() ? std::move(fresh.entries_) : decltype(entries_)();
  ages_ = decoded.ok() ? std::move(fresh.ages_) : decltype(ages_)();
  newest_age_ = decoded.ok() ? fresh.newest_age_ : 0;
  minutes_ = decoded.ok() ? std::move(fresh.minutes_) : decltype(minutes_)();
  return decoded;
}

absl::Status EdgeResolver::DecodeInto(std::string_view* in) {
  StateReader r(in);
  newest_age_ = r.U64();
  const bool full = r.U8() != 0;
  const uint64_t node_count = r.Count(4, kNodeBytesMin);
  if (node_count > kMaxNodes) return Malformed("more nodes than a table holds");
  for (uint64_t i = 0; i < node_count && r.ok(); ++i) {
    const uint8_t type = r.U8();
    const std::string ns = r.String();
    const std::string name = r.String();
    if (!r.ok()) break;
    if (type > static_cast<uint8_t>(NodeType::kMessaging)) return Malformed("a node type unknown");
    if (nodes_.Intern(static_cast<NodeType>(type), ns, name) != i) return Malformed("a node twice");
  }
  nodes_.full_ = full;
  const size_t nodes = nodes_.size();
  auto valid_edge = [&](const EdgeKey& e) {
    return e.source < nodes && e.target < nodes && ValidEdgeType(e.type);
  };
  const uint64_t minute_count = r.Count(4, kMinuteBytesMin);
  uint64_t previous_minute = 0;
  for (uint64_t i = 0; i < minute_count && r.ok(); ++i) {
    const uint64_t minute = r.U64();
    if (i > 0 && minute <= previous_minute) return Malformed("minutes out of order");
    previous_minute = minute;
    auto& edges = minutes_[minute];
    const uint64_t edge_count = r.Count(4, kMeasuresBytesMin);
    for (uint64_t e = 0; e < edge_count && r.ok(); ++e) {
      const EdgeKey edge = r.Edge();
      EdgeMeasures m;
      m.calls = static_cast<int64_t>(r.U64());
      m.errors = static_cast<int64_t>(r.U64());
      const uint64_t low = r.U64();
      const uint64_t high = r.U64();
      m.duration_sum = static_cast<__int128>((static_cast<unsigned __int128>(high) << 64) | low);
      const uint64_t bucket_count = r.Count(4, kBucketBytes);
      for (uint64_t b = 0; b < bucket_count && r.ok(); ++b) {
        const uint32_t bucket = r.U32();
        const auto count = static_cast<int64_t>(r.U64());
        if (!r.ok()) break;
        if (bucket >= kDurationBuckets || count == 0) return Malformed("a bucket out of range");
        if (!m.buckets.try_emplace(bucket, count).second) return Malformed("a bucket twice");
      }
      if (!r.ok()) break;
      if (!valid_edge(edge)) return Malformed("an edge naming no node");
      if (!edges.try_emplace(edge, std::move(m)).second) return Malformed("an edge twice");
    }
  }
  const uint64_t index_count = r.Count(8, kIndexedBytes);
  for (uint64_t i = 0; i < index_count && r.ok(); ++i) {
    const SpanKey key = r.Key();
    Indexed indexed;
    indexed.service = r.U32();
    indexed.kind = r.U8();
    const uint8_t flags = r.U8();
    indexed.remote_child = (flags & 1) != 0;
    indexed.remote_source = (flags & 2) != 0;
    indexed.age = r.U64();
    if (!r.ok()) break;
    if (indexed.service >= nodes) return Malformed("a span of no node");
    if (!index_.try_emplace(key, indexed).second) return Malformed("a span twice");
    ++ages_[indexed.age];
  }
  const uint64_t waiting_count = r.Count(8, kWaitingListBytesMin);
  for (uint64_t i = 0; i < waiting_count && r.ok(); ++i) {
    const SpanKey awaited = r.Key();
    std::vector<Waiting> list(r.Count(4, kWaitingBytes));
    for (Waiting& w : list) {
      w.key = r.Key();
      w.service = r.U32();
      w.kind = r.U8();
      const uint8_t flags = r.U8();
      w.error = (flags & 1) != 0;
      w.via_link = (flags & 2) != 0;
      w.minute = r.U64();
      w.duration = static_cast<int64_t>(r.U64());
      w.age = r.U64();
      if (r.ok() && w.service >= nodes) return Malformed("a waiting span of no node");
    }
    if (!r.ok()) break;
    if (list.empty()) return Malformed("an empty waiting list");
    if (!waiting_.try_emplace(awaited, std::move(list)).second) {
      return Malformed("a waited-for span twice");
    }
  }
  for (auto* exits : {&exits_, &entries_}) {
    const uint64_t exit_count = r.Count(8, kExitBytes);
    for (uint64_t i = 0; i < exit_count && r.ok(); ++i) {
      const SpanKey key = r.Key();
      Exit exit;
      exit.edge = r.Edge();
      exit.minute = r.U64();
      exit.duration = static_cast<int64_t>(r.U64());
      exit.error = r.U8() != 0;
      exit.age = r.U64();
      if (!r.ok()) break;
      if (!valid_edge(exit.edge)) return Malformed("a virtual edge naming no node");
      if (!exits->try_emplace(key, exit).second) return Malformed("a virtual edge's span twice");
    }
  }
  if (!r.ok()) return Malformed("truncated");
  return absl::OkStatus();
}

}  // namespace strata::rollups
