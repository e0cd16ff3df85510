#include "storage/index/trace_index.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/memory_file.h"
#include "io/posix_file_system.h"

namespace strata::storage {
namespace {

using otlp::TraceId;
using ::testing::HasSubstr;

// ---------------------------------------------------------------------------
// Helpers

TraceId RandomId(std::mt19937_64& rng) {
  TraceId id;
  const uint64_t a = rng();
  const uint64_t b = rng();
  std::memcpy(id.data(), &a, 8);
  std::memcpy(id.data() + 8, &b, 8);
  return id;
}

struct RunSet {
  std::vector<TraceRun> runs;
  uint64_t span_rows = 0;
  uint64_t first_covered_row = 0;
};

// `n` distinct random trace ids, sorted, each with 1..max_rows rows.
RunSet MakeRuns(size_t n, uint64_t seed, uint64_t first_covered_row = 0, uint32_t max_rows = 12) {
  std::mt19937_64 rng(seed);
  std::vector<TraceId> ids;
  ids.reserve(n);
  while (ids.size() < n) {
    for (size_t i = ids.size(); i < n; ++i) {
      ids.push_back(RandomId(rng));
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  }
  RunSet set;
  set.first_covered_row = first_covered_row;
  uint64_t row = first_covered_row;
  for (const TraceId& id : ids) {
    TraceRun run;
    run.trace_id = id;
    run.first_row = static_cast<uint32_t>(row);
    set.runs.push_back(run);
    row += 1 + rng() % max_rows;
  }
  set.span_rows = row - first_covered_row;
  return set;
}

std::string BuildOrDie(const RunSet& set) {
  absl::StatusOr<std::string> bytes =
      BuildTraceIndex(set.runs, set.span_rows, set.first_covered_row);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  return bytes.ok() ? *bytes : std::string();
}

TraceIndex OpenOrDie(const std::string& bytes) {
  absl::StatusOr<TraceIndex> index = TraceIndex::Open(bytes);
  EXPECT_TRUE(index.ok()) << index.status();
  return *std::move(index);
}

uint64_t GetU64(const std::string& s, size_t offset) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) {
    v = (v << 8) | static_cast<uint8_t>(s[offset + i]);
  }
  return v;
}

uint32_t GetU32(const std::string& s, size_t offset) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) {
    v = (v << 8) | static_cast<uint8_t>(s[offset + i]);
  }
  return v;
}

void PutU64(std::string& s, size_t offset, uint64_t v) {
  for (int i = 0; i < 8; ++i) {
    s[offset + i] = static_cast<char>(v >> (8 * i));
  }
}

void PutU32(std::string& s, size_t offset, uint32_t v) {
  for (int i = 0; i < 4; ++i) {
    s[offset + i] = static_cast<char>(v >> (8 * i));
  }
}

// Recomputes the header checksum, so a mutation reaches the check behind it.
void Reseal(std::string& s) {
  PutU64(s, 56, 0);
  PutU64(s, 56, XXH3_64bits(s.data(), s.size()));
}

// The location the runs imply for run `i`.
TraceLocation ExpectedLocation(const RunSet& set, size_t i) {
  const TraceRun& run = set.runs[i];
  const uint64_t end =
      i + 1 < set.runs.size() ? set.runs[i + 1].first_row : set.first_covered_row + set.span_rows;
  return {run.first_row, end};
}

void ExpectFound(const std::optional<TraceLocation>& found, const RunSet& set, size_t i) {
  ASSERT_TRUE(found.has_value()) << "run " << i;
  const TraceLocation expected = ExpectedLocation(set, i);
  EXPECT_EQ(found->first_row, expected.first_row);
  EXPECT_EQ(found->end_row, expected.end_row);
}

// Version-2 bytes rewritten as version 1 (trace-index.md, "Version 1"):
// 32-byte entries whose last 12 bytes (the time bounds version 1 kept) are
// arbitrary, and no padding.
std::string AsVersionOne(const std::string& v2, uint64_t seed) {
  const uint64_t n = GetU64(v2, 16);
  const uint64_t filter_bytes = GetU64(v2, 40);
  std::string out = v2.substr(0, 64);
  PutU32(out, 8, 1);
  std::mt19937_64 rng(seed);
  for (uint64_t i = 0; i < n; ++i) {
    std::string entry = v2.substr(64 + 20 * i, 20) + std::string(12, '\0');
    PutU32(entry, 20, static_cast<uint32_t>(rng()));
    PutU64(entry, 24, rng());
    out += entry;
  }
  out += v2.substr(v2.size() - filter_bytes);
  Reseal(out);
  return out;
}

