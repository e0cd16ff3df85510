#pragma once

// Service-map edges (docs/format/rollups-parquet.md, "Edges"): who calls
// whom, resolved across batches. A batch's spans become EdgeSpans
// (AppendEdgeSpans); an EdgeResolver takes the batches one after another,
// in any order of arrival, and keeps per-minute edge measures that equal
// the page's definition over every span it was given whose counterpart
// (parent, child or linked span) arrived within its late window:
//   (a) a span whose parent is in another service: parent's service ->
//       span's service, typed "messaging" when the span is a CONSUMER or
//       the parent a PRODUCER, else "call";
//   (b) a CLIENT or PRODUCER span with a peer (VirtualPeerOf) and no
//       child in another service: its service -> the virtual peer node,
//       typed by the peer;
//   (c) a CONSUMER span linked to a PRODUCER span of another service:
//       producer's service -> consumer's service, "messaging";
//   (d) a CONSUMER span with a messaging destination (MessagingSourceOf)
//       and neither a parent nor a linked PRODUCER in another service:
//       the destination's virtual node -> consumer's service,
//       "messaging" (producers and consumers that share a destination
//       without a link meet at its node: (b) leads in, (d) out).
// An edge counts the callee-side span of (a), (c) and (d), the CLIENT or
// PRODUCER span of (b): one call, an error when its status is ERROR, and
// its duration; in the UTC minute of that span's start. A span seen twice
// (the same trace and span id) counts once. The virtual edges of (b) and
// (d) count at once and move to the real edge when the counterpart in
// another service arrives within the late window.
//
// Thread-safety: an EdgeResolver has a single owner (the caller locks).
// Errors: none (spans are only read; broken batches are skipped where an
// index would leave them, as BuildRollups does).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "otlp/batch.h"

namespace strata::rollups {

enum class NodeType : uint8_t {
  kService = 0,
  kPeer = 1,  // a virtual node named by a client's attributes (not instrumented)
  kDatabase = 2,
  kMessaging = 3,
};

enum class EdgeType : uint8_t {
  kCall = 1,
  kDatabase = 2,
  kMessaging = 3,
};

// A node of the map: a service (namespace, name) or a virtual node (its
// type, "" and its name).
struct Node {
  NodeType type = NodeType::kService;
  std::string ns;
  std::string name;
  friend bool operator==(const Node&, const Node&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const Node& n) {
    return H::combine(std::move(h), n.type, n.ns, n.name);
  }
};

inline constexpr uint32_t kNoNode = UINT32_MAX;
// Most nodes a NodeTable holds: services and virtual nodes are named by
// what exporters send, so their number is bounded like everything a
// client controls.
inline constexpr size_t kMaxNodes = 100'000;

// Interned nodes: ids are dense and never reused.
class NodeTable {
 public:
  // The node's id; kNoNode for a new node once kMaxNodes are held.
  uint32_t Intern(NodeType type, std::string_view ns, std::string_view name);
  const Node& at(uint32_t id) const { return nodes_[id]; }
  size_t size() const { return nodes_.size(); }
  // A new node was refused.
  bool full() const { return full_; }

 private:
  friend class EdgeResolver;  // restores a table (DecodeState)
  bool full_ = false;
  std::vector<Node> nodes_;
  absl::flat_hash_map<Node, uint32_t> ids_;
};

// The virtual node a CLIENT or PRODUCER span calls, from its attributes
// (the first string occurrence of each key): `peer.service`; else
// `db.system.name` (or `db.system`) with `db.namespace` (or `db.name`);
// else `messaging.system` with `messaging.destination.name`; else
// `server.address` (or `net.peer.name`). nullopt when none is set.
struct VirtualPeer {
  NodeType type;
  std::string name;
};
std::optional<VirtualPeer> VirtualPeerOf(const otlp::AttributeColumns& table, otlp::Range range);

// The messaging node a CONSUMER span reads from: `messaging.system` with
// `messaging.destination.name` (named as VirtualPeerOf names it, whatever
// other keys are set); nullopt without a non-empty `messaging.system`.
std::optional<VirtualPeer> MessagingSourceOf(const otlp::AttributeColumns& table,
                                             otlp::Range range);

struct SpanKey {
  uint64_t trace_hi = 0;
  uint64_t trace_lo = 0;
  uint64_t span = 0;
  friend bool operator==(const SpanKey&, const SpanKey&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const SpanKey& k) {
    return H::combine(std::move(h), k.trace_hi, k.trace_lo, k.span);
  }
};

// What the resolver needs of one span.
struct EdgeSpan {
  SpanKey key;
  uint64_t parent_span = 0;  // 0: a root
  uint64_t minute = 0;
  int64_t duration = 0;  // modulo 2^64, as spans.parquet's duration_nano
  uint32_t service = kNoNode;
  // CLIENT and PRODUCER spans: their VirtualPeerOf; CONSUMER spans: their
  // MessagingSourceOf.
  uint32_t peer = kNoNode;
  uint8_t kind = 0;
  bool error = false;
  // [links_begin, links_end) in EdgeSpans::links: CONSUMER spans' links.
  uint32_t links_begin = 0;
  uint32_t links_end = 0;
};

struct EdgeSpans {
  std::vector<EdgeSpan> spans;
  std::vector<SpanKey> links;
};

// Appends the spans of `batch` to `out`, interning their nodes. With the
// node table full, spans of a service it does not hold are left out, and
// calls to a virtual node it does not hold get no virtual edge.
void AppendEdgeSpans(const otlp::TraceBatch& batch, NodeTable* nodes, EdgeSpans* out);

struct EdgeKey {
  uint32_t source = 0;
  uint32_t target = 0;
  EdgeType type = EdgeType::kCall;
  friend bool operator==(const EdgeKey&, const EdgeKey&) = default;
  friend auto operator<=>(const EdgeKey&, const EdgeKey&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const EdgeKey& k) {
    return H::combine(std::move(h), k.source, k.target, k.type);
  }
};

// Calls, errors, the duration sum and histogram (DurationBucket -> count).
// Counts may be taken away again (a CLIENT span's virtual edge when its
// child in another service arrives, a CONSUMER's when its parent or linked
// producer does), so the buckets are a map, not a DurationHistogram.
struct EdgeMeasures {
  int64_t calls = 0;
  int64_t errors = 0;
  __int128 duration_sum = 0;
  absl::flat_hash_map<uint32_t, int64_t> buckets;

