#include "bench/bench_objectstore.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "bench/bench_common.h"
#include "fmt/format.h"
#include "io/posix_file_system.h"
#include "objectstore/local_batch_store.h"
#include "objectstore/s3_batch_store.h"
#include "spdlog/spdlog.h"
#include "storage/format/layout.h"
#include "storage/storage.h"
#include "storage/trace_lookup.h"
#include "workload/traffic_generator.h"

namespace strata::bench {
namespace {

using objectstore::BatchStore;

std::string EnvOr(const char* name, const char* fallback_name) {
  const char* value = std::getenv(name);
  if (value != nullptr && *value != '\0') return value;
  value = fallback_name != nullptr ? std::getenv(fallback_name) : nullptr;
  return value != nullptr ? value : "";
}

struct PutResult {
  double seconds = 0;
  absl::Status status;
};

// Puts objects[i] under keys[i] on `concurrency` threads.
PutResult PutAll(BatchStore& store, const std::vector<std::string>& keys,
                 const std::vector<std::string>& objects, int concurrency) {
  std::atomic<size_t> next{0};
  std::vector<absl::Status> errors(concurrency);
  auto start = BenchClock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < concurrency; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = next++; i < keys.size(); i = next++) {
        absl::Status status = store.PutIfAbsent(keys[i], objects[i]);
        if (!status.ok() && errors[t].ok()) errors[t] = status;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  PutResult result{SecondsSince(start), absl::OkStatus()};
  for (const absl::Status& error : errors) {
    if (!error.ok()) result.status = error;
  }
  return result;
}

// Ranged reads of 64 KiB at random offsets; latencies in seconds (QuantileMs() converts).
absl::StatusOr<std::vector<double>> ReadSome(BatchStore& store,
                                             const std::vector<std::string>& keys,
                                             uint64_t object_bytes, int reads) {
  std::mt19937_64 random(7);
  std::vector<double> latencies;
  for (int i = 0; i < reads; ++i) {
    const std::string& key = keys[random() % keys.size()];
    uint64_t offset = object_bytes > 65536 ? random() % (object_bytes - 65536) : 0;
    auto start = BenchClock::now();
    auto data = store.Get(key, offset, 65536);
    if (!data.ok()) return data.status();
    latencies.push_back(SecondsSince(start));
  }
  return latencies;
}

// A RADOS gateway this run started (scripts/radosgw.sh start), stopped
// when it goes.
class StartedGateway {
 public:
  static absl::StatusOr<std::unique_ptr<StartedGateway>> Start(const std::string& script) {
    char dir_template[] = "/tmp/strata-bench-rgw-XXXXXX";
    if (mkdtemp(dir_template) == nullptr) return absl::InternalError("mkdtemp failed");
    auto gateway = std::unique_ptr<StartedGateway>(new StartedGateway(script, dir_template));
    fmt::print("objectstore: starting a RADOS gateway with {} (about 10 s)\n", script);
    std::fflush(stdout);
    const std::string command = fmt::format("bash '{}' start '{}/rgw' >'{}/start.log' 2>&1", script,
                                            dir_template, dir_template);
    if (std::system(command.c_str()) != 0) {
      std::ifstream log(std::string(dir_template) + "/start.log");
      return absl::UnavailableError(fmt::format(
          "{} start failed: {}", script, std::string(std::istreambuf_iterator<char>(log), {})));
    }
    std::ifstream env(std::string(dir_template) + "/rgw/env");
    std::string line;
    while (std::getline(env, line)) {
      if (line.starts_with("export ")) line = line.substr(7);
      const size_t eq = line.find('=');
      if (eq != std::string::npos) gateway->values_[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return gateway;
  }
  ~StartedGateway() {
    (void)std::system(
        fmt::format("bash '{}' stop '{}/rgw' >/dev/null 2>&1; rm -rf '{}'", script_, dir_, dir_)
            .c_str());
  }
  std::string Get(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? "" : it->second;
  }

 private:
  StartedGateway(std::string script, std::string dir)
      : script_(std::move(script)), dir_(std::move(dir)) {}
  std::string script_, dir_;
  std::map<std::string, std::string> values_;
};

struct OffloadResult {
  double local_spans_per_sec = 0;
  double s3_spans_per_sec = 0;
  double upload_drain_sec = 0;  // after the last acknowledgement
  uint64_t batches = 0;
  uint64_t uploaded_bytes = 0;
  double trace_cold_p50_ms = 0;
  double trace_cold_p99_ms = 0;
  double trace_warm_p50_ms = 0;
  double trace_warm_p99_ms = 0;
};

// Writes `spans` generated spans into a fresh data directory under `dir`,
// with `store` as its object store when not null; returns spans/s, and
// with a store waits for the upload and times trace lookups.
absl::StatusOr<OffloadResult> WriteSpans(const BenchObjectStoreOptions& options,
                                         const std::string& dir, objectstore::BatchStore* store,
                                         OffloadResult result) {
  PosixFileSystem fs;
  workload::TrafficGenerator generator(workload::TrafficOptions{.seed = 1});
  std::vector<std::unique_ptr<otlp::TraceBatch>> traces;
  while (generator.spans_generated() < options.spans) {
    traces.push_back(generator.Traces(std::max(1, options.request_spans)));
  }
  std::vector<otlp::TraceId> ids;
  for (const auto& batch : traces) {
    if (!batch->spans.trace_id.empty()) ids.push_back(batch->spans.trace_id[0]);
  }
  const uint64_t spans = generator.spans_generated();
  storage::StorageOptions storage_options;
  storage_options.object_store = store;
  (void)fs.RemoveAll(dir);
  auto storage = storage::Storage::Open(fs, dir, std::move(storage_options));
  if (!storage.ok()) return storage.status();
  const double seconds = Drive(**storage, options.clients, traces.size(), [&](size_t i) {
    storage::WriteRequest r;
    r.rows = traces[i]->spans.size();
    r.bytes = r.rows * 400;  // about the OTLP protobuf size of a generated span
    r.traces = std::move(traces[i]);
    return r;
  });
  if (seconds < 0) return absl::InternalError("some requests failed");
  const auto acked = BenchClock::now();
  if (store == nullptr) {
    result.local_spans_per_sec = spans / seconds;
  } else {
    result.s3_spans_per_sec = spans / seconds;
    std::shared_ptr<const storage::Snapshot> snapshot = (*storage)->Pin();
    for (const auto& batch : snapshot->batches()) {
      absl::Status uploaded =
          (*storage)->uploader()->WaitUploaded(batch->id(), std::chrono::minutes(10));
      if (!uploaded.ok()) return uploaded;
    }
    result.upload_drain_sec = SecondsSince(acked);
    result.batches = snapshot->size();
    result.uploaded_bytes = (*storage)->uploader()->Stats().bytes_uploaded;
    // Trace by id, first cold: every batch's spans.parquet moved aside (as
    // an eviction would leave it: filter and spans.tidx local), so each
    // lookup reads its ranges from the store; then warm, from local disk.
    // Both with the lookup cache of a running server (footers parsed at a
    // batch's first lookup are kept in memory).
    auto time_lookups = [&](objectstore::BatchStore* from,
                            std::vector<double>* latencies) -> absl::Status {
      std::mt19937_64 random(3);
      for (int i = 0; i < options.lookups && !ids.empty(); ++i) {
        const otlp::TraceId& id = ids[random() % ids.size()];
        const auto start = BenchClock::now();
        auto trace = storage::LookupTrace(fs, dir, *snapshot, id, nullptr,
                                          storage::TraceLookupDetail::kFull, from);
        latencies->push_back(SecondsSince(start));
        if (!trace.ok()) return trace.status();
        if (!trace->has_value()) return absl::InternalError("a written trace was not found");
      }
      return absl::OkStatus();
    };
    auto move_spans = [&](bool aside) -> absl::Status {
      for (const auto& batch : snapshot->batches()) {
        const std::string path = batch->dir() + "/" + storage::kSpansFileName;
        const std::string evicted = path + ".evicted";
        absl::Status s = aside ? fs.RenameFile(path, evicted) : fs.RenameFile(evicted, path);
        if (!s.ok()) return s;
      }
      return absl::OkStatus();
    };
    std::vector<double> cold, warm;
    if (absl::Status s = move_spans(true); !s.ok()) return s;
    absl::Status cold_status = time_lookups(store, &cold);
    if (absl::Status s = move_spans(false); !s.ok()) return s;
    if (!cold_status.ok()) return cold_status;
    if (absl::Status s = time_lookups(nullptr, &warm); !s.ok()) return s;
    result.trace_cold_p50_ms = QuantileMs(cold, 0.5);
    result.trace_cold_p99_ms = QuantileMs(cold, 0.99);
    result.trace_warm_p50_ms = QuantileMs(warm, 0.5);
    result.trace_warm_p99_ms = QuantileMs(warm, 0.99);
  }
  (*storage)->Shutdown(std::chrono::seconds(10));
  storage->reset();
  (void)fs.RemoveAll(dir);
  return result;
}

}  // namespace

int RunBenchObjectStore(const BenchObjectStoreOptions& options) {
  if (options.objects < 1 || options.concurrency < 1 || options.object_bytes < 1 ||
      options.reads < 1) {
    spdlog::error(
        "bench objectstore: --objects, --object-bytes, --concurrency, --reads must be "
        "positive");
    return 1;
  }
  objectstore::S3Config config;
  config.endpoint =
      options.endpoint.empty() ? EnvOr("S3_TEST_ENDPOINT", nullptr) : options.endpoint;
  std::unique_ptr<StartedGateway> gateway;
  if (config.endpoint.empty()) {
    auto started = StartedGateway::Start(options.radosgw_script);
    if (!started.ok()) return FailStep("objectstore", "starting a RADOS gateway", started.status());
    gateway = *std::move(started);
    config.endpoint = gateway->Get("S3_TEST_ENDPOINT");
    setenv("S3_TEST_BUCKET", gateway->Get("S3_TEST_BUCKET").c_str(), 1);
    setenv("S3_TEST_REGION", gateway->Get("S3_TEST_REGION").c_str(), 1);
    setenv("S3_TEST_ACCESS_KEY_ID", gateway->Get("S3_TEST_ACCESS_KEY_ID").c_str(), 1);
    setenv("S3_TEST_SECRET_ACCESS_KEY", gateway->Get("S3_TEST_SECRET_ACCESS_KEY").c_str(), 1);
  }
  config.bucket = options.bucket.empty() ? EnvOr("S3_TEST_BUCKET", nullptr) : options.bucket;
  config.region = options.region.empty() ? EnvOr("S3_TEST_REGION", "AWS_REGION") : options.region;
  if (config.region.empty()) config.region = "us-east-1";
  config.addressing = options.addressing == "virtual" ? objectstore::S3Addressing::kVirtualHost
                                                      : objectstore::S3Addressing::kPath;
  config.credentials.access_key_id = EnvOr("AWS_ACCESS_KEY_ID", "S3_TEST_ACCESS_KEY_ID");
  config.credentials.secret_access_key =
      EnvOr("AWS_SECRET_ACCESS_KEY", "S3_TEST_SECRET_ACCESS_KEY");
  if (config.endpoint.empty()) {
    spdlog::error(
        "bench objectstore: no S3 server: pass --endpoint and --bucket, or run "
        "`eval \"$(bash scripts/radosgw.sh start DIR)\"` first");
    return 1;
  }
  auto s3 = objectstore::S3BatchStore::Create(config);
  if (!s3.ok()) return FailStep("objectstore", "S3 config", s3.status());

  PosixFileSystem fs;
  const std::string dir =
      std::filesystem::absolute(options.dir.empty() ? "strata-bench-objects" : options.dir)
          .lexically_normal()
          .string();
  auto local = objectstore::LocalBatchStore::Open(fs, dir);
  if (!local.ok()) return FailStep("objectstore", "local store", local.status());

  // Distinct pseudo-random bytes per object (nothing compresses or dedupes).
  std::random_device seed;
  const std::string run = fmt::format("bench-{:08x}", seed());
  std::vector<std::string> keys, objects;
  std::mt19937_64 random(seed());
  for (int i = 0; i < options.objects; ++i) {
    keys.push_back(
        fmt::format("{}/telemetry/days/day=2026-12-04/{:023}.batch/spans.parquet", run, i));
    std::string bytes(options.object_bytes, '\0');
    for (size_t j = 0; j + 8 <= bytes.size(); j += 8) {
      uint64_t word = random();
      std::memcpy(bytes.data() + j, &word, 8);
    }
    objects.push_back(std::move(bytes));
  }

  PutResult local_put = PutAll(**local, keys, objects, options.concurrency);
  if (!local_put.status.ok()) return FailStep("objectstore", "local put", local_put.status);
  PutResult s3_put = PutAll(**s3, keys, objects, options.concurrency);
  if (!s3_put.status.ok()) return FailStep("objectstore", "S3 put", s3_put.status);
  auto local_reads = ReadSome(**local, keys, options.object_bytes, options.reads);
  if (!local_reads.ok()) return FailStep("objectstore", "local read", local_reads.status());
  auto s3_reads = ReadSome(**s3, keys, options.object_bytes, options.reads);
  if (!s3_reads.ok()) return FailStep("objectstore", "S3 read", s3_reads.status());

  const double mib = double(options.object_bytes) * options.objects / (1 << 20);
  const double local_puts = options.objects / local_put.seconds;
  const double s3_puts = options.objects / s3_put.seconds;
  const double local_p50 = QuantileMs(*local_reads, 0.5);
  const double s3_p50 = QuantileMs(*s3_reads, 0.5);
  const double s3_p99 = QuantileMs(*s3_reads, 0.99);
  fmt::print("objectstore: {} objects of {} bytes, {} at a time; S3: {}\n", options.objects,
             options.object_bytes, options.concurrency, (*s3)->Describe());
  fmt::print("{:<34} {:>10} {:>10} {:>14}\n", "", "puts/s", "MiB/s", "64 KiB get p50");
  fmt::print("{:<34} {:>10.1f} {:>10.1f} {:>11.3f} ms\n", "local disk (link of a synced file)",
             local_puts, mib / local_put.seconds, local_p50);
  fmt::print("{:<34} {:>10.1f} {:>10.1f} {:>11.3f} ms  (p99 {:.3f} ms)\n",
             "S3 (PUT If-None-Match: *)", s3_puts, mib / s3_put.seconds, s3_p50, s3_p99);

  absl::Status cleaned = (*s3)->DeleteMany(keys);
  if (!cleaned.ok()) spdlog::warn("bench objectstore: S3 cleanup: {}", cleaned.ToString());

  // Offload: the same spans into a local data directory alone, then with
  // background upload to S3 (under this run's own prefix).
  OffloadResult offload;
  if (options.spans > 0) {
    objectstore::S3Config offload_config = config;
    offload_config.prefix = run + "/";
    auto offload_store = objectstore::S3BatchStore::Create(offload_config);
    if (!offload_store.ok()) return FailStep("objectstore", "S3 config", offload_store.status());
    auto local_run = WriteSpans(options, dir + "/data-local", nullptr, offload);
    if (!local_run.ok()) return FailStep("objectstore", "local spans", local_run.status());
    auto s3_run = WriteSpans(options, dir + "/data-s3", offload_store->get(), *local_run);
    if (!s3_run.ok()) return FailStep("objectstore", "offloaded spans", s3_run.status());
    offload = *s3_run;
    // Remove what the offload phase uploaded.
    std::vector<std::string> uploaded;
    std::string next;
    do {
      auto page = (*offload_store)->List("telemetry/", next, objectstore::kMaxKeysPerPage);
      if (!page.ok()) break;
      for (const auto& object : page->objects) uploaded.push_back(object.key);
      next = page->next;
    } while (!next.empty());
    if (absl::Status s = (*offload_store)->DeleteMany(uploaded); !s.ok()) {
      spdlog::warn("bench objectstore: S3 cleanup: {}", s.ToString());
    }
    fmt::print("offload: {} spans in requests of {}, {} clients; {} batches, {:.1f} MiB uploaded\n",
               options.spans, options.request_spans, options.clients, offload.batches,
               offload.uploaded_bytes / double(1 << 20));
    fmt::print("{:<44} {:>12}\n", "", "spans/s");
    fmt::print("{:<44} {:>12.0f}\n", "local disk only (durable, fsync)",
               offload.local_spans_per_sec);
    fmt::print("{:<44} {:>12.0f}  (upload drained {:.2f} s after the last ack)\n",
               "local + background upload to S3", offload.s3_spans_per_sec,
               offload.upload_drain_sec);
    fmt::print("trace by id, cold (spans.parquet ranges from S3): p50 {:.3f} ms, p99 {:.3f} ms\n",
               offload.trace_cold_p50_ms, offload.trace_cold_p99_ms);
    fmt::print("trace by id, warm (local disk): p50 {:.3f} ms, p99 {:.3f} ms\n",
               offload.trace_warm_p50_ms, offload.trace_warm_p99_ms);
  }
  if (options.dir.empty()) (void)fs.RemoveAll(dir);
  const double s3_ratio =
      offload.local_spans_per_sec > 0 ? offload.s3_spans_per_sec / offload.local_spans_per_sec : 0;
  fmt::print(
      "{{\"bench\":\"objectstore\",\"objects\":{},\"object_bytes\":{},\"concurrency\":{},"
      "\"local_puts_per_sec\":{:.2f},\"local_mib_per_sec\":{:.2f},\"s3_puts_per_sec\":{:.2f},"
      "\"s3_mib_per_sec\":{:.2f},\"put_ratio\":{:.3f},\"local_get_p50_ms\":{:.3f},"
      "\"s3_get_p50_ms\":{:.3f},\"s3_get_p99_ms\":{:.3f},\"spans\":{},"
      "\"local_spans_per_sec\":{:.0f},\"s3_spans_per_sec\":{:.0f},\"s3_ratio\":{:.3f},"
      "\"upload_drain_sec\":{:.3f},\"trace_cold_p50_ms\":{:.3f},\"trace_cold_p99_ms\":{:.3f},"
      "\"trace_warm_p50_ms\":{:.3f},\"trace_warm_p99_ms\":{:.3f}}}\n",
      options.objects, options.object_bytes, options.concurrency, local_puts,
      mib / local_put.seconds, s3_puts, mib / s3_put.seconds, s3_puts / local_puts, local_p50,
      s3_p50, s3_p99, options.spans, offload.local_spans_per_sec, offload.s3_spans_per_sec,
      s3_ratio, offload.upload_drain_sec, offload.trace_cold_p50_ms, offload.trace_cold_p99_ms,
      offload.trace_warm_p50_ms, offload.trace_warm_p99_ms);
  return 0;
}

}  // namespace strata::bench
