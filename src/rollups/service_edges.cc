// Service-map edges resolved across batches (service_edges.h).

#include "rollups/service_edges.h"

#include <algorithm>
#include <array>

#include "absl/container/flat_hash_set.h"
#include "rollups/duration_histogram.h"
#include "rollups/rollup_rows.h"

namespace strata::rollups {
namespace {

using otlp::AttributeColumns;
using otlp::Range;
using otlp::ValueType;

constexpr int32_t kEdgeStatusError = 2;
constexpr uint8_t kKindClient = 3;
constexpr uint8_t kKindProducer = 4;
constexpr uint8_t kKindConsumer = 5;

// The attribute keys VirtualPeerOf reads, in its order.
enum PeerKey : int {
  kPeerService,
  kDbSystemName,
  kDbSystem,
  kDbNamespace,
  kDbName,
  kMessagingSystemKey,
  kMessagingDestination,
  kServerAddress,
  kNetPeerName,
  kPeerKeyCount,
};
constexpr std::string_view kPeerKeys[kPeerKeyCount] = {
    "peer.service",
    "db.system.name",
    "db.system",
    "db.namespace",
    "db.name",
    "messaging.system",
    "messaging.destination.name",
    "server.address",
    "net.peer.name",
};

// The value of each key's first occurrence when it is a string.
std::array<std::optional<std::string_view>, kPeerKeyCount> PeerValues(const AttributeColumns& table,
                                                                      Range range) {
  std::array<std::optional<std::string_view>, kPeerKeyCount> out;
  std::array<bool, kPeerKeyCount> seen{};
  if (range.end() > table.size()) return out;
  for (uint32_t i = range.begin; i < range.end(); ++i) {
    const std::string_view key = table.key[i];
    if (key.size() < 7) continue;  // every key read is 7 or more bytes
    for (int k = 0; k < kPeerKeyCount; ++k) {
      if (seen[k] || key != kPeerKeys[k]) continue;
      seen[k] = true;
      if (table.value.type[i] == ValueType::kString) out[k] = table.value.str[i];
      break;
    }
  }
  return out;
}

uint64_t Big64(const uint8_t* bytes) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = v << 8 | bytes[i];
  return v;
}

}  // namespace

uint32_t NodeTable::Intern(NodeType type, std::string_view ns, std::string_view name) {
  Node node{type, std::string(ns), std::string(name)};
  auto it = ids_.find(node);
  if (it != ids_.end()) return it->second;
  if (nodes_.size() >= kMaxNodes) {
    full_ = true;
    return kNoNode;
  }
  const auto id = static_cast<uint32_t>(nodes_.size());
  nodes_.push_back(node);
  ids_.emplace(std::move(node), id);
  return id;
}

std::optional<VirtualPeer> VirtualPeerOf(const AttributeColumns& table, Range range) {
  const auto v = PeerValues(table, range);
  auto joined = [](std::string_view a, std::optional<std::string_view> b) {
    std::string out(a);
    if (b.has_value() && !b->empty()) {
      out += ' ';
      out += *b;
    }
    return out;
  };
  if (v[kPeerService].has_value() && !v[kPeerService]->empty()) {
    return VirtualPeer{NodeType::kPeer, std::string(*v[kPeerService])};
  }
  std::optional<std::string_view> db =
      v[kDbSystemName].has_value() ? v[kDbSystemName] : v[kDbSystem];
  if (db.has_value() && !db->empty()) {
    return VirtualPeer{NodeType::kDatabase,
                       joined(*db, v[kDbNamespace].has_value() ? v[kDbNamespace] : v[kDbName])};
  }
  if (v[kMessagingSystemKey].has_value() && !v[kMessagingSystemKey]->empty()) {
    return VirtualPeer{NodeType::kMessaging,
                       joined(*v[kMessagingSystemKey], v[kMessagingDestination])};
  }
  std::optional<std::string_view> address =
      v[kServerAddress].has_value() ? v[kServerAddress] : v[kNetPeerName];
  if (address.has_value() && !address->empty()) {
    return VirtualPeer{NodeType::kPeer, std::string(*address)};
  }
  return std::nullopt;
}

