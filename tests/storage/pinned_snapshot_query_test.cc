// A query pinned to an old Snapshot keeps working while batches are
// published and retired. Compaction does not exist yet, so retirement is
// simulated: a catalog over batches the real writer committed publishes a
// Snapshot without some of them, and its retire callback deletes their
// directories (as commit.md's "Deleting a batch" will).

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "query/query_pool.h"
#include "query/view_files.h"
#include "storage/commit/catalog.h"
#include "storage/storage.h"
#include "storage/testing/commit_testing.h"
#include "storage/trace_lookup.h"
#include "workload/traffic_generator.h"

namespace strata::storage {
namespace {

struct Written {
  std::vector<BatchRecord> records;  // in id order
  std::vector<otlp::TraceId> first_trace_of_batch;
  uint64_t spans = 0;
};

// Commits `batches` requests through the real storage engine (one batch
// each) and returns what its catalog held, as records for another catalog.
Written WriteBatches(FileSystem& fs, const std::string& dir, int batches) {
  Written out;
  StorageOptions options;
  options.writer.max_requests_per_batch = 1;
  auto storage = Storage::Open(fs, dir, options);
  EXPECT_TRUE(storage.ok()) << storage.status();
  if (!storage.ok()) return out;
  for (int b = 0; b < batches; ++b) {
    workload::TrafficGenerator generator({.seed = 100u + b});
    WriteRequest request;
    request.traces = generator.Traces(300);
    request.rows = request.traces->spans.size();
    request.bytes = request.rows * 400;
    out.spans += request.rows;
    EXPECT_TRUE((*storage)->Write(std::move(request)).ok());
  }
  for (const auto& batch : (*storage)->Pin()->batches()) {
    out.records.push_back(BatchRecord{.id = batch->id(),
                                      .day = batch->day(),
                                      .dir = batch->dir(),
                                      .meta = batch->meta(),
                                      .attachment = batch->attachment()});
  }
  (*storage)->Shutdown(std::chrono::seconds(10));
  return out;
}

int64_t CountSpans(query::QueryPool& pool, const query::ViewFiles& files) {
  auto result = pool.Run(files, "SELECT count(*) FROM spans");
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok() || result->rows.empty() || !result->rows[0][0]) return -1;
  return std::stoll(*result->rows[0][0]);
}

// One trace id stored in `record`'s batch (its spans.parquet's first span),
// read through DuckDB so the test does not trust the lookup it checks.
otlp::TraceId SomeTraceOf(query::QueryPool& pool, const BatchRecord& record) {
  query::ViewFiles files{.sequence = (1ull << 40) + static_cast<uint64_t>(record.id.stamp_micros()),
                         .spans = {record.dir + "/spans.parquet"}};
  auto result = pool.Run(files, "SELECT hex(trace_id) FROM spans LIMIT 1");
  otlp::TraceId id{};
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok() || result->rows.size() != 1 || !result->rows[0][0]) return id;
  const std::string& hex = *result->rows[0][0];
  for (size_t i = 0; i < id.size(); ++i) {
    id[i] = static_cast<uint8_t>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  }
  return id;
}

