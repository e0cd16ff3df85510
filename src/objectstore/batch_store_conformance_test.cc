// The BatchStore conformance suite (batch_store_conformance_testing.h): the
// contract of batch_store.h, tested the same way against every store.

#include <atomic>
#include <random>
#include <set>
#include <thread>

#include "fmt/format.h"
#include "objectstore/batch_store_conformance_testing.h"

namespace strata::objectstore {

void BatchStoreConformanceTest::SetUp() {
  store_ = GetParam().make();
  ASSERT_NE(store_, nullptr);
  std::random_device random;
  ns_ = fmt::format("conformance-{:08x}{:08x}/", random(), random());
}

namespace {

std::string PseudoRandomBytes(size_t n, uint32_t seed) {
  std::mt19937 generator(seed);
  std::string out(n, '\0');
  for (char& c : out) c = static_cast<char>(generator());
  return out;
}

// Every key under `prefix`, page by page, checking each page's size bound
// and that keys arrive in strictly increasing order.
std::vector<ObjectInfo> ListAll(BatchStore& store, const std::string& prefix, int max_keys,
                                int* pages = nullptr) {
  std::vector<ObjectInfo> all;
  std::string continuation;
  int page_count = 0;
  do {
    auto page = store.List(prefix, continuation, max_keys);
    EXPECT_TRUE(page.ok()) << page.status();
    if (!page.ok()) break;
    EXPECT_LE(page->objects.size(), size_t(max_keys));
    for (ObjectInfo& object : page->objects) {
      if (!all.empty()) EXPECT_LT(all.back().key, object.key);
      all.push_back(std::move(object));
    }
    continuation = page->next;
    ++page_count;
  } while (!continuation.empty() && page_count < 10000);
  if (pages != nullptr) *pages = page_count;
  return all;
}

// Runs `body(i)` for i in [0, n) on `threads` threads.
void ParallelFor(int n, int threads, const std::function<void(int)>& body) {
  std::atomic<int> next{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      for (int i = next++; i < n; i = next++) body(i);
    });
  }
  for (auto& worker : workers) worker.join();
}

TEST_P(BatchStoreConformanceTest, CreateOnlyRaceHasExactlyOneWinner) {
  constexpr int kWriters = 8;
  for (int round = 0; round < 3; ++round) {
    std::string key = ns() + fmt::format("race/{}/meta.json", round);
    std::atomic<int> ready{0};
    std::vector<absl::Status> results(kWriters);
    std::vector<std::thread> writers;
    for (int w = 0; w < kWriters; ++w) {
      writers.emplace_back([&, w] {
        ++ready;
        while (ready.load() < kWriters) std::this_thread::yield();  // start together
        results[w] = store().PutIfAbsent(key, fmt::format("writer {} of round {}", w, round));
      });
    }
    for (auto& writer : writers) writer.join();
    int winners = 0;
    int winner = -1;
    for (int w = 0; w < kWriters; ++w) {
      if (results[w].ok()) {
        ++winners;
        winner = w;
      } else {
        EXPECT_TRUE(absl::IsAlreadyExists(results[w])) << results[w];
      }
    }
    ASSERT_EQ(winners, 1) << "round " << round;
    auto data = store().Get(key, 0, 1 << 20);
    ASSERT_TRUE(data.ok()) << data.status();
    EXPECT_EQ(*data, fmt::format("writer {} of round {}", winner, round));
  }
}

TEST_P(BatchStoreConformanceTest, SecondPutOfAKeyFailsAndKeepsTheFirstBytes) {
  std::string key = ns() + "day=2026-12-04/a.batch/spans.parquet";
  ASSERT_TRUE(store().PutIfAbsent(key, "first").ok());
  absl::Status second = store().PutIfAbsent(key, "second, longer");
  EXPECT_TRUE(absl::IsAlreadyExists(second)) << second;
  auto data = store().Get(key, 0, 100);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(*data, "first");
}

TEST_P(BatchStoreConformanceTest, ReadAfterWriteSeesTheObjectEverywhere) {
  std::string data = PseudoRandomBytes(70000, 7);
  std::string key = ns() + "days/day=2026-12-04/b.batch/logs.parquet";
  ASSERT_TRUE(store().PutIfAbsent(key, data).ok());
  auto read = store().Get(key, 0, data.size());
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, data);
  auto head = store().Head(key);
  ASSERT_TRUE(head.ok()) << head.status();
  EXPECT_EQ(head->size, data.size());
  std::vector<ObjectInfo> listed = ListAll(store(), ns(), 1000);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].key, key);
  EXPECT_EQ(listed[0].size, data.size());
}

