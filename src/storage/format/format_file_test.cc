#include "storage/format/format_file.h"

#include <random>
#include <string>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/fault_injection_file_system.h"
#include "io/posix_file_system.h"

namespace strata::storage {
namespace {

using ::testing::HasSubstr;

class FormatFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::random_device random;
    root_ = fmt::format("{}strata_storage_{}_{:x}", ::testing::TempDir(), info->name(), random());
    ASSERT_TRUE(fs_.CreateDir(root_).ok());
    data_ = root_ + "/data";
  }
  void TearDown() override { EXPECT_TRUE(fs_.RemoveAll(root_).ok()); }

  std::string Path(std::string_view name) const { return fmt::format("{}/{}", data_, name); }

  void ExpectRefused(std::string_view what, std::string_view anchor) {
    absl::StatusOr<DataDirState> state = CheckOrInitializeDataDir(fs_, data_);
    ASSERT_FALSE(state.ok());
    EXPECT_EQ(state.status().code(), absl::StatusCode::kFailedPrecondition);
    const std::string message(state.status().message());
    EXPECT_THAT(message, HasSubstr(data_));
    EXPECT_THAT(message, HasSubstr(what));
    EXPECT_THAT(message, HasSubstr(fmt::format("see docs/operations.md#{}", anchor)));
  }

  void ExpectInitialized() {
    for (const char* dir :
         {"telemetry/staging", "telemetry/days", "telemetry/quarantine", "query", "control"}) {
      EXPECT_TRUE(*fs_.IsDirectory(Path(dir))) << dir;
    }
    EXPECT_EQ(*fs_.ReadFile(Path("FORMAT")), "{\"format\":1}\n");
    EXPECT_FALSE(*fs_.Exists(Path("FORMAT.tmp")));
  }

  PosixFileSystem fs_;
  std::string root_;
  std::string data_;
};

TEST_F(FormatFileTest, MissingDirectoryIsInitialized) {
  absl::StatusOr<DataDirState> state = CheckOrInitializeDataDir(fs_, data_);
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(*state, DataDirState::kInitialized);
  ExpectInitialized();
  EXPECT_EQ(kFormatFileContents.size(), 13u);  // 12 + newline

  state = CheckOrInitializeDataDir(fs_, data_);
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(*state, DataDirState::kExisting);
}

TEST_F(FormatFileTest, EmptyDirectoryIsInitialized) {
  ASSERT_TRUE(fs_.CreateDir(data_).ok());
  absl::StatusOr<DataDirState> state = CheckOrInitializeDataDir(fs_, data_);
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(*state, DataDirState::kInitialized);
  ExpectInitialized();
}

TEST_F(FormatFileTest, InterruptedInitializationIsCompleted) {
  ASSERT_TRUE(fs_.CreateDirs(Path("telemetry/days")).ok());
  ASSERT_TRUE(fs_.CreateDirs(Path("query")).ok());
  ASSERT_TRUE(WriteFile(fs_, Path("LOCK"), "").ok());
  ASSERT_TRUE(WriteFile(fs_, Path("FORMAT.tmp"), "{\"for").ok());
  absl::StatusOr<DataDirState> state = CheckOrInitializeDataDir(fs_, data_);
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(*state, DataDirState::kInitialized);
  ExpectInitialized();
  EXPECT_TRUE(*fs_.Exists(Path("LOCK")));
}

TEST_F(FormatFileTest, ForeignDirectoryIsRefused) {
  ASSERT_TRUE(fs_.CreateDir(data_).ok());
  ASSERT_TRUE(WriteFile(fs_, Path("notes.txt"), "mine").ok());
  ExpectRefused("not a strata data directory", "not-a-strata-data-directory");
  EXPECT_FALSE(*fs_.Exists(Path("telemetry")));  // nothing written
}

TEST_F(FormatFileTest, NonEmptySubdirectoryWithoutFormatIsRefused) {
  ASSERT_TRUE(fs_.CreateDirs(Path("telemetry/days/2025-06-14")).ok());
  ExpectRefused("telemetry/days is not an empty directory", "not-a-strata-data-directory");
  ASSERT_TRUE(fs_.RemoveAll(Path("telemetry")).ok());
  ASSERT_TRUE(fs_.CreateDirs(Path("telemetry/other")).ok());
  ExpectRefused("telemetry/\"other\"", "not-a-strata-data-directory");
  ASSERT_TRUE(fs_.RemoveAll(Path("telemetry")).ok());
  ASSERT_TRUE(fs_.CreateDirs(Path("control")).ok());
  ASSERT_TRUE(WriteFile(fs_, Path("control/strata.sqlite"), "x").ok());
  ExpectRefused("\"control\" is not an empty directory", "not-a-strata-data-directory");
}

