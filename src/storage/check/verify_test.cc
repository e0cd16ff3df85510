// `strata verify`'s checker (storage/verify.h) over data directories of
// real batches written by the real Storage, each damaged in one chosen way:
// which check catches it, shallow or only deep, and that a batch removed
// while it is checked is "gone", not corrupt. DuckDB's check
// (query/parquet_file_check.h) runs in the deep cases as the CLI runs it.

#include "storage/check/verify.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/forwarding_file_system.h"
#include "io/posix_file_system.h"
#include "query/parquet_file_check.h"
#include "storage/commit/data_dir.h"
#include "storage/maintenance/compaction.h"
#include "storage/storage.h"
#include "storage/table/logs_table.h"
#include "storage/table/rollups_table.h"
#include "storage/table/spans_table.h"
#include "storage/testing/commit_testing.h"
#include "storage/testing/table_testing.h"
#include "storage/testing/verify_fixture.h"
#include "storage/testing/verify_testing.h"

namespace strata::storage {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::ScopedTempDir;
using verify_testing::BatchIdOfDir;
using verify_testing::RewriteBatchFile;

// Fails (and counts) every call that could change the file system, so a
// test can show that verify writes nothing and takes no lock.
class ReadOnlyFileSystem final : public ForwardingFileSystem {
 public:
  explicit ReadOnlyFileSystem(FileSystem& base) : ForwardingFileSystem(base) {}
  int writes = 0;

  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path,
                                                                WriteMode) override {
    return Refuse("open for writing", path);
  }
  using FileSystem::NewWritableFile;
  absl::Status RenameFile(const std::string& from, const std::string&) override {
    return Refuse("rename", from);
  }
  absl::Status SyncDir(const std::string& path) override { return Refuse("sync", path); }
  absl::Status CreateDir(const std::string& path) override { return Refuse("mkdir", path); }
  absl::Status CreateDirs(const std::string& path) override { return Refuse("mkdir", path); }
  absl::Status RemoveFile(const std::string& path) override { return Refuse("remove", path); }
  absl::Status RemoveDir(const std::string& path) override { return Refuse("rmdir", path); }
  absl::Status RemoveAll(const std::string& path) override { return Refuse("remove", path); }
  absl::StatusOr<std::unique_ptr<FileLock>> LockFile(const std::string& path) override {
    return Refuse("lock", path);
  }

 private:
  absl::Status Refuse(std::string_view what, const std::string& path) {
    ++writes;
    ADD_FAILURE() << "verify tried to " << what << " " << path;
    return absl::PermissionDeniedError(fmt::format("read-only: {} {}", what, path));
  }
};

// Removes a batch directory the first time a file inside it is opened, as a
// running server's compaction or retention can between verify listing the
// batch and reading it.
class VanishingBatchFileSystem final : public ForwardingFileSystem {
 public:
  VanishingBatchFileSystem(FileSystem& base, std::string batch_dir, std::string file)
      : ForwardingFileSystem(base), batch_dir_(std::move(batch_dir)), file_(std::move(file)) {}
  bool vanished = false;

  absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& path) override {
    Vanish(path);
    return base().NewRandomAccessFile(path);
  }
  absl::StatusOr<std::string> ReadFile(const std::string& path) override {
    Vanish(path);
    return base().ReadFile(path);
  }

 private:
  void Vanish(const std::string& path) {
    if (vanished || path != batch_dir_ + "/" + file_) return;
    vanished = true;
    EXPECT_TRUE(base().RemoveAll(batch_dir_).ok());
  }
  const std::string batch_dir_;
  const std::string file_;
};

class VerifyTest : public verify_testing::TrafficBatchesTest {
 protected:
  VerifyTest() : TrafficBatchesTest("verify") {}

  VerifyOptions Shallow() { return VerifyOptions{}; }
  // `chunk_rows` below a batch's span rows makes the spans check read it in
  // several ranges and carry its checks across them.
  VerifyOptions Deep(uint64_t chunk_rows = kDeepCheckChunkRows) {
    VerifyOptions options;
    options.deep = true;
    options.chunk_rows = chunk_rows;
    options.parquet_check = query::DuckDbParquetFileCheck(engine_.get());
    return options;
  }

  VerifyReport Verify(const VerifyOptions& options) { return Verify(posix_, options); }
  VerifyReport Verify(FileSystem& fs, const VerifyOptions& options) {
    absl::StatusOr<VerifyReport> report = VerifyDataDir(fs, data_, options);
    EXPECT_TRUE(report.ok()) << report.status();
    return report.ok() ? *std::move(report) : VerifyReport{};
  }