TEST_P(BatchStoreConformanceTest, RangedReadsAtOddOffsetsAndPastTheEnd) {
  std::string data = PseudoRandomBytes(10007, 11);
  std::string key = ns() + "ranges/spans.tidx";
  ASSERT_TRUE(store().PutIfAbsent(key, data).ok());
  struct Case {
    uint64_t offset, length;
  };
  for (Case c : {Case{0, 1}, Case{1, 1}, Case{7, 13}, Case{4093, 4099}, Case{10006, 1},
                 Case{9999, 100}, Case{3, 10004}, Case{0, 1 << 20}}) {
    auto read = store().Get(key, c.offset, c.length);
    ASSERT_TRUE(read.ok()) << read.status() << " at " << c.offset;
    EXPECT_EQ(*read, data.substr(c.offset, c.length)) << "at " << c.offset << "+" << c.length;
  }
  for (uint64_t offset : {uint64_t{10007}, uint64_t{10008}, uint64_t{1} << 40}) {
    auto read = store().Get(key, offset, 10);
    ASSERT_TRUE(read.ok()) << read.status() << " at " << offset;
    EXPECT_EQ(*read, "") << "at " << offset;
  }
  EXPECT_TRUE(absl::IsInvalidArgument(store().Get(key, 0, 0).status()));
}

TEST_P(BatchStoreConformanceTest, EmptyObjectHasSizeZeroAndReadsEmpty) {
  std::string key = ns() + "empty";
  ASSERT_TRUE(store().PutIfAbsent(key, "").ok());
  auto head = store().Head(key);
  ASSERT_TRUE(head.ok()) << head.status();
  EXPECT_EQ(head->size, 0u);
  auto read = store().Get(key, 0, 10);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, "");
}

TEST_P(BatchStoreConformanceTest, MissingKeyIsNotFound) {
  std::string key = ns() + "missing/meta.json";
  absl::Status head = store().Head(key).status();
  EXPECT_TRUE(absl::IsNotFound(head)) << head;
  absl::Status get = store().Get(key, 0, 10).status();
  EXPECT_TRUE(absl::IsNotFound(get)) << get;
  // A "directory" of other keys is not an object either.
  ASSERT_TRUE(store().PutIfAbsent(ns() + "dir/file", "x").ok());
  EXPECT_TRUE(absl::IsNotFound(store().Head(ns() + "dir").status()));
}

// Storage::RestoreOwnBatch tells a batch the store does not hold (its
// meta.json, put last, missing while its data files are there: an upload
// cut short, or a meta.json deleted by hand) from a store that does not
// answer by this NotFound, for Head and for a ranged Get at any offset.
TEST_P(BatchStoreConformanceTest, AMissingMetaJsonBesideItsDataFilesIsNotFound) {
  const std::string batch = ns() + "telemetry/days/day=2026-12-05/20261205120000000000001.batch/";
  ASSERT_TRUE(store().PutIfAbsent(batch + "spans.parquet", "PAR1").ok());
  ASSERT_TRUE(store().PutIfAbsent(batch + "meta.json.tmp", "{}").ok());
  const std::string key = batch + "meta.json";
  absl::Status head = store().Head(key).status();
  EXPECT_TRUE(absl::IsNotFound(head)) << head;
  for (uint64_t offset : {uint64_t{0}, uint64_t{1}, uint64_t{1} << 20}) {
    absl::Status get = store().Get(key, offset, 4096).status();
    EXPECT_TRUE(absl::IsNotFound(get)) << "offset " << offset << ": " << get;
  }
  // Deleted, it is missing again.
  ASSERT_TRUE(store().PutIfAbsent(key, "{}").ok());
  ASSERT_TRUE(store().Head(key).ok());
  ASSERT_TRUE(store().DeleteMany({key}).ok());
  EXPECT_TRUE(absl::IsNotFound(store().Head(key).status()));
  EXPECT_TRUE(absl::IsNotFound(store().Get(key, 0, 10).status()));
}