std::optional<VirtualPeer> MessagingSourceOf(const AttributeColumns& table, Range range) {
  const auto v = PeerValues(table, range);
  if (!v[kMessagingSystemKey].has_value() || v[kMessagingSystemKey]->empty()) return std::nullopt;
  std::string name(*v[kMessagingSystemKey]);
  if (v[kMessagingDestination].has_value() && !v[kMessagingDestination]->empty()) {
    name += ' ';
    name += *v[kMessagingDestination];
  }
  return VirtualPeer{NodeType::kMessaging, std::move(name)};
}

void AppendEdgeSpans(const otlp::TraceBatch& batch, NodeTable* nodes, EdgeSpans* out) {
  // The service node of every resource (the rollups' service key).
  std::vector<uint32_t> services(batch.resources.size());
  for (size_t r = 0; r < services.size(); ++r) {
    Range attrs = batch.resources.attributes[r];
    if (attrs.end() > batch.resource_attributes.size()) attrs = {};
    std::string_view ns, name;
    bool seen_ns = false, seen_name = false;
    for (uint32_t i = attrs.begin; i < attrs.end(); ++i) {
      const std::string_view key = batch.resource_attributes.key[i];
      const bool str = batch.resource_attributes.value.type[i] == ValueType::kString;
      if (!seen_ns && key == "service.namespace") {
        seen_ns = true;
        if (str) ns = batch.resource_attributes.value.str[i];
      } else if (!seen_name && key == "service.name") {
        seen_name = true;
        if (str) name = batch.resource_attributes.value.str[i];
      }
    }
    services[r] = nodes->Intern(NodeType::kService, ns, name);
  }
  const otlp::SpanColumns& spans = batch.spans;
  out->spans.reserve(out->spans.size() + spans.size());
  for (size_t i = 0; i < spans.size(); ++i) {
    const uint32_t scope = spans.scope[i];
    if (scope >= batch.scopes.size() || batch.scopes.resource[scope] >= services.size() ||
        services[batch.scopes.resource[scope]] == kNoNode) {
      continue;
    }
    EdgeSpan s;
    s.key = {Big64(spans.trace_id[i].data()), Big64(spans.trace_id[i].data() + 8),
             Big64(spans.span_id[i].data())};
    s.parent_span = spans.has_parent_span_id[i] ? Big64(spans.parent_span_id[i].data()) : 0;
    s.minute = MinuteOf(spans.start_time_unix_nano[i]);
    s.duration = static_cast<int64_t>(spans.end_time_unix_nano[i] - spans.start_time_unix_nano[i]);
    s.service = services[batch.scopes.resource[scope]];
    s.kind = static_cast<uint8_t>(std::clamp(spans.kind[i], 0, 255));
    s.error = spans.status_code[i] == kEdgeStatusError;
    std::optional<VirtualPeer> peer;
    if (s.kind == kKindClient || s.kind == kKindProducer) {
      peer = VirtualPeerOf(batch.span_attributes, spans.attributes[i]);
    } else if (s.kind == kKindConsumer) {
      peer = MessagingSourceOf(batch.span_attributes, spans.attributes[i]);
    }
    if (peer.has_value()) s.peer = nodes->Intern(peer->type, "", peer->name);
    if (s.kind == kKindConsumer && spans.links[i].end() <= batch.links.size()) {
      s.links_begin = static_cast<uint32_t>(out->links.size());
      for (uint32_t l = spans.links[i].begin; l < spans.links[i].end(); ++l) {
        out->links.push_back({Big64(batch.links.trace_id[l].data()),
                              Big64(batch.links.trace_id[l].data() + 8),
                              Big64(batch.links.span_id[l].data())});
      }
      s.links_end = static_cast<uint32_t>(out->links.size());
    }
    out->spans.push_back(s);
  }
}

void EdgeMeasures::Add(int64_t duration, bool error, int sign) {
  calls += sign;
  if (error) errors += sign;
  duration_sum += static_cast<__int128>(duration) * sign;
  const uint32_t bucket = DurationBucket(duration);
  auto it = buckets.try_emplace(bucket, 0).first;
  it->second += sign;
  if (it->second == 0) buckets.erase(it);
}

