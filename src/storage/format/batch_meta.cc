#include "storage/format/batch_meta.h"

#include <simdjson.h>
#include <xxhash.h>

#include <initializer_list>
#include <memory>
#include <utility>

#include "common/path.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "storage/format/batch_id.h"

namespace strata::storage {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

constexpr size_t kChecksumChunkBytes = size_t{64} * 1024;

absl::Status RuleError(std::string_view batch, int rule, std::string_view member,
                       std::string_view what) {
  return absl::DataLossError(
      fmt::format("batch {}: meta.json rule {} ({}): {}", batch, rule, member, what));
}

// ---------------------------------------------------------------------------
// Serialisation

void AppendJsonString(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      out += fmt::format("\\u{:04x}", u);
    } else {
      out += c;
    }
  }
  out += '"';
}

void AppendRange(std::string& out, const NanosRange& range) {
  out += fmt::format("{{\"min\":{},\"max\":{}}}", range.min, range.max);
}

void AppendSignal(std::string& out, const SignalMeta& signal) {
  out +=
      fmt::format("{{\"rows\":{},\"file_rows\":{},\"event_time\":", signal.rows, signal.file_rows);
  if (signal.event_time.has_value()) {
    AppendRange(out, *signal.event_time);
  } else {
    out += "null";
  }
  if (signal.traces.has_value()) out += fmt::format(",\"traces\":{}", *signal.traces);
  out += ",\"promotion_misses\":{";
  bool first = true;
  for (const auto& [key, count] : signal.promotion_misses) {
    if (!first) out += ',';
    first = false;
    AppendJsonString(out, key);
    out += fmt::format(":{}", count);
  }
  out += "}}";
}

void AppendFile(std::string& out, const std::optional<FileMeta>& file) {
  if (!file.has_value()) {
    out += "null";
    return;
  }
  out +=
      fmt::format("{{\"bytes\":{},\"xxh3_64\":\"{}\"}}", file->bytes, FormatXxh3_64(file->xxh3_64));
}

// ---------------------------------------------------------------------------
// Parsing (rule 1)

const char* TypeName(element_type type) {
  switch (type) {
    case element_type::ARRAY:
      return "an array";
    case element_type::OBJECT:
      return "an object";
    case element_type::INT64:
      return "an integer";
    case element_type::UINT64:
      return "an integer";
    case element_type::DOUBLE:
      return "a non-integer number";
    case element_type::STRING:
      return "a string";
    case element_type::BOOL:
      return "a boolean";
    case element_type::NULL_VALUE:
      return "null";
  }
  return "an unknown type";
}

class MetaParser {
 public:
  explicit MetaParser(std::string_view batch_name) : batch_(batch_name) {}

  absl::StatusOr<BatchMeta> Parse(std::string_view json);

 private:
  using Members = std::map<std::string_view, element>;

  absl::Status Fail(std::string_view member, std::string_view what) const {
    return RuleError(batch_, 1, member, what);
  }
  absl::Status WrongType(std::string_view member, std::string_view expected,
                         const element& value) const {
    return Fail(member, fmt::format("expected {}, found {}", expected, TypeName(value.type())));
  }

  // Reads an object's members, refusing unknown, repeated and missing ones.
  absl::StatusOr<Members> ReadObject(const element& value, std::string_view path,
                                     std::initializer_list<std::string_view> required,
                                     std::initializer_list<std::string_view> optional) const;
  absl::StatusOr<uint64_t> ReadU64(const element& value, std::string_view path) const;
  absl::StatusOr<std::string> ReadString(const element& value, std::string_view path) const;
  absl::StatusOr<NanosRange> ReadRange(const element& value, std::string_view path) const;
  absl::StatusOr<SignalMeta> ReadSignal(const element& value, std::string_view path) const;
  absl::StatusOr<std::optional<FileMeta>> ReadFile(const element& value,
                                                   std::string_view path) const;

  std::string batch_;
};