  // The verdict for batch directory `dir` (a failure, and status
  // kUnreadable, if the report lacks it).
  static BatchVerdict VerdictOf(const VerifyReport& report, const std::string& dir) {
    for (const BatchVerdict& verdict : report.batches) {
      if (verdict.dir == dir) return verdict;
    }
    ADD_FAILURE() << dir << " is not in the report";
    return BatchVerdict{.day = "", .id = *BatchId::Make(0, 0), .status = BatchStatus::kUnreadable};
  }

  std::string Read(const std::string& path) {
    absl::StatusOr<std::string> bytes = posix_.ReadFile(path);
    EXPECT_TRUE(bytes.ok()) << bytes.status();
    return bytes.ok() ? *bytes : "";
  }

  // Expects every batch but `dir` ok and `dir` corrupt by `check` on `file`.
  void ExpectOnlyCorrupt(const VerifyReport& report, const std::string& dir,
                         const std::string& check, const std::string& file) {
    ASSERT_EQ(report.batches.size(), dirs_.size());
    for (const BatchVerdict& verdict : report.batches) {
      if (verdict.dir != dir) {
        EXPECT_EQ(verdict.status, BatchStatus::kOk) << verdict.dir << ": " << verdict.message;
        continue;
      }
      EXPECT_EQ(verdict.status, BatchStatus::kCorrupt) << verdict.dir;
      EXPECT_EQ(verdict.check, check) << verdict.message;
      EXPECT_EQ(verdict.file, file) << verdict.message;
    }
    EXPECT_FALSE(report.Healthy());
    EXPECT_EQ(report.Count(BatchStatus::kCorrupt), 1u);
  }
};

TEST_F(VerifyTest, HealthyBatchesPassShallowAndDeep) {
  for (const VerifyOptions& options : {Shallow(), Deep(), Deep(3)}) {
    std::vector<std::string> seen;
    VerifyOptions with_progress = options;
    with_progress.on_batch = [&seen](const BatchVerdict& verdict) { seen.push_back(verdict.dir); };
    const VerifyReport report = Verify(with_progress);
    ASSERT_EQ(report.batches.size(), 3u);
    for (size_t i = 0; i < report.batches.size(); ++i) {
      const BatchVerdict& verdict = report.batches[i];
      EXPECT_EQ(verdict.status, BatchStatus::kOk) << verdict.check << ": " << verdict.message;
      EXPECT_EQ(verdict.dir, dirs_[i]);
      EXPECT_EQ(verdict.id.ToString(), BatchIdOfDir(dirs_[i]));
    }
    EXPECT_EQ(seen, dirs_);
    EXPECT_TRUE(report.Healthy());
    EXPECT_THAT(report.problems, IsEmpty());
    EXPECT_FALSE(report.compaction.has_value());
  }
}

TEST_F(VerifyTest, WritesNothingAndRunsWhileAnotherProcessHoldsTheLock) {
  absl::StatusOr<std::unique_ptr<DataDir>> owner = OpenDataDir(posix_, data_);
  ASSERT_TRUE(owner.ok()) << owner.status();  // holds LOCK, as a server would
  ReadOnlyFileSystem read_only(posix_);
  const VerifyReport report = Verify(read_only, Deep());
  EXPECT_EQ(read_only.writes, 0);
  EXPECT_EQ(report.Count(BatchStatus::kOk), 3u);
}

TEST_F(VerifyTest, ChangedByteIsCaughtByTheChecksumWithoutDecoding) {
  const std::string path = dirs_[1] + "/spans.parquet";
  std::string bytes = Read(path);
  bytes[bytes.size() / 2] ^= 0x01;
  ASSERT_TRUE(WriteFile(posix_, path, bytes).ok());
  const VerifyReport report = Verify(Shallow());
  ExpectOnlyCorrupt(report, dirs_[1], "files", "spans.parquet");
  EXPECT_THAT(VerdictOf(report, dirs_[1]).message, HasSubstr("xxh3-64"));
}