// Opens `bytes` both ways (in memory, and streamed through TraceFilter) and
// expects both to fail with DataLoss naming the file and `check`.
void ExpectRejected(const std::string& bytes, std::string_view check) {
  SCOPED_TRACE(std::string(check));
  const std::string path = "batches/x.batch/spans.tidx";
  const absl::StatusOr<TraceIndex> index = TraceIndex::Open(bytes, path);
  ASSERT_FALSE(index.ok());
  EXPECT_EQ(index.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(index.status().message()), HasSubstr(fmt::format("{}: {}", path, check)));
  const MemoryFile file(bytes, path);
  const absl::StatusOr<TraceFilter> filter = TraceFilter::Open(file);
  ASSERT_FALSE(filter.ok());
  EXPECT_EQ(filter.status(), index.status());
}

// ---------------------------------------------------------------------------
// Writer and layout

TEST(TraceIndexTest, LayoutMatchesTheFormatPage) {
  // 100 entries end on a multiple of 8; 101 need 4 bytes of padding.
  for (size_t n : {100, 101}) {
    SCOPED_TRACE(n);
    const RunSet set = MakeRuns(n, 1, /*first_covered_row=*/3);
    const std::string bytes = BuildOrDie(set);
    ASSERT_GE(bytes.size(), 64u);
    EXPECT_EQ(bytes.substr(0, 8), "STRATIDX");
    EXPECT_EQ(GetU32(bytes, 8), 2u);
    EXPECT_EQ(GetU32(bytes, 12), 64u);
    EXPECT_EQ(GetU64(bytes, 16), n);
    EXPECT_EQ(GetU64(bytes, 24), set.span_rows);
    EXPECT_EQ(GetU64(bytes, 32), 3u);
    const uint64_t filter_bytes = GetU64(bytes, 40);
    EXPECT_EQ(GetU64(bytes, 48), 0u);
    const size_t filter_at = (64 + 20 * n + 7) / 8 * 8;
    EXPECT_EQ(bytes.size(), filter_at + filter_bytes);
    EXPECT_EQ(filter_bytes % 8, 0u);
    EXPECT_EQ(bytes.substr(64 + 20 * n, filter_at - (64 + 20 * n)),
              std::string(filter_at - (64 + 20 * n), '\0'));
    std::string zeroed = bytes;
    PutU64(zeroed, 56, 0);
    EXPECT_EQ(GetU64(bytes, 56), XXH3_64bits(zeroed.data(), zeroed.size()));
    for (size_t i = 0; i < set.runs.size(); ++i) {
      const size_t at = 64 + 20 * i;
      const TraceRun& run = set.runs[i];
      EXPECT_EQ(std::memcmp(bytes.data() + at, run.trace_id.data(), 16), 0);
      EXPECT_EQ(GetU32(bytes, at + 16), run.first_row);
    }
    // The filter section: seed, segment length, count, array length, reserved.
    const uint32_t segment_length = GetU32(bytes, filter_at + 8);
    const uint32_t segment_count = GetU32(bytes, filter_at + 12);
    const uint32_t array_length = GetU32(bytes, filter_at + 16);
    EXPECT_EQ(array_length, (segment_count + 2) * segment_length);
    EXPECT_EQ(GetU32(bytes, filter_at + 20), 0u);
    EXPECT_EQ(filter_bytes, (24 + array_length + 7) / 8 * 8);
  }
}

