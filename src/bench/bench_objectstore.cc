#include "bench/bench_objectstore.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>
#include <vector>

#include "bench/bench_common.h"
#include "fmt/format.h"
#include "io/posix_file_system.h"
#include "objectstore/local_batch_store.h"
#include "objectstore/s3_batch_store.h"
#include "spdlog/spdlog.h"

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
  if (options.dir.empty()) (void)fs.RemoveAll(dir);
  fmt::print(
      "{{\"bench\":\"objectstore\",\"objects\":{},\"object_bytes\":{},\"concurrency\":{},"
      "\"local_puts_per_sec\":{:.2f},\"local_mib_per_sec\":{:.2f},\"s3_puts_per_sec\":{:.2f},"
      "\"s3_mib_per_sec\":{:.2f},\"s3_ratio\":{:.3f},\"local_get_p50_ms\":{:.3f},"
      "\"s3_get_p50_ms\":{:.3f},\"s3_get_p99_ms\":{:.3f}}}\n",
      options.objects, options.object_bytes, options.concurrency, local_puts,
      mib / local_put.seconds, s3_puts, mib / s3_put.seconds, s3_puts / local_puts, local_p50,
      s3_p50, s3_p99);
  return 0;
}

}  // namespace strata::bench