// A page body changed and meta.json made to agree: nothing boot reads
// notices (the footer is intact), only decoding the page does.
TEST_F(VerifyTest, CorruptPageBodyIsCaughtOnlyByDeep) {
  const std::string path = dirs_[0] + "/spans.parquet";
  std::string bytes = Read(path);
  absl::StatusOr<uint64_t> at = verify_testing::PageBodyOffset(bytes, "name");
  ASSERT_TRUE(at.ok()) << at.status();
  bytes[*at] ^= 0x5a;
  ASSERT_TRUE(RewriteBatchFile(posix_, dirs_[0], "spans.parquet", bytes).ok());

  EXPECT_TRUE(Verify(Shallow()).Healthy());
  const VerifyReport deep = Verify(Deep());
  ExpectOnlyCorrupt(deep, dirs_[0], "decode", "spans.parquet");
  EXPECT_THAT(VerdictOf(deep, dirs_[0]).message, HasSubstr("spans.parquet"));
}

// rollups.parquet rewritten as a valid file whose counts differ from the
// batch's rows, meta.json made to agree: the footer is fine (shallow
// passes), only rolling the tables up again (deep) notices.
TEST_F(VerifyTest, RollupsThatDisagreeWithTheRowsAreCaughtOnlyByDeep) {
  const std::string path = dirs_[1] + "/rollups.parquet";
  const std::string bytes = Read(path);
  parquet::StringSource source(bytes);
  const std::string id = BatchIdOfDir(dirs_[1]);
  absl::StatusOr<rollups::RollupRows> rows = ReadRollupsTable(&source, id, "rollups.parquet");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_FALSE(rows->empty());
  // One more error than there were: still a valid row.
  rollups::RollupRow* changed = nullptr;
  for (rollups::RollupRow& row : *rows) {
    if (rollups::HasDurations(row.key.kind) && row.measures.errors < row.measures.count) {
      changed = &row;
      break;
    }
  }
  ASSERT_NE(changed, nullptr);
  ++changed->measures.errors;
  absl::StatusOr<std::string> rewritten = WriteRollupsTable(*rows, id);
  ASSERT_TRUE(rewritten.ok()) << rewritten.status();
  ASSERT_TRUE(RewriteBatchFile(posix_, dirs_[1], "rollups.parquet", *rewritten).ok());

  EXPECT_TRUE(Verify(Shallow()).Healthy());
  const VerifyReport deep = Verify(Deep());
  ExpectOnlyCorrupt(deep, dirs_[1], "rollups", "rollups.parquet");
  EXPECT_THAT(VerdictOf(deep, dirs_[1]).message, HasSubstr("roll up to"));
}

// DuckDB's read stands on its own: it counts the rows meta.json declares
// on a healthy file, and fails on another count and on a corrupt page.
TEST_F(VerifyTest, DuckDbCheckFailsOnACorruptPageAndOnAWrongRowCount) {
  const std::string path = dirs_[2] + "/logs.parquet";
  absl::StatusOr<std::string> meta_json = posix_.ReadFile(dirs_[2] + "/meta.json");
  ASSERT_TRUE(meta_json.ok());
  absl::StatusOr<BatchMeta> meta = ParseBatchMeta(*meta_json, BatchIdOfDir(dirs_[2]));
  ASSERT_TRUE(meta.ok()) << meta.status();
  const uint64_t rows = meta->logs.file_rows;
  ASSERT_GT(rows, 0u);
  EXPECT_TRUE(query::ReadParquetFileWithDuckDb(*engine_, path, rows).ok());
  const absl::Status miscounted = query::ReadParquetFileWithDuckDb(*engine_, path, rows + 1);
  EXPECT_EQ(miscounted.code(), absl::StatusCode::kDataLoss) << miscounted;
  EXPECT_THAT(std::string(miscounted.message()),
              HasSubstr(fmt::format("meta.json says {}", rows + 1)));

  std::string bytes = Read(path);
  absl::StatusOr<uint64_t> at = verify_testing::PageBodyOffset(bytes, "body_str");
  ASSERT_TRUE(at.ok()) << at.status();
  bytes[*at] ^= 0x5a;
  ASSERT_TRUE(RewriteBatchFile(posix_, dirs_[2], "logs.parquet", bytes).ok());
  const absl::Status corrupt = query::ReadParquetFileWithDuckDb(*engine_, path, rows);
  EXPECT_EQ(corrupt.code(), absl::StatusCode::kDataLoss) << corrupt;
  EXPECT_THAT(std::string(corrupt.message()), HasSubstr("DuckDB cannot read it"));
}

TEST_F(VerifyTest, CorruptFooterIsCaughtByShallow) {
  std::string bytes = Read(dirs_[2] + "/metrics.parquet");
  ASSERT_EQ(bytes.substr(bytes.size() - 4), "PAR1");
  bytes[bytes.size() - 1] = '2';
  ASSERT_TRUE(RewriteBatchFile(posix_, dirs_[2], "metrics.parquet", bytes).ok());
  ExpectOnlyCorrupt(Verify(Shallow()), dirs_[2], "footer", "metrics.parquet");
}