  void Add(int64_t duration, bool error, int sign);
  void Merge(const EdgeMeasures& other);
  // The nearest-rank quantile (as DurationHistogram::Quantile), q in
  // thousandths; nullopt without calls.
  std::optional<int64_t> Quantile(int thousandths) const;
};

struct EdgeResolverOptions {
  // Spans kept to find the counterparts of spans arriving later, counted
  // by batch age: batches older than the newest age minus this fall out.
  uint64_t late_window_nanos = 3'600'000'000'000;
  // Most spans kept for that; past it the oldest batches fall out first
  // (the late window then shrinks).
  size_t max_indexed_spans = 8'000'000;
};

class EdgeResolver {
 public:
  explicit EdgeResolver(EdgeResolverOptions options = {}) : options_(options) {}

  NodeTable& nodes() { return nodes_; }
  const NodeTable& nodes() const { return nodes_; }

  // Adds a batch's spans (or a part of them: a batch may come in several
  // calls). `age` orders batches for the late window (the batch's newest
  // ingest time); it should not decrease much from call to call.
  void Add(const EdgeSpans& spans, uint64_t age);

  // Edge measures over the minutes [first, end), merged.
  std::map<EdgeKey, EdgeMeasures> Edges(uint64_t first, uint64_t end) const;
  // Each minute of [first, end) holding edges, ascending: `fn(minute,
  // edges)` with that minute's measures by edge.
  template <typename Fn>
  void ForEachMinute(uint64_t first, uint64_t end, Fn fn) const {
    for (auto it = minutes_.lower_bound(first); it != minutes_.end() && it->first < end; ++it) {
      fn(it->first, it->second);
    }
  }
  // Drops the measures of minutes before `minute` (retention).
  void DropMinutesBefore(uint64_t minute);

  // Spans kept for late counterparts, and the oldest age kept (0: none).
  size_t indexed_spans() const { return index_.size(); }
  uint64_t oldest_age() const { return ages_.empty() ? 0 : ages_.begin()->first; }

  // The whole state (nodes, per-minute edges, the spans kept for late
  // counterparts), appended to `out` as docs/format/service-map-state.md,
  // "Resolver", lays it out; a resolver that DecodeState()s it goes on
  // exactly as this one would (edge_resolver_state.cc).
  void EncodeState(std::string* out) const;
  // Replaces the state with the one at the front of `*in` and consumes
  // it. DataLoss when the bytes are malformed (short, a node or bucket out
  // of range, a key twice); the state is then empty. Options are this
  // resolver's, not the encoder's.
  [[nodiscard]] absl::Status DecodeState(std::string_view* in);

 private:
  struct Indexed {
    uint32_t service;
    uint8_t kind;
    bool remote_child;   // a child in another service was found
    bool remote_source;  // a parent or linked producer in another service was
    uint64_t age;
  };
  struct Waiting {  // a span whose parent (or linked span) was not seen yet
    SpanKey key;
    uint32_t service;
    uint8_t kind;
    bool error;
    bool via_link;
    uint64_t minute;
    int64_t duration;
    uint64_t age;
  };
  struct Exit {  // a span counted on a virtual edge ((b) or (d))
    EdgeKey edge;
    uint64_t minute;
    int64_t duration;
    bool error;
    uint64_t age;
  };

  void Resolve(const SpanKey& parent_key, Indexed& parent, const Waiting& child);
  // `child` was found to have a parent or linked producer in another
  // service: takes back its destination's edge, if counted.
  void FoundRemoteSource(const SpanKey& child);
  void Count(uint64_t minute, const EdgeKey& edge, int64_t duration, bool error, int sign);
  void Expire();
  // DecodeState into this fresh resolver.
  absl::Status DecodeInto(std::string_view* in);

  const EdgeResolverOptions options_;
  NodeTable nodes_;
  absl::flat_hash_map<SpanKey, Indexed> index_;
  // By (trace, the span id waited for).
  absl::flat_hash_map<SpanKey, std::vector<Waiting>> waiting_;
  // CLIENT and PRODUCER spans on their virtual edge, (b).
  absl::flat_hash_map<SpanKey, Exit> exits_;
  // CONSUMER spans on their destination's edge, (d).
  absl::flat_hash_map<SpanKey, Exit> entries_;
  // Spans in index_ per age, for expiry.
  std::map<uint64_t, size_t> ages_;
  uint64_t newest_age_ = 0;
  std::map<uint64_t, absl::flat_hash_map<EdgeKey, EdgeMeasures>> minutes_;
};

}  // namespace strata::rollups