absl::StatusOr<MetaParser::Members> MetaParser::ReadObject(
    const element& value, std::string_view path, std::initializer_list<std::string_view> required,
    std::initializer_list<std::string_view> optional) const {
  simdjson::dom::object object;
  if (value.get(object) != simdjson::SUCCESS) {
    return WrongType(path.empty() ? "(document)" : path, "an object", value);
  }
  Members members;
  for (simdjson::dom::key_value_pair member : object) {
    bool known = false;
    for (std::string_view name : required) known = known || name == member.key;
    for (std::string_view name : optional) known = known || name == member.key;
    const std::string where =
        path.empty() ? std::string(member.key) : fmt::format("{}.{}", path, member.key);
    if (!known) return Fail(QuoteForError(where), "member not defined by meta-json.md");
    if (!members.emplace(member.key, member.value).second) {
      return Fail(QuoteForError(where), "member repeated");
    }
  }
  for (std::string_view name : required) {
    if (members.count(name) == 0) {
      return Fail(path.empty() ? std::string(name) : fmt::format("{}.{}", path, name),
                  "member missing");
    }
  }
  return members;
}

absl::StatusOr<uint64_t> MetaParser::ReadU64(const element& value, std::string_view path) const {
  uint64_t result = 0;
  if ((value.type() != element_type::INT64 && value.type() != element_type::UINT64) ||
      value.get_uint64().get(result) != simdjson::SUCCESS) {
    return WrongType(path, "an unsigned 64-bit integer", value);
  }
  return result;
}

absl::StatusOr<std::string> MetaParser::ReadString(const element& value,
                                                   std::string_view path) const {
  std::string_view text;
  if (value.get_string().get(text) != simdjson::SUCCESS) return WrongType(path, "a string", value);
  return std::string(text);
}

absl::StatusOr<NanosRange> MetaParser::ReadRange(const element& value,
                                                 std::string_view path) const {
  STRATA_ASSIGN_OR_RETURN(Members members, ReadObject(value, path, {"min", "max"}, {}));
  NanosRange range;
  STRATA_ASSIGN_OR_RETURN(range.min, ReadU64(members.at("min"), fmt::format("{}.min", path)));
  STRATA_ASSIGN_OR_RETURN(range.max, ReadU64(members.at("max"), fmt::format("{}.max", path)));
  return range;
}

absl::StatusOr<SignalMeta> MetaParser::ReadSignal(const element& value,
                                                  std::string_view path) const {
  // `traces` is optional here so that its presence on the wrong signal is
  // reported by rule 7, as the page says.
  STRATA_ASSIGN_OR_RETURN(
      Members members,
      ReadObject(value, path, {"rows", "file_rows", "event_time", "promotion_misses"}, {"traces"}));
  SignalMeta signal;
  STRATA_ASSIGN_OR_RETURN(signal.rows, ReadU64(members.at("rows"), fmt::format("{}.rows", path)));
  STRATA_ASSIGN_OR_RETURN(signal.file_rows,
                          ReadU64(members.at("file_rows"), fmt::format("{}.file_rows", path)));
  const element& event_time = members.at("event_time");
  if (!event_time.is_null()) {
    STRATA_ASSIGN_OR_RETURN(signal.event_time,
                            ReadRange(event_time, fmt::format("{}.event_time", path)));
  }
  if (auto it = members.find("traces"); it != members.end()) {
    STRATA_ASSIGN_OR_RETURN(signal.traces, ReadU64(it->second, fmt::format("{}.traces", path)));
  }
  const std::string misses_path = fmt::format("{}.promotion_misses", path);
  simdjson::dom::object misses;
  const element& misses_value = members.at("promotion_misses");
  if (misses_value.get(misses) != simdjson::SUCCESS) {
    return WrongType(misses_path, "an object", misses_value);
  }
  for (simdjson::dom::key_value_pair miss : misses) {
    const std::string where = QuoteForError(fmt::format("{}.{}", misses_path, miss.key));
    STRATA_ASSIGN_OR_RETURN(const uint64_t count, ReadU64(miss.value, where));
    if (!signal.promotion_misses.emplace(std::string(miss.key), count).second) {
      return Fail(where, "member repeated");
    }
  }
  return signal;
}

absl::StatusOr<std::optional<FileMeta>> MetaParser::ReadFile(const element& value,
                                                             std::string_view path) const {
  if (value.is_null()) return std::optional<FileMeta>();
  STRATA_ASSIGN_OR_RETURN(Members members, ReadObject(value, path, {"bytes", "xxh3_64"}, {}));
  FileMeta file;
  STRATA_ASSIGN_OR_RETURN(file.bytes, ReadU64(members.at("bytes"), fmt::format("{}.bytes", path)));
  const std::string hash_path = fmt::format("{}.xxh3_64", path);
  STRATA_ASSIGN_OR_RETURN(const std::string hash, ReadString(members.at("xxh3_64"), hash_path));
  const std::optional<uint64_t> parsed = ParseXxh3_64(hash);
  if (!parsed.has_value()) {
    return Fail(hash_path, fmt::format("{} is not 16 lowercase hex digits", QuoteForError(hash)));
  }
  file.xxh3_64 = *parsed;
  return std::optional<FileMeta>(file);
}

