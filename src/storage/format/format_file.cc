#include "storage/format/format_file.h"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/path.h"
#include "common/runbook.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "storage/format/batch_id.h"

namespace strata::storage {
namespace {

// A FORMAT file longer than this is not one strata wrote; it is refused
// without being read into memory.
constexpr uint64_t kMaxFormatFileBytes = 4096;

absl::Status NotStrataDir(std::string_view data_dir, std::string_view found) {
  return absl::FailedPreconditionError(fmt::format(
      "data directory {}: not a strata data directory: {}; strata will not write into a "
      "directory it did not create; {}",
      data_dir, found, RunbookRef("not-a-strata-data-directory")));
}

absl::Status NotRecognised(std::string_view data_dir, std::string_view contents,
                           std::string_view why) {
  return absl::FailedPreconditionError(
      fmt::format("data directory {}: FORMAT is not recognised ({}); it holds {}; {}", data_dir,
                  why, QuoteForError(contents), RunbookRef("format-not-recognised")));
}

// An existing FORMAT at `format_path`, read without writing anything.
absl::Status CheckFormatFile(FileSystem& fs, const std::string& data_dir,
                             const std::string& format_path) {
  STRATA_ASSIGN_OR_RETURN(const bool format_is_dir, fs.IsDirectory(format_path));
  if (format_is_dir) return NotRecognised(data_dir, "", "FORMAT is a directory");
  STRATA_ASSIGN_OR_RETURN(const uint64_t size, fs.FileSize(format_path));
  if (size > kMaxFormatFileBytes) {
    return NotRecognised(data_dir, "", fmt::format("FORMAT is {} bytes long", size));
  }
  STRATA_ASSIGN_OR_RETURN(const std::string contents, fs.ReadFile(format_path));
  return CheckFormatFileContents(contents, data_dir);
}

// True if `path` is a directory with nothing in it.
absl::StatusOr<bool> IsEmptyDir(FileSystem& fs, const std::string& path) {
  STRATA_ASSIGN_OR_RETURN(const bool is_dir, fs.IsDirectory(path));
  if (!is_dir) return false;
  STRATA_ASSIGN_OR_RETURN(const std::vector<std::string> names, fs.ListDir(path));
  return names.empty();
}

// Describes the first entry of `data_dir` that initialisation would not
// have created, or returns "" if there is none (the directory is new, or
// holds an interrupted initialisation).
absl::StatusOr<std::string> UnexpectedEntry(FileSystem& fs, const std::string& data_dir) {
  STRATA_ASSIGN_OR_RETURN(const std::vector<std::string> names, fs.ListDir(data_dir));
  for (const std::string& name : names) {
    const std::string path = JoinPath(data_dir, name);
    STRATA_ASSIGN_OR_RETURN(const bool is_dir, fs.IsDirectory(path));
    if (name == kFormatTempFileName || name == kLockFileName) {
      if (is_dir) return fmt::format("{} is a directory", QuoteForError(name));
      continue;
    }
    if (name == kQueryDirName || name == kControlDirName) {
      STRATA_ASSIGN_OR_RETURN(const bool empty, IsEmptyDir(fs, path));
      if (!empty) return fmt::format("{} is not an empty directory", QuoteForError(name));
      continue;
    }
    if (name != kTelemetryDirName) {
      return fmt::format("it holds {} and no FORMAT", QuoteForError(name));
    }
    if (!is_dir) return fmt::format("\"{}\" is not a directory", kTelemetryDirName);
    STRATA_ASSIGN_OR_RETURN(const std::vector<std::string> children, fs.ListDir(path));
    for (const std::string& child : children) {
      if (std::find(kTelemetryDirNames.begin(), kTelemetryDirNames.end(), child) ==
          kTelemetryDirNames.end()) {
        return fmt::format("it holds {}/{} and no FORMAT", kTelemetryDirName, QuoteForError(child));
      }
      STRATA_ASSIGN_OR_RETURN(const bool empty, IsEmptyDir(fs, JoinPath(path, child)));
      if (!empty) return fmt::format("{}/{} is not an empty directory", kTelemetryDirName, child);
    }
  }
  return std::string();
}

absl::Status WriteFormatFile(FileSystem& fs, const std::string& data_dir) {
  const DataDirPaths paths(data_dir);
  const std::string temp = paths.FormatTemp();
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file,
                          fs.NewWritableFile(temp, WriteMode::kCreateOrTruncate));
  STRATA_RETURN_IF_ERROR(file->Append(kFormatFileContents));
  STRATA_RETURN_IF_ERROR(file->Sync());
  STRATA_RETURN_IF_ERROR(file->Close());
  STRATA_RETURN_IF_ERROR(fs.RenameFile(temp, paths.Format()));
  return fs.SyncDir(data_dir);
}

absl::Status Initialize(FileSystem& fs, const std::string& data_dir, bool exists) {
  if (!exists) {
    STRATA_RETURN_IF_ERROR(fs.CreateDirs(data_dir));
    STRATA_RETURN_IF_ERROR(fs.SyncDir(ParentPath(data_dir)));
  }
  const DataDirPaths paths(data_dir);
  const std::string temp = paths.FormatTemp();
  STRATA_ASSIGN_OR_RETURN(const bool temp_exists, fs.Exists(temp));
  if (temp_exists) STRATA_RETURN_IF_ERROR(fs.RemoveFile(temp));
  for (const std::string& dir : paths.InitialDirs()) STRATA_RETURN_IF_ERROR(fs.CreateDirs(dir));
  // The subdirectories become durable before FORMAT can: a directory with
  // FORMAT is always complete.
  STRATA_RETURN_IF_ERROR(fs.SyncDir(paths.Telemetry()));
  STRATA_RETURN_IF_ERROR(fs.SyncDir(data_dir));
  return WriteFormatFile(fs, data_dir);
}

}  // namespace

