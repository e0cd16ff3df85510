// Service health from the rollups (service_health.h).

#include "api/service_health.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "common/status_macros.h"
#include "storage/format/layout.h"
#include "storage/offload/data_file_resolver.h"
#include "storage/table/file_source.h"
#include "storage/table/rollups_table.h"

namespace strata::api {
namespace {

using rollups::RollupKind;
using rollups::RollupRow;

// The first instant of the minute at or after `t` (saturating).
uint64_t MinuteAtOrAfter(uint64_t t) {
  const uint64_t m = rollups::MinuteOf(t);
  if (m == t) return m;
  return m > std::numeric_limits<uint64_t>::max() - rollups::kMinuteNanos
             ? std::numeric_limits<uint64_t>::max()
             : m + rollups::kMinuteNanos;
}

// Event-time bounds over a batch's signals; false when it has no rows.
bool EventBounds(const storage::BatchMeta& meta, uint64_t* min, uint64_t* max) {
  bool any = false;
  for (const storage::SignalMeta* s : {&meta.spans, &meta.logs, &meta.metrics}) {
    if (s->rows == 0 || !s->event_time.has_value()) continue;
    *min = any ? std::min(*min, s->event_time->min) : s->event_time->min;
    *max = any ? std::max(*max, s->event_time->max) : s->event_time->max;
    any = true;
  }
  return any;
}

// Calls f(row) for every row of `rows` in the window; for a batch that
// lies wholly inside it, for the rows of its table `whole` instead (merged
// over its minutes: row.key.minute is then 0).
template <typename F>
void ForEachRow(const RollupSet& rows, const MinuteWindow& window,
                rollups::RollupRows BatchRollups::*whole, F&& f) {
  for (const RollupCache::Rows& batch : rows) {
    if (batch->first_minute >= window.first && batch->last_minute < window.end) {
      for (const RollupRow& row : (*batch).*whole) f(row);
      continue;
    }
    for (const RollupRow& row : batch->rows) {
      if (row.key.minute >= window.first && row.key.minute < window.end) f(row);
    }
  }
}

// Calls f(row) for every row of `table` (one of a BatchRollups' minute
// tables) in the window.
template <typename F>
void ForEachMinuteRow(const RollupSet& rows, const MinuteWindow& window,
                      rollups::RollupRows BatchRollups::*table, F&& f) {
  for (const RollupCache::Rows& batch : rows) {
    if (batch->last_minute < window.first || batch->first_minute >= window.end) continue;
    for (const RollupRow& row : (*batch).*table) {
      if (row.key.minute >= window.first && row.key.minute < window.end) f(row);
    }
  }
}

// `rows` with each key changed by `rekey` (false: left out), merged.
template <typename F>
rollups::RollupRows Rekeyed(const rollups::RollupRows& rows, F&& rekey) {
  rollups::RollupRows copy;
  for (const RollupRow& row : rows) {
    RollupRow changed = row;
    if (rekey(changed.key)) copy.push_back(std::move(changed));
  }
  const rollups::RollupRows* one = &copy;
  return rollups::MergeRollups({&one, 1});
}

}  // namespace

BatchRollups::BatchRollups(rollups::RollupRows stored) : rows(std::move(stored)) {
  for (size_t i = 0; i < rows.size(); ++i) {
    first_minute = i == 0 ? rows[i].key.minute : std::min(first_minute, rows[i].key.minute);
    last_minute = std::max(last_minute, rows[i].key.minute);
  }
  whole = Rekeyed(rows, [](rollups::RollupKey& key) {
    key.minute = 0;
    return true;
  });
  services = Rekeyed(rows, [](rollups::RollupKey& key) {
    if (key.kind == RollupKind::kEndpoint) return false;
    key.minute = 0;
    if (key.kind == RollupKind::kOperation) {
      key.span_name.clear();
      key.span_kind = IsRequestKind(key.span_kind) ? 2 : 0;
    }
    return true;
  });
  requests = Rekeyed(rows, [](rollups::RollupKey& key) {
    if (key.kind != RollupKind::kOperation || !IsRequestKind(key.span_kind)) return false;
    key.span_name.clear();
    key.span_kind = 0;
    return true;
  });
}

MinuteWindow MinutesOf(uint64_t start, uint64_t end) {
  MinuteWindow w{MinuteAtOrAfter(start), MinuteAtOrAfter(end)};
  if (w.end < w.first) w.end = w.first;
  return w;
}

// ---- RollupCache ----

absl::StatusOr<std::vector<RollupCache::Rows>> RollupCache::ForWindow(
    FileSystem& fs, const storage::Snapshot& snapshot, const MinuteWindow& window) {
  std::vector<Rows> out;
  if (window.first >= window.end) return out;
  std::vector<const storage::LiveBatch*> claimed;
  std::vector<const storage::LiveBatch*> awaited;
  {
    MutexLock lock(&mu_);
    for (const auto& batch : snapshot.batches()) {
      uint64_t min = 0, max = 0;
      if (!EventBounds(batch->meta(), &min, &max)) continue;
      // Rows of the batch lie in minutes [MinuteOf(min), MinuteOf(max)].
      if (rollups::MinuteOf(max) < window.first || rollups::MinuteOf(min) >= window.end) continue;
      const std::string& id = batch->meta().id;
      auto it = by_batch_.find(id);
      if (it != by_batch_.end()) {
        out.push_back(it->second);
      } else if (reading_.contains(id)) {
        awaited.push_back(batch.get());
      } else {
        reading_.insert(id);
        claimed.push_back(batch.get());
      }
    }
  }
  // Read outside the lock: first the batches this call claimed, then
  // those another caller was reading (by now most likely read).
  for (size_t i = 0; i < claimed.size(); ++i) {
    absl::StatusOr<Rows> rows = ReadClaimed(fs, *claimed[i]);
    if (!rows.ok()) {
      // Give up the claims not read, so that other callers read them.
      MutexLock lock(&mu_);
      for (size_t j = i + 1; j < claimed.size(); ++j) reading_.erase(claimed[j]->meta().id);
      read_cv_.SignalAll();
      return rows.status();
    }
    out.push_back(*std::move(rows));
  }
  for (const storage::LiveBatch* batch : awaited) {
    STRATA_ASSIGN_OR_RETURN(Rows rows, Obtain(fs, *batch));
    out.push_back(std::move(rows));
  }
  MutexLock lock(&mu_);
  if (by_batch_.size() > 2 * snapshot.size() + 16) {
    absl::flat_hash_set<std::string> live;
    for (const auto& batch : snapshot.batches()) live.insert(batch->meta().id);
    absl::erase_if(by_batch_, [&](const auto& entry) { return !live.contains(entry.first); });
  }
  return out;
}

absl::StatusOr<RollupCache::Rows> RollupCache::Obtain(FileSystem& fs,
                                                      const storage::LiveBatch& batch) {
  const std::string& id = batch.meta().id;
  {
    MutexLock lock(&mu_);
    // Bounded: the caller reading the batch removes its id when its read
    // ends, either way.
    while (reading_.contains(id)) read_cv_.WaitFor(&mu_, std::chrono::seconds(1));
    auto it = by_batch_.find(id);
    if (it != by_batch_.end()) return it->second;
    // That read failed (or the batch was never claimed): read it here.
    reading_.insert(id);
  }
  return ReadClaimed(fs, batch);
}

absl::StatusOr<RollupCache::Rows> RollupCache::ReadClaimed(FileSystem& fs,
                                                           const storage::LiveBatch& batch) {
  // An evicted batch's rollups (or, for a batch without rollups.parquet,
  // its table files) come from their cached copies.
  absl::StatusOr<rollups::RollupRows> read =
      storage::ReadBatchRollups(storage::DataFilesOf(fs, batch), batch.meta());
  Rows rows;
  if (read.ok()) rows = std::make_shared<const BatchRollups>(*std::move(read));
  MutexLock lock(&mu_);
  reading_.erase(batch.meta().id);
  read_cv_.SignalAll();
  ++reads_;
  if (!read.ok()) return read.status();
  by_batch_[batch.meta().id] = rows;
  return rows;
}

size_t RollupCache::Preload(FileSystem& fs, const storage::Snapshot& snapshot, uint64_t from_nanos,
                            const std::function<bool()>& stop, size_t* unreadable) {
  struct Candidate {
    const storage::LiveBatch* batch;
    uint64_t newest_event;
  };
  std::vector<Candidate> candidates;
  for (const auto& batch : snapshot.batches()) {
    uint64_t min = 0, max = 0;
    if (!EventBounds(batch->meta(), &min, &max)) continue;
    candidates.push_back({batch.get(), max});
  }
  std::sort(candidates.begin(), candidates.end(),
            [](const Candidate& a, const Candidate& b) { return a.newest_event > b.newest_event; });
  size_t read = 0;
  for (const Candidate& candidate : candidates) {
    if (candidate.newest_event < from_nanos || stop()) break;
    const std::string& id = candidate.batch->meta().id;
    {
      MutexLock lock(&mu_);
      // Cached, or a request is reading it: nothing to do.
      if (by_batch_.contains(id) || reading_.contains(id)) continue;
      reading_.insert(id);
    }
    if (ReadClaimed(fs, *candidate.batch).ok()) {
      ++read;
    } else if (unreadable != nullptr) {
      ++*unreadable;
    }
  }
  return read;
}

size_t RollupCache::batches() const {
  MutexLock lock(&mu_);
  return by_batch_.size();
}

uint64_t RollupCache::reads() const {
  MutexLock lock(&mu_);
  return reads_;
}

// ---- Red ----

void Red::Add(const rollups::RollupMeasures& m) {
  if (m.count == 0) return;
  if (count_ == 0) {
    min_ = m.duration_min;
    max_ = m.duration_max;
  } else {
    min_ = std::min(min_, m.duration_min);
    max_ = std::max(max_, m.duration_max);
  }
  count_ += m.count;
  errors_ += m.errors;
  sum_ += m.duration_sum;
  const auto& add = m.histogram.buckets();
  if (!dense_.empty()) {
    for (const rollups::DurationHistogram::Bucket& b : add) dense_[b.index] += b.count;
    return;
  }
  buckets_.insert(buckets_.end(), add.begin(), add.end());
  if (buckets_.size() <= 2 * compacted_ + 1024) return;
  Compact();
  if (buckets_.size() * 4 < rollups::kDurationBuckets) return;
  // Many distinct buckets: count in place from now on.
  dense_.assign(rollups::kDurationBuckets, 0);
  for (const rollups::DurationHistogram::Bucket& b : buckets_) dense_[b.index] += b.count;
  buckets_.clear();
  buckets_.shrink_to_fit();
}

void Red::Compact() const {
  std::sort(buckets_.begin(), buckets_.end(),
            [](const auto& x, const auto& y) { return x.index < y.index; });
  size_t kept = 0;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    if (kept > 0 && buckets_[kept - 1].index == buckets_[i].index) {
      buckets_[kept - 1].count += buckets_[i].count;
    } else {
      buckets_[kept++] = buckets_[i];
    }
  }
  buckets_.resize(kept);
  compacted_ = kept;
}