absl::StatusOr<BatchMeta> MetaParser::Parse(std::string_view json) {
  simdjson::dom::parser parser;
  element root;
  const simdjson::padded_string padded(json.data(), json.size());
  if (const auto error = parser.parse(padded).get(root); error != simdjson::SUCCESS) {
    return Fail("(document)",
                fmt::format("not valid UTF-8 JSON: {}", simdjson::error_message(error)));
  }
  STRATA_ASSIGN_OR_RETURN(
      Members members,
      ReadObject(
          root, "",
          {"format", "id", "generation", "day", "ingest_time", "sources", "signals", "files"}, {}));
  BatchMeta meta;
  STRATA_ASSIGN_OR_RETURN(meta.id, ReadString(members.at("id"), "id"));
  // From here on errors name the batch by its own id, when it is one.
  if (ValidateBatchId(meta.id).ok()) batch_ = meta.id;
  STRATA_ASSIGN_OR_RETURN(meta.format, ReadU64(members.at("format"), "format"));
  STRATA_ASSIGN_OR_RETURN(meta.generation, ReadU64(members.at("generation"), "generation"));
  STRATA_ASSIGN_OR_RETURN(meta.day, ReadString(members.at("day"), "day"));
  STRATA_ASSIGN_OR_RETURN(meta.ingest_time, ReadRange(members.at("ingest_time"), "ingest_time"));

  simdjson::dom::array sources;
  if (members.at("sources").get(sources) != simdjson::SUCCESS) {
    return WrongType("sources", "an array", members.at("sources"));
  }
  for (element source : sources) {
    STRATA_ASSIGN_OR_RETURN(std::string id, ReadString(source, "sources[]"));
    meta.sources.push_back(std::move(id));
  }

  STRATA_ASSIGN_OR_RETURN(Members signals, ReadObject(members.at("signals"), "signals",
                                                      {"spans", "logs", "metrics"}, {}));
  STRATA_ASSIGN_OR_RETURN(meta.spans, ReadSignal(signals.at("spans"), "signals.spans"));
  STRATA_ASSIGN_OR_RETURN(meta.logs, ReadSignal(signals.at("logs"), "signals.logs"));
  STRATA_ASSIGN_OR_RETURN(meta.metrics, ReadSignal(signals.at("metrics"), "signals.metrics"));

  // Format 1 has no rollups.parquet; any later format (refused by rule 2
  // unless it is this binary's) has it.
  STRATA_ASSIGN_OR_RETURN(Members files, ReadObject(members.at("files"), "files",
                                                    {kSpansFileName, kTraceIndexFileName,
                                                     kLogsFileName, kMetricsFileName},
                                                    {kRollupsFileName}));
  if ((files.count(kRollupsFileName) != 0) != (meta.format != 1)) {
    return Fail("files.rollups.parquet",
                meta.format == 1 ? "member not defined by format 1" : "member missing");
  }
  STRATA_ASSIGN_OR_RETURN(meta.spans_parquet,
                          ReadFile(files.at(kSpansFileName), "files.spans.parquet"));
  STRATA_ASSIGN_OR_RETURN(meta.spans_tidx,
                          ReadFile(files.at(kTraceIndexFileName), "files.spans.tidx"));
  STRATA_ASSIGN_OR_RETURN(meta.logs_parquet,
                          ReadFile(files.at(kLogsFileName), "files.logs.parquet"));
  STRATA_ASSIGN_OR_RETURN(meta.metrics_parquet,
                          ReadFile(files.at(kMetricsFileName), "files.metrics.parquet"));
  if (meta.format != 1) {
    STRATA_ASSIGN_OR_RETURN(meta.rollups_parquet,
                            ReadFile(files.at(kRollupsFileName), "files.rollups.parquet"));
  }
  return meta;
}

// ---------------------------------------------------------------------------
// Validation (rules 2-8)