TEST_F(VerifyTest, MissingFileIsCaught) {
  ASSERT_TRUE(posix_.RemoveFile(dirs_[1] + "/logs.parquet").ok());
  const VerifyReport report = Verify(Shallow());
  ExpectOnlyCorrupt(report, dirs_[1], "files", "logs.parquet");
  EXPECT_THAT(VerdictOf(report, dirs_[1]).message, HasSubstr("missing"));
}

TEST_F(VerifyTest, ExtraFileIsCaught) {
  ASSERT_TRUE(WriteFile(posix_, dirs_[0] + "/notes.txt", "hi").ok());
  ExpectOnlyCorrupt(Verify(Shallow()), dirs_[0], "files", "notes.txt");
}

TEST_F(VerifyTest, BrokenMetaJsonIsCaught) {
  ASSERT_TRUE(WriteFile(posix_, dirs_[0] + "/meta.json", "{}").ok());
  ExpectOnlyCorrupt(Verify(Shallow()), dirs_[0], "meta.json", "meta.json");
}

class VerifyIndexTest : public VerifyTest {
 protected:
  void SetUp() override {
    VerifyTest::SetUp();
    if (HasFatalFailure()) return;
    dir_ = dirs_[1];
    absl::StatusOr<std::string> bytes = posix_.ReadFile(dir_ + "/spans.tidx");
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    absl::StatusOr<TraceIndex> index = TraceIndex::Open(*bytes);
    ASSERT_TRUE(index.ok()) << index.status();
    entries_.assign(index->entries().begin(), index->entries().end());
    span_rows_ = index->filter().span_rows();
    first_row_ = index->filter().first_covered_row();
    ASSERT_GE(entries_.size(), 3u);
  }

  // Writes spans.tidx from `entries` (meta.json made to agree).
  void WriteIndex(const std::vector<TraceIndexEntry>& entries) {
    absl::StatusOr<std::string> bytes =
        verify_testing::RebuildTraceIndex(entries, span_rows_, first_row_);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    ASSERT_TRUE(RewriteBatchFile(posix_, dir_, "spans.tidx", *bytes).ok());
  }

  // The first entry (after the first) whose trace has at least two spans.
  size_t EntryWithTwoRows() const {
    for (size_t k = 1; k + 1 < entries_.size(); ++k) {
      if (entries_[k + 1].first_row - entries_[k].first_row >= 2) return k;
    }
    ADD_FAILURE() << "no trace with two spans";
    return 1;
  }

  std::string dir_;
  std::vector<TraceIndexEntry> entries_;
  uint64_t span_rows_ = 0;
  uint64_t first_row_ = 0;
};

// Swapped entries break the index's own order: boot's checks catch it.
TEST_F(VerifyIndexTest, SwappedEntriesAreCaughtByShallow) {
  // BuildTraceIndex refuses unordered runs, so damage the bytes of a valid
  // index instead: the two ids swapped in place, checksum left stale.
  absl::StatusOr<std::string> bytes = posix_.ReadFile(dir_ + "/spans.tidx");
  ASSERT_TRUE(bytes.ok());
  const std::string a(reinterpret_cast<const char*>(entries_[1].trace_id.data()), 16);
  const std::string b(reinterpret_cast<const char*>(entries_[2].trace_id.data()), 16);
  std::string damaged = *bytes;
  const size_t at_a = damaged.find(a), at_b = damaged.find(b);
  ASSERT_NE(at_a, std::string::npos);
  ASSERT_NE(at_b, std::string::npos);
  damaged.replace(at_a, 16, b);
  damaged.replace(at_b, 16, a);
  ASSERT_TRUE(RewriteBatchFile(posix_, dir_, "spans.tidx", damaged).ok());
  ExpectOnlyCorrupt(Verify(Shallow()), dir_, "trace index", "spans.tidx");
}

// A well-formed index whose entry starts one row late: its counts agree
// with meta.json, so only comparing it with the rows shows the lie.
TEST_F(VerifyIndexTest, EntryCoveringTheWrongRowsIsCaughtOnlyByDeep) {
  std::vector<TraceIndexEntry> shifted = entries_;
  ++shifted[EntryWithTwoRows()].first_row;
  WriteIndex(shifted);
  EXPECT_TRUE(Verify(Shallow()).Healthy());
  const VerifyReport deep = Verify(Deep());
  ExpectOnlyCorrupt(deep, dir_, "index", "spans.tidx");
  EXPECT_THAT(VerdictOf(deep, dir_).message, HasSubstr("which holds trace"));
  const VerifyReport ranges = Verify(Deep(3));
  ExpectOnlyCorrupt(ranges, dir_, "index", "spans.tidx");
  EXPECT_THAT(VerdictOf(ranges, dir_).message, HasSubstr("which holds trace"));
}

