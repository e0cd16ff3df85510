// The service map: edges resolved from every live batch (service_map.h).

#include "api/service_map.h"

#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "api/service_health_json.h"
#include "common/path.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "rollups/service_map_state.h"
#include "spdlog/spdlog.h"
#include "storage/offload/data_file_resolver.h"
#include "storage/storage.h"
#include "storage/table/rollups_table.h"

namespace strata::api {
namespace {

// Spans the background thread resolves between looks at the latest
// Snapshot (so answers waiting on feed_mu_ get their turn).
constexpr uint64_t kLoopSpans = 500'000;

// The first string occurrence of attribute `key` in family `prefix` (the
// rule service_edges.h reads attributes by), else NULL.
std::string FirstStringSql(std::string_view prefix, std::string_view key) {
  return fmt::format(
      "CASE WHEN {0}types[list_position({0}keys, '{1}')] = 1 "
      "THEN {0}str[list_position({0}keys, '{1}')] END",
      prefix, key);
}

std::string NodeName(const rollups::Node& node) {
  return node.type == rollups::NodeType::kService
             ? fmt::format("service:{}/{}", node.ns, node.name)
             : fmt::format("{}:{}", NodeTypeName(node.type), node.name);
}

}  // namespace

std::string EdgeName(const ServiceMapAnswer& map, const MapEdge& edge) {
  return fmt::format("{} -> {} {}", NodeName(map.nodes.at(edge.source).node),
                     NodeName(map.nodes.at(edge.target).node), EdgeTypeName(edge.type));
}

std::string ServiceMapReferenceSql(uint64_t first, uint64_t end) {
  auto a = [](std::string_view key) { return FirstStringSql("attr_", key); };
  // Every span once, with its node and, for CLIENT and PRODUCER spans, the
  // virtual node it calls.
  const std::string spans = fmt::format(
      "SELECT DISTINCT ON (trace_id, span_id) trace_id, span_id, parent_span_id, kind, "
      "status_code, duration_nano, start_time_unix_nano AS st, link_trace_id, link_span_id, "
      "'service:' || coalesce({}, '') || '/' || coalesce(service_name, '') AS node, "
      "CASE WHEN kind IN (3, 4) THEN coalesce("
      "'peer:' || nullif({}, ''), "
      "'database:' || nullif(coalesce({}, {}), '') || coalesce(' ' || nullif(coalesce({}, {}), "
      "''), ''), "
      "'messaging:' || nullif({}, '') || coalesce(' ' || nullif({}, ''), ''), "
      "'peer:' || nullif(coalesce({}, {}), '')) END AS peer, "
      "CASE WHEN kind = 5 THEN 'messaging:' || nullif({}, '') || coalesce(' ' || nullif({}, ''), "
      "'') END AS source_queue FROM spans",
      FirstStringSql("resource_attr_", "service.namespace"), a("peer.service"), a("db.system.name"),
      a("db.system"), a("db.namespace"), a("db.name"), a("messaging.system"),
      a("messaging.destination.name"), a("server.address"), a("net.peer.name"),
      a("messaging.system"), a("messaging.destination.name"));
  const std::string in_window = fmt::format("c.st >= {} AND c.st < {}", first, end);
  return fmt::format(
      "WITH s AS ({0}), "
      // Consumers linked to a producer of another service, once each.
      "linked AS (SELECT DISTINCT c.trace_id, c.span_id FROM (SELECT trace_id, span_id, node, "
      "unnest(link_trace_id) AS lt, unnest(link_span_id) AS ls FROM s WHERE kind = 5) c JOIN s p "
      "ON p.trace_id = c.lt AND p.span_id = c.ls WHERE p.kind = 4 AND p.node <> c.node), "
      "calls AS ("
      // (a) a parent in another service
      "SELECT p.node AS source, c.node AS target, CASE WHEN c.kind = 5 OR p.kind = 4 THEN "
      "'messaging' ELSE 'call' END AS type, c.status_code, c.duration_nano FROM s c JOIN s p ON "
      "c.trace_id = p.trace_id AND c.parent_span_id = p.span_id WHERE p.node <> c.node AND {1} "
      // (c) a consumer linked to a producer of another service
      "UNION ALL SELECT p.node, c.node, 'messaging', c.status_code, c.duration_nano FROM "
      "(SELECT *, unnest(link_trace_id) AS lt, unnest(link_span_id) AS ls FROM s WHERE kind = 5) "
      "c JOIN s p ON p.trace_id = c.lt AND p.span_id = c.ls WHERE p.kind = 4 AND p.node <> "
      "c.node AND {1} "
      // (d) a consumer with a destination and neither a parent nor a
      // linked producer in another service
      "UNION ALL SELECT c.source_queue, c.node, 'messaging', c.status_code, c.duration_nano FROM "
      "s c WHERE c.source_queue IS NOT NULL AND {1} AND NOT EXISTS (SELECT 1 FROM s p WHERE "
      "p.trace_id = c.trace_id AND p.span_id = c.parent_span_id AND p.node <> c.node) AND NOT "
      "EXISTS (SELECT 1 FROM linked l WHERE l.trace_id = c.trace_id AND l.span_id = c.span_id) "
      // (b) a client or producer without a child in another service
      "UNION ALL SELECT c.node, c.peer, CASE WHEN c.peer LIKE 'database:%' THEN 'database' "
      "WHEN c.peer LIKE 'messaging:%' THEN 'messaging' ELSE 'call' END, c.status_code, "
      "c.duration_nano FROM s c WHERE c.peer IS NOT NULL AND {1} AND NOT EXISTS (SELECT 1 "
      "FROM s x WHERE x.trace_id = c.trace_id AND x.parent_span_id = c.span_id AND x.node <> "
      "c.node)) "
      "SELECT source || ' -> ' || target || ' ' || type, count(*), "
      "count(*) FILTER (WHERE status_code = 2), quantile_disc(duration_nano, 0.5), "
      "quantile_disc(duration_nano, 0.99) FROM calls GROUP BY 1",
      spans, in_window);
}

bool ServiceMap::Resolved(const std::string& id) const {
  MutexLock lock(&mu_);
  return done_.contains(id);
}

ServiceMap::ServiceMap(ServiceMapOptions options)
    : options_(options), resolver_(options.resolver) {}

ServiceMap::~ServiceMap() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    stop_cv_.SignalAll();
  }
  if (thread_.joinable()) thread_.join();
}

