#include "server/ingest_metrics.h"

#include <tuple>

#include "fmt/format.h"

namespace strata::server {
namespace {

constexpr auto kRelaxed = std::memory_order_relaxed;
constexpr std::array<Signal, kSignalCount> kSignals = {Signal::kTraces, Signal::kLogs,
                                                       Signal::kMetrics};
constexpr std::array<Transport, kTransportCount> kTransports = {Transport::kGrpc, Transport::kHttp};

void Header(std::string* out, std::string_view name, std::string_view type, std::string_view help) {
  fmt::format_to(std::back_inserter(*out), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

// Writes one histogram from per-bucket (not cumulative) counts.
template <typename Counts>
void WriteHistogram(std::string* out, std::string_view name, std::string_view labels,
                    const Counts& per_bucket, uint64_t count, double sum_seconds) {
  const auto& bounds = storage::LatencyHistogram::kBucketBoundsSeconds;
  const std::string sep = labels.empty() ? "" : ",";
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds.size(); ++i) {
    cumulative += per_bucket[i];
    fmt::format_to(std::back_inserter(*out), "{}_bucket{{{}{}le=\"{}\"}} {}\n", name, labels, sep,
                   bounds[i], cumulative);
  }
  fmt::format_to(std::back_inserter(*out), "{}_bucket{{{}{}le=\"+Inf\"}} {}\n", name, labels, sep,
                 count);
  const std::string braces = labels.empty() ? "" : fmt::format("{{{}}}", labels);
  fmt::format_to(std::back_inserter(*out), "{}_sum{} {}\n{}_count{} {}\n", name, braces,
                 sum_seconds, name, braces, count);
}

// The row rejection reasons, each under the one signal it applies to.
struct RowReasonLabel {
  Signal signal;
  otlp::RowRejectReason reason;
  std::string_view name;
};
constexpr RowReasonLabel kRowReasonLabels[] = {
    {Signal::kTraces, otlp::RowRejectReason::kTraceId, "trace_id"},
    {Signal::kTraces, otlp::RowRejectReason::kSpanId, "span_id"},
    {Signal::kTraces, otlp::RowRejectReason::kParentSpanId, "parent_span_id"},
    {Signal::kTraces, otlp::RowRejectReason::kLinkId, "link_id"},
    {Signal::kMetrics, otlp::RowRejectReason::kHistogramBuckets, "histogram_buckets"},
    {Signal::kLogs, otlp::RowRejectReason::kLokiStreamLabels, "loki_stream_labels"},
    {Signal::kLogs, otlp::RowRejectReason::kLokiEntry, "loki_entry"},
};
static_assert(std::size(kRowReasonLabels) == otlp::kRowRejectReasonCount);

}  // namespace

void IngestMetrics::CountIngested(Signal signal, Transport transport, uint64_t rows,
                                  uint64_t wire_bytes) {
  rows_[static_cast<int>(signal)][static_cast<int>(transport)].fetch_add(rows, kRelaxed);
  bytes_[static_cast<int>(signal)][static_cast<int>(transport)].fetch_add(wire_bytes, kRelaxed);
}

void IngestMetrics::CountRejected(Signal signal, Transport transport, RejectReason reason) {
  rejected_[static_cast<int>(signal)][static_cast<int>(transport)][static_cast<int>(reason)]
      .fetch_add(1, kRelaxed);
}

void IngestMetrics::CountRejectedRows(Signal signal, Transport transport,
                                      const otlp::RowRejections& rejected) {
  for (size_t r = 0; r < otlp::kRowRejectReasonCount; ++r) {
    if (rejected.by_reason[r] == 0) continue;
    rejected_rows_[static_cast<int>(signal)][static_cast<int>(transport)][r].fetch_add(
        rejected.by_reason[r], kRelaxed);
  }
}

void IngestMetrics::CountClearedLogIds(Transport transport, const otlp::ClearedIds& cleared) {
  auto& counts = cleared_log_ids_[static_cast<int>(transport)];
  if (cleared.trace_id != 0) counts[0].fetch_add(cleared.trace_id, kRelaxed);
  if (cleared.span_id != 0) counts[1].fetch_add(cleared.span_id, kRelaxed);
}

void IngestMetrics::ObserveExportLatency(Transport transport, std::chrono::nanoseconds latency) {
  Histogram& h = latency_[static_cast<int>(transport)];
  const double seconds = std::chrono::duration<double>(latency).count();
  const auto& bounds = storage::LatencyHistogram::kBucketBoundsSeconds;
  size_t bucket = 0;
  while (bucket < bounds.size() && seconds > bounds[bucket]) ++bucket;
  h.buckets[bucket].fetch_add(1, kRelaxed);
  h.count.fetch_add(1, kRelaxed);
  h.sum_nanos.fetch_add(static_cast<uint64_t>(std::max<int64_t>(latency.count(), 0)), kRelaxed);
}

void IngestMetrics::AddConnections(Transport transport, int64_t delta) {
  connections_[static_cast<int>(transport)].fetch_add(delta, kRelaxed);
}

uint64_t IngestMetrics::ingested_rows(Signal signal, Transport transport) const {
  return rows_[static_cast<int>(signal)][static_cast<int>(transport)].load(kRelaxed);
}

uint64_t IngestMetrics::rejected(Signal signal, Transport transport, RejectReason reason) const {
  return rejected_[static_cast<int>(signal)][static_cast<int>(transport)][static_cast<int>(reason)]
      .load(kRelaxed);
}

uint64_t IngestMetrics::rejected_rows(Signal signal, Transport transport,
                                      otlp::RowRejectReason reason) const {
  return rejected_rows_[static_cast<int>(signal)][static_cast<int>(transport)]
                       [static_cast<size_t>(reason)]
                           .load(kRelaxed);
}

otlp::ClearedIds IngestMetrics::cleared_log_ids(Transport transport) const {
  const auto& counts = cleared_log_ids_[static_cast<int>(transport)];
  return otlp::ClearedIds{.trace_id = counts[0].load(kRelaxed),
                          .span_id = counts[1].load(kRelaxed)};
}

std::string IngestMetrics::RenderPrometheus(const storage::GroupCommitWriterStats& writer,
                                            const StorageGauges& storage) const {
  std::string out;
  auto line = [&out](std::string_view name, std::string_view labels, auto value) {
    if (labels.empty()) {
      fmt::format_to(std::back_inserter(out), "{} {}\n", name, value);
    } else {
      fmt::format_to(std::back_inserter(out), "{}{{{}}} {}\n", name, labels, value);
    }
  };
  auto signal_transport = [](Signal s, Transport t) {
    return fmt::format("signal=\"{}\",transport=\"{}\"", SignalName(s), TransportName(t));
  };

  Header(&out, "strata_ingest_rows_total", "counter",
         "Rows (spans, log records, metric data points) acknowledged, by signal and transport.");
  for (Signal s : kSignals) {
    for (Transport t : kTransports)
      line("strata_ingest_rows_total", signal_transport(s, t), ingested_rows(s, t));
  }
  Header(&out, "strata_ingest_bytes_total", "counter",
         "Request bytes as received (before decompression) of acknowledged exports.");
  for (Signal s : kSignals) {
    for (Transport t : kTransports) {
      line("strata_ingest_bytes_total", signal_transport(s, t),
           bytes_[static_cast<int>(s)][static_cast<int>(t)].load(kRelaxed));
    }
  }
  Header(&out, "strata_ingest_rejected_total", "counter",
         "Export requests refused, by signal, transport and reason.");
  for (Signal s : kSignals) {
    for (Transport t : kTransports) {
      for (int r = 0; r < kRejectReasonCount; ++r) {
        const auto reason = static_cast<RejectReason>(r);
        line("strata_ingest_rejected_total",
             fmt::format("{},reason=\"{}\"", signal_transport(s, t), RejectReasonName(reason)),
             rejected(s, t, reason));
      }
    }
  }
  Header(&out, "strata_ingest_rejected_rows_total", "counter",
         "Rows left out of requests that were otherwise stored (OTLP partial_success), by "
         "signal, transport and reason.");
  for (const RowReasonLabel& label : kRowReasonLabels) {
    for (Transport t : kTransports) {
      line("strata_ingest_rejected_rows_total",
           fmt::format("{},reason=\"{}\"", signal_transport(label.signal, t), label.name),
           rejected_rows(label.signal, t, label.reason));
    }
  }
  Header(&out, "strata_ingest_cleared_ids_total", "counter",
         "Invalid log record ids (wrong length, all zero, or not hex) stored as absent; their "
         "records were stored. By signal, transport and field.");
  for (Transport t : kTransports) {
    const otlp::ClearedIds cleared = cleared_log_ids(t);
    const std::string labels = signal_transport(Signal::kLogs, t);
    line("strata_ingest_cleared_ids_total", fmt::format("{},field=\"trace_id\"", labels),
         cleared.trace_id);
    line("strata_ingest_cleared_ids_total", fmt::format("{},field=\"span_id\"", labels),
         cleared.span_id);
  }
  Header(&out, "strata_export_duration_seconds", "histogram",
         "Time from an export request's arrival to its answer, by transport.");
  for (Transport t : kTransports) {
    const Histogram& h = latency_[static_cast<int>(t)];
    std::array<uint64_t, kBuckets> counts{};
    for (size_t i = 0; i < kBuckets; ++i) counts[i] = h.buckets[i].load(kRelaxed);
    WriteHistogram(&out, "strata_export_duration_seconds",
                   fmt::format("transport=\"{}\"", TransportName(t)), counts,
                   h.count.load(kRelaxed), static_cast<double>(h.sum_nanos.load(kRelaxed)) / 1e9);
  }
  Header(&out, "strata_http_connections", "gauge", "Open OTLP/HTTP client connections.");
  line("strata_http_connections", "",
       connections_[static_cast<int>(Transport::kHttp)].load(kRelaxed));

  Header(&out, "strata_batches_published_total", "counter",
         "Batches the group-commit writer published.");
  line("strata_batches_published_total", "", writer.batches_committed);
  Header(&out, "strata_commit_retries_total", "counter",
         "Commit attempts repeated after a transient storage error.");
  line("strata_commit_retries_total", "", writer.commit_retries);
  Header(&out, "strata_commit_duration_seconds", "histogram",
         "Duration of one group commit (encode, write, fsync, rename, publish).");
  WriteHistogram(&out, "strata_commit_duration_seconds", "", writer.commit_latency.bucket_counts,
                 writer.commit_latency.count, writer.commit_latency.sum_seconds);
  Header(&out, "strata_inflight_bytes", "gauge",
         "Bytes of admitted requests not yet answered (the in-flight budget in use).");
  line("strata_inflight_bytes", "", writer.inflight_bytes);
  Header(&out, "strata_inflight_requests", "gauge", "Admitted requests not yet answered.");
  line("strata_inflight_requests", "", writer.inflight_requests);
  Header(&out, "strata_writer_queue_depth", "gauge",
         "Admitted requests waiting to be grouped into a commit.");
  line("strata_writer_queue_depth", "", writer.queued_requests);

  const storage::MaintenanceStats& m = storage.maintenance;
  Header(&out, "strata_live_batches", "gauge", "Batches in the current catalog Snapshot.");
  line("strata_live_batches", "", storage.live_batches);
  const std::tuple<const char*, const char*, uint64_t> counters[] = {
      {"strata_compactions_total", "Compactions published.", m.compactions},
      {"strata_compaction_failures_total", "Compactions that failed and were undone.",
       m.compaction_failures},
      {"strata_compacted_batches_total", "Input batches merged by compaction.",
       m.compacted_input_batches},
      {"strata_compacted_rows_total", "Rows (spans, log records, data points) compaction merged.",
       m.compacted_rows},
      {"strata_batches_deleted_total", "Retired batches deleted from disk.", m.batches_deleted},
      {"strata_batch_deletion_failures_total", "Failed deletions of retired batches (retried).",
       m.deletion_failures},
      {"strata_retention_days_dropped_total", "Whole days dropped by retention.", m.days_dropped},
  };
  for (const auto& [name, help, value] : counters) {
    Header(&out, name, "counter", help);
    line(name, "", value);
  }
  Header(&out, "strata_compaction_halted", "gauge",
         "1 when compaction stopped after a failure it could not undo (restart to resolve).");
  line("strata_compaction_halted", "", m.compaction_halted ? 1 : 0);

  // Offload (docs/operations.md, "Offload to an object store").
  if (storage.upload.has_value()) {
    const storage::UploadStats& u = *storage.upload;
    const std::tuple<const char*, const char*, const char*, uint64_t> upload[] = {
        {"strata_upload_pending_batches", "gauge",
         "Live batches not yet in the object store (lost with the local disk).", u.batches_pending},
        {"strata_upload_pending_bytes", "gauge",
         "Bytes of the data files of the batches not yet in the object store.", u.bytes_pending},
        {"strata_uploaded_batches_total", "counter",
         "Batches this process put in the object store (meta.json last).", u.batches_uploaded},
        {"strata_uploaded_bytes_total", "counter", "Bytes this process put in the object store.",
         u.bytes_uploaded},
        {"strata_upload_failures_total", "counter",
         "Failed upload or remote-delete attempts (each is retried).", u.failures},
        {"strata_upload_deleted_batches_total", "counter",
         "Remote copies deleted after their batch left the catalog.", u.batches_deleted},
        {"strata_upload_found_at_start_batches", "gauge",
         "Live batches already in the object store when this process started.", u.found_at_start},
    };
    for (const auto& [name, type, help, value] : upload) {
      Header(&out, name, type, help);
      line(name, "", value);
    }
    Header(&out, "strata_upload_oldest_pending_age_seconds", "gauge",
           "Age of the oldest batch not yet in the object store (0: none pending).");
    line("strata_upload_oldest_pending_age_seconds", "", u.oldest_pending_age_seconds);
  }
  // Eviction (docs/operations.md, "Evicting local copies").
  if (storage.eviction.has_value() && storage.cache.has_value()) {
    const storage::EvictionStats& e = *storage.eviction;
    const storage::ReadCacheStats& c = *storage.cache;
    const std::tuple<const char*, const char*, const char*, uint64_t> eviction[] = {
        {"strata_evicted_batches", "gauge",
         "Batches counted evicted since the process started, boot's included (their Parquet "
         "files are read from the object store).",
         e.batches_marked},
        {"strata_evicted_batches_total", "counter",
         "Batches whose local Parquet files this process removed.", e.batches_evicted},
        {"strata_evicted_bytes_total", "counter",
         "Bytes of local Parquet files this process removed.", e.bytes_evicted},
        {"strata_eviction_failures_total", "counter", "Failed eviction steps (each is retried).",
         e.failures},
        {"strata_read_cache_hits_total", "counter",
         "Evicted files a reader found whole in the read cache.", c.hits},
        {"strata_read_cache_misses_total", "counter",
         "Evicted files downloaded into the read cache (or waited for).", c.misses},
        {"strata_read_cache_fetched_bytes_total", "counter",
         "Bytes downloaded into the read cache.", c.bytes_fetched},
        {"strata_read_cache_bytes", "gauge", "Bytes of whole files in the read cache.",
         c.bytes_cached},
        {"strata_read_cache_files", "gauge", "Whole files in the read cache.", c.files_cached},
    };
    for (const auto& [name, type, help, value] : eviction) {
      Header(&out, name, type, help);
      line(name, "", value);
    }
  }
  return out;
}

}  // namespace strata::server