TEST_F(VerifyIndexTest, EntryWithAnotherTraceIdIsCaughtOnlyByDeep) {
  std::vector<TraceIndexEntry> renamed = entries_;
  // Still between its neighbours, so the index stays well-formed.
  const size_t k = 1;
  ASSERT_LT(renamed[k - 1].trace_id, renamed[k].trace_id);
  otlp::TraceId id = renamed[k].trace_id;
  for (int i = 15; i >= 0 && id == renamed[k].trace_id; --i) {
    otlp::TraceId candidate = id;
    if (candidate[i] == 0) continue;
    --candidate[i];
    for (int j = i + 1; j < 16; ++j) candidate[j] = 0xff;
    if (renamed[k - 1].trace_id < candidate) id = candidate;
  }
  ASSERT_NE(id, renamed[k].trace_id);
  renamed[k].trace_id = id;
  WriteIndex(renamed);
  EXPECT_TRUE(Verify(Shallow()).Healthy());
  ExpectOnlyCorrupt(Verify(Deep()), dir_, "index", "spans.tidx");
}

// Two span rows out of order in an otherwise valid file (rewritten
// through the Parquet writer with meta.json made to agree).
TEST_F(VerifyTest, UnsortedSpansAreCaughtOnlyByDeep) {
  const std::string dir = dirs_[2];
  const std::string bytes = Read(dir + "/spans.parquet");
  absl::StatusOr<std::string> meta_json = posix_.ReadFile(dir + "/meta.json");
  ASSERT_TRUE(meta_json.ok());
  absl::StatusOr<BatchMeta> meta = ParseBatchMeta(*meta_json, BatchIdOfDir(dir));
  ASSERT_TRUE(meta.ok()) << meta.status();
  const size_t first = meta->spans.file_rows - meta->spans.rows;
  const std::string unsorted =
      table_testing::RewriteColumns(bytes, [first](std::vector<parquet::ColumnVector>& columns) {
        // The first span row's trace id swapped with that of the first row
        // of the next trace: the larger id now comes first.
        parquet::ColumnVector& ids = columns[kSpansTraceId];
        size_t other = first + 1;
        while (ids.bytes_at(other) == ids.bytes_at(first)) ++other;
        const auto at = [&ids](size_t row) { return ids.bytes.begin() + ids.offsets[row]; };
        std::swap_ranges(at(first), at(first) + 16, at(other));
      });
  ASSERT_FALSE(unsorted.empty());
  ASSERT_TRUE(RewriteBatchFile(posix_, dir, "spans.parquet", unsorted).ok());
  EXPECT_TRUE(Verify(Shallow()).Healthy());
  const VerifyReport deep = Verify(Deep());
  ExpectOnlyCorrupt(deep, dir, "decode", "spans.parquet");
  EXPECT_THAT(VerdictOf(deep, dir).message, HasSubstr("sort order"));

  // Two rows of one trace with their times swapped (the index still
  // agrees), read one row per range: the reader never sees them together,
  // so the order is checked across ranges.
  ASSERT_TRUE(RewriteBatchFile(posix_, dir, "spans.parquet", bytes).ok());
  const std::string swapped =
      table_testing::RewriteColumns(bytes, [first](std::vector<parquet::ColumnVector>& columns) {
        const parquet::ColumnVector& ids = columns[kSpansTraceId];
        std::vector<int64_t>& start = columns[kSpansStartTime].int64s;
        size_t r = first;
        while (r + 1 < ids.offsets.size() - 1 &&
               !(ids.bytes_at(r) == ids.bytes_at(r + 1) && start[r] < start[r + 1])) {
          ++r;
        }
        ASSERT_LT(r + 1, ids.offsets.size() - 1) << "no trace with two start times";
        std::swap(start[r], start[r + 1]);
        std::swap(columns[kSpansDuration].int64s[r], columns[kSpansDuration].int64s[r + 1]);
      });
  ASSERT_FALSE(swapped.empty());
  ASSERT_TRUE(RewriteBatchFile(posix_, dir, "spans.parquet", swapped).ok());
  EXPECT_TRUE(Verify(Shallow()).Healthy());
  ExpectOnlyCorrupt(Verify(Deep()), dir, "decode", "spans.parquet");
  const VerifyReport ranges = Verify(Deep(1));
  ExpectOnlyCorrupt(ranges, dir, "sort order", "spans.parquet");
  EXPECT_THAT(VerdictOf(ranges, dir).message, HasSubstr("sorts before row"));
}