TEST_P(BatchStoreConformanceTest, ListingAcrossPagesOfMoreThanAThousandKeys) {
  constexpr int kKeys = 1234;
  std::string prefix = ns() + "days/";
  std::set<std::string> expected;
  for (int i = 0; i < kKeys; ++i) {
    // Different depths and separators, so bytewise order differs from a
    // directory walk's ('-' sorts before '/').
    expected.insert(prefix + fmt::format("day=2026-12-{:02}/{:05}.batch/meta.json", i % 7, i));
  }
  expected.insert(prefix + "day=2026-12-00-x");
  std::vector<std::string> keys(expected.begin(), expected.end());
  std::atomic<int> failures{0};
  ParallelFor(keys.size(), 16, [&](int i) {
    if (!store().PutIfAbsent(keys[i], std::to_string(i)).ok()) ++failures;
  });
  ASSERT_EQ(failures.load(), 0);
  ASSERT_TRUE(store().PutIfAbsent(ns() + "dayz/outside", "x").ok());  // shares "day", not "days/"

  int pages = 0;
  std::vector<ObjectInfo> all = ListAll(store(), prefix, 1000, &pages);
  EXPECT_EQ(pages, 2);
  std::vector<std::string> listed;
  for (const ObjectInfo& object : all) listed.push_back(object.key);
  EXPECT_EQ(listed, keys);  // sorted, complete, no duplicates, nothing outside the prefix

  std::vector<ObjectInfo> small_pages = ListAll(store(), prefix, 100, &pages);
  EXPECT_EQ(pages, 13);
  EXPECT_EQ(small_pages.size(), keys.size());

  std::vector<ObjectInfo> one_day = ListAll(store(), prefix + "day=2026-12-03/", 1000);
  EXPECT_EQ(one_day.size(), size_t(kKeys / 7 + (kKeys % 7 > 3 ? 1 : 0)));

  // DeleteMany of more than one request's worth of keys.
  ASSERT_TRUE(store().DeleteMany(keys).ok());
  EXPECT_TRUE(ListAll(store(), prefix, 1000).empty());
  EXPECT_EQ(ListAll(store(), ns(), 1000).size(), 1u);
}

TEST_P(BatchStoreConformanceTest, DeleteManyRemovesExactlyTheGivenKeys) {
  std::vector<std::string> keys;
  for (int i = 0; i < 5; ++i) {
    keys.push_back(ns() + fmt::format("d/{}", i));
    ASSERT_TRUE(store().PutIfAbsent(keys.back(), "x").ok());
  }
  ASSERT_TRUE(store().DeleteMany({keys[0], keys[2], keys[4], ns() + "d/never-written"}).ok());
  std::vector<ObjectInfo> left = ListAll(store(), ns(), 1000);
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(left[0].key, keys[1]);
  EXPECT_EQ(left[1].key, keys[3]);
  EXPECT_TRUE(absl::IsNotFound(store().Head(keys[2]).status()));
  // A deleted key can be written again.
  EXPECT_TRUE(store().PutIfAbsent(keys[2], "again").ok());
  EXPECT_TRUE(store().DeleteMany({}).ok());
}

