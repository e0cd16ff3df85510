#include "io/posix_file_system.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A fresh directory per test under the GoogleTest temp dir, removed after.
class PosixFileSystemTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::random_device random;
    for (int attempt = 0; attempt < 10; ++attempt) {
      root_ = fmt::format("{}strata_io_{}_{}_{:x}", ::testing::TempDir(), info->test_suite_name(),
                          info->name(), random());
      absl::Status created = fs_.CreateDir(root_);
      if (created.ok()) return;
      ASSERT_TRUE(absl::IsAlreadyExists(created)) << created;
    }
    FAIL() << "no unique temp dir";
  }
  void TearDown() override { EXPECT_TRUE(fs_.RemoveAll(root_).ok()); }

  std::string Path(std::string_view name) const { return fmt::format("{}/{}", root_, name); }

  PosixFileSystem fs_;
  std::string root_;
};

std::string Pattern(size_t size, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string out(size, '\0');
  for (char& c : out) c = static_cast<char>(rng());
  return out;
}

TEST_F(PosixFileSystemTest, AppendedBytesReadBackWholeAndBySize) {
  // Mix small appends that stay in the buffer with one larger than it.
  std::string expected;
  auto file = fs_.NewWritableFile(Path("f"));
  ASSERT_TRUE(file.ok()) << file.status();
  for (size_t size : {size_t{10}, size_t{1000}, PosixFileSystem::kWriteBufferBytes * 3 + 7,
                      size_t{1}, PosixFileSystem::kWriteBufferBytes - 1}) {
    std::string chunk = Pattern(size, static_cast<uint32_t>(size));
    ASSERT_TRUE((*file)->Append(chunk).ok());
    expected += chunk;
  }
  EXPECT_EQ((*file)->size(), expected.size());
  ASSERT_TRUE((*file)->Sync().ok());
  ASSERT_TRUE((*file)->Close().ok());

  auto read = fs_.ReadFile(Path("f"));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, expected);
  auto size = fs_.FileSize(Path("f"));
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, expected.size());
}

TEST_F(PosixFileSystemTest, EmptyFileReadsAsEmpty) {
  ASSERT_TRUE(WriteFile(fs_, Path("empty"), "").ok());
  auto read = fs_.ReadFile(Path("empty"));
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, "");
}

TEST_F(PosixFileSystemTest, FlushMakesBufferedBytesVisibleToReaders) {
  auto file = fs_.NewWritableFile(Path("f"));
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append("buffered").ok());
  EXPECT_EQ(*fs_.ReadFile(Path("f")), "");
  ASSERT_TRUE((*file)->Flush().ok());
  EXPECT_EQ(*fs_.ReadFile(Path("f")), "buffered");
  ASSERT_TRUE((*file)->Close().ok());
}

TEST_F(PosixFileSystemTest, RandomAccessReadsRangesAndStopsAtEndOfFile) {
  std::string data = Pattern(100000, 7);
  ASSERT_TRUE(WriteFile(fs_, Path("f"), data).ok());
  auto file = fs_.NewRandomAccessFile(Path("f"));
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(*(*file)->Size(), data.size());

  auto middle = (*file)->ReadExact(12345, 5000);
  ASSERT_TRUE(middle.ok()) << middle.status();
  EXPECT_EQ(*middle, data.substr(12345, 5000));

  std::string tail(500, '\0');
  auto got = (*file)->Read(data.size() - 100, tail.size(), tail.data());
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, 100u);
  EXPECT_EQ(tail.substr(0, 100), data.substr(data.size() - 100));

  auto past_end = (*file)->ReadExact(data.size() - 10, 11);
  EXPECT_EQ(past_end.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(past_end.status().message()), HasSubstr(Path("f")));
}

