#pragma once

// IngestMetrics counts what the OTLP transports saw: rows and bytes ingested
// by signal and transport, refusals by reason, invalid log record ids
// stored as absent, and export latency, and
// renders them (with the storage writer's own statistics) in the Prometheus
// text exposition format for /metrics.
//
// Thread-safety: safe for concurrent use; counting is lock-free (relaxed
// atomics), so the hot path never waits on a scrape.

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "otlp/batch.h"
#include "server/ingest.h"
#include "storage/commit/group_commit_writer.h"
#include "storage/maintenance/maintenance.h"
#include "storage/offload/evictor.h"
#include "storage/offload/read_cache.h"
#include "storage/offload/uploader.h"

namespace strata::server {

// What /metrics shows of the storage engine beyond the writer.
struct StorageGauges {
  uint64_t live_batches = 0;
  storage::MaintenanceStats maintenance;
  // Offload's upload lag and counters; absent without --object-store.
  std::optional<storage::UploadStats> upload;
  // Eviction and its read cache; absent without --evict-after.
  std::optional<storage::EvictionStats> eviction;
  std::optional<storage::ReadCacheStats> cache;
};

class IngestMetrics {
 public:
  IngestMetrics() = default;
  IngestMetrics(const IngestMetrics&) = delete;
  IngestMetrics& operator=(const IngestMetrics&) = delete;

  // An acknowledged export: `rows` rows, `wire_bytes` as received.
  void CountIngested(Signal signal, Transport transport, uint64_t rows, uint64_t wire_bytes);
  void CountRejected(Signal signal, Transport transport, RejectReason reason);
  // Rows the decoders rejected from requests that were otherwise taken
  // (OTLP partial_success), by reason: one count per RowRejections entry.
  void CountRejectedRows(Signal signal, Transport transport, const otlp::RowRejections& rejected);
  // Invalid log record ids the decoders stored as absent in an acknowledged
  // export (otlp::ClearedIds); their records were stored, not rejected.
  void CountClearedLogIds(Transport transport, const otlp::ClearedIds& cleared);
  // Time from a request's arrival to its answer, any outcome.
  void ObserveExportLatency(Transport transport, std::chrono::nanoseconds latency);
  // Open client connections of a transport (HTTP counts its own).
  void AddConnections(Transport transport, int64_t delta);

  uint64_t ingested_rows(Signal signal, Transport transport) const;
  uint64_t rejected(Signal signal, Transport transport, RejectReason reason) const;
  uint64_t rejected_rows(Signal signal, Transport transport, otlp::RowRejectReason reason) const;
  otlp::ClearedIds cleared_log_ids(Transport transport) const;

  // The whole /metrics page: these counters plus `writer`'s statistics
  // (batches published, commit latency, in-flight bytes, queue depth) and
  // the storage engine's (live batches; compaction, retention and
  // reclamation).
  std::string RenderPrometheus(const storage::GroupCommitWriterStats& writer,
                               const StorageGauges& storage = {}) const;

 private:
  static constexpr size_t kBuckets = storage::LatencyHistogram::kBucketBoundsSeconds.size() + 1;
  struct Histogram {
    std::array<std::atomic<uint64_t>, kBuckets> buckets{};
    std::atomic<uint64_t> count{0};
    std::atomic<uint64_t> sum_nanos{0};
  };
  std::array<std::array<std::atomic<uint64_t>, kTransportCount>, kSignalCount> rows_{};
  std::array<std::array<std::atomic<uint64_t>, kTransportCount>, kSignalCount> bytes_{};
  std::array<std::array<std::array<std::atomic<uint64_t>, kRejectReasonCount>, kTransportCount>,
             kSignalCount>
      rejected_{};
  std::array<
      std::array<std::array<std::atomic<uint64_t>, otlp::kRowRejectReasonCount>, kTransportCount>,
      kSignalCount>
      rejected_rows_{};
  // Per transport: trace_id, span_id.
  std::array<std::array<std::atomic<uint64_t>, 2>, kTransportCount> cleared_log_ids_{};
  std::array<Histogram, kTransportCount> latency_{};
  std::array<std::atomic<int64_t>, kTransportCount> connections_{};
};

}  // namespace strata::server