TEST_P(BatchStoreConformanceTest, BadKeysAreRefusedBeforeAnyRequest) {
  for (std::string key :
       {std::string(""), std::string("/abs"), std::string("a//b"), std::string("a/../b"),
        std::string("a/.staging/x"), std::string("trailing/"), std::string("sp ace"),
        std::string(kMaxKeyBytes + 1, 'a')}) {
    EXPECT_TRUE(absl::IsInvalidArgument(store().PutIfAbsent(key, "x"))) << key;
    EXPECT_TRUE(absl::IsInvalidArgument(store().Head(key).status())) << key;
  }
  EXPECT_TRUE(absl::IsInvalidArgument(store().List(ns(), "", 0).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(store().List(ns(), "", kMaxKeysPerPage + 1).status()));
}

// What a streamed put asked of its reader: the ranges, in order.
struct ReadLog {
  std::vector<std::pair<uint64_t, size_t>> ranges;
};

// A PartReader over `data` that logs each range and fails the
// `fail_at`-th call (0-based; -1: never) with DataLoss.
PartReader ReaderOf(const std::string& data, ReadLog* log, int fail_at = -1) {
  return [&data, log, fail_at](uint64_t offset, size_t length) -> absl::StatusOr<std::string> {
    const int call = static_cast<int>(log->ranges.size());
    log->ranges.emplace_back(offset, length);
    if (call == fail_at) return absl::DataLossError("injected: the local file went bad");
    if (offset > data.size() || length > data.size() - offset) {
      return absl::OutOfRangeError("read past the end");
    }
    return data.substr(offset, length);
  };
}

// Larger than one part of any store (S3 tests use 5 MiB parts, the local
// store 8 MiB chunks), with a ragged end.
constexpr size_t kStreamedBytes = (size_t{12} << 20) + 12345;

TEST_P(BatchStoreConformanceTest, StreamedPutStoresEveryByteAndReadsBackAtPartBoundaries) {
  const std::string data = PseudoRandomBytes(kStreamedBytes, 41);
  const std::string key = ns() + "spans.parquet";
  ReadLog log;
  ASSERT_TRUE(store().PutStreamIfAbsent(key, data.size(), ReaderOf(data, &log)).ok());
  // The reader was asked for the bytes once each, in order, a part at a time.
  ASSERT_GE(log.ranges.size(), 2u);
  uint64_t next = 0;
  for (const auto& [offset, length] : log.ranges) {
    EXPECT_EQ(offset, next);
    EXPECT_LE(length, size_t{16} << 20);
    next = offset + length;
  }
  EXPECT_EQ(next, data.size());
  auto info = store().Head(key);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->size, data.size());
  for (uint64_t at : {uint64_t{0}, (uint64_t{5} << 20) - 7, (uint64_t{8} << 20) - 1,
                      (uint64_t{10} << 20) + 3, uint64_t{data.size()} - 100}) {
    auto got = store().Get(key, at, 4099);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, data.substr(at, 4099)) << "at " << at;
  }
  auto whole = store().Get(key, 0, data.size());
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_TRUE(*whole == data);
}

TEST_P(BatchStoreConformanceTest, SmallAndEmptyStreamedPutsAreOnePut) {
  const std::string small = PseudoRandomBytes(1000, 42);
  const std::string empty;
  ReadLog small_log, empty_log;
  ASSERT_TRUE(
      store().PutStreamIfAbsent(ns() + "small", small.size(), ReaderOf(small, &small_log)).ok());
  ASSERT_TRUE(store().PutStreamIfAbsent(ns() + "empty", 0, ReaderOf(empty, &empty_log)).ok());
  EXPECT_EQ(small_log.ranges.size(), 1u);
  auto got = store().Get(ns() + "small", 0, 5000);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, small);
  auto info = store().Head(ns() + "empty");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->size, 0u);
  // Create-only as PutIfAbsent.
  ReadLog again;
  EXPECT_TRUE(absl::IsAlreadyExists(
      store().PutStreamIfAbsent(ns() + "small", small.size(), ReaderOf(small, &again))));
}

TEST_P(BatchStoreConformanceTest, StreamedPutNeverReplacesAnExistingObject) {
  const std::string key = ns() + "logs.parquet";
  ASSERT_TRUE(store().PutIfAbsent(key, "first").ok());
  const std::string data = PseudoRandomBytes(kStreamedBytes, 43);
  ReadLog log;
  absl::Status put = store().PutStreamIfAbsent(key, data.size(), ReaderOf(data, &log));
  EXPECT_TRUE(absl::IsAlreadyExists(put)) << put;
  auto got = store().Get(key, 0, 100);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "first");
}

TEST_P(BatchStoreConformanceTest, StreamedPutWhoseReaderFailsLeavesNothingVisible) {
  const std::string key = ns() + "metrics.parquet";
  const std::string data = PseudoRandomBytes(kStreamedBytes, 44);
  ReadLog log;
  absl::Status put = store().PutStreamIfAbsent(key, data.size(), ReaderOf(data, &log, 1));
  EXPECT_TRUE(absl::IsDataLoss(put)) << put;
  EXPECT_EQ(log.ranges.size(), 2u);  // stopped at the failed read
  EXPECT_TRUE(absl::IsNotFound(store().Head(key).status()));
  EXPECT_TRUE(ListAll(store(), ns(), 10).empty());
  // The key is still free.
  ReadLog retry;
  ASSERT_TRUE(store().PutStreamIfAbsent(key, data.size(), ReaderOf(data, &retry)).ok());
  auto info = store().Head(key);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->size, data.size());
}

}  // namespace
}  // namespace strata::objectstore