void ServiceMap::Start(std::function<storage::Storage*()> storage, FileSystem* fs) {
  if (thread_.joinable() || !storage || fs == nullptr) return;
  thread_ = std::thread([this, storage = std::move(storage), fs] { Loop(storage, fs); });
}

void ServiceMap::Loop(std::function<storage::Storage*()> storage, FileSystem* fs) {
  pthread_setname_np(pthread_self(), "strata-svcmap");
  if (options_.nice != 0) {
    // Per-thread on Linux: the nice value of this thread only.
    (void)setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), options_.nice);
  }
  const bool persistent = !options_.state_path.empty();
  if (persistent) {
    const absl::Status loaded = LoadState(*fs, options_.state_path);
    if (loaded.ok()) {
      MutexLock lock(&mu_);
      spdlog::info("service map: resumed from {}: {} batches resolved, {} spans kept",
                   options_.state_path, done_.size(), resolver_.indexed_spans());
    } else if (!absl::IsNotFound(loaded)) {
      spdlog::warn("service map: ignoring {} (every live batch is read again): {}",
                   options_.state_path, loaded.ToString());
    }
  }
  auto last_save = std::chrono::steady_clock::now();
  size_t pending = 0;
  for (;;) {
    {
      MutexLock lock(&mu_);
      if (pending == 0 && !stopping_) stop_cv_.WaitFor(&mu_, options_.poll);
      if (stopping_) break;
    }
    storage::Storage* engine = storage();
    if (engine == nullptr) {
      pending = 0;
      continue;
    }
    const std::shared_ptr<const storage::Snapshot> snapshot = engine->Pin();
    pending = CatchUp(*fs, *snapshot, kLoopSpans);
    const auto now = std::chrono::steady_clock::now();
    if (persistent && now - last_save >= options_.state_save_interval) {
      SaveIfChanged(*fs);
      last_save = now;
    }
  }
  if (persistent) SaveIfChanged(*fs);
}

void ServiceMap::SaveIfChanged(FileSystem& fs) {
  {
    MutexLock lock(&mu_);
    if (changes_ == saved_changes_) return;
  }
  if (absl::Status saved = SaveState(fs, options_.state_path, options_.state_temp_path);
      !saved.ok()) {
    spdlog::warn("service map: cannot save {} (the next save retries): {}", options_.state_path,
                 saved.ToString());
  }
}

