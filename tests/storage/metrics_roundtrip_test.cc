// OTLP metrics -> batch -> metrics.parquet -> batch -> OTLP on generated
// traffic, with libprotobuf as the reference and DuckDB as the Parquet
// oracle.
//
// For every seed: RandomMetricsRequest(seed) (and, on odd seeds, a second
// request from a partner seed, so one file holds two requests) is
// serialized by libprotobuf, decoded by strata (DecodeMetricsProto),
// written with WriteMetricsTable, read back with ReadMetricsTable, encoded
// by strata (EncodeMetricsProto) and parsed by libprotobuf again. The result
// must equal the normalized original (the requests concatenated), and
// strata's encoding of the read-back batch must equal, byte for byte, its
// encoding of the decoded inputs (which also pins every NaN's bits). DuckDB
// must read every file with the same value in every column as strata's
// reader. A large realistic request checks the same and prints write and
// read throughput and bytes per data point.
//
// Environment: STRATA_METRICS_ROUNDTRIP_CASES (seeds, default 200) and
// STRATA_METRICS_ROUNDTRIP_SEED (first seed, default 1); a failure prints
// its seed, and STRATA_METRICS_ROUNDTRIP_SEED=<seed>
// STRATA_METRICS_ROUNDTRIP_CASES=1 replays it. STRATA_METRICS_REALISTIC_POINTS
// sizes the realistic request (default 20000).

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "otlp/batch.h"
#include "otlp/decode.h"
#include "otlp/encode.h"
#include "otlp_reference/compare.h"
#include "otlp_reference/generator.h"
#include "otlp_reference/normalize.h"
#include "parquet/file_reader.h"
#include "storage/table/metrics_table.h"
#include "storage/testing/table_testing.h"