std::optional<int64_t> Red::Quantile(int thousandths) const {
  std::optional<int64_t> value = BucketQuantile(thousandths);
  // The true quantile lies within the extremes, which are exact: a value
  // of the bucket's outside them moves to them (a lone span reports its
  // own duration), staying in the bucket and within its error.
  if (value.has_value()) value = std::clamp(*value, min_, max_);
  return value;
}

std::optional<int64_t> Red::BucketQuantile(int thousandths) const {
  if (count_ == 0) return std::nullopt;
  const __int128 q = std::clamp(thousandths, 0, 1000);
  const __int128 rank = std::max<__int128>((q * count_ + 999) / 1000 - 1, 0);
  __int128 seen = 0;
  if (!dense_.empty()) {
    for (uint32_t i = 0; i < dense_.size(); ++i) {
      seen += dense_[i];
      if (seen > rank) return rollups::BucketValue(i);
    }
    return std::nullopt;
  }
  Compact();
  for (const rollups::DurationHistogram::Bucket& b : buckets_) {
    seen += b.count;
    if (seen > rank) return rollups::BucketValue(b.index);
  }
  return std::nullopt;
}

const char* HealthOf(const Red& red, const HealthThresholds& t) {
  if (red.count() == 0) return "idle";
  const double error_rate = static_cast<double>(red.errors()) / static_cast<double>(red.count());
  const int64_t p99 = red.Quantile(990).value_or(0);
  if (error_rate >= t.unhealthy_error_rate ||
      (t.unhealthy_p99.has_value() && p99 >= *t.unhealthy_p99)) {
    return "unhealthy";
  }
  if (error_rate >= t.degraded_error_rate ||
      (t.degraded_p99.has_value() && p99 >= *t.degraded_p99)) {
    return "degraded";
  }
  return "healthy";
}