TEST_F(FormatFileTest, DataDirThatIsAFileIsRefused) {
  ASSERT_TRUE(WriteFile(fs_, data_, "x").ok());
  ExpectRefused("not a directory", "not-a-strata-data-directory");
}

TEST_F(FormatFileTest, NewerFormatIsRefused) {
  ASSERT_TRUE(fs_.CreateDir(data_).ok());
  ASSERT_TRUE(WriteFile(fs_, Path("FORMAT"), "{\"format\":2}\n").ok());
  ExpectRefused("newer strata (format 2)", "data-directory-from-a-newer-strata");
  // A newer format may carry members format 1 does not know.
  ASSERT_TRUE(WriteFile(fs_, Path("FORMAT"), "{\"format\":7,\"x\":true}\n").ok());
  ExpectRefused("newer strata (format 7)", "data-directory-from-a-newer-strata");
  ASSERT_TRUE(WriteFile(fs_, Path("FORMAT"), "{\"format\":18446744073709551615}").ok());
  ExpectRefused("newer strata (format 18446744073709551615)", "data-directory-from-a-newer-strata");
  EXPECT_EQ(*fs_.ReadFile(Path("FORMAT")), "{\"format\":18446744073709551615}");  // not rewritten
}

TEST_F(FormatFileTest, UnrecognisedFormatIsRefused) {
  ASSERT_TRUE(fs_.CreateDir(data_).ok());
  for (const char* contents :
       {"", "format 1", "[1]", "{}", "{\"format\":\"1\"}", "{\"format\":1.0}", "{\"format\":0}",
        "{\"format\":-1}", "{\"format\":1,\"x\":2}", "{\"format\":1,\"format\":1}",
        "{\"format\":1}{}", "{\"format\":null}", "{\"format\":1e400}",
        "{\"format\":100000000000000000000000}", "\xff{\"format\":1}"}) {
    ASSERT_TRUE(WriteFile(fs_, Path("FORMAT"), contents).ok());
    SCOPED_TRACE(contents);
    ExpectRefused("FORMAT is not recognised", "format-not-recognised");
  }
  ASSERT_TRUE(WriteFile(fs_, Path("FORMAT"), std::string(5000, ' ') + "{\"format\":1}").ok());
  ExpectRefused("5012 bytes", "format-not-recognised");
  ASSERT_TRUE(fs_.RemoveFile(Path("FORMAT")).ok());
  ASSERT_TRUE(fs_.CreateDir(Path("FORMAT")).ok());
  ExpectRefused("FORMAT is a directory", "format-not-recognised");
}

TEST_F(FormatFileTest, FormatOneIsAcceptedAsJson) {
  EXPECT_TRUE(CheckFormatFileContents("{\"format\":1}\n", "d").ok());
  EXPECT_TRUE(CheckFormatFileContents("{\"format\":1}", "d").ok());
  EXPECT_TRUE(CheckFormatFileContents(" { \"format\" : 1 }\n\n", "d").ok());
}

// Crash at every sync of initialisation: whatever survives is either a
// complete format-1 directory or one that boot initialises again.
TEST_F(FormatFileTest, CrashDuringInitializationAlwaysRecovers) {
  for (uint64_t syncs = 0;; ++syncs) {
    SCOPED_TRACE(fmt::format("crash after {} syncs", syncs));
    FaultInjectionFileSystem faulty(&fs_, syncs);
    faulty.CrashAfterSyncs(syncs);
    const absl::StatusOr<DataDirState> first = CheckOrInitializeDataDir(faulty, data_);
    const bool crashed = faulty.crash_point_reached();
    ASSERT_TRUE(faulty.SimulateCrash().ok());
    absl::StatusOr<DataDirState> second = CheckOrInitializeDataDir(faulty, data_);
    ASSERT_TRUE(second.ok()) << second.status();
    ExpectInitialized();
    if (!crashed) {
      ASSERT_TRUE(first.ok()) << first.status();
      EXPECT_EQ(*second, DataDirState::kExisting);
      break;
    }
    ASSERT_TRUE(fs_.RemoveAll(data_).ok());
    ASSERT_LT(syncs, 20u);
  }
}

TEST_F(FormatFileTest, IoFailureIsReportedNotRefused) {
  FaultInjectionFileSystem faulty(&fs_, 1);
  faulty.SetDiskGone(true);
  const absl::StatusOr<DataDirState> state = CheckOrInitializeDataDir(faulty, data_);
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(state.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace strata::storage