TEST(TraceIndexTest, RoundTripsEntriesAndLocations) {
  const RunSet set = MakeRuns(3000, 2, /*first_covered_row=*/17);
  const std::string bytes = BuildOrDie(set);
  EXPECT_EQ(BuildOrDie(set), bytes) << "the writer is deterministic";
  const TraceIndex index = OpenOrDie(bytes);
  ASSERT_EQ(index.entries().size(), set.runs.size());
  EXPECT_TRUE(index.Validate(3000, set.span_rows).ok());
  EXPECT_EQ(index.filter().trace_count(), 3000u);
  EXPECT_EQ(index.filter().span_rows(), set.span_rows);
  EXPECT_EQ(index.filter().first_covered_row(), 17u);
  for (size_t i = 0; i < set.runs.size(); ++i) {
    EXPECT_EQ(index.entries()[i].trace_id, set.runs[i].trace_id);
    EXPECT_EQ(index.entries()[i].first_row, set.runs[i].first_row);
    EXPECT_TRUE(index.MayContain(set.runs[i].trace_id));
    ExpectFound(index.LocationOf(i), set, i);
  }
  EXPECT_EQ(index.Serialize(), bytes);
}

TEST(TraceIndexTest, BuildRejectsRunsThatBreakTheContract) {
  const RunSet good = MakeRuns(5, 4, /*first_covered_row=*/2);
  ASSERT_FALSE(BuildOrDie(good).empty());
  const auto expect_invalid = [](const RunSet& set, const char* what) {
    const absl::StatusOr<std::string> bytes =
        BuildTraceIndex(set.runs, set.span_rows, set.first_covered_row);
    EXPECT_EQ(bytes.status().code(), absl::StatusCode::kInvalidArgument) << what;
  };
  RunSet s = good;
  s.runs.clear();
  expect_invalid(s, "no runs");
  s = good;
  std::swap(s.runs[1].trace_id, s.runs[2].trace_id);
  expect_invalid(s, "unsorted ids");
  s = good;
  s.runs[2].trace_id = s.runs[1].trace_id;
  expect_invalid(s, "repeated id");
  s = good;
  s.runs[2].first_row = s.runs[1].first_row;
  expect_invalid(s, "rows not increasing");
  s = good;
  s.first_covered_row = 1;
  expect_invalid(s, "first run not at the first covered row");
  s = good;
  s.span_rows = s.runs.back().first_row - s.first_covered_row;
  expect_invalid(s, "last run past the covered rows");
  s = good;
  s.span_rows = kTraceIndexMaxRowEnd;
  expect_invalid(s, "rows past 2^32-1");
}

// ---------------------------------------------------------------------------
// Lookups

// Present ids, their byte neighbours and random ids, against a std::map.
void CheckLookupsAgainstBruteForce(const RunSet& set, size_t random_probes, uint64_t seed,
                                   const std::string& bytes) {
  const TraceIndex index = OpenOrDie(bytes);
  const MemoryFile file(bytes, "spans.tidx");
  const absl::StatusOr<TraceFilter> filter = TraceFilter::Open(file);
  ASSERT_TRUE(filter.ok()) << filter.status();
  std::map<TraceId, size_t> truth;
  for (size_t i = 0; i < set.runs.size(); ++i) {
    truth[set.runs[i].trace_id] = i;
  }

  std::vector<TraceId> probes;
  std::mt19937_64 rng(seed);
  for (const TraceRun& run : set.runs) {
    probes.push_back(run.trace_id);
    TraceId next = run.trace_id;
    next[15] ^= 1;
    probes.push_back(next);
  }
  for (size_t i = 0; i < random_probes; ++i) {
    probes.push_back(RandomId(rng));
  }
  probes.push_back(TraceId{});
  TraceId all_ones;
  all_ones.fill(0xff);
  probes.push_back(all_ones);

  for (const TraceId& id : probes) {
    const auto it = truth.find(id);
    const std::optional<TraceLocation> in_memory = index.Find(id);
    const absl::StatusOr<std::optional<TraceLocation>> in_file = filter->Find(file, id);
    ASSERT_TRUE(in_file.ok()) << in_file.status();
    EXPECT_EQ(*in_file, in_memory);
    if (it == truth.end()) {
      EXPECT_FALSE(in_memory.has_value());
    } else {
      EXPECT_TRUE(filter->MayContain(id));
      ExpectFound(in_memory, set, it->second);
    }
  }
}

TEST(TraceIndexTest, LookupsMatchBruteForceOnRandomSets) {
  for (size_t n : {1, 2, 3, 50, 127, 128, 129, 130, 131, 257, 1000, 20000}) {
    SCOPED_TRACE(n);
    const RunSet set = MakeRuns(n, 100 + n, /*first_covered_row=*/n % 7);
    CheckLookupsAgainstBruteForce(set, 2000, n, BuildOrDie(set));
  }
}

