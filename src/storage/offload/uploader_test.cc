// The offload uploader inside the storage engine, against the local
// BatchStore behind a wrapper that records (and can fail) puts: every
// committed batch reaches the store with its data files before its
// meta.json and the bytes of its local files; a restart uploads nothing
// twice and finishes a batch whose meta.json is missing; failures are
// retried; --ack-after-upload acknowledges only uploaded batches.

#include "storage/offload/uploader.h"

#include <atomic>
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "common/mutex.h"
#include "common/path.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "objectstore/local_batch_store.h"
#include "otlp/decode.h"
#include "storage/format/layout.h"
#include "storage/format/object_layout.h"
#include "storage/offload/remote_check.h"
#include "storage/storage.h"
#include "storage/testing/commit_testing.h"
#include "storage/trace_lookup.h"

namespace strata::storage {
namespace {

// Delegates to a store, records each successful put in order, and fails
// the next `fail_puts` puts with Unavailable.
class RecordingStore final : public objectstore::BatchStore {
 public:
  explicit RecordingStore(objectstore::BatchStore& inner) : inner_(inner) {}
  absl::Status PutIfAbsent(std::string_view key, std::string_view data) override {
    return Record(key, [&] { return inner_.PutIfAbsent(key, data); });
  }
  absl::Status PutStreamIfAbsent(std::string_view key, uint64_t size,
                                 const objectstore::PartReader& read) override {
    return Record(key, [&] { return inner_.PutStreamIfAbsent(key, size, read); });
  }
  absl::StatusOr<std::string> Get(std::string_view key, uint64_t offset, uint64_t length) override {
    absl::StatusOr<std::string> data = inner_.Get(key, offset, length);
    if (data.ok()) {
      ++gets;
      get_bytes += data->size();
    }
    return data;
  }
  absl::StatusOr<objectstore::ObjectInfo> Head(std::string_view key) override {
    return inner_.Head(key);
  }
  absl::StatusOr<objectstore::ListPage> List(std::string_view prefix, std::string_view continuation,
                                             int max_keys) override {
    if (fail_lists) return absl::UnavailableError("injected listing failure");
    return inner_.List(prefix, continuation, max_keys);
  }
  absl::Status DeleteMany(const std::vector<std::string>& keys) override {
    return inner_.DeleteMany(keys);
  }
  std::string Describe() const override { return "recording:" + inner_.Describe(); }

  std::vector<std::string> puts() const {
    MutexLock lock(&mu_);
    return puts_;
  }
  std::atomic<int> fail_puts{0};
  std::atomic<bool> fail_lists{false};
  std::atomic<uint64_t> gets{0};
  std::atomic<uint64_t> get_bytes{0};

 private:
  absl::Status Record(std::string_view key, const std::function<absl::Status()>& put) {
    if (fail_puts.load() > 0) {
      --fail_puts;
      return absl::UnavailableError("injected failure");
    }
    absl::Status status = put();
    if (status.ok()) {
      MutexLock lock(&mu_);
      puts_.emplace_back(key);
    }
    return status;
  }
  objectstore::BatchStore& inner_;
  mutable Mutex mu_;
  std::vector<std::string> puts_ ABSL_GUARDED_BY(mu_);
};

WriteRequest SpansRequest(int spans, int salt) {
  std::string json = R"({"resourceSpans":[{"scopeSpans":[{"spans":[)";
  for (int i = 0; i < spans; ++i) {
    json += std::string(i == 0 ? "" : ",") + R"({"traceId":")" +
            fmt::format("{:032x}", salt * 1000 + i + 1) + R"(","spanId":")" +
            fmt::format("{:016x}", i + 1) +
            R"(","name":"op","startTimeUnixNano":"1750000000000000000",)" +
            R"("endTimeUnixNano":"1750000000001000000"})";
  }
  json += "]}]}]}";
  WriteRequest request;
  request.traces = std::make_unique<otlp::TraceBatch>();
  EXPECT_TRUE(otlp::DecodeTracesJson(json, request.traces.get()).ok());
  request.rows = static_cast<uint64_t>(spans);
  request.bytes = json.size();
  return request;
}

class UploaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto local = objectstore::LocalBatchStore::Open(fs_, tmp_.path() + "/store");
    ASSERT_TRUE(local.ok()) << local.status();
    local_ = *std::move(local);
  }

  std::unique_ptr<Storage> Open(RecordingStore& store, bool ack_after_upload = false,
                                std::function<bool(const BatchId&)> in_store = nullptr) {
    StorageOptions options;
    options.upload.in_store = std::move(in_store);
    options.object_store = &store;
    options.ack_after_upload = ack_after_upload;
    options.ack_upload_timeout = std::chrono::milliseconds(500);
    options.upload.retry_initial = std::chrono::milliseconds(1);
    options.upload.retry_max = std::chrono::milliseconds(20);
    options.upload.poll_interval = std::chrono::milliseconds(20);
    auto storage = Storage::Open(fs_, tmp_.path() + "/data", std::move(options));
    EXPECT_TRUE(storage.ok()) << storage.status();
    return storage.ok() ? *std::move(storage) : nullptr;
  }

  // Waits until every live batch is uploaded.
  void WaitAll(Storage& storage) {
    for (const auto& batch : storage.Pin()->batches()) {
      ASSERT_TRUE(storage.uploader()->WaitUploaded(batch->id(), std::chrono::seconds(20)).ok());
    }
  }

  // Checks that every live batch's files are in the store with its local
  // bytes, and that nothing else is.
  void ExpectStoreMatchesLocal(Storage& storage) {
    std::set<std::string> expected;
    for (const auto& batch : storage.Pin()->batches()) {
      auto names = fs_.ListDir(batch->dir());
      ASSERT_TRUE(names.ok());
      for (const std::string& name : *names) {
        const std::string key = BatchObjectKey(batch->day(), batch->id(), name);
        expected.insert(key);
        auto local = fs_.ReadFile(JoinPath(batch->dir(), name));
        auto remote = local_->Get(key, 0, 1 << 30);
        ASSERT_TRUE(local.ok() && remote.ok()) << key << " " << remote.status();
        EXPECT_EQ(*local, *remote) << key;
      }
    }
    auto page = local_->List("telemetry/", "", objectstore::kMaxKeysPerPage);
    ASSERT_TRUE(page.ok());
    std::set<std::string> actual;
    for (const auto& object : page->objects) actual.insert(object.key);
    EXPECT_EQ(actual, expected);
  }

  PosixFileSystem fs_;
  testing::ScopedTempDir tmp_{"uploader"};
  std::unique_ptr<objectstore::LocalBatchStore> local_;
};

// meta.json is the last put of each batch, and each batch's puts are
// contiguous.
void ExpectMetaLast(const std::vector<std::string>& puts) {
  std::map<std::string, std::vector<std::string>> by_batch;
  std::string current;
  std::set<std::string> finished;
  for (const std::string& key : puts) {
    const std::string prefix = key.substr(0, key.rfind('/') + 1);
    EXPECT_FALSE(finished.contains(prefix)) << key << " put after its batch's meta.json";
    if (key.ends_with(std::string("/") + kBatchMetaFileName)) finished.insert(prefix);
    by_batch[prefix].push_back(key);
  }
  for (const auto& [prefix, keys] : by_batch) {
    EXPECT_TRUE(finished.contains(prefix)) << prefix << " has no meta.json";
    EXPECT_GE(keys.size(), 2u) << prefix;
  }
}

TEST_F(UploaderTest, UploadsEveryBatchDataFirstMetaLastWithTheLocalBytes) {
  RecordingStore store(*local_);
  std::unique_ptr<Storage> storage = Open(store);
  ASSERT_NE(storage, nullptr);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(storage->Write(SpansRequest(10, i)).ok());
  WaitAll(*storage);
  ExpectStoreMatchesLocal(*storage);
  ExpectMetaLast(store.puts());
  const UploadStats stats = storage->uploader()->Stats();
  EXPECT_EQ(stats.batches_uploaded, 5u);
  EXPECT_EQ(stats.batches_pending, 0u);
  EXPECT_EQ(stats.bytes_pending, 0u);
  EXPECT_GT(stats.bytes_uploaded, 0u);
}

// A batch whose files are in the store only (an evicted or read-back
// stub) counts as uploaded and is never read for an upload: its local
// files are not there to read.
TEST_F(UploaderTest, ABatchInTheStoreOnlyCountsAsUploadedAndIsNeverPut) {
  RecordingStore store(*local_);
  std::atomic<int> asked{0};
  std::unique_ptr<Storage> storage = Open(store, false, [&](const BatchId&) {
    ++asked;
    return true;
  });
  ASSERT_NE(storage, nullptr);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(storage->Write(SpansRequest(10, i)).ok());
  WaitAll(*storage);
  for (const auto& batch : storage->Pin()->batches()) {
    EXPECT_TRUE(storage->uploader()->IsUploaded(batch->id()));
  }
  EXPECT_GE(asked.load(), 3);
  EXPECT_TRUE(store.puts().empty()) << store.puts().front();
  const UploadStats stats = storage->uploader()->Stats();
  EXPECT_EQ(stats.batches_uploaded, 0u);
  EXPECT_EQ(stats.batches_pending, 0u);
  EXPECT_EQ(stats.failures, 0u);
}

