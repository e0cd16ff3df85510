#pragma once

// meta.json, one per batch directory (docs/format/meta-json.md): the struct,
// its deterministic serialisation, a strict parser, and the validation
// rules of that page, numbered as there:
//
//   ParseBatchMeta()          rule 1 (JSON shape), then ValidateBatchMeta()
//   ValidateBatchMeta()       rules 2-8 (everything meta.json says on its own)
//   CheckBatchMetaLocation()  rules 3 and 4 against the directory names
//   CheckBatchFiles()         rule 9 against the files in the directory
// Rule 10 (Parquet footers and spans.tidx) belongs to the readers of those
// files and is checked by the batch reader, not here.
//
// The writer runs ValidateBatchMeta() on what it is about to write, and
// readers run all of the above on what they read (validate before writing
// and after reading).
//
// Errors: DataLoss for a meta.json or batch directory that breaks a rule
// (a crash cannot produce one, so it is corruption), with a message
// "batch <id>: meta.json rule <N> (<member>): <what is wrong>"; the
// FileSystem's own errors, with the batch and file added, when I/O fails.
// All functions are stateless and safe to call concurrently.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "io/file_system.h"
#include "storage/format/layout.h"

namespace strata::storage {

// The format strata writes, and the oldest it reads: format 1 has no
// rollups.parquet, format 2 has it in its older layout (meta-json.md,
// "Formats").
inline constexpr uint64_t kBatchMetaFormat = 3;
inline constexpr uint64_t kOldestBatchMetaFormat = 1;

// A closed range of Unix nanoseconds, UTC.
struct NanosRange {
  uint64_t min = 0;
  uint64_t max = 0;
  friend bool operator==(const NanosRange&, const NanosRange&) = default;
};

// One member of meta.json's `signals`.
struct SignalMeta {
  uint64_t rows = 0;
  uint64_t file_rows = 0;
  std::optional<NanosRange> event_time;  // null when file_rows is 0
  std::optional<uint64_t> traces;        // spans only
  // Promoted-column key -> rows where its value had a type the column
  // cannot hold. Ordered, so serialisation is deterministic.
  std::map<std::string, uint64_t> promotion_misses;
  friend bool operator==(const SignalMeta&, const SignalMeta&) = default;
};

// A present file in meta.json's `files`.
struct FileMeta {
  uint64_t bytes = 0;
  uint64_t xxh3_64 = 0;
  friend bool operator==(const FileMeta&, const FileMeta&) = default;
};

struct BatchMeta {
  uint64_t format = kBatchMetaFormat;
  std::string id;
  uint64_t generation = 0;
  std::string day;
  NanosRange ingest_time;
  std::vector<std::string> sources;
  SignalMeta spans;
  SignalMeta logs;
  SignalMeta metrics;
  // `files`: nullopt is JSON null (the file is absent).
  std::optional<FileMeta> spans_parquet;
  std::optional<FileMeta> spans_tidx;
  std::optional<FileMeta> logs_parquet;
  std::optional<FileMeta> metrics_parquet;
  // Format 2 and later only (format 1 has no such member).
  std::optional<FileMeta> rollups_parquet;
  friend bool operator==(const BatchMeta&, const BatchMeta&) = default;
};

// meta.json's bytes: members in the page's order, no insignificant
// whitespace, a final newline. Does not validate; call ValidateBatchMeta()
// first. Parsing the result gives `meta` back.
std::string SerializeBatchMeta(const BatchMeta& meta);

// Parses meta.json strictly (rule 1) and validates the result (rules 2-8).
// `batch_name` names the batch in errors (normally the directory's id);
// once the `id` member has parsed and matches the grammar, errors name that.
[[nodiscard]] absl::StatusOr<BatchMeta> ParseBatchMeta(std::string_view json,
                                                       std::string_view batch_name);

// Rules 2-8: everything checkable from meta.json alone.
[[nodiscard]] absl::Status ValidateBatchMeta(const BatchMeta& meta);

// Rules 3 and 4 against where the batch was found: `dir_id` is the batch
// directory's name without ".batch", `day_dir` the name of its parent.
[[nodiscard]] absl::Status CheckBatchMetaLocation(const BatchMeta& meta, std::string_view dir_id,
                                                  std::string_view day_dir);

// Rule 9: every present file in `batch_dir` exists with the declared size
// and xxh3-64, and the directory holds nothing but meta.json and those
// files. On failure, `failed_file` (when not null) gets the name of the
// file the error is about (the undeclared, missing or mismatched one), or
// "" when it is about the directory.
[[nodiscard]] absl::Status CheckBatchFiles(FileSystem& fs, const std::string& batch_dir,
                                           const BatchMeta& meta,
                                           std::string* failed_file = nullptr);

// XXH3-64 (seed 0) of a file and the number of bytes hashed, reading it in
// fixed-size chunks (memory use does not grow with the file).
struct FileChecksum {
  uint64_t bytes = 0;
  uint64_t xxh3_64 = 0;
};
[[nodiscard]] absl::StatusOr<FileChecksum> ChecksumFile(FileSystem& fs, const std::string& path);

// 16 lowercase hex digits, most significant first (meta.json's form).
std::string FormatXxh3_64(uint64_t hash);
// The inverse; nullopt unless `text` is exactly 16 lowercase hex digits.
std::optional<uint64_t> ParseXxh3_64(std::string_view text);

}  // namespace strata::storage