// Version-1 files (32-byte entries) still open, look up and read in order;
// what they decode to serializes as the version-2 file.
TEST(TraceIndexTest, ReadsVersionOne) {
  for (size_t n : {1, 41, 129, 3000}) {
    SCOPED_TRACE(n);
    const RunSet set = MakeRuns(n, 200 + n, /*first_covered_row=*/n % 5);
    const std::string v2 = BuildOrDie(set);
    const std::string v1 = AsVersionOne(v2, n);
    ASSERT_EQ(v1.size(), 64 + 32 * n + GetU64(v2, 40));
    const TraceIndex index = OpenOrDie(v1);
    EXPECT_EQ(index.Serialize(), v2);
    CheckLookupsAgainstBruteForce(set, 500, n, v1);
    const MemoryFile file(v1, "spans.tidx");
    const absl::StatusOr<TraceFilter> filter = TraceFilter::Open(file);
    ASSERT_TRUE(filter.ok()) << filter.status();
    std::vector<TraceIndexEntry> entries;
    std::vector<uint64_t> ends;
    ASSERT_TRUE(filter->ReadEntries(file, 0, n, &entries, &ends).ok());
    ASSERT_EQ(entries.size(), n);
    for (size_t i = 0; i < n; ++i) {
      EXPECT_EQ(entries[i].trace_id, set.runs[i].trace_id);
      EXPECT_EQ(ends[i], ExpectedLocation(set, i).end_row);
    }
    std::string longer = v1;
    longer.push_back('\0');
    Reseal(longer);
    ExpectRejected(longer, "file size");
  }
}

TEST(TraceIndexTest, SingleTraceIndex) {
  RunSet set = MakeRuns(1, 5, /*first_covered_row=*/4);
  set.span_rows = 1;
  const TraceIndex index = OpenOrDie(BuildOrDie(set));
  const std::optional<TraceLocation> found = index.Find(set.runs[0].trace_id);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->first_row, 4u);
  EXPECT_EQ(found->end_row, 5u);
  CheckLookupsAgainstBruteForce(set, 500, 5, BuildOrDie(set));
}

TEST(TraceIndexTest, LargeIndexOnDisk) {
  const RunSet set = MakeRuns(300000, 6, /*first_covered_row=*/1, /*max_rows=*/3);
  const std::string bytes = BuildOrDie(set);
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::random_device random;
  const std::string dir =
      fmt::format("{}strata_tidx_{}_{:x}", ::testing::TempDir(), info->name(), random());
  PosixFileSystem fs;
  ASSERT_TRUE(fs.CreateDir(dir).ok());
  const std::string path = dir + "/spans.tidx";
  ASSERT_TRUE(WriteFile(fs, path, bytes).ok());
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> file = fs.NewRandomAccessFile(path);
  ASSERT_TRUE(file.ok()) << file.status();
  const absl::StatusOr<TraceFilter> filter = TraceFilter::Open(**file);
  ASSERT_TRUE(filter.ok()) << filter.status();
  EXPECT_TRUE(filter->Validate(300000, set.span_rows).ok());
  const absl::StatusOr<TraceIndex> index = TraceIndex::Open(**file);
  ASSERT_TRUE(index.ok()) << index.status();
  EXPECT_EQ(index->Serialize(), bytes);

  const double bits_per_trace =
      8.0 * static_cast<double>(filter->MemoryBytes()) / static_cast<double>(set.runs.size());
  std::printf(
      "300000 traces: %zu bytes on disk (%.2f per trace), filter in memory %zu bytes "
      "(%.2f bits per trace)\n",
      bytes.size(), static_cast<double>(bytes.size()) / 300000.0, filter->MemoryBytes(),
      bits_per_trace);
  EXPECT_LT(bits_per_trace, 9.6);
  EXPECT_GE(filter->MemoryBytes(), filter->filter().fingerprints().size());

  std::mt19937_64 rng(606);  // not MakeRuns' seed: these ids must be absent
  for (int i = 0; i < 3000; ++i) {
    const size_t at = rng() % set.runs.size();
    const absl::StatusOr<std::optional<TraceLocation>> found =
        filter->Find(**file, set.runs[at].trace_id);
    ASSERT_TRUE(found.ok()) << found.status();
    ExpectFound(*found, set, at);
    const absl::StatusOr<std::optional<TraceLocation>> absent = filter->Find(**file, RandomId(rng));
    ASSERT_TRUE(absent.ok()) << absent.status();
    EXPECT_FALSE(absent->has_value());
  }
  EXPECT_TRUE(fs.RemoveAll(dir).ok());
}