namespace strata::storage {
namespace {

using otlp_reference::MetricsRequest;

constexpr char kBatchId[] = "20250614093015123456000";
constexpr int kMaxReportedFailures = 5;

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  return std::strtoull(value, nullptr, 10);
}

// CPU time of the calling thread: the writer and reader are
// single-threaded, and on a shared machine wall time measures the neighbours.
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

uint64_t PartnerSeed(uint64_t seed) { return seed ^ 0x5bd1e9955bd1e995ULL; }

// One input request: libprotobuf's bytes (which the decoded batch views)
// and the batch.
struct Input {
  std::string wire;
  otlp::MetricBatch batch;
};

// Runs the whole round trip on `requests`; returns what went wrong, or "".
// `file` receives the written file's bytes.
std::string RoundTrip(const std::vector<MetricsRequest>& requests, std::string* file) {
  std::vector<std::unique_ptr<Input>> inputs;
  std::vector<const otlp::MetricBatch*> batches;
  MetricsRequest expected;
  std::string expected_encoding;
  for (const MetricsRequest& request : requests) {
    auto input = std::make_unique<Input>();
    input->wire = request.SerializeAsString();
    absl::Status decoded = otlp::DecodeMetricsProto(input->wire, &input->batch);
    if (!decoded.ok()) return "DecodeMetricsProto: " + decoded.ToString();
    expected.MergeFrom(request);  // repeated fields concatenate
    expected_encoding += otlp::EncodeMetricsProto(input->batch);
    batches.push_back(&input->batch);
    inputs.push_back(std::move(input));
  }
  otlp_reference::Normalize(&expected);

  absl::StatusOr<MetricsTable> written = WriteMetricsTable(batches, kBatchId);
  if (!written.ok()) return "WriteMetricsTable: " + written.status().ToString();
  *file = written->file;
  if (written->meta.file_rows == 0) {
    // Nothing to store: the request had no resources.
    return expected.resource_metrics_size() == 0 ? "" : "no rows for a request with resources";
  }
  parquet::StringSource source(written->file);
  absl::Status footer =
      CheckMetricsTableFooter(&source, kBatchId, written->meta.file_rows, "metrics.parquet");
  if (!footer.ok()) return "CheckMetricsTableFooter: " + footer.ToString();
  absl::StatusOr<otlp::MetricBatch> read = ReadMetricsTable(&source, kBatchId, "metrics.parquet");
  if (!read.ok()) return "ReadMetricsTable: " + read.status().ToString();
  if (read->point_count() != written->meta.rows) {
    return fmt::format("read {} points, meta.rows says {}", read->point_count(),
                       written->meta.rows);
  }

  const std::string encoded = otlp::EncodeMetricsProto(*read);
  MetricsRequest actual;
  if (!actual.ParseFromString(encoded)) return "EncodeMetricsProto output does not parse";
  otlp_reference::Normalize(&actual);
  const std::string diff = otlp_reference::MessageDifferences(expected, actual);
  if (!diff.empty()) return "differences (expected -> actual):\n" + diff;
  if (encoded != expected_encoding) return "strata's encodings differ (bit-level change)";
  return table_testing::ValueListProblems(
      written->file,
      [](const std::string& bytes) {
        parquet::StringSource s(bytes);
        return ReadMetricsTable(&s, kBatchId, "metrics.parquet");
      },
      [](const otlp::MetricBatch& b) { return otlp::EncodeMetricsProto(b); }, encoded);
}

TEST(MetricsRoundTripTest, GeneratedRequestsSurviveParquetAndDuckDbAgrees) {
  const uint64_t cases = EnvOr("STRATA_METRICS_ROUNDTRIP_CASES", 200);
  const uint64_t first = EnvOr("STRATA_METRICS_ROUNDTRIP_SEED", 1);
  std::unique_ptr<query::DuckDbEngine> db = table_testing::OpenDuckDb();
  ASSERT_NE(db, nullptr);
  int failures = 0;
  uint64_t files = 0, rows = 0;
  bool duckdb_disagreed = false;
  for (uint64_t seed = first; seed < first + cases; ++seed) {
    std::vector<MetricsRequest> requests = {otlp_reference::RandomMetricsRequest(seed)};
    if (seed % 2 == 1) requests.push_back(otlp_reference::RandomMetricsRequest(PartnerSeed(seed)));
    std::string file;
    const std::string error = RoundTrip(requests, &file);
    if (!error.empty()) {
      if (++failures <= kMaxReportedFailures) {
        ADD_FAILURE() << "seed " << seed << " (replay: STRATA_METRICS_ROUNDTRIP_SEED=" << seed
                      << " STRATA_METRICS_ROUNDTRIP_CASES=1): " << error;
      }
      continue;
    }
    if (file.empty()) continue;
    ++files;
    // One seed's DuckDB report is enough to read; later files are still
    // round-tripped.
    if (duckdb_disagreed) continue;
    const int64_t seen =
        table_testing::ExpectDuckDbMatchesStrata(*db, file, fmt::format("seed {}", seed));
    rows += static_cast<uint64_t>(std::max<int64_t>(seen, 0));
    duckdb_disagreed = ::testing::Test::HasFailure();
  }
  EXPECT_EQ(failures, 0) << failures << " of " << cases << " seeds failed";
  // The generator must actually produce files to compare.
  EXPECT_GT(files, cases / 2);
  std::printf("metrics round trip: %llu seeds, %llu files, %llu rows checked against DuckDB\n",
              static_cast<unsigned long long>(cases), static_cast<unsigned long long>(files),
              static_cast<unsigned long long>(rows));
}

TEST(MetricsRoundTripTest, RealisticRequestRoundTripsWithThroughput) {
  const int points = static_cast<int>(EnvOr("STRATA_METRICS_REALISTIC_POINTS", 20000));
  const MetricsRequest request = otlp_reference::RealisticMetricsRequest(42, points);
  const std::string wire = request.SerializeAsString();
  otlp::MetricBatch batch;
  ASSERT_TRUE(otlp::DecodeMetricsProto(wire, &batch).ok());
  const std::vector<const otlp::MetricBatch*> inputs = {&batch};

  const double write_start = ThreadCpuSeconds();
  absl::StatusOr<MetricsTable> written = WriteMetricsTable(inputs, kBatchId);
  const double write_seconds = ThreadCpuSeconds() - write_start;
  ASSERT_TRUE(written.ok()) << written.status();
  ASSERT_EQ(written->meta.rows, batch.point_count());

  parquet::StringSource source(written->file);
  const double read_start = ThreadCpuSeconds();
  absl::StatusOr<otlp::MetricBatch> read = ReadMetricsTable(&source, kBatchId, "metrics.parquet");
  const double read_seconds = ThreadCpuSeconds() - read_start;
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(otlp::EncodeMetricsProto(*read), otlp::EncodeMetricsProto(batch));

  std::unique_ptr<query::DuckDbEngine> db = table_testing::OpenDuckDb();
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(table_testing::ExpectDuckDbMatchesStrata(*db, written->file, "realistic"),
            static_cast<int64_t>(written->meta.file_rows));

  const double n = static_cast<double>(written->meta.rows);
  std::printf(
      "metrics.parquet, %llu realistic points (%zu request bytes): %zu file bytes, %.2f bytes "
      "per point; write %.0f points/s, read %.0f points/s (thread CPU time)\n",
      static_cast<unsigned long long>(written->meta.rows), wire.size(), written->file.size(),
      static_cast<double>(written->file.size()) / n, n / write_seconds, n / read_seconds);
}

}  // namespace
}  // namespace strata::storage