absl::Status ServiceMap::SaveState(FileSystem& fs, const std::string& path,
                                   const std::string& temp_path) {
  std::string bytes;
  uint64_t changes = 0;
  {
    // Not while a batch is half fed: the state names it resolved or not.
    MutexLock feed(&feed_mu_);
    MutexLock lock(&mu_);
    const rollups::ServiceMapProgress progress{done_, resolved_from_, unreadable_,
                                               last_unreadable_error_};
    bytes = rollups::EncodeServiceMapState(resolver_, progress);
    changes = changes_;
  }
  STRATA_RETURN_IF_ERROR(WriteFile(fs, temp_path, bytes));
  STRATA_RETURN_IF_ERROR(fs.RenameFile(temp_path, path));
  STRATA_RETURN_IF_ERROR(fs.SyncDir(ParentPath(path)));
  MutexLock lock(&mu_);
  saved_changes_ = std::max(saved_changes_, changes);
  return absl::OkStatus();
}

absl::Status ServiceMap::LoadState(FileSystem& fs, const std::string& path) {
  MutexLock feed(&feed_mu_);
  STRATA_ASSIGN_OR_RETURN(const std::string bytes, fs.ReadFile(path));
  MutexLock lock(&mu_);
  rollups::ServiceMapProgress progress;
  const absl::Status decoded = rollups::DecodeServiceMapState(bytes, &resolver_, &progress);
  done_ = std::move(progress.resolved);
  resolved_from_ = progress.resolved_from;
  unreadable_ = progress.unreadable;
  last_unreadable_error_ = std::move(progress.last_unreadable_error);
  saved_changes_ = changes_;
  if (!decoded.ok()) {
    return absl::DataLossError(fmt::format("{}: {}", path, std::string(decoded.message())));
  }
  return absl::OkStatus();
}

size_t ServiceMap::CatchUp(FileSystem& fs, const storage::Snapshot& snapshot, uint64_t max_spans) {
  MutexLock feed(&feed_mu_);
  uint64_t newest_ingest = 0;
  uint64_t oldest_span = UINT64_MAX;
  for (const auto& batch : snapshot.batches()) {
    newest_ingest = std::max(newest_ingest, batch->meta().ingest_time.max);
    const storage::SignalMeta& spans = batch->meta().spans;
    if (spans.rows == 0 || !spans.event_time.has_value()) continue;
    oldest_span = std::min(oldest_span, spans.event_time->min);
  }
  struct Todo {
    uint64_t age;
    const storage::LiveBatch* batch;
  };
  std::vector<Todo> todo;
  {
    MutexLock lock(&mu_);
    for (const auto& batch : snapshot.batches()) {
      const storage::BatchMeta& meta = batch->meta();
      if (done_.contains(meta.id)) continue;
      const uint64_t age = meta.ingest_time.max;
      bool sources_done = !meta.sources.empty();
      for (const std::string& source : meta.sources) sources_done &= done_.contains(source);
      if (sources_done || meta.spans.rows == 0 || !meta.spans.event_time.has_value()) {
        done_[meta.id] = age;
        ++changes_;
        continue;
      }
      if (age + options_.horizon_nanos < newest_ingest) {
        // Ingested before the horizon: not read; the map starts after its
        // spans.
        done_[meta.id] = age;
        ++changes_;
        resolved_from_ = std::max(
            resolved_from_, rollups::MinuteOf(meta.spans.event_time->max) + rollups::kMinuteNanos);
        continue;
      }
      todo.push_back({age, batch.get()});
    }
    // Retention: no live span is older than the oldest batch's.
    if (oldest_span != UINT64_MAX) resolver_.DropMinutesBefore(rollups::MinuteOf(oldest_span));
    // Ids of batches gone from the catalog are kept while a compaction
    // output naming them may still come (within the late window).
    if (done_.size() > 2 * snapshot.size() + 1024) {
      absl::flat_hash_set<std::string> live;
      for (const auto& batch : snapshot.batches()) live.insert(batch->meta().id);
      const uint64_t newest_age =
          std::max_element(done_.begin(), done_.end(), [](auto& a, auto& b) {
            return a.second < b.second;
          })->second;
      const uint64_t keep_after = newest_age > options_.resolver.late_window_nanos
                                      ? newest_age - options_.resolver.late_window_nanos
                                      : 0;
      absl::erase_if(done_, [&](const auto& entry) {
        return entry.second < keep_after && !live.contains(entry.first);
      });
    }
  }
  std::sort(todo.begin(), todo.end(), [](const Todo& a, const Todo& b) {
    return std::tie(a.age, a.batch->meta().id) < std::tie(b.age, b.batch->meta().id);
  });
  uint64_t spans_read = 0;
  size_t next = 0;
  for (; next < todo.size() && spans_read < max_spans; ++next) {
    const storage::LiveBatch& batch = *todo[next].batch;
    const uint64_t age = todo[next].age;
    // Spans are read outside mu_; each chunk is resolved under it.
    // An evicted batch's spans come from its cached copy.
    const absl::Status read = storage::ForEachSpansChunk(
        storage::DataFilesOf(fs, batch), batch.meta(), [&](const otlp::TraceBatch& chunk) {
          MutexLock lock(&mu_);
          rollups::EdgeSpans spans;
          rollups::AppendEdgeSpans(chunk, &resolver_.nodes(), &spans);
          resolver_.Add(spans, age);
        });
    MutexLock lock(&mu_);
    done_[batch.meta().id] = age;
    ++changes_;
    if (!read.ok()) {
      ++unreadable_;
      last_unreadable_error_ = read.ToString();
    }
    spans_read += batch.meta().spans.rows;
  }
  return todo.size() - next;
}