TEST(TraceIndexTest, FindInFileUsesFewReads) {
  const RunSet set = MakeRuns(100000, 7);
  MemoryFile file(BuildOrDie(set), "spans.tidx");
  const absl::StatusOr<TraceFilter> filter = TraceFilter::Open(file);
  ASSERT_TRUE(filter.ok()) << filter.status();
  file.reads = 0;
  const absl::StatusOr<std::optional<TraceLocation>> found =
      filter->Find(file, set.runs[4321].trace_id);
  ASSERT_TRUE(found.ok() && found->has_value());
  // log2(100000 / 128) rounds up to 10 probes, plus one read of the rest.
  EXPECT_LE(file.reads, 11);
}

TEST(TraceIndexTest, FindInFileReportsAFileThatChangedAndIoErrors) {
  const RunSet set = MakeRuns(1000, 8);
  MemoryFile file(BuildOrDie(set), "d/spans.tidx");
  const absl::StatusOr<TraceFilter> filter = TraceFilter::Open(file);
  ASSERT_TRUE(filter.ok()) << filter.status();
  const TraceId& id = set.runs[500].trace_id;

  file.fail_reads_from = 64;
  absl::StatusOr<std::optional<TraceLocation>> found = filter->Find(file, id);
  EXPECT_EQ(found.status().code(), absl::StatusCode::kUnavailable);

  file.fail_reads_from = UINT64_MAX;
  file.bytes.resize(64 + 20 * 10);
  found = filter->Find(file, id);
  EXPECT_EQ(found.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(found.status().message()), HasSubstr("d/spans.tidx: file size"));

  // Entries rewritten so the found entry's rows run backwards.
  file.bytes = BuildOrDie(set);
  PutU32(file.bytes, 64 + 20 * 501 + 16, set.runs[500].first_row);
  found = filter->Find(file, id);
  EXPECT_EQ(found.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(found.status().message()), HasSubstr("d/spans.tidx: first rows"));
}

TEST(TraceIndexTest, OpenPassesIoErrorsThrough) {
  MemoryFile file(BuildOrDie(MakeRuns(5000, 9)), "spans.tidx");
  file.fail_reads_from = uint64_t{64} * 1024;
  const absl::StatusOr<TraceFilter> filter = TraceFilter::Open(file);
  EXPECT_EQ(filter.status().code(), absl::StatusCode::kUnavailable);
}

// ---------------------------------------------------------------------------
// Validation

class TraceIndexValidationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // 41 entries end at byte 884: 4 bytes of padding before the filter.
    set_ = MakeRuns(41, 10, /*first_covered_row=*/2);
    good_ = BuildOrDie(set_);
    ASSERT_TRUE(TraceIndex::Open(good_).ok());
    filter_at_ = 888;
  }

  // A copy of the good file with `mutate` applied and the checksum redone.
  std::string Mutated(const std::function<void(std::string&)>& mutate) const {
    std::string s = good_;
    mutate(s);
    Reseal(s);
    return s;
  }

  RunSet set_;
  std::string good_;
  size_t filter_at_ = 0;
};

TEST_F(TraceIndexValidationTest, HeaderFields) {
  ExpectRejected(Mutated([](std::string& s) { s[0] = 'X'; }), "magic");
  ExpectRejected(Mutated([](std::string& s) { s[7] = 'Y'; }), "magic");
  ExpectRejected(Mutated([](std::string& s) { PutU32(s, 8, 3); }), "version");
  ExpectRejected(Mutated([](std::string& s) { PutU32(s, 8, 0); }), "version");
  ExpectRejected(Mutated([](std::string& s) { PutU32(s, 12, 72); }), "header size");
  ExpectRejected(Mutated([](std::string& s) { PutU64(s, 48, 1); }), "reserved");
  ExpectRejected(Mutated([](std::string& s) { PutU64(s, 48, 1ULL << 63); }), "reserved");
  ExpectRejected(Mutated([](std::string& s) { PutU64(s, 16, 0); }), "entry count");
}

