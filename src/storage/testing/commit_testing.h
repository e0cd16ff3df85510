#pragma once

// Test support for the committer, recovery and crash-loop tests (not used by
// production code):
//   - RandomEncodedBatch(): synthetic EncodedBatches. The file bytes are
//     random and the signal counts merely consistent (meta-json.md rules
//     2-8): those tests check the commit protocol, not the Parquet inside.
//   - ScopedTempDir: a fresh directory, removed with everything in it.
//   - ScriptedFaultFileSystem: fails chosen operations on chosen paths, to
//     hit one step of a protocol exactly (FaultInjectionFileSystem's
//     one-in-N rules cannot aim).
// Single owner each; ScriptedFaultFileSystem is safe for concurrent use.

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "common/mutex.h"
#include "fmt/format.h"
#include "io/file_system.h"
#include "io/forwarding_file_system.h"
#include "io/posix_file_system.h"
#include "storage/commit/batch_committer.h"
#include "storage/format/batch_id.h"
#include "storage/format/batch_meta.h"

namespace strata::storage::testing {

// `size` random bytes.
inline std::string RandomBytes(std::mt19937_64& rng, size_t size) {
  std::string bytes(size, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  return bytes;
}

// A signal with 1..1000 data rows (and maybe placeholder rows) and event
// times near `around_nanos`.
inline SignalMeta RandomSignal(std::mt19937_64& rng, uint64_t around_nanos, bool spans) {
  SignalMeta signal;
  signal.rows = 1 + rng() % 1000;
  signal.file_rows = signal.rows + rng() % 3;
  const uint64_t min = around_nanos - rng() % 1000000000;
  signal.event_time = NanosRange{min, min + rng() % 2000000000};
  if (spans) signal.traces = 1 + rng() % signal.rows;
  return signal;
}

// Gives `batch` a rollups.parquet of random bytes when its signals have
// data rows and none otherwise (meta-json.md rule 8): for tests that change
// a batch's signals.
inline void MatchRollupsFile(EncodedBatch* batch, std::mt19937_64& rng) {
  std::erase_if(batch->files, [](const EncodedFile& f) { return f.name == "rollups.parquet"; });
  if (batch->spans.rows + batch->logs.rows + batch->metrics.rows > 0) {
    batch->files.push_back(EncodedFile{"rollups.parquet", RandomBytes(rng, 1 + rng() % 512)});
  }
}

// A level-0 batch for `id` whose signals each have rows with probability
// 2/3; the files of a signal with rows, and rollups.parquet when any has,
// hold 1..max_file_bytes random bytes.
inline EncodedBatch RandomEncodedBatch(const BatchId& id, std::mt19937_64& rng,
                                       size_t max_file_bytes = 4096) {
  EncodedBatch batch{.id = id, .spans = {}, .logs = {}, .metrics = {}, .files = {}};
  auto add_file = [&](const char* name) {
    batch.files.push_back(EncodedFile{name, RandomBytes(rng, 1 + rng() % max_file_bytes)});
  };
  if (rng() % 3 != 0) {
    batch.spans = RandomSignal(rng, id.stamp_nanos(), /*spans=*/true);
    add_file("spans.parquet");
    add_file("spans.tidx");
  } else {
    batch.spans.traces = 0;
  }
  if (rng() % 3 != 0) {
    batch.logs = RandomSignal(rng, id.stamp_nanos(), /*spans=*/false);
    add_file("logs.parquet");
  }
  if (rng() % 3 != 0) {
    batch.metrics = RandomSignal(rng, id.stamp_nanos(), /*spans=*/false);
    add_file("metrics.parquet");
  }
  MatchRollupsFile(&batch, rng);
  return batch;
}

// A new directory named after `label`, removed on destruction. It lies
// under $TMPDIR if set, else under /dev/shm when that exists: these tests
// model durability with FaultInjectionFileSystem and need no real fsync,
// which tmpfs makes free. Otherwise under /tmp.
class ScopedTempDir {
 public:
  explicit ScopedTempDir(std::string_view label) {
    std::string root = "/tmp";
    if (const char* tmp = std::getenv("TMPDIR"); tmp != nullptr && *tmp != '\0') {
      root = tmp;
    } else if (absl::StatusOr<bool> shm = fs_.IsDirectory("/dev/shm"); shm.ok() && *shm) {
      root = "/dev/shm";
    }
    std::random_device random;
    for (int attempt = 0; attempt < 100 && path_.empty(); ++attempt) {
      std::string candidate =
          fmt::format("{}/strata_{}_{:x}", root, label, (uint64_t{random()} << 32) | random());
      if (fs_.CreateDir(candidate).ok()) path_ = std::move(candidate);
    }
  }
  ~ScopedTempDir() {
    if (!path_.empty()) (void)fs_.RemoveAll(path_);
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  // Empty if no directory could be made.
  const std::string& path() const { return path_; }

 private:
  PosixFileSystem fs_;
  std::string path_;
};

// Operations ScriptedFaultFileSystem can fail.
enum class ScriptedOp { kOpen, kAppend, kSync, kClose, kRename, kSyncDir, kCreateDir, kRemove };

// Forwards to a wrapped FileSystem, failing an operation with `error_number`
// when its path ends with `path_suffix` (for a rename: the target's path),
// `times` times (-1: always).
class ScriptedFaultFileSystem final : public ForwardingFileSystem {
 public:
  explicit ScriptedFaultFileSystem(FileSystem& base) : ForwardingFileSystem(base) {}

  void FailOn(ScriptedOp op, std::string path_suffix, int error_number, int times = -1)
      ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    rules_.push_back(Rule{op, std::move(path_suffix), error_number, times});
  }
  void Clear() ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    rules_.clear();
  }
  int failures() const ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    return failures_;
  }

  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path,
                                                                WriteMode mode) override {
    if (absl::Status fault = Check(ScriptedOp::kOpen, path); !fault.ok()) return fault;
    absl::StatusOr<std::unique_ptr<WritableFile>> file = base().NewWritableFile(path, mode);
    if (!file.ok()) return file.status();
    return std::make_unique<File>(this, *std::move(file));
  }
  using FileSystem::NewWritableFile;
  absl::Status RenameFile(const std::string& from, const std::string& to) override {
    if (absl::Status fault = Check(ScriptedOp::kRename, to); !fault.ok()) return fault;
    return base().RenameFile(from, to);
  }
  absl::Status SyncDir(const std::string& path) override {
    if (absl::Status fault = Check(ScriptedOp::kSyncDir, path); !fault.ok()) return fault;
    return base().SyncDir(path);
  }
  absl::Status CreateDir(const std::string& path) override {
    if (absl::Status fault = Check(ScriptedOp::kCreateDir, path); !fault.ok()) return fault;
    return base().CreateDir(path);
  }
  absl::Status CreateDirs(const std::string& path) override {
    if (absl::Status fault = Check(ScriptedOp::kCreateDir, path); !fault.ok()) return fault;
    return base().CreateDirs(path);
  }
  absl::Status RemoveFile(const std::string& path) override {
    if (absl::Status fault = Check(ScriptedOp::kRemove, path); !fault.ok()) return fault;
    return base().RemoveFile(path);
  }
  absl::Status RemoveDir(const std::string& path) override {
    if (absl::Status fault = Check(ScriptedOp::kRemove, path); !fault.ok()) return fault;
    return base().RemoveDir(path);
  }
  absl::Status RemoveAll(const std::string& path) override {
    if (absl::Status fault = Check(ScriptedOp::kRemove, path); !fault.ok()) return fault;
    return base().RemoveAll(path);
  }

 private:
  struct Rule {
    ScriptedOp op;
    std::string path_suffix;
    int error_number;
    int times;
  };

  class File final : public WritableFile {
   public:
    File(ScriptedFaultFileSystem* fs, std::unique_ptr<WritableFile> base)
        : fs_(fs), base_(std::move(base)) {}
    absl::Status Append(std::string_view data) override {
      if (absl::Status fault = fs_->Check(ScriptedOp::kAppend, path()); !fault.ok()) return fault;
      return base_->Append(data);
    }
    absl::Status Flush() override { return base_->Flush(); }
    absl::Status Sync() override {
      if (absl::Status fault = fs_->Check(ScriptedOp::kSync, path()); !fault.ok()) return fault;
      return base_->Sync();
    }
    absl::Status Close() override {
      if (absl::Status fault = fs_->Check(ScriptedOp::kClose, path()); !fault.ok()) return fault;
      return base_->Close();
    }
    uint64_t size() const override { return base_->size(); }
    const std::string& path() const override { return base_->path(); }

   private:
    ScriptedFaultFileSystem* const fs_;
    const std::unique_ptr<WritableFile> base_;
  };

  absl::Status Check(ScriptedOp op, std::string_view path) ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    for (Rule& rule : rules_) {
      if (rule.op != op || rule.times == 0 || !path.ends_with(rule.path_suffix)) continue;
      if (rule.times > 0) --rule.times;
      ++failures_;
      return ErrnoToStatus(rule.error_number, "scripted fault", path);
    }
    return absl::OkStatus();
  }

  mutable Mutex mu_;
  std::vector<Rule> rules_ ABSL_GUARDED_BY(mu_);
  int failures_ ABSL_GUARDED_BY(mu_) = 0;
};