// A span row whose scope_index belongs to another resource_index: the
// whole-range reader refuses it, and so does the check across ranges when
// the two rows are read apart.
TEST_F(VerifyTest, ScopeUnderTwoResourcesIsCaughtAcrossRanges) {
  const std::string dir = dirs_[0];
  const std::string bytes = Read(dir + "/spans.parquet");
  const std::string moved =
      table_testing::RewriteColumns(bytes, [](std::vector<parquet::ColumnVector>& columns) {
        parquet::ColumnVector& resources = columns[kSpansResourceScope + kResourceIndexOffset];
        const size_t last = resources.int32s.size() - 1;
        int32_t other = 0;
        for (int32_t r : resources.int32s) other = std::max(other, r);
        ASSERT_GT(other, 0) << "the test traffic needs two resources";
        resources.int32s[last] = resources.int32s[last] == other ? 0 : other;
      });
  ASSERT_FALSE(moved.empty());
  ASSERT_TRUE(RewriteBatchFile(posix_, dir, "spans.parquet", moved).ok());
  EXPECT_TRUE(Verify(Shallow()).Healthy());
  const VerifyReport deep = Verify(Deep());
  ExpectOnlyCorrupt(deep, dir, "decode", "spans.parquet");
  const VerifyReport ranges = Verify(Deep(1));
  ExpectOnlyCorrupt(ranges, dir, "decode", "spans.parquet");
  EXPECT_THAT(VerdictOf(ranges, dir).message, HasSubstr("appears with resource_index"));
}

// The rows of the highest resource_index (or scope_index) renumbered one
// higher, leaving a gap: each one-row range is consistent on its own, so
// only the density check across ranges can see it.
TEST_F(VerifyTest, IndexGapIsCaughtAcrossRanges) {
  const std::string dir = dirs_[0];
  const std::string bytes = Read(dir + "/spans.parquet");
  for (const auto& [offset, name] : {std::pair{kResourceIndexOffset, "resource_index"},
                                     std::pair{kScopeIndexOffset, "scope_index"}}) {
    SCOPED_TRACE(name);
    const std::string gapped = table_testing::RewriteColumns(
        bytes, [offset = offset](std::vector<parquet::ColumnVector>& columns) {
          std::vector<int32_t>& index = columns[kSpansResourceScope + offset].int32s;
          int32_t top = 0;
          for (int32_t v : index) top = std::max(top, v);
          ASSERT_GT(top, 0) << "the test traffic needs two owners";
          for (int32_t& v : index) v += v == top ? 1 : 0;
        });
    ASSERT_FALSE(gapped.empty());
    ASSERT_TRUE(RewriteBatchFile(posix_, dir, "spans.parquet", gapped).ok());
    EXPECT_TRUE(Verify(Shallow()).Healthy());
    ExpectOnlyCorrupt(Verify(Deep()), dir, "decode", "spans.parquet");
    const VerifyReport ranges = Verify(Deep(1));
    ExpectOnlyCorrupt(ranges, dir, "decode", "spans.parquet");
    EXPECT_THAT(VerdictOf(ranges, dir).message, HasSubstr(std::string(name) + " is not dense"));
  }
}

// The last log record turned into a scope placeholder: a placeholder after
// a record, which a one-row range cannot see by itself.
TEST_F(VerifyTest, LogPlaceholderAfterARecordIsCaughtAcrossRanges) {
  const std::string dir = dirs_[0];
  const std::string moved = table_testing::RewriteColumns(
      Read(dir + "/logs.parquet"), [](std::vector<parquet::ColumnVector>& columns) {
        std::vector<int32_t>& kinds = columns[kLogsRowKind].int32s;
        ASSERT_GE(kinds.size(), 2u);
        ASSERT_EQ(kinds[kinds.size() - 2], 0) << "the test traffic needs two log records";
        kinds.back() = 1;
      });
  ASSERT_FALSE(moved.empty());
  ASSERT_TRUE(RewriteBatchFile(posix_, dir, "logs.parquet", moved).ok());
  EXPECT_TRUE(Verify(Shallow()).Healthy());
  const VerifyReport ranges = Verify(Deep(1));
  ExpectOnlyCorrupt(ranges, dir, "decode", "logs.parquet");
  EXPECT_THAT(VerdictOf(ranges, dir).message, HasSubstr("placeholder row after a record row"));
  EXPECT_FALSE(Verify(Deep()).Healthy());
}