TEST_F(PosixFileSystemTest, ConcurrentReadersSeeTheSameBytes) {
  std::string data = Pattern(1 << 20, 11);
  ASSERT_TRUE(WriteFile(fs_, Path("f"), data).ok());
  auto file = fs_.NewRandomAccessFile(Path("f"));
  ASSERT_TRUE(file.ok());
  const RandomAccessFile& shared = **file;
  std::vector<std::thread> threads;
  threads.reserve(4);
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      for (int i = 0; i < 200; ++i) {
        size_t offset = rng() % data.size();
        size_t n = rng() % 4096;
        auto got = shared.ReadExact(offset, std::min(n, data.size() - offset));
        if (!got.ok() || *got != data.substr(offset, got->size())) ++mismatches[t];
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_THAT(mismatches, ElementsAre(0, 0, 0, 0));
}

TEST_F(PosixFileSystemTest, MissingFileIsNotFoundNamingPathAndErrno) {
  auto read = fs_.ReadFile(Path("missing"));
  EXPECT_EQ(read.status().code(), absl::StatusCode::kNotFound);
  std::string message(read.status().message());
  EXPECT_THAT(message, HasSubstr(Path("missing")));
  EXPECT_THAT(message, HasSubstr("No such file or directory"));
  EXPECT_THAT(message, HasSubstr("ENOENT"));
  EXPECT_EQ(ErrnoOf(read.status()), ENOENT);

  EXPECT_TRUE(absl::IsNotFound(fs_.NewRandomAccessFile(Path("missing")).status()));
  EXPECT_TRUE(absl::IsNotFound(fs_.FileSize(Path("missing")).status()));
  EXPECT_TRUE(absl::IsNotFound(fs_.RemoveFile(Path("missing"))));
  EXPECT_TRUE(absl::IsNotFound(fs_.RemoveAll(Path("missing"))));
  EXPECT_TRUE(absl::IsNotFound(fs_.SyncDir(Path("missing"))));
  EXPECT_TRUE(absl::IsNotFound(fs_.ListDir(Path("missing")).status()));
  EXPECT_TRUE(absl::IsNotFound(fs_.NewWritableFile(Path("no/dir/file")).status()));
}

TEST_F(PosixFileSystemTest, CreateExclusiveRefusesAnExistingFile) {
  ASSERT_TRUE(WriteFile(fs_, Path("f"), "old").ok());
  auto file = fs_.NewWritableFile(Path("f"), WriteMode::kCreateExclusive);
  EXPECT_EQ(file.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(*fs_.ReadFile(Path("f")), "old");
  EXPECT_TRUE(fs_.NewWritableFile(Path("g"), WriteMode::kCreateExclusive).ok());
}

TEST_F(PosixFileSystemTest, CreateOrTruncateReplacesOldContent) {
  ASSERT_TRUE(WriteFile(fs_, Path("f"), "much longer old content").ok());
  ASSERT_TRUE(WriteFile(fs_, Path("f"), "new").ok());
  EXPECT_EQ(*fs_.ReadFile(Path("f")), "new");
}

TEST_F(PosixFileSystemTest, RenameReplacesTheTarget) {
  ASSERT_TRUE(WriteFile(fs_, Path("a"), "A").ok());
  ASSERT_TRUE(WriteFile(fs_, Path("b"), "B").ok());
  ASSERT_TRUE(fs_.RenameFile(Path("a"), Path("b")).ok());
  EXPECT_FALSE(*fs_.Exists(Path("a")));
  EXPECT_EQ(*fs_.ReadFile(Path("b")), "A");
}

TEST_F(PosixFileSystemTest, RenameMovesADirectoryWithItsContents) {
  ASSERT_TRUE(fs_.CreateDirs(Path("staging/x")).ok());
  ASSERT_TRUE(WriteFile(fs_, Path("staging/x/data"), "rows").ok());
  ASSERT_TRUE(fs_.CreateDir(Path("days")).ok());
  ASSERT_TRUE(fs_.RenameFile(Path("staging/x"), Path("days/x.batch")).ok());
  EXPECT_EQ(*fs_.ReadFile(Path("days/x.batch/data")), "rows");
  EXPECT_FALSE(*fs_.Exists(Path("staging/x")));
}

TEST_F(PosixFileSystemTest, RenameIntoMissingDirectoryIsNotFoundNamingBothPaths) {
  ASSERT_TRUE(WriteFile(fs_, Path("a"), "A").ok());
  absl::Status status = fs_.RenameFile(Path("a"), Path("nowhere/a"));
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(status.message()), HasSubstr(Path("a")));
  EXPECT_THAT(std::string(status.message()), HasSubstr(Path("nowhere/a")));
  EXPECT_EQ(*fs_.ReadFile(Path("a")), "A");
}

TEST_F(PosixFileSystemTest, RenameOfMissingSourceIsNotFound) {
  EXPECT_TRUE(absl::IsNotFound(fs_.RenameFile(Path("missing"), Path("b"))));
}

TEST_F(PosixFileSystemTest, ListDirIsSortedAndOmitsDots) {
  for (const char* name : {"zeta", "alpha", "Mid", "beta"}) {
    ASSERT_TRUE(WriteFile(fs_, Path(name), name).ok());
  }
  ASSERT_TRUE(fs_.CreateDir(Path("dir")).ok());
  auto names = fs_.ListDir(root_);
  ASSERT_TRUE(names.ok());
  EXPECT_THAT(*names, ElementsAre("Mid", "alpha", "beta", "dir", "zeta"));
}

TEST_F(PosixFileSystemTest, ListDirOfAFileFails) {
  ASSERT_TRUE(WriteFile(fs_, Path("f"), "x").ok());
  auto names = fs_.ListDir(Path("f"));
  EXPECT_FALSE(names.ok());
  EXPECT_EQ(ErrnoOf(names.status()), ENOTDIR);
}

TEST_F(PosixFileSystemTest, CreateDirRefusesAnExistingPath) {
  ASSERT_TRUE(fs_.CreateDir(Path("d")).ok());
  EXPECT_EQ(fs_.CreateDir(Path("d")).code(), absl::StatusCode::kAlreadyExists);
}

TEST_F(PosixFileSystemTest, CreateDirsCreatesAncestorsAndAcceptsExistingDirectories) {
  ASSERT_TRUE(fs_.CreateDirs(Path("a/b/c")).ok());
  EXPECT_TRUE(*fs_.IsDirectory(Path("a/b/c")));
  EXPECT_TRUE(fs_.CreateDirs(Path("a/b/c")).ok());
  EXPECT_TRUE(fs_.CreateDirs(Path("a/b/c/")).ok());
  EXPECT_TRUE(fs_.CreateDirs(Path("a/b/d")).ok());
  EXPECT_TRUE(*fs_.IsDirectory(Path("a/b/d")));
}

TEST_F(PosixFileSystemTest, CreateDirsThroughAFileFails) {
  ASSERT_TRUE(WriteFile(fs_, Path("f"), "x").ok());
  absl::Status status = fs_.CreateDirs(Path("f/sub"));
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(ErrnoOf(status), ENOTDIR);
  EXPECT_FALSE(fs_.CreateDirs(Path("f")).ok());
}

TEST_F(PosixFileSystemTest, RemoveDirOfNonEmptyDirectoryIsFailedPrecondition) {
  ASSERT_TRUE(fs_.CreateDir(Path("d")).ok());
  ASSERT_TRUE(WriteFile(fs_, Path("d/f"), "x").ok());
  EXPECT_EQ(fs_.RemoveDir(Path("d")).code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(fs_.RemoveFile(Path("d/f")).ok());
  EXPECT_TRUE(fs_.RemoveDir(Path("d")).ok());
  EXPECT_FALSE(*fs_.Exists(Path("d")));
}

TEST_F(PosixFileSystemTest, RemoveFileRefusesADirectory) {
  ASSERT_TRUE(fs_.CreateDir(Path("d")).ok());
  EXPECT_FALSE(fs_.RemoveFile(Path("d")).ok());
  EXPECT_TRUE(*fs_.Exists(Path("d")));
}

TEST_F(PosixFileSystemTest, RemoveAllRemovesATreeOrASingleFile) {
  ASSERT_TRUE(fs_.CreateDirs(Path("t/a/b")).ok());
  ASSERT_TRUE(WriteFile(fs_, Path("t/a/b/f"), "x").ok());
  ASSERT_TRUE(WriteFile(fs_, Path("t/g"), "y").ok());
  ASSERT_TRUE(fs_.RemoveAll(Path("t")).ok());
  EXPECT_FALSE(*fs_.Exists(Path("t")));
  ASSERT_TRUE(WriteFile(fs_, Path("single"), "z").ok());
  ASSERT_TRUE(fs_.RemoveAll(Path("single")).ok());
  EXPECT_FALSE(*fs_.Exists(Path("single")));
}

TEST_F(PosixFileSystemTest, ExistsAndIsDirectoryDistinguishKinds) {
  ASSERT_TRUE(WriteFile(fs_, Path("f"), "x").ok());
  ASSERT_TRUE(fs_.CreateDir(Path("d")).ok());
  EXPECT_TRUE(*fs_.Exists(Path("f")));
  EXPECT_TRUE(*fs_.Exists(Path("d")));
  EXPECT_FALSE(*fs_.Exists(Path("missing")));
  EXPECT_FALSE(*fs_.Exists(Path("f/under-a-file")));
  EXPECT_FALSE(*fs_.IsDirectory(Path("f")));
  EXPECT_TRUE(*fs_.IsDirectory(Path("d")));
  EXPECT_TRUE(absl::IsNotFound(fs_.IsDirectory(Path("missing")).status()));
  EXPECT_FALSE(fs_.FileSize(Path("d")).ok());
  EXPECT_FALSE(fs_.ReadFile(Path("d")).ok());
}

TEST_F(PosixFileSystemTest, SyncDirWorksOnADirectory) {
  ASSERT_TRUE(WriteFile(fs_, Path("f"), "x").ok());
  EXPECT_TRUE(fs_.SyncDir(root_).ok());
  EXPECT_FALSE(fs_.SyncDir(Path("f")).ok());
}

TEST_F(PosixFileSystemTest, ClosedFileRefusesFurtherUse) {
  auto file = fs_.NewWritableFile(Path("f"));
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Close().ok());
  EXPECT_EQ((*file)->Append("x").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ((*file)->Sync().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ((*file)->Close().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(PosixFileSystemTest, CloseFlushesBufferedBytes) {
  auto file = fs_.NewWritableFile(Path("f"));
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append("tail").ok());
  ASSERT_TRUE((*file)->Close().ok());
  EXPECT_EQ(*fs_.ReadFile(Path("f")), "tail");
}

// /dev/full fails every write with ENOSPC: a real disk-full error.
TEST_F(PosixFileSystemTest, DiskFullIsUnavailableAndPoisonsTheFile) {
  if (!*fs_.Exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  auto file = fs_.NewWritableFile("/dev/full");
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_TRUE((*file)->Append("buffered").ok());
  absl::Status flushed = (*file)->Flush();
  EXPECT_EQ(flushed.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(ErrnoOf(flushed), ENOSPC);
  EXPECT_THAT(std::string(flushed.message()), HasSubstr("/dev/full"));
  EXPECT_THAT(std::string(flushed.message()), HasSubstr("ENOSPC"));
  // Invariant 4: the first error sticks.
  absl::Status appended = (*file)->Append("more");
  EXPECT_EQ(ErrnoOf(appended), ENOSPC);
  EXPECT_EQ(ErrnoOf((*file)->Sync()), ENOSPC);
  EXPECT_TRUE((*file)->Close().ok());
}

TEST_F(PosixFileSystemTest, LockFileCreatesTheFileAndExcludesASecondHolder) {
  auto first = fs_.LockFile(Path("LOCK"));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ((*first)->path(), Path("LOCK"));
  EXPECT_EQ(*fs_.ReadFile(Path("LOCK")), "");

  // A second descriptor in the same process conflicts (flock, not fcntl).
  auto second = fs_.LockFile(Path("LOCK"));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(ErrnoOf(second.status()), EWOULDBLOCK);
  EXPECT_THAT(second.status().message(), HasSubstr(Path("LOCK")));

  first->reset();
  auto third = fs_.LockFile(Path("LOCK"));
  EXPECT_TRUE(third.ok()) << third.status();
}

TEST_F(PosixFileSystemTest, LockFileKeepsExistingContentAndRefusesADirectory) {
  ASSERT_TRUE(WriteFile(fs_, Path("LOCK"), "kept").ok());
  auto lock = fs_.LockFile(Path("LOCK"));
  ASSERT_TRUE(lock.ok()) << lock.status();
  EXPECT_EQ(*fs_.ReadFile(Path("LOCK")), "kept");

  ASSERT_TRUE(fs_.CreateDir(Path("dir")).ok());
  auto on_dir = fs_.LockFile(Path("dir"));
  ASSERT_FALSE(on_dir.ok());
  EXPECT_EQ(ErrnoOf(on_dir.status()), EISDIR);
}

// Runs `body` in a forked child and returns its exit status (or -1).
template <typename Body>
int RunInChild(Body body) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

TEST_F(PosixFileSystemTest, LockFileExcludesOtherProcessesAndDiesWithTheHolder) {
  const std::string path = Path("LOCK");
  {
    auto lock = fs_.LockFile(path);
    ASSERT_TRUE(lock.ok()) << lock.status();
    // 3: the child was refused with EWOULDBLOCK.
    EXPECT_EQ(RunInChild([&] {
                PosixFileSystem child_fs;
                auto child_lock = child_fs.LockFile(path);
                return child_lock.ok() ? 0 : ErrnoOf(child_lock.status()) == EWOULDBLOCK ? 3 : 4;
              }),
              3);
  }
  // A child that takes the lock and exits without releasing it leaves no
  // stale lock: the kernel drops it with the process.
  EXPECT_EQ(RunInChild([&] {
              PosixFileSystem child_fs;
              auto child_lock = child_fs.LockFile(path);
              if (!child_lock.ok()) return 5;
              (void)child_lock->release();  // leaked on purpose: the process exit must free it
              return 0;
            }),
            0);
  auto lock = fs_.LockFile(path);
  EXPECT_TRUE(lock.ok()) << lock.status();
}

TEST(ErrnoToStatusTest, MapsErrnoToCodesAndKeepsTheText) {
  struct Case {
    int error_number;
    absl::StatusCode code;
  };
  for (Case c :
       {Case{ENOENT, absl::StatusCode::kNotFound}, Case{ENOTDIR, absl::StatusCode::kNotFound},
        Case{EEXIST, absl::StatusCode::kAlreadyExists},
        Case{EACCES, absl::StatusCode::kPermissionDenied},
        Case{EPERM, absl::StatusCode::kPermissionDenied},
        Case{EROFS, absl::StatusCode::kPermissionDenied},
        Case{ENOSPC, absl::StatusCode::kUnavailable}, Case{EDQUOT, absl::StatusCode::kUnavailable},
        Case{EIO, absl::StatusCode::kUnavailable},
        Case{ENOTEMPTY, absl::StatusCode::kFailedPrecondition},
        Case{EXDEV, absl::StatusCode::kFailedPrecondition},
        Case{EINVAL, absl::StatusCode::kInvalidArgument},
        Case{EPIPE, absl::StatusCode::kInternal}}) {
    absl::Status status = ErrnoToStatus(c.error_number, "fsync", "/data/x");
    EXPECT_EQ(status.code(), c.code) << c.error_number;
    EXPECT_EQ(ErrnoOf(status), c.error_number);
    EXPECT_THAT(std::string(status.message()), HasSubstr("fsync /data/x: "));
  }
  EXPECT_EQ(std::string(ErrnoToStatus(EIO, "write", "/d/f").message()),
            "write /d/f: Input/output error (EIO)");
  EXPECT_EQ(ErrnoOf(absl::UnavailableError("no payload")), std::nullopt);
}

}  // namespace
}  // namespace strata