TEST_F(TraceIndexValidationTest, SizeAndSections) {
  ExpectRejected(Mutated([](std::string& s) { PutU64(s, 16, 42); }), "file size");
  ExpectRejected(Mutated([](std::string& s) { PutU64(s, 16, 40); }), "file size");
  // Version-1 entries are 32 bytes: the size no longer adds up.
  ExpectRejected(Mutated([](std::string& s) { PutU32(s, 8, 1); }), "file size");
  ExpectRejected(Mutated([](std::string& s) { PutU64(s, 16, UINT64_MAX); }), "file size");
  ExpectRejected(Mutated([](std::string& s) { PutU64(s, 16, 1ULL << 59); }), "file size");
  ExpectRejected(Mutated([](std::string& s) { PutU64(s, 40, GetU64(s, 40) + 8); }), "file size");
  ExpectRejected(Mutated([](std::string& s) { PutU64(s, 40, UINT64_MAX); }), "file size");
  ExpectRejected(Mutated([](std::string& s) { s.push_back('\0'); }), "file size");
  ExpectRejected(Mutated([](std::string& s) { s.resize(s.size() - 8); }), "file size");
  // N and F traded against each other keep the size but not the filter.
  ExpectRejected(Mutated([](std::string& s) {
                   PutU64(s, 16, 39);
                   PutU64(s, 40, GetU64(s, 40) + 40);
                 }),
                 "filter ");
  ExpectRejected(Mutated([](std::string& s) { s[884] = 1; }), "padding");
  ExpectRejected(Mutated([](std::string& s) { s[887] = 1; }), "padding");
  for (size_t size : {size_t{0}, size_t{1}, size_t{63}}) {
    ExpectRejected(good_.substr(0, size), "file size");
  }
  for (size_t size = 64; size < good_.size(); size += 5) {
    ExpectRejected(good_.substr(0, size), "file size");
  }
  // Covered rows that would pass row 2^32-1.
  ExpectRejected(Mutated([](std::string& s) { PutU64(s, 24, kTraceIndexMaxRowEnd); }),
                 "covered rows");
  ExpectRejected(Mutated([](std::string& s) { PutU64(s, 32, UINT64_MAX); }), "covered rows");
}

TEST_F(TraceIndexValidationTest, Checksum) {
  std::string s = good_;
  s[56] ^= 1;
  ExpectRejected(s, "checksum");
  // Damage anywhere else with the stored checksum kept: the checksum is
  // what reports it, even where another check would also fail.
  for (size_t at : {size_t{64}, size_t{64 + 16}, size_t{64 + 20 * 40 + 19}, size_t{885}, filter_at_,
                    filter_at_ + 30, good_.size() - 1}) {
    s = good_;
    s[at] ^= 0x40;
    ExpectRejected(s, "checksum");
  }
  // Every single-byte change is caught.
  for (size_t at = 0; at < good_.size(); ++at) {
    s = good_;
    s[at] ^= 0x01;
    const absl::StatusOr<TraceIndex> index = TraceIndex::Open(s);
    ASSERT_FALSE(index.ok()) << "byte " << at;
    EXPECT_EQ(index.status().code(), absl::StatusCode::kDataLoss);
  }
}

TEST_F(TraceIndexValidationTest, Entries) {
  const auto entry = [](size_t i) { return 64 + 20 * i; };
  ExpectRejected(Mutated([&](std::string& s) {
                   std::swap_ranges(s.begin() + entry(5), s.begin() + entry(5) + 16,
                                    s.begin() + entry(6));
                 }),
                 "entry order");
  ExpectRejected(
      Mutated([&](std::string& s) { std::copy_n(s.begin() + entry(5), 16, s.begin() + entry(6)); }),
      "entry order");
  ExpectRejected(
      Mutated([&](std::string& s) { PutU32(s, entry(9) + 16, GetU32(s, entry(8) + 16)); }),
      "first rows");
  ExpectRejected(
      Mutated([&](std::string& s) { PutU32(s, entry(9) + 16, GetU32(s, entry(8) + 16) - 1); }),
      "first rows");
  ExpectRejected(Mutated([&](std::string& s) { PutU32(s, entry(0) + 16, 3); }), "first row");
  ExpectRejected(Mutated([&](std::string& s) { PutU64(s, 32, 1); }), "first row");
  ExpectRejected(Mutated([&](std::string& s) {
                   PutU64(s, 24, GetU32(s, entry(40) + 16) - 2);  // covered: [2, last)
                 }),
                 "last row");
  ExpectRejected(Mutated([&](std::string& s) { PutU64(s, 24, 0); }), "last row");
}