TEST_F(UploaderTest, ARestartUploadsNothingTwiceAndFinishesABatchWithoutMetaJson) {
  {
    RecordingStore store(*local_);
    std::unique_ptr<Storage> storage = Open(store);
    ASSERT_NE(storage, nullptr);
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(storage->Write(SpansRequest(10, i)).ok());
    WaitAll(*storage);
  }
  // A crash between a batch's data files and its meta.json.
  std::string half;
  {
    RecordingStore store(*local_);
    std::unique_ptr<Storage> storage = Open(store);
    ASSERT_NE(storage, nullptr);
    const auto& last = *storage->Pin()->batches().back();
    half = BatchObjectKey(last.day(), last.id(), kBatchMetaFileName);
    storage->Shutdown(std::chrono::seconds(5));
    EXPECT_TRUE(store.puts().empty()) << "a restart put " << store.puts().size() << " objects";
    EXPECT_EQ(storage->uploader()->Stats().found_at_start, 4u);
  }
  ASSERT_TRUE(local_->DeleteMany({half}).ok());
  RecordingStore store(*local_);
  std::unique_ptr<Storage> storage = Open(store);
  ASSERT_NE(storage, nullptr);
  EXPECT_EQ(storage->uploader()->Stats().found_at_start, 3u);
  WaitAll(*storage);
  EXPECT_EQ(store.puts(), std::vector<std::string>{half})
      << "only the missing meta.json is put; the data files were there";
  ExpectStoreMatchesLocal(*storage);
}

TEST_F(UploaderTest, FailedPutsAreRetriedAndCounted) {
  RecordingStore store(*local_);
  store.fail_puts = 3;
  std::unique_ptr<Storage> storage = Open(store);
  ASSERT_NE(storage, nullptr);
  ASSERT_TRUE(storage->Write(SpansRequest(10, 1)).ok());
  WaitAll(*storage);
  EXPECT_EQ(storage->uploader()->Stats().failures, 3u);
  ExpectStoreMatchesLocal(*storage);
}

TEST_F(UploaderTest, AnObjectOfAnotherSizeIsNotTakenForTheBatchs) {
  RecordingStore store(*local_);
  std::unique_ptr<Storage> storage = Open(store);
  ASSERT_NE(storage, nullptr);
  // Stop uploads, commit a batch, and plant a different spans.parquet.
  store.fail_puts = 1 << 30;
  ASSERT_TRUE(storage->Write(SpansRequest(10, 1)).ok());
  const auto& batch = *storage->Pin()->batches().back();
  ASSERT_TRUE(
      local_->PutIfAbsent(BatchObjectKey(batch.day(), batch.id(), kSpansFileName), "x").ok());
  store.fail_puts = 0;
  EXPECT_FALSE(storage->uploader()->WaitUploaded(batch.id(), std::chrono::milliseconds(300)).ok());
  EXPECT_FALSE(local_->Head(BatchObjectKey(batch.day(), batch.id(), kBatchMetaFileName)).ok())
      << "meta.json must not be put over a foreign data file";
}

TEST_F(UploaderTest, AckAfterUploadAnswersOnlyOnceMetaJsonIsInTheStore) {
  RecordingStore store(*local_);
  std::unique_ptr<Storage> storage = Open(store, /*ack_after_upload=*/true);
  ASSERT_NE(storage, nullptr);
  ASSERT_TRUE(storage->Write(SpansRequest(10, 1)).ok());
  const auto& batch = *storage->Pin()->batches().back();
  EXPECT_TRUE(local_->Head(BatchObjectKey(batch.day(), batch.id(), kBatchMetaFileName)).ok());
  // A store that refuses every put: the request is not acknowledged.
  store.fail_puts = 1 << 30;
  absl::Status status = storage->Write(SpansRequest(10, 2));
  EXPECT_TRUE(absl::IsUnavailable(status)) << status;
  EXPECT_EQ(storage->Pin()->size(), 2u) << "committed locally all the same";
}

TEST_F(UploaderTest, OpenRefusesAStoreThatDoesNotAnswer) {
  RecordingStore store(*local_);
  store.fail_lists = true;
  StorageOptions options;
  options.object_store = &store;
  auto storage = Storage::Open(fs_, tmp_.path() + "/data", std::move(options));
  ASSERT_FALSE(storage.ok());
  EXPECT_TRUE(absl::IsUnavailable(storage.status())) << storage.status();
  EXPECT_NE(storage.status().message().find("recording:local:"), std::string::npos)
      << storage.status();
}