std::vector<MinuteEdge> ServiceMap::MinuteEdges(FileSystem& fs, const storage::Snapshot& snapshot,
                                                uint64_t end, uint64_t first) {
  CatchUp(fs, snapshot, options_.answer_catch_up_spans);
  std::vector<MinuteEdge> out;
  MutexLock lock(&mu_);
  const rollups::NodeTable& nodes = resolver_.nodes();
  resolver_.ForEachMinute(first, end, [&](uint64_t minute, const auto& edges) {
    for (const auto& [key, measures] : edges) {
      out.push_back(
          MinuteEdge{minute, nodes.at(key.source), nodes.at(key.target), key.type, measures});
    }
  });
  return out;
}

ServiceMapAnswer ServiceMap::Answer(FileSystem& fs, const storage::Snapshot& snapshot,
                                    const MinuteWindow& window, const RollupSet& rollups,
                                    size_t limit) {
  ServiceMapAnswer out;
  out.pending_batches = CatchUp(fs, snapshot, options_.answer_catch_up_spans);
  std::map<rollups::EdgeKey, rollups::EdgeMeasures> edges;
  // Only the nodes the window's edges name (the table holds up to
  // rollups::kMaxNodes).
  absl::flat_hash_map<uint32_t, rollups::Node> resolver_nodes;
  {
    MutexLock lock(&mu_);
    edges = resolver_.Edges(window.first, window.end);
    for (const auto& [key, measures] : edges) {
      for (uint32_t id : {key.source, key.target}) {
        resolver_nodes.try_emplace(id, resolver_.nodes().at(id));
      }
    }
    out.unreadable_batches = unreadable_;
    out.last_unreadable_error = last_unreadable_error_;
    out.resolved_from = resolved_from_;
    out.node_limit_reached = resolver_.nodes().full();
  }
  absl::flat_hash_map<rollups::Node, uint32_t> index;
  auto node_of = [&](const rollups::Node& node) {
    auto [it, added] = index.try_emplace(node, static_cast<uint32_t>(out.nodes.size()));
    if (added) out.nodes.push_back(MapNode{node, {}, {}});
    return it->second;
  };
  std::vector<ServiceRed> services = ServicesRed(rollups, window);
  if (services.size() > limit) services.resize(limit);
  for (ServiceRed& service : services) {
    const uint32_t at = node_of({rollups::NodeType::kService, service.ns, service.name});
    out.nodes[at].requests = std::move(service.requests);
  }
  if (edges.size() > limit) {
    // The most called edges (ties by key, so answers are stable).
    std::vector<std::pair<int64_t, rollups::EdgeKey>> by_calls;
    for (const auto& [key, measures] : edges) by_calls.push_back({-measures.calls, key});
    std::nth_element(by_calls.begin(), by_calls.begin() + static_cast<ptrdiff_t>(limit),
                     by_calls.end());
    by_calls.resize(limit);
    std::map<rollups::EdgeKey, rollups::EdgeMeasures> kept;
    for (const auto& [calls, key] : by_calls) kept[key] = std::move(edges[key]);
    edges = std::move(kept);
    out.truncated = true;
  }
  for (auto& [key, measures] : edges) {
    const uint32_t source = node_of(resolver_nodes.at(key.source));
    const uint32_t target = node_of(resolver_nodes.at(key.target));
    out.nodes[target].incoming.Merge(measures);
    out.edges.push_back(MapEdge{source, target, key.type, std::move(measures)});
  }
  return out;
}

}  // namespace strata::api