TEST_F(TraceIndexValidationTest, FilterSection) {
  ExpectRejected(Mutated([&](std::string& s) { PutU32(s, filter_at_ + 20, 1); }),
                 "filter reserved");
  ExpectRejected(
      Mutated([&](std::string& s) { PutU32(s, filter_at_ + 16, GetU32(s, filter_at_ + 16) - 8); }),
      "filter array length");
  ExpectRejected(
      Mutated([&](std::string& s) { PutU32(s, filter_at_ + 12, GetU32(s, filter_at_ + 12) + 1); }),
      "filter array length");
  ExpectRejected(Mutated([&](std::string& s) { PutU32(s, filter_at_ + 8, 3); }),
                 "filter segment length");
  ExpectRejected(Mutated([&](std::string& s) { PutU32(s, filter_at_ + 12, 0); }),
                 "filter segment count");
  // Fingerprints wiped: the entries no longer pass.
  ExpectRejected(
      Mutated([&](std::string& s) { std::fill(s.begin() + filter_at_ + 24, s.end(), '\0'); }),
      "filter membership");
  // A different seed: the same bytes no longer answer for these ids.
  ExpectRejected(Mutated([&](std::string& s) { PutU64(s, filter_at_, GetU64(s, filter_at_) + 1); }),
                 "filter membership");
}

TEST_F(TraceIndexValidationTest, AnEntryTheFilterWasNotBuiltFor) {
  // Change entry 20's id to one between its neighbours that the filter
  // rejects (about 255 of 256 candidates are): only its last byte changes,
  // so it still sorts between entries 19 and 21.
  const TraceIndex index = OpenOrDie(good_);
  TraceId id = set_.runs[20].trace_id;
  bool replaced = false;
  for (int b = 0; b < 256 && !replaced; ++b) {
    id[15] = static_cast<uint8_t>(b);
    if (id > set_.runs[19].trace_id && id < set_.runs[21].trace_id && !index.MayContain(id)) {
      replaced = true;
    }
  }
  ASSERT_TRUE(replaced);
  ExpectRejected(
      Mutated([&](std::string& s) { std::memcpy(s.data() + 64 + size_t{20} * 20, id.data(), 16); }),
      "filter membership");
}

TEST_F(TraceIndexValidationTest, AgainstMetaJson) {
  const TraceIndex index = OpenOrDie(good_);
  EXPECT_TRUE(index.Validate(41, set_.span_rows).ok());
  absl::Status status = index.Validate(42, set_.span_rows);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(status.message()), HasSubstr("spans.tidx: meta.json traces"));
  status = index.Validate(41, set_.span_rows + 1);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(status.message()), HasSubstr("spans.tidx: meta.json rows"));
}

// Seeds for fuzz/trace_index_fuzz.cc (fuzz/corpus/trace_index/), written
// only when STRATA_WRITE_FUZZ_SEEDS names a directory.
TEST(TraceIndexTest, WritesFuzzSeedsWhenAsked) {
  const char* dir = std::getenv("STRATA_WRITE_FUZZ_SEEDS");
  if (dir == nullptr) GTEST_SKIP() << "set STRATA_WRITE_FUZZ_SEEDS";
  RunSet one = MakeRuns(1, 31, /*first_covered_row=*/2);
  one.span_rows = 3;
  for (const auto& [name, bytes] : std::vector<std::pair<std::string, std::string>>{
           {"v2_one_trace.tidx", BuildOrDie(one)},
           {"v2_forty_one_traces_padded.tidx", BuildOrDie(MakeRuns(41, 32, 1))},
           {"v2_two_hundred_traces.tidx", BuildOrDie(MakeRuns(200, 33))}}) {
    std::ofstream out(std::string(dir) + "/" + name, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    ASSERT_TRUE(out.good()) << name;
  }
}

}  // namespace
}  // namespace strata::storage