TEST_F(UploaderTest, TraceLookupReadsOnlyTheRangesItNeedsFromTheStoreOnceTheLocalFileIsGone) {
  RecordingStore store(*local_);
  std::unique_ptr<Storage> storage = Open(store);
  ASSERT_NE(storage, nullptr);
  // Many spans per batch, so one trace's rows are a small part of the file.
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(storage->Write(SpansRequest(i < 2 ? 100000 : 10, i)).ok());
  WaitAll(*storage);
  const std::shared_ptr<const Snapshot> snapshot = storage->Pin();
  otlp::TraceId id{};

  id[15] = 1008 & 0xff;
  id[14] = 1008 >> 8;
  const std::string data_dir = tmp_.path() + "/data";
  auto local = LookupTrace(fs_, data_dir, *snapshot, id);
  ASSERT_TRUE(local.ok() && local->has_value()) << local.status();
  ASSERT_EQ((*local)->spans.size(), 2u)
      << "trace 1008 is span 1007 of request 0 and span 7 of request 1";

  uint64_t file_bytes = 0;  // of the two batches that hold the trace
  for (const auto& batch : snapshot->batches()) {
    if (batch != snapshot->batches().back()) file_bytes += batch->meta().spans_parquet->bytes;
    ASSERT_TRUE(fs_.RemoveFile(JoinPath(batch->dir(), kSpansFileName)).ok());
  }
  auto without_store = LookupTrace(fs_, data_dir, *snapshot, id);
  EXPECT_TRUE(absl::IsNotFound(without_store.status())) << without_store.status();
  const uint64_t gets_before = store.gets;
  auto remote =
      LookupTrace(fs_, data_dir, *snapshot, id, nullptr, TraceLookupDetail::kFull, &store);
  ASSERT_TRUE(remote.ok() && remote->has_value()) << remote.status();
  EXPECT_EQ((*remote)->spans.span_id, (*local)->spans.span_id);
  EXPECT_EQ((*remote)->spans.name, (*local)->spans.name);
  EXPECT_GT(store.gets.load(), gets_before);
  std::printf("read %llu bytes in %llu gets from 2 spans.parquet of %llu bytes\n",
              static_cast<unsigned long long>(store.get_bytes.load()),
              static_cast<unsigned long long>(store.gets.load() - gets_before),
              static_cast<unsigned long long>(file_bytes));
  EXPECT_LT(store.get_bytes.load(), file_bytes / 2)
      << "ranged reads, not the whole spans.parquet of the batches";
}

TEST_F(UploaderTest, RemoteCheckTellsAWholeCopyFromALaggingOrDamagedOne) {
  RecordingStore store(*local_);
  std::unique_ptr<Storage> storage = Open(store);
  ASSERT_NE(storage, nullptr);
  ASSERT_TRUE(storage->Write(SpansRequest(50, 1)).ok());
  WaitAll(*storage);
  const std::shared_ptr<const Snapshot> snapshot = storage->Pin();
  const LiveBatch& b = *snapshot->batches().front();
  auto check = [&](bool deep) {
    return CheckRemoteCopy(fs_, *local_, b.day(), b.id(), b.dir(), deep).status;
  };
  EXPECT_EQ(check(false), RemoteStatus::kOk);
  EXPECT_EQ(check(true), RemoteStatus::kOk);
  // The same size, other bytes: only --deep sees it.
  const std::string spans_key = BatchObjectKey(b.day(), b.id(), kSpansFileName);
  auto bytes = local_->Get(spans_key, 0, 1 << 30);
  ASSERT_TRUE(bytes.ok());
  std::string changed = *bytes;
  changed[changed.size() / 2] ^= 1;
  ASSERT_TRUE(local_->DeleteMany({spans_key}).ok());
  ASSERT_TRUE(local_->PutIfAbsent(spans_key, changed).ok());
  EXPECT_EQ(check(false), RemoteStatus::kOk);
  EXPECT_EQ(check(true), RemoteStatus::kMismatch);
  ASSERT_TRUE(local_->DeleteMany({spans_key}).ok());
  EXPECT_EQ(check(false), RemoteStatus::kIncomplete);
  ASSERT_TRUE(local_->DeleteMany({BatchObjectKey(b.day(), b.id(), kBatchMetaFileName)}).ok());
  EXPECT_EQ(check(false), RemoteStatus::kNotUploaded);
}

}  // namespace
}  // namespace strata::storage