TEST(PinnedSnapshotQueryTest, OldSnapshotKeepsAnsweringWhileBatchesRetire) {
  PosixFileSystem fs;
  testing::ScopedTempDir temp("pinned_query");
  ASSERT_FALSE(temp.path().empty());
  const std::string dir = temp.path() + "/data";
  Written written = WriteBatches(fs, dir, 4);
  ASSERT_EQ(written.records.size(), 4u);

  std::set<std::string> deleted;
  auto catalog = Catalog::Create(written.records, [&](const LiveBatch& batch) {
    ASSERT_TRUE(fs.RemoveAll(batch.dir()).ok());
    deleted.insert(batch.dir());
  });
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  auto pool = query::QueryPool::Open({.data_dir = dir, .max_concurrent = 2});
  ASSERT_TRUE(pool.ok()) << pool.status();

  std::shared_ptr<const Snapshot> old = (*catalog)->Pin();
  const query::ViewFiles old_files = query::ViewFilesOf(*old);
  ASSERT_EQ(CountSpans(**pool, old_files), static_cast<int64_t>(written.spans));
  const BatchRecord& retiring = written.records[1];
  const otlp::TraceId trace = SomeTraceOf(**pool, retiring);
  const uint64_t retiring_rows = retiring.meta.spans.rows;

  // Retire two batches while `old` is pinned: nothing is deleted yet, and
  // both the scan and the trace lookup on `old` still see them.
  auto next = (*catalog)->Publish({}, {written.records[1].id, written.records[2].id});
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_TRUE(deleted.empty());
  EXPECT_EQ(CountSpans(**pool, old_files), static_cast<int64_t>(written.spans));
  auto found = LookupTrace(fs, dir, *old, trace);
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_TRUE(found->has_value());
  EXPECT_GT((*found)->spans.size(), 0u);

  // The new Snapshot no longer has them.
  const query::ViewFiles new_files = query::ViewFilesOf(**next);
  const int64_t remaining =
      static_cast<int64_t>(written.spans - retiring_rows - written.records[2].meta.spans.rows);
  EXPECT_EQ(CountSpans(**pool, new_files), remaining);
  auto gone = LookupTrace(fs, dir, **next, trace);
  ASSERT_TRUE(gone.ok()) << gone.status();
  EXPECT_FALSE(gone->has_value());

  // Releasing the last pin deletes their directories; the new Snapshot's
  // answers are unchanged.
  old.reset();
  EXPECT_EQ(deleted, (std::set<std::string>{written.records[1].dir, written.records[2].dir}));
  EXPECT_EQ(CountSpans(**pool, new_files), remaining);
}

// A span window keeps exactly the batches whose spans' event times meet it,
// and a query over them counts the same spans in the window as one over
// every file.
TEST(PinnedSnapshotQueryTest, SpanWindowListsOnlyTheBatchesThatMeetIt) {
  PosixFileSystem fs;
  testing::ScopedTempDir temp("span_window");
  ASSERT_FALSE(temp.path().empty());
  const std::string dir = temp.path() + "/data";
  Written written = WriteBatches(fs, dir, 3);
  ASSERT_EQ(written.records.size(), 3u);
  auto catalog = Catalog::Create(written.records, nullptr);
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  std::shared_ptr<const Snapshot> snapshot = (*catalog)->Pin();
  auto pool = query::QueryPool::Open({.data_dir = dir, .max_concurrent = 1});
  ASSERT_TRUE(pool.ok()) << pool.status();

  const storage::NanosRange first = *written.records[0].meta.spans.event_time;
  const query::ViewFiles all = query::ViewFilesOf(*snapshot);
  for (const query::EventWindow window :
       {query::EventWindow{first.min, first.max + 1}, query::EventWindow{first.max, first.max + 1},
        query::EventWindow{0, first.min}, query::EventWindow{0, UINT64_MAX}}) {
    const query::ViewFiles pruned = query::ViewFilesOf(*snapshot, window);
    size_t expected = 0;
    for (const BatchRecord& r : written.records) {
      const storage::NanosRange t = *r.meta.spans.event_time;
      expected += t.max >= window.start && t.min < window.end;
    }
    EXPECT_EQ(pruned.spans.size(), expected) << window.start << " " << window.end;
    query::QueryOptions q;
    q.params = {window.start, window.end};
    const std::string sql =
        "SELECT count(*) FROM spans WHERE start_time_unix_nano >= $1 AND "
        "start_time_unix_nano < $2";
    auto over_pruned = (*pool)->Run(pruned, sql, q);
    auto over_all = (*pool)->Run(all, sql, q);
    ASSERT_TRUE(over_pruned.ok()) << over_pruned.status();
    ASSERT_TRUE(over_all.ok()) << over_all.status();
    EXPECT_EQ(over_pruned->rows, over_all->rows);
  }
}

}  // namespace
}  // namespace strata::storage