// A compaction output (spans merged by trace, logs in declared event-time
// order) passes in ranges of any size; two of its log records swapped in
// time are caught by the reader inside one range and by the check across
// ranges when each row is its own range.
TEST_F(VerifyTest, CompactedBatchIsCheckedAcrossRanges) {
  {
    absl::StatusOr<std::unique_ptr<Storage>> storage = Storage::Open(posix_, data_, {});
    ASSERT_TRUE(storage.ok()) << storage.status();
    absl::StatusOr<BatchMeta> output = verify_testing::CompactEverything(**storage);
    ASSERT_TRUE(output.ok()) << output.status();
    ASSERT_EQ((*storage)->Pin()->size(), 1u);
    dirs_ = {(*storage)->Pin()->batches()[0]->dir()};
  }
  for (uint64_t chunk_rows : {kDeepCheckChunkRows, uint64_t{7}, uint64_t{1}}) {
    const VerifyReport report = Verify(Deep(chunk_rows));
    ASSERT_EQ(report.batches.size(), 1u);
    EXPECT_EQ(report.batches[0].status, BatchStatus::kOk)
        << chunk_rows << ": " << report.batches[0].check << ": " << report.batches[0].message;
  }
  const std::string dir = dirs_[0];
  const std::string swapped = table_testing::RewriteColumns(
      Read(dir + "/logs.parquet"), [](std::vector<parquet::ColumnVector>& columns) {
        std::vector<int64_t>& time = columns[kLogsTime].int64s;
        std::vector<int64_t>& observed = columns[kLogsObservedTime].int64s;
        const std::vector<int32_t>& kinds = columns[kLogsRowKind].int32s;
        const auto event = [&](size_t r) {
          return LogEventTime(static_cast<uint64_t>(time[r]), static_cast<uint64_t>(observed[r]));
        };
        size_t r = 0;
        while (r + 1 < kinds.size() && !(kinds[r] == 0 && event(r) < event(r + 1))) ++r;
        ASSERT_LT(r + 1, kinds.size()) << "no two records with different times";
        std::swap(time[r], time[r + 1]);
        std::swap(observed[r], observed[r + 1]);
      });
  ASSERT_FALSE(swapped.empty());
  ASSERT_TRUE(RewriteBatchFile(posix_, dir, "logs.parquet", swapped).ok());
  EXPECT_TRUE(Verify(Shallow()).Healthy());
  ExpectOnlyCorrupt(Verify(Deep()), dir, "decode", "logs.parquet");
  const VerifyReport ranges = Verify(Deep(1));
  ExpectOnlyCorrupt(ranges, dir, "decode", "logs.parquet");
  EXPECT_THAT(VerdictOf(ranges, dir).message, HasSubstr("against the declared event_time order"));
}

TEST_F(VerifyTest, BatchRemovedWhileCheckedIsGoneNotCorrupt) {
  for (const char* file : {"meta.json", "spans.parquet", "metrics.parquet"}) {
    SCOPED_TRACE(file);
    const std::string victim = dirs_[1];
    VanishingBatchFileSystem vanishing(posix_, victim, file);
    const VerifyReport report = Verify(vanishing, Deep());
    ASSERT_TRUE(vanishing.vanished);
    EXPECT_EQ(VerdictOf(report, victim).status, BatchStatus::kGone);
    EXPECT_EQ(report.Count(BatchStatus::kOk), report.batches.size() - 1);
    EXPECT_TRUE(report.Healthy());
    // Put the victim back for the next round (a fresh copy of a sibling
    // would not match its id, so write new batches instead).
    dirs_.erase(std::find(dirs_.begin(), dirs_.end(), victim));
    absl::StatusOr<std::vector<std::string>> more =
        verify_testing::WriteTrafficBatches(posix_, data_, 1, 100, 99);
    ASSERT_TRUE(more.ok()) << more.status();
    dirs_ = *more;
  }
}