absl::Status ValidateSignal(std::string_view batch, std::string_view path, const SignalMeta& signal,
                            bool is_spans) {
  auto fail = [&](std::string_view member, std::string_view what) {
    return RuleError(batch, 7, fmt::format("{}{}", path, member), what);
  };
  if (signal.rows > signal.file_rows) {
    return fail(".rows", fmt::format("rows {} > file_rows {}", signal.rows, signal.file_rows));
  }
  if (signal.file_rows > 0 && !signal.event_time.has_value()) {
    return fail(".event_time", fmt::format("null while file_rows is {}", signal.file_rows));
  }
  if (signal.file_rows == 0 && signal.event_time.has_value()) {
    return fail(".event_time", "present while file_rows is 0");
  }
  if (signal.event_time.has_value() && signal.event_time->min > signal.event_time->max) {
    return fail(".event_time",
                fmt::format("min {} > max {}", signal.event_time->min, signal.event_time->max));
  }
  if (is_spans && !signal.traces.has_value()) return fail(".traces", "missing for spans");
  if (!is_spans && signal.traces.has_value())
    return fail(".traces", "present for a non-span signal");
  if (signal.traces.has_value()) {
    if (*signal.traces > signal.rows) {
      return fail(".traces", fmt::format("traces {} > rows {}", *signal.traces, signal.rows));
    }
    if (*signal.traces == 0 && signal.rows > 0) {
      return fail(".traces", fmt::format("0 while rows is {}", signal.rows));
    }
  }
  for (const auto& [key, count] : signal.promotion_misses) {
    if (count == 0 || count > signal.rows) {
      return fail(fmt::format(".promotion_misses.{}", QuoteForError(key)),
                  fmt::format("count {} is not within 1..rows ({})", count, signal.rows));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidatePresence(std::string_view batch, std::string_view file_name,
                              const std::optional<FileMeta>& file, const SignalMeta& signal) {
  if (signal.file_rows > 0 && !file.has_value()) {
    return RuleError(batch, 8, fmt::format("files.{}", file_name),
                     fmt::format("null while its signal has file_rows {}", signal.file_rows));
  }
  if (signal.file_rows == 0 && file.has_value()) {
    return RuleError(batch, 8, fmt::format("files.{}", file_name),
                     "present while its signal has file_rows 0");
  }
  return absl::OkStatus();
}

// The `files` members of meta's format, in member order.
std::vector<std::pair<const char*, const std::optional<FileMeta>*>> Files(const BatchMeta& meta) {
  std::vector<std::pair<const char*, const std::optional<FileMeta>*>> out = {
      {kBatchFileNames[0], &meta.spans_parquet},
      {kBatchFileNames[1], &meta.spans_tidx},
      {kBatchFileNames[2], &meta.logs_parquet},
      {kBatchFileNames[3], &meta.metrics_parquet}};
  if (meta.format != 1) out.emplace_back(kBatchFileNames[4], &meta.rollups_parquet);
  return out;
}

}  // namespace

std::string FormatXxh3_64(uint64_t hash) { return fmt::format("{:016x}", hash); }

std::optional<uint64_t> ParseXxh3_64(std::string_view text) {
  if (text.size() != 16) return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    int digit = 0;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else {
      return std::nullopt;
    }
    value = value << 4 | static_cast<uint64_t>(digit);
  }
  return value;
}

std::string SerializeBatchMeta(const BatchMeta& meta) {
  std::string out = fmt::format("{{\"format\":{},\"id\":", meta.format);
  AppendJsonString(out, meta.id);
  out += fmt::format(",\"generation\":{},\"day\":", meta.generation);
  AppendJsonString(out, meta.day);
  out += ",\"ingest_time\":";
  AppendRange(out, meta.ingest_time);
  out += ",\"sources\":[";
  for (size_t i = 0; i < meta.sources.size(); ++i) {
    if (i > 0) out += ',';
    AppendJsonString(out, meta.sources[i]);
  }
  out += "],\"signals\":{\"spans\":";
  AppendSignal(out, meta.spans);
  out += ",\"logs\":";
  AppendSignal(out, meta.logs);
  out += ",\"metrics\":";
  AppendSignal(out, meta.metrics);
  out += "},\"files\":{";
  bool first = true;
  for (const auto& [name, file] : Files(meta)) {
    if (!first) out += ',';
    first = false;
    out += fmt::format("\"{}\":", name);
    AppendFile(out, *file);
  }
  out += "}}\n";
  return out;
}

absl::StatusOr<BatchMeta> ParseBatchMeta(std::string_view json, std::string_view batch_name) {
  MetaParser parser(batch_name);
  STRATA_ASSIGN_OR_RETURN(BatchMeta meta, parser.Parse(json));
  STRATA_RETURN_IF_ERROR(ValidateBatchMeta(meta));
  return meta;
}

absl::Status ValidateBatchMeta(const BatchMeta& meta) {
  const absl::StatusOr<BatchId> id = BatchId::Parse(meta.id);
  const std::string batch = id.ok() ? meta.id : QuoteForError(meta.id);
  // Rule 2.
  if (meta.format < kOldestBatchMetaFormat || meta.format > kBatchMetaFormat) {
    return RuleError(batch, 2, "format",
                     fmt::format("{}, this binary reads {} to {}", meta.format,
                                 kOldestBatchMetaFormat, kBatchMetaFormat));
  }
  // Rule 3 (the directory name is CheckBatchMetaLocation's).
  if (!id.ok()) return RuleError(batch, 3, "id", std::string(id.status().message()));
  if (meta.generation != static_cast<uint64_t>(id->generation())) {
    return RuleError(
        batch, 3, "generation",
        fmt::format("{} differs from the id's generation {}", meta.generation, id->generation()));
  }
  // Rule 4 (the parent directory is CheckBatchMetaLocation's).
  const absl::StatusOr<DayBoundsNanos> day = DayBounds(meta.day);
  if (!day.ok()) return RuleError(batch, 4, "day", std::string(day.status().message()));
  // Rule 5.
  const NanosRange& ingest = meta.ingest_time;
  if (ingest.min > ingest.max) {
    return RuleError(batch, 5, "ingest_time",
                     fmt::format("min {} > max {}", ingest.min, ingest.max));
  }
  if (ingest.min < day->first || ingest.max >= day->end) {
    return RuleError(batch, 5, "ingest_time",
                     fmt::format("{}..{} is not within {} ({}..{})", ingest.min, ingest.max,
                                 meta.day, day->first, day->end - 1));
  }
  if (meta.generation == 0 &&
      (ingest.min != id->stamp_nanos() || ingest.max != id->stamp_nanos())) {
    return RuleError(batch, 5, "ingest_time",
                     fmt::format("{}..{} differs from the id's stamp {} (generation 0)", ingest.min,
                                 ingest.max, id->stamp_nanos()));
  }
  // Rule 6.
  if (meta.generation == 0 && !meta.sources.empty()) {
    return RuleError(batch, 6, "sources", "not empty for generation 0");
  }
  if (meta.generation > 0 && meta.sources.empty()) {
    return RuleError(batch, 6, "sources", "empty for compaction output");
  }
  for (size_t i = 0; i < meta.sources.size(); ++i) {
    if (absl::Status s = ValidateBatchId(meta.sources[i]); !s.ok()) {
      return RuleError(batch, 6, "sources", std::string(s.message()));
    }
    if (i > 0 && meta.sources[i - 1] >= meta.sources[i]) {
      return RuleError(batch, 6, "sources",
                       fmt::format("{} follows {}: not sorted or repeated", meta.sources[i],
                                   meta.sources[i - 1]));
    }
  }
  // Rule 7.
  STRATA_RETURN_IF_ERROR(ValidateSignal(batch, "signals.spans", meta.spans, true));
  STRATA_RETURN_IF_ERROR(ValidateSignal(batch, "signals.logs", meta.logs, false));
  STRATA_RETURN_IF_ERROR(ValidateSignal(batch, "signals.metrics", meta.metrics, false));
  // Rule 8.
  STRATA_RETURN_IF_ERROR(
      ValidatePresence(batch, kBatchFileNames[0], meta.spans_parquet, meta.spans));
  STRATA_RETURN_IF_ERROR(ValidatePresence(batch, kBatchFileNames[1], meta.spans_tidx, meta.spans));
  STRATA_RETURN_IF_ERROR(ValidatePresence(batch, kBatchFileNames[2], meta.logs_parquet, meta.logs));
  STRATA_RETURN_IF_ERROR(
      ValidatePresence(batch, kBatchFileNames[3], meta.metrics_parquet, meta.metrics));
  if (meta.spans_parquet.has_value() != meta.spans_tidx.has_value()) {
    return RuleError(batch, 8, "files.spans.tidx", "presence differs from files.spans.parquet");
  }
  const uint64_t data_rows = meta.spans.rows + meta.logs.rows + meta.metrics.rows;
  if (meta.format == 1 && meta.rollups_parquet.has_value()) {
    return RuleError(batch, 8, "files.rollups.parquet", "present in a format 1 meta.json");
  }
  if (meta.format != 1 && meta.rollups_parquet.has_value() != (data_rows > 0)) {
    return RuleError(batch, 8, "files.rollups.parquet",
                     meta.rollups_parquet.has_value()
                         ? "present while no signal has data rows"
                         : fmt::format("null while the signals have {} data rows", data_rows));
  }
  return absl::OkStatus();
}

absl::Status CheckBatchMetaLocation(const BatchMeta& meta, std::string_view dir_id,
                                    std::string_view day_dir) {
  if (meta.id != dir_id) {
    return RuleError(meta.id, 3, "id",
                     fmt::format("differs from the directory name {}", QuoteForError(dir_id)));
  }
  if (meta.day != day_dir) {
    return RuleError(
        meta.id, 4, "day",
        fmt::format("{} differs from the parent directory {}", meta.day, QuoteForError(day_dir)));
  }
  return absl::OkStatus();
}

absl::Status CheckBatchFiles(FileSystem& fs, const std::string& batch_dir, const BatchMeta& meta,
                             std::string* failed_file) {
  const auto failed = [failed_file](std::string_view name, absl::Status status) {
    if (failed_file != nullptr) *failed_file = std::string(name);
    return status;
  };
  const auto files = Files(meta);
  absl::StatusOr<std::vector<std::string>> names = fs.ListDir(batch_dir);
  if (!names.ok()) return failed("", names.status());
  for (const std::string& name : *names) {
    bool declared = name == kBatchMetaFileName;
    for (const auto& [file_name, file] : files)
      declared = declared || (name == file_name && file->has_value());
    if (!declared) {
      return failed(name, RuleError(meta.id, 9, "files",
                                    fmt::format("{} holds {}, which files does not name", batch_dir,
                                                QuoteForError(name))));
    }
  }
  for (const auto& [file_name, file] : files) {
    if (!file->has_value()) continue;
    const std::string member = fmt::format("files.{}", file_name);
    const std::string path = JoinPath(batch_dir, file_name);
    absl::StatusOr<FileChecksum> actual = ChecksumFile(fs, path);
    if (absl::IsNotFound(actual.status())) {
      return failed(file_name, RuleError(meta.id, 9, member, fmt::format("{} is missing", path)));
    }
    if (!actual.ok()) {
      return failed(file_name, absl::Status(actual.status().code(),
                                            fmt::format("batch {}: {}", meta.id,
                                                        std::string(actual.status().message()))));
    }
    if (actual->bytes != (*file)->bytes) {
      return failed(file_name, RuleError(meta.id, 9, member,
                                         fmt::format("{} is {} bytes, meta.json says {}", path,
                                                     actual->bytes, (*file)->bytes)));
    }
    if (actual->xxh3_64 != (*file)->xxh3_64) {
      return failed(file_name, RuleError(meta.id, 9, member,
                                         fmt::format("{}: xxh3-64 is {}, meta.json says {}", path,
                                                     FormatXxh3_64(actual->xxh3_64),
                                                     FormatXxh3_64((*file)->xxh3_64))));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<FileChecksum> ChecksumFile(FileSystem& fs, const std::string& path) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file, fs.NewRandomAccessFile(path));
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(),
                                                                 &XXH3_freeState);
  if (state == nullptr || XXH3_64bits_reset(state.get()) != XXH_OK) {
    return absl::InternalError(fmt::format("checksum {}: cannot allocate xxh3 state", path));
  }
  std::unique_ptr<char[]> buffer(new char[kChecksumChunkBytes]);
  FileChecksum result;
  while (true) {
    STRATA_ASSIGN_OR_RETURN(const size_t n,
                            file->Read(result.bytes, kChecksumChunkBytes, buffer.get()));
    if (n == 0) break;
    if (XXH3_64bits_update(state.get(), buffer.get(), n) != XXH_OK) {
      return absl::InternalError(fmt::format("checksum {}: xxh3 update failed", path));
    }
    result.bytes += n;
  }
  result.xxh3_64 = XXH3_64bits_digest(state.get());
  return result;
}

}  // namespace strata::storage