// ---- Answers ----

std::vector<ServiceRed> ServicesRed(const RollupSet& rows, const MinuteWindow& window) {
  // Keyed by views of the rows' strings (`rows` outlives the map).
  absl::flat_hash_map<std::pair<std::string_view, std::string_view>, ServiceRed> by;
  ForEachRow(rows, window, &BatchRollups::services, [&](const RollupRow& row) {
    ServiceRed& s = by[{row.key.service_name, row.key.service_namespace}];
    switch (row.key.kind) {
      case RollupKind::kOperation:
        s.spans.Add(row.measures);
        if (IsRequestKind(row.key.span_kind)) s.requests.Add(row.measures);
        break;
      case RollupKind::kEndpoint:
        break;
      case RollupKind::kLogSeverity:
        s.logs[std::min<uint8_t>(row.key.severity_class, 6)] += row.measures.count;
        break;
      case RollupKind::kMetricPoints:
        s.metric_points += row.measures.count;
        break;
    }
  });
  std::vector<ServiceRed> out;
  for (auto& [key, s] : by) {
    s.name = std::string(key.first);
    s.ns = std::string(key.second);
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const ServiceRed& x, const ServiceRed& y) {
    return std::tie(x.name, x.ns) < std::tie(y.name, y.ns);
  });
  return out;
}

