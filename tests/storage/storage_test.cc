// The assembled storage engine (storage/storage.h): requests through the
// group-commit writer into durable batches, read back with strata's readers
// and DuckDB, found again by trace id, and recovered on reopen.

#include "storage/storage.h"

#include <map>
#include <set>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "otlp/encode.h"
#include "parquet/file_reader.h"
#include "query/duckdb_engine.h"
#include "storage/table/logs_table.h"
#include "storage/table/metrics_table.h"
#include "storage/table/spans_table.h"
#include "storage/testing/commit_testing.h"
#include "workload/traffic_generator.h"

namespace strata::storage {
namespace {

using ::testing::HasSubstr;

WriteRequest TracesRequest(std::unique_ptr<otlp::TraceBatch> batch) {
  WriteRequest request;
  request.rows = batch->spans.size();
  request.bytes = request.rows * 300;
  request.traces = std::move(batch);
  return request;
}

class StorageTest : public ::testing::Test {
 protected:
  std::string DataDir() const { return tmp_.path() + "/data"; }
  absl::StatusOr<std::string> ReadFile(const std::string& path) { return fs_.ReadFile(path); }

  PosixFileSystem fs_;
  testing::ScopedTempDir tmp_{"storage"};
};

TEST_F(StorageTest, AcknowledgedRequestsArePublishedReadableAndFoundByTraceId) {
  workload::TrafficGenerator generator(workload::TrafficOptions{.seed = 21});
  std::vector<std::unique_ptr<otlp::TraceBatch>> inputs;
  std::map<otlp::TraceId, size_t> spans_per_trace;
  for (int i = 0; i < 8; ++i) {
    inputs.push_back(generator.Traces(300));
    for (const otlp::TraceId& id : inputs.back()->spans.trace_id) ++spans_per_trace[id];
  }
  auto logs = generator.Logs(500);
  auto metrics = generator.Metrics(200);
  const size_t log_count = logs->logs.size();
  const size_t point_count = metrics->point_count();

  absl::StatusOr<std::unique_ptr<Storage>> storage = Storage::Open(fs_, DataDir());
  ASSERT_TRUE(storage.ok()) << storage.status();
  std::vector<std::thread> writers;
  std::vector<absl::Status> results(inputs.size() + 2);
  for (size_t i = 0; i < inputs.size(); ++i) {
    writers.emplace_back(
        [&, i] { results[i] = (*storage)->Write(TracesRequest(std::move(inputs[i]))); });
  }
  writers.emplace_back([&] {
    WriteRequest request;
    request.rows = log_count;
    request.bytes = log_count * 200;
    request.logs = std::move(logs);
    results[inputs.size()] = (*storage)->Write(std::move(request));
  });
  writers.emplace_back([&] {
    WriteRequest request;
    request.rows = point_count;
    request.bytes = point_count * 200;
    request.metrics = std::move(metrics);
    results[inputs.size() + 1] = (*storage)->Write(std::move(request));
  });
  for (std::thread& t : writers) t.join();
  for (const absl::Status& s : results) ASSERT_TRUE(s.ok()) << s;

  std::shared_ptr<const Snapshot> snapshot = (*storage)->Pin();
  ASSERT_GE(snapshot->size(), 1u);
  uint64_t spans = 0, log_rows = 0, points = 0;
  std::map<otlp::TraceId, size_t> found;
  auto engine = query::DuckDbEngine::Open({});
  ASSERT_TRUE(engine.ok());
  for (const auto& batch : snapshot->batches()) {
    spans += batch->meta().spans.rows;
    log_rows += batch->meta().logs.rows;
    points += batch->meta().metrics.rows;
    if (batch->meta().spans.rows == 0) {
      EXPECT_EQ(BatchTraceFilter(*batch), nullptr);
      continue;
    }
    // strata's reader, and DuckDB, agree with meta.json.
    absl::StatusOr<std::string> bytes = ReadFile(batch->dir() + "/spans.parquet");
    ASSERT_TRUE(bytes.ok());
    parquet::StringSource source(*bytes);
    absl::StatusOr<otlp::TraceBatch> read =
        ReadSpansTable(&source, batch->id().ToString(), "spans.parquet");
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(read->spans.size(), batch->meta().spans.rows);
    auto counted = (*engine)->Query(fmt::format(
        "SELECT count(*) FROM read_parquet('{}/spans.parquet') WHERE row_kind = 0", batch->dir()));
    ASSERT_TRUE(counted.ok()) << counted.status();
    EXPECT_EQ(counted->rows[0][0], std::to_string(batch->meta().spans.rows));
    // Every trace in the file is found through the filter and the index,
    // at the rows that hold it.
    const TraceFilter* filter = BatchTraceFilter(*batch);
    ASSERT_NE(filter, nullptr);
    auto tidx = fs_.NewRandomAccessFile(batch->dir() + "/spans.tidx");
    ASSERT_TRUE(tidx.ok());
    std::set<otlp::TraceId> ids(read->spans.trace_id.begin(), read->spans.trace_id.end());
    for (const otlp::TraceId& id : ids) {
      ASSERT_TRUE(filter->MayContain(id));
      auto location = filter->Find(**tidx, id);
      ASSERT_TRUE(location.ok() && location->has_value());
      found[id] += (*location)->end_row - (*location)->first_row;
    }
  }
  EXPECT_EQ(spans, generator.spans_generated());
  EXPECT_EQ(log_rows, log_count);
  EXPECT_EQ(points, point_count);
  EXPECT_EQ(found, spans_per_trace);
  EXPECT_EQ((*storage)->WriterStats().requests_ok, results.size());

  // Reopen: boot validates every batch and serves the same set.
  const size_t batches = snapshot->size();
  snapshot.reset();
  storage->reset();
  absl::StatusOr<std::unique_ptr<Storage>> reopened = Storage::Open(fs_, DataDir());
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_EQ((*reopened)->Pin()->size(), batches);
  for (const auto& batch : (*reopened)->Pin()->batches()) {
    EXPECT_EQ(BatchTraceFilter(*batch) != nullptr, batch->meta().spans.rows > 0);
  }
}

TEST_F(StorageTest, BootRefusesABatchWhoseParquetFooterDoesNotMatchMeta) {
  workload::TrafficGenerator generator(workload::TrafficOptions{.seed = 5});
  std::string batch_dir;
  {
    auto storage = Storage::Open(fs_, DataDir());
    ASSERT_TRUE(storage.ok()) << storage.status();
    ASSERT_TRUE((*storage)->Write(TracesRequest(generator.Traces(100))).ok());
    batch_dir = (*storage)->Pin()->batches().at(0)->dir();
  }
  // Rewrite meta.json claiming one more file row, with the checksums left
  // right: only the footer check (rule 10) can catch it.
  absl::StatusOr<std::string> meta_text = ReadFile(batch_dir + "/meta.json");
  ASSERT_TRUE(meta_text.ok());
  absl::StatusOr<BatchMeta> meta = ParseBatchMeta(*meta_text, "test");
  ASSERT_TRUE(meta.ok());
  meta->spans.file_rows += 1;
  ASSERT_TRUE(ValidateBatchMeta(*meta).ok());
  auto file = fs_.NewWritableFile(batch_dir + "/meta.json");
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append(SerializeBatchMeta(*meta)).ok());
  ASSERT_TRUE((*file)->Close().ok());

  absl::StatusOr<std::unique_ptr<Storage>> reopened = Storage::Open(fs_, DataDir());
  ASSERT_FALSE(reopened.ok());
  EXPECT_THAT(std::string(reopened.status().message()), HasSubstr(batch_dir));
  EXPECT_THAT(std::string(reopened.status().message()), HasSubstr("spans.parquet"));
  EXPECT_THAT(std::string(reopened.status().message()), HasSubstr("operations.md#corrupt-batch"));
}

}  // namespace
}  // namespace strata::storage