void EdgeMeasures::Merge(const EdgeMeasures& other) {
  calls += other.calls;
  errors += other.errors;
  duration_sum += other.duration_sum;
  for (const auto& [bucket, count] : other.buckets) {
    auto it = buckets.try_emplace(bucket, 0).first;
    it->second += count;
    if (it->second == 0) buckets.erase(it);
  }
}

std::optional<int64_t> EdgeMeasures::Quantile(int thousandths) const {
  if (calls <= 0) return std::nullopt;
  std::vector<std::pair<uint32_t, int64_t>> sorted(buckets.begin(), buckets.end());
  std::sort(sorted.begin(), sorted.end());
  const __int128 q = std::clamp(thousandths, 0, 1000);
  const __int128 rank = std::max<__int128>((q * calls + 999) / 1000 - 1, 0);
  __int128 seen = 0;
  for (const auto& [bucket, count] : sorted) {
    seen += count;
    if (seen > rank) return BucketValue(bucket);
  }
  return sorted.empty() ? std::nullopt : std::optional<int64_t>(BucketValue(sorted.back().first));
}

void EdgeResolver::Count(uint64_t minute, const EdgeKey& edge, int64_t duration, bool error,
                         int sign) {
  auto& edges = minutes_[minute];
  EdgeMeasures& m = edges[edge];
  m.Add(duration, error, sign);
  if (m.calls == 0 && m.buckets.empty()) edges.erase(edge);
  if (edges.empty()) minutes_.erase(minute);
}

void EdgeResolver::Resolve(const SpanKey& parent_key, Indexed& parent, const Waiting& child) {
  if (parent.service == child.service) return;
  if (child.via_link) {
    if (parent.kind == kKindProducer) {
      Count(child.minute, {parent.service, child.service, EdgeType::kMessaging}, child.duration,
            child.error, 1);
      FoundRemoteSource(child.key);
    }
    return;
  }
  FoundRemoteSource(child.key);
  const EdgeType type = child.kind == kKindConsumer || parent.kind == kKindProducer
                            ? EdgeType::kMessaging
                            : EdgeType::kCall;
  Count(child.minute, {parent.service, child.service, type}, child.duration, child.error, 1);
  parent.remote_child = true;
  // The parent's virtual edge was counted before this child arrived: it
  // called a service after all.
  auto exit = exits_.find(parent_key);
  if (exit != exits_.end()) {
    Count(exit->second.minute, exit->second.edge, exit->second.duration, exit->second.error, -1);
    exits_.erase(exit);
  }
}

void EdgeResolver::FoundRemoteSource(const SpanKey& child) {
  // The child is indexed unless it left the late window, and then its
  // destination's edge (kept for the same window) left with it.
  auto indexed = index_.find(child);
  if (indexed != index_.end()) indexed->second.remote_source = true;
  // A consumer counted on its destination's edge before its producer
  // arrived: the producer's service is its source after all.
  auto entry = entries_.find(child);
  if (entry != entries_.end()) {
    Count(entry->second.minute, entry->second.edge, entry->second.duration, entry->second.error,
          -1);
    entries_.erase(entry);
  }
}