std::vector<OperationRed> OperationsRed(const RollupSet& rows, const MinuteWindow& window,
                                        const ServiceSelector& service) {
  std::map<std::pair<std::string, uint8_t>, Red> by;
  ForEachRow(rows, window, &BatchRollups::whole, [&](const RollupRow& row) {
    if (row.key.kind != RollupKind::kOperation || !service.Matches(row.key)) return;
    by[{row.key.span_name, row.key.span_kind}].Add(row.measures);
  });
  std::vector<OperationRed> out;
  for (auto& [key, red] : by) out.push_back({key.first, key.second, std::move(red)});
  return out;
}

std::vector<EndpointRed> EndpointsRed(const RollupSet& rows, const MinuteWindow& window,
                                      const ServiceSelector& service) {
  std::map<std::tuple<rollups::EndpointType, std::string, std::string, uint8_t>, Red> by;
  ForEachRow(rows, window, &BatchRollups::whole, [&](const RollupRow& row) {
    if (row.key.kind != RollupKind::kEndpoint || !service.Matches(row.key)) return;
    by[{row.key.endpoint_type, row.key.endpoint_a, row.key.endpoint_b, row.key.span_kind}].Add(
        row.measures);
  });
  std::vector<EndpointRed> out;
  for (auto& [key, red] : by) {
    out.push_back(
        {std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key), std::move(red)});
  }
  return out;
}

std::vector<Red> RedSeries(const RollupSet& rows, const MinuteWindow& window, uint64_t step,
                           const RedSelector& selector) {
  if (step == 0 || window.end <= window.first) return {};
  std::vector<Red> out((window.end - window.first + step - 1) / step);
  if (!selector.operation.has_value() && !selector.endpoint.has_value() && selector.kinds.empty()) {
    // A service's requests (or every service's): the merged minute rows.
    ForEachMinuteRow(rows, window, &BatchRollups::requests, [&](const RollupRow& row) {
      if (selector.service.has_value() && !selector.service->Matches(row.key)) return;
      out[(row.key.minute - window.first) / step].Add(row.measures);
    });
    return out;
  }
  const RollupKind kind =
      selector.endpoint.has_value() ? RollupKind::kEndpoint : RollupKind::kOperation;
  ForEachMinuteRow(rows, window, &BatchRollups::rows, [&](const RollupRow& row) {
    const rollups::RollupKey& k = row.key;
    if (k.kind != kind) return;
    if (selector.service.has_value() && !selector.service->Matches(k)) return;
    if (selector.kinds.empty() ? !IsRequestKind(k.span_kind)
                               : std::find(selector.kinds.begin(), selector.kinds.end(),
                                           k.span_kind) == selector.kinds.end()) {
      return;
    }
    if (selector.operation.has_value() && k.span_name != *selector.operation) return;
    if (selector.endpoint.has_value() &&
        (k.endpoint_type != selector.endpoint->type || k.endpoint_a != selector.endpoint->a ||
         k.endpoint_b != selector.endpoint->b)) {
      return;
    }
    out[(k.minute - window.first) / step].Add(row.measures);
  });
  return out;
}

}  // namespace strata::api