absl::Status CheckFormatFileContents(std::string_view contents, std::string_view data_dir) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  const simdjson::padded_string padded(contents.data(), contents.size());
  if (parser.parse(padded).get(root) != simdjson::SUCCESS) {
    return NotRecognised(data_dir, contents, "not JSON");
  }
  simdjson::dom::object object;
  if (root.get(object) != simdjson::SUCCESS) {
    return NotRecognised(data_dir, contents, "not a JSON object");
  }
  int format_members = 0;
  int other_members = 0;
  simdjson::dom::element format;
  for (simdjson::dom::key_value_pair member : object) {
    if (member.key == "format") {
      ++format_members;
      format = member.value;
    } else {
      ++other_members;
    }
  }
  if (format_members != 1) {
    return NotRecognised(data_dir, contents,
                         format_members == 0 ? "no \"format\" member" : "\"format\" repeated");
  }
  // A newer format may add members, so "newer" is decided on `format` alone.
  if (format.type() == simdjson::dom::element_type::UINT64) {
    return absl::FailedPreconditionError(fmt::format(
        "data directory {}: FORMAT was written by a newer strata (format {}); this binary reads "
        "format {}; {}",
        data_dir, format.get_uint64().value(), kFormatVersion,
        RunbookRef("data-directory-from-a-newer-strata")));
  }
  if (format.type() != simdjson::dom::element_type::INT64) {
    return NotRecognised(data_dir, contents, "\"format\" is not an integer");
  }
  const int64_t version = format.get_int64().value();
  if (version < 1) return NotRecognised(data_dir, contents, "\"format\" is less than 1");
  if (version > kFormatVersion) {
    return absl::FailedPreconditionError(fmt::format(
        "data directory {}: FORMAT was written by a newer strata (format {}); this binary reads "
        "format {}; {}",
        data_dir, version, kFormatVersion, RunbookRef("data-directory-from-a-newer-strata")));
  }
  if (other_members != 0) return NotRecognised(data_dir, contents, "members other than \"format\"");
  return absl::OkStatus();
}

absl::StatusOr<DataDirState> CheckOrInitializeDataDir(FileSystem& fs, const std::string& data_dir) {
  STRATA_ASSIGN_OR_RETURN(const bool exists, fs.Exists(data_dir));
  if (exists) {
    STRATA_ASSIGN_OR_RETURN(const bool is_dir, fs.IsDirectory(data_dir));
    if (!is_dir) return NotStrataDir(data_dir, "it is not a directory");
    const std::string format_path = DataDirPaths(data_dir).Format();
    STRATA_ASSIGN_OR_RETURN(const bool has_format, fs.Exists(format_path));
    if (has_format) {
      STRATA_RETURN_IF_ERROR(CheckFormatFile(fs, data_dir, format_path));
      return DataDirState::kExisting;
    }
    STRATA_ASSIGN_OR_RETURN(const std::string unexpected, UnexpectedEntry(fs, data_dir));
    if (!unexpected.empty()) return NotStrataDir(data_dir, unexpected);
  }
  STRATA_RETURN_IF_ERROR(Initialize(fs, data_dir, exists));
  return DataDirState::kInitialized;
}

absl::Status CheckExistingDataDir(FileSystem& fs, const std::string& data_dir) {
  STRATA_ASSIGN_OR_RETURN(const bool exists, fs.Exists(data_dir));
  if (!exists) {
    return absl::FailedPreconditionError(fmt::format("data directory {} does not exist", data_dir));
  }
  STRATA_ASSIGN_OR_RETURN(const bool is_dir, fs.IsDirectory(data_dir));
  if (!is_dir) return NotStrataDir(data_dir, "it is not a directory");
  const std::string format_path = DataDirPaths(data_dir).Format();
  STRATA_ASSIGN_OR_RETURN(const bool has_format, fs.Exists(format_path));
  if (!has_format) {
    return absl::FailedPreconditionError(
        fmt::format("data directory {}: not a strata data directory, or not initialised yet: "
                    "it has no FORMAT; {}",
                    data_dir, RunbookRef("not-a-strata-data-directory")));
  }
  return CheckFormatFile(fs, data_dir, format_path);
}

}  // namespace strata::storage