void EdgeResolver::Add(const EdgeSpans& input, uint64_t age) {
  newest_age_ = std::max(newest_age_, age);
  // 1. Index the spans not seen before.
  std::vector<uint32_t> fresh;
  fresh.reserve(input.spans.size());
  for (uint32_t i = 0; i < input.spans.size(); ++i) {
    const EdgeSpan& s = input.spans[i];
    auto [it, added] = index_.try_emplace(s.key, Indexed{s.service, s.kind, false, false, age});
    if (!added) continue;
    ++ages_[age];
    fresh.push_back(i);
  }
  auto waiting_of = [&](const EdgeSpan& s, bool via_link) {
    return Waiting{s.key, s.service, s.kind, s.error, via_link, s.minute, s.duration, age};
  };
  // 2. Each new span's parent and linked spans, when already seen.
  for (uint32_t i : fresh) {
    const EdgeSpan& s = input.spans[i];
    if (s.parent_span != 0) {
      const SpanKey parent{s.key.trace_hi, s.key.trace_lo, s.parent_span};
      auto it = index_.find(parent);
      if (it != index_.end()) {
        Resolve(parent, it->second, waiting_of(s, false));
      } else {
        waiting_[parent].push_back(waiting_of(s, false));
      }
    }
    for (uint32_t l = s.links_begin; l < s.links_end; ++l) {
      const SpanKey& linked = input.links[l];
      auto it = index_.find(linked);
      if (it != index_.end()) {
        Resolve(linked, it->second, waiting_of(s, true));
      } else {
        waiting_[linked].push_back(waiting_of(s, true));
      }
    }
  }
  // 3. Spans of earlier batches waiting for one of the new spans.
  if (!waiting_.empty()) {
    for (uint32_t i : fresh) {
      const EdgeSpan& s = input.spans[i];
      auto it = waiting_.find(s.key);
      if (it == waiting_.end()) continue;
      Indexed& parent = index_.find(s.key)->second;
      for (const Waiting& child : it->second) Resolve(s.key, parent, child);
      waiting_.erase(it);
    }
  }
  // 4. Calls out to virtual nodes: CLIENT and PRODUCER spans with a peer
  // and no child in another service so far; and in from them: CONSUMER
  // spans with a destination and no parent or linked producer in another
  // service so far.
  for (uint32_t i : fresh) {
    const EdgeSpan& s = input.spans[i];
    if (s.peer == kNoNode) continue;
    const Indexed& indexed = index_.find(s.key)->second;
    if (s.kind == kKindConsumer) {
      if (indexed.remote_source) continue;
      const EdgeKey edge{s.peer, s.service, EdgeType::kMessaging};
      Count(s.minute, edge, s.duration, s.error, 1);
      entries_[s.key] = Exit{edge, s.minute, s.duration, s.error, age};
      continue;
    }
    if (indexed.remote_child) continue;
    const NodeType peer_type = nodes_.at(s.peer).type;
    const EdgeType type = peer_type == NodeType::kDatabase    ? EdgeType::kDatabase
                          : peer_type == NodeType::kMessaging ? EdgeType::kMessaging
                                                              : EdgeType::kCall;
    const EdgeKey edge{s.service, s.peer, type};
    Count(s.minute, edge, s.duration, s.error, 1);
    exits_[s.key] = Exit{edge, s.minute, s.duration, s.error, age};
  }
  Expire();
}

void EdgeResolver::Expire() {
  // Expiry scans everything kept, so it waits until an eighth of the
  // window (or of the span budget) is due, then drops all that is.
  const uint64_t window = options_.late_window_nanos;
  uint64_t cutoff = newest_age_ > window ? newest_age_ - window : 0;
  const bool window_due = !ages_.empty() && ages_.begin()->first + window / 8 < cutoff;
  const bool budget_due =
      index_.size() > options_.max_indexed_spans + options_.max_indexed_spans / 8;
  if (!window_due && !budget_due) return;
  // Past the span budget, the oldest ages go first.
  size_t kept = index_.size();
  for (const auto& [age, count] : ages_) {
    if (kept <= options_.max_indexed_spans) break;
    cutoff = std::max(cutoff, age + 1);
    kept -= count;
  }
  absl::erase_if(index_, [&](const auto& entry) { return entry.second.age < cutoff; });
  absl::erase_if(exits_, [&](const auto& entry) { return entry.second.age < cutoff; });
  absl::erase_if(entries_, [&](const auto& entry) { return entry.second.age < cutoff; });
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    std::vector<Waiting>& list = it->second;
    list.erase(
        std::remove_if(list.begin(), list.end(), [&](const Waiting& w) { return w.age < cutoff; }),
        list.end());
    if (list.empty()) {
      waiting_.erase(it++);
    } else {
      ++it;
    }
  }
  ages_.erase(ages_.begin(), ages_.lower_bound(cutoff));
}

std::map<EdgeKey, EdgeMeasures> EdgeResolver::Edges(uint64_t first, uint64_t end) const {
  std::map<EdgeKey, EdgeMeasures> out;
  for (auto it = minutes_.lower_bound(first); it != minutes_.end() && it->first < end; ++it) {
    for (const auto& [edge, measures] : it->second) out[edge].Merge(measures);
  }
  return out;
}

void EdgeResolver::DropMinutesBefore(uint64_t minute) {
  minutes_.erase(minutes_.begin(), minutes_.lower_bound(minute));
}

}  // namespace strata::rollups