TEST_F(VerifyTest, DayRemovedWhileListedIsLeftOutOnlyWhenConcurrent) {
  const DataDirPaths paths(data_);
  const std::string day = verify_testing::DayOfDir(dirs_[0]);
  class VanishingDay final : public ForwardingFileSystem {
   public:
    VanishingDay(FileSystem& base, std::string day_dir)
        : ForwardingFileSystem(base), day_dir_(std::move(day_dir)) {}
    absl::StatusOr<std::vector<std::string>> ListDir(const std::string& path) override {
      if (path == day_dir_) (void)base().RemoveAll(day_dir_);
      return base().ListDir(path);
    }

   private:
    std::string day_dir_;
  } vanishing(posix_, paths.Day(day));
  absl::StatusOr<DaysListing> concurrent = ListDays(vanishing, paths, /*concurrent=*/true);
  ASSERT_TRUE(concurrent.ok()) << concurrent.status();
  EXPECT_THAT(concurrent->days, IsEmpty());
  ASSERT_TRUE(verify_testing::WriteTrafficBatches(posix_, data_, 1, 50).ok());
  absl::StatusOr<DaysListing> boot = ListDays(vanishing, paths, /*concurrent=*/false);
  EXPECT_TRUE(absl::IsNotFound(boot.status())) << boot.status();
}

TEST_F(VerifyTest, StrayEntriesAreReportedAsStrayNotCorruption) {
  const DataDirPaths paths(data_);
  const std::string day = verify_testing::DayOfDir(dirs_[0]);
  ASSERT_TRUE(WriteFile(posix_, paths.Day(day) + "/stray.tmp", "").ok());
  ASSERT_TRUE(posix_.CreateDir(paths.Days() + "/backup").ok());
  ASSERT_TRUE(posix_.CreateDir(paths.Telemetry() + "/junk").ok());
  const VerifyReport report = Verify(Shallow());
  EXPECT_EQ(report.Count(BatchStatus::kOk), 3u);
  EXPECT_THAT(report.problems, IsEmpty());
  ASSERT_EQ(report.strays.size(), 3u);
  // In listing order: telemetry/'s top, then days/ (the day's digits sort
  // before "backup", and a day's entries come with it).
  EXPECT_EQ(report.strays[0].path, "junk");
  EXPECT_EQ(report.strays[1].path, "days/" + day + "/stray.tmp");
  EXPECT_THAT(report.strays[1].expected, HasSubstr("<id>.batch"));
  EXPECT_EQ(report.strays[2].path, "days/backup");
  EXPECT_TRUE(report.Healthy());
}

TEST_F(VerifyTest, ReportsALiveCompactionMarkerAndRefusesAnUnreadableOne) {
  const DataDirPaths paths(data_);
  const std::string marker = fmt::format(
      R"({{"format":1,"day":"{}","output":"20991231235959999999100","inputs":["{}","{}"]}})",
      verify_testing::DayOfDir(dirs_[0]), BatchIdOfDir(dirs_[0]), BatchIdOfDir(dirs_[1]));
  ASSERT_TRUE(WriteFile(posix_, paths.CompactionMarker(), marker).ok());
  VerifyReport report = Verify(Shallow());
  ASSERT_TRUE(report.compaction.has_value());
  EXPECT_EQ(report.compaction->output.ToString(), "20991231235959999999100");
  ASSERT_EQ(report.compaction->inputs.size(), 2u);
  EXPECT_EQ(report.compaction->inputs[1].ToString(), BatchIdOfDir(dirs_[1]));
  EXPECT_TRUE(report.Healthy());  // a marker is what a running compaction leaves

  ASSERT_TRUE(WriteFile(posix_, paths.CompactionMarker(), "{\"format\":1}").ok());
  report = Verify(Shallow());
  EXPECT_FALSE(report.compaction.has_value());
  ASSERT_EQ(report.problems.size(), 1u);
  EXPECT_THAT(report.problems[0].message, HasSubstr("unreadable"));
  EXPECT_FALSE(report.Healthy());
}

TEST_F(VerifyTest, RefusesWhatIsNotADataDirectory) {
  absl::StatusOr<VerifyReport> missing =
      VerifyDataDir(posix_, temp_.path() + "/nowhere", Shallow());
  EXPECT_TRUE(absl::IsFailedPrecondition(missing.status())) << missing.status();
  ASSERT_TRUE(posix_.CreateDir(temp_.path() + "/plain").ok());
  absl::StatusOr<VerifyReport> plain = VerifyDataDir(posix_, temp_.path() + "/plain", Shallow());
  EXPECT_TRUE(absl::IsFailedPrecondition(plain.status())) << plain.status();
  EXPECT_THAT(std::string(plain.status().message()), HasSubstr("no FORMAT"));
  EXPECT_FALSE(posix_.Exists(temp_.path() + "/plain/LOCK").value_or(true));
}

}  // namespace
}  // namespace strata::storage