// A file system whose rename into days/ (the step that publishes a batch)
// waits while the gate is closed, so a test can hold commits in flight
// deterministically: Close(), start work, WaitUntilHeld(), check what must
// hold while a commit is pending, Open(). A held rename gives up after 60 s
// so a broken test fails instead of hanging. Safe for concurrent use.
class PublishGateFileSystem final : public ForwardingFileSystem {
 public:
  PublishGateFileSystem() : ForwardingFileSystem(posix_) {}

  void Close() ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    open_ = false;
  }
  void Open() ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    open_ = true;
    changed_.SignalAll();
  }
  // Renames waiting at the gate now.
  int held() const ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    return held_;
  }
  // Waits until at least one rename is held; false after `timeout`.
  bool WaitUntilHeld(std::chrono::nanoseconds timeout) ABSL_LOCKS_EXCLUDED(mu_) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    MutexLock lock(&mu_);
    while (held_ == 0) {
      if (!changed_.WaitUntil(&mu_, deadline) && std::chrono::steady_clock::now() >= deadline) {
        return held_ > 0;
      }
    }
    return true;
  }

  absl::Status RenameFile(const std::string& from, const std::string& to) override {
    if (to.find("/days/") != std::string::npos) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      MutexLock lock(&mu_);
      ++held_;
      changed_.SignalAll();
      while (!open_ && std::chrono::steady_clock::now() < deadline) {
        changed_.WaitUntil(&mu_, deadline);
      }
      --held_;
    }
    return ForwardingFileSystem::RenameFile(from, to);
  }

 private:
  PosixFileSystem posix_;
  mutable Mutex mu_;
  CondVar changed_;
  bool open_ ABSL_GUARDED_BY(mu_) = true;
  int held_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace strata::storage::testing
