#include "storage/index/trace_index.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>

#include "common/little_endian.h"
#include "common/status_macros.h"
#include "fmt/format.h"

namespace strata::storage {

// Where OpenSource() reads from: bytes already in memory, or a file.
class TraceIndexSource {
 public:
  virtual ~TraceIndexSource() = default;
  virtual const std::string& name() const = 0;
  [[nodiscard]] virtual absl::StatusOr<uint64_t> Size() const = 0;
  // `n` bytes at `offset` (within Size()); the view may point into
  // `scratch` and lives until the next call with the same scratch.
  [[nodiscard]] virtual absl::StatusOr<std::string_view> Read(uint64_t offset, size_t n,
                                                              std::string& scratch) const = 0;
};

namespace {

// Entries validated per piece when streaming a file (64 KiB).
constexpr uint64_t kEntriesPerPiece = 2048;
constexpr size_t kChecksumOffset = 56;

absl::Status FormatError(std::string_view file_name, std::string_view check,
                         std::string_view detail) {
  return absl::DataLossError(fmt::format("{}: {}: {}", file_name, check, detail));
}

// ---------------------------------------------------------------------------
// Header

struct Header {
  uint64_t trace_count = 0;
  uint64_t span_rows = 0;
  uint64_t first_covered_row = 0;
  uint64_t filter_bytes = 0;
  uint64_t checksum = 0;
  // From the version: the size of an entry.
  uint64_t entry_bytes = kTraceIndexEntryBytes;
};

// Entries end here, then zero padding to a multiple of 8 (version 2; a
// version-1 entry is 32 bytes, so it never pads), then the filter.
uint64_t EntriesEnd(uint64_t trace_count, uint64_t entry_bytes) {
  return kTraceIndexHeaderBytes + trace_count * entry_bytes;
}
uint64_t FilterOffset(uint64_t trace_count, uint64_t entry_bytes) {
  return (EntriesEnd(trace_count, entry_bytes) + 7) & ~uint64_t{7};
}

// The header with a zero checksum field.
std::string EncodeHeader(const Header& header) {
  std::string out(kTraceIndexMagic, 8);
  PutU32(out, kTraceIndexVersion);
  PutU32(out, static_cast<uint32_t>(kTraceIndexHeaderBytes));
  PutU64(out, header.trace_count);
  PutU64(out, header.span_rows);
  PutU64(out, header.first_covered_row);
  PutU64(out, header.filter_bytes);
  PutU64(out, 0);  // reserved
  PutU64(out, 0);  // checksum, filled in last
  return out;
}

absl::StatusOr<Header> ParseHeader(std::string_view bytes, uint64_t file_size,
                                   std::string_view name) {
  const char* p = bytes.data();
  if (std::memcmp(p, kTraceIndexMagic, 8) != 0) {
    return FormatError(name, "magic", "the file does not start with STRATIDX");
  }
  Header header;
  if (const uint64_t version = LoadLittleEndian(p + 8, 4); version == 1) {
    header.entry_bytes = kTraceIndexV1EntryBytes;
  } else if (version != kTraceIndexVersion) {
    return FormatError(name, "version", fmt::format("{}, this reader knows 1 and 2", version));
  }
  if (const uint64_t size = LoadLittleEndian(p + 12, 4); size != kTraceIndexHeaderBytes) {
    return FormatError(name, "header size", fmt::format("{}, not 64", size));
  }
  if (const uint64_t reserved = LoadLittleEndian(p + 48, 8); reserved != 0) {
    return FormatError(name, "reserved", fmt::format("{:#x}, not 0", reserved));
  }
  header.trace_count = LoadLittleEndian(p + 16, 8);
  header.span_rows = LoadLittleEndian(p + 24, 8);
  header.first_covered_row = LoadLittleEndian(p + 32, 8);
  header.filter_bytes = LoadLittleEndian(p + 40, 8);
  header.checksum = LoadLittleEndian(p + kChecksumOffset, 8);
  if (header.trace_count == 0) {
    return FormatError(name, "entry count", "0 (a batch without spans has no spans.tidx)");
  }
  // 64 + E N + padding + F == size, without overflow for any N and F.
  const uint64_t after_header = file_size - kTraceIndexHeaderBytes;
  if (header.trace_count > after_header / header.entry_bytes ||
      FilterOffset(header.trace_count, header.entry_bytes) > file_size ||
      header.filter_bytes != file_size - FilterOffset(header.trace_count, header.entry_bytes)) {
    return FormatError(
        name, "file size",
        fmt::format("{} bytes, but the header says 64 + {} * {} (padded to 8) + {}", file_size,
                    header.entry_bytes, header.trace_count, header.filter_bytes));
  }
  if (header.first_covered_row > kTraceIndexMaxRowEnd ||
      header.span_rows > kTraceIndexMaxRowEnd - header.first_covered_row) {
    return FormatError(name, "covered rows",
                       fmt::format("first covered row {} + span rows {} passes row 2^32-1",
                                   header.first_covered_row, header.span_rows));
  }
  return header;
}

// ---------------------------------------------------------------------------
// Entries

// Writes the entry's 20 bytes at `p`.
void EncodeEntry(char* p, const TraceIndexEntry& entry) {
  std::memcpy(p, entry.trace_id.data(), entry.trace_id.size());
  StoreLittleEndian(p + 16, entry.first_row, 4);
}

// Both versions start an entry with the id and the first row.
TraceIndexEntry DecodeEntry(const char* p) {
  TraceIndexEntry entry;
  std::memcpy(entry.trace_id.data(), p, entry.trace_id.size());
  entry.first_row = static_cast<uint32_t>(LoadLittleEndian(p + 16, 4));
  return entry;
}

int CompareIds(const otlp::TraceId& a, const otlp::TraceId& b) {
  return std::memcmp(a.data(), b.data(), a.size());
}

std::string FormatId(const otlp::TraceId& id) {
  std::string hex;
  for (uint8_t b : id) {
    hex += fmt::format("{:02x}", b);
  }
  return hex;
}

// Checks entries one at a time, in file order, and remembers the first
// failure (OpenSource reports the checksum before any entry failure).
class EntryChecker {
 public:
  EntryChecker(const Header& header, const BinaryFuse8Filter* filter, std::string_view name)
      : header_(header), filter_(filter), name_(name) {}

  void Add(const TraceIndexEntry& entry) {
    if (first_error_.ok()) {
      first_error_ = Check(entry);
    }
    previous_ = entry;
    ++index_;
  }

  absl::Status Finish() const {
    if (!first_error_.ok()) {
      return first_error_;
    }
    const uint64_t row_end = header_.first_covered_row + header_.span_rows;
    if (previous_.first_row >= row_end) {
      return FormatError(
          name_, "last row",
          fmt::format("entry {} starts at row {}, past the covered rows [{}, {})", index_ - 1,
                      previous_.first_row, header_.first_covered_row, row_end));
    }
    return absl::OkStatus();
  }

 private:
  absl::Status Check(const TraceIndexEntry& entry) const {
    if (index_ == 0 && entry.first_row != header_.first_covered_row) {
      return FormatError(name_, "first row",
                         fmt::format("entry 0 starts at row {}, the first covered row is {}",
                                     entry.first_row, header_.first_covered_row));
    }
    if (index_ > 0 && CompareIds(previous_.trace_id, entry.trace_id) >= 0) {
      return FormatError(
          name_, "entry order",
          fmt::format("entry {} ({}) does not follow entry {} ({})", index_,
                      FormatId(entry.trace_id), index_ - 1, FormatId(previous_.trace_id)));
    }
    if (index_ > 0 && entry.first_row <= previous_.first_row) {
      return FormatError(name_, "first rows",
                         fmt::format("entry {} starts at row {}, entry {} at row {}", index_,
                                     entry.first_row, index_ - 1, previous_.first_row));
    }
    if (filter_ != nullptr && !filter_->Contains(TraceFilterKey(entry.trace_id))) {
      return FormatError(
          name_, "filter membership",
          fmt::format("entry {} ({}) does not pass the filter", index_, FormatId(entry.trace_id)));
    }
    return absl::OkStatus();
  }

  const Header header_;
  const BinaryFuse8Filter* const filter_;  // null: the filter failed to parse
  const std::string_view name_;
  uint64_t index_ = 0;
  TraceIndexEntry previous_;
  absl::Status first_error_;
};

// The whole file from its parts: `entry_at(i)` is entry i of `count`, in
// strictly increasing order.
template <typename EntryAt>
std::string EncodeTraceIndex(size_t count, const EntryAt& entry_at, uint64_t span_rows,
                             uint64_t first_covered_row, const BinaryFuse8Filter& filter) {
  Header header;
  header.trace_count = count;
  header.span_rows = span_rows;
  header.first_covered_row = first_covered_row;
  header.filter_bytes = filter.SerializedBytes();
  std::string out = EncodeHeader(header);
  const size_t filter_offset = FilterOffset(count, kTraceIndexEntryBytes);
  out.reserve(filter_offset + header.filter_bytes);
  out.resize(filter_offset, '\0');
  for (size_t i = 0; i < count; ++i) {
    EncodeEntry(out.data() + kTraceIndexHeaderBytes + i * kTraceIndexEntryBytes, entry_at(i));
  }
  filter.AppendSerialized(out);
  StoreLittleEndian(out.data() + kChecksumOffset, XXH3_64bits(out.data(), out.size()), 8);
  return out;
}

// ---------------------------------------------------------------------------
// Sources

class BytesSource final : public TraceIndexSource {
 public:
  BytesSource(std::string_view bytes, std::string_view name) : bytes_(bytes), name_(name) {}
  const std::string& name() const override { return name_; }
  absl::StatusOr<uint64_t> Size() const override { return bytes_.size(); }
  absl::StatusOr<std::string_view> Read(uint64_t offset, size_t n, std::string&) const override {
    return bytes_.substr(offset, n);
  }

 private:
  const std::string_view bytes_;
  const std::string name_;
};

// Turns a short read of a file already validated into DataLoss: the file
// changed under us, which only corruption or tampering can do.
absl::StatusOr<std::string> ReadValidated(const RandomAccessFile& file, uint64_t offset, size_t n) {
  absl::StatusOr<std::string> bytes = file.ReadExact(offset, n);
  if (bytes.status().code() == absl::StatusCode::kOutOfRange) {
    return FormatError(
        file.path(), "file size",
        fmt::format("shorter than when opened ({})", std::string(bytes.status().message())));
  }
  return bytes;
}

class IndexFileSource final : public TraceIndexSource {
 public:
  explicit IndexFileSource(const RandomAccessFile& file) : file_(file) {}
  const std::string& name() const override { return file_.path(); }
  absl::StatusOr<uint64_t> Size() const override { return file_.Size(); }
  absl::StatusOr<std::string_view> Read(uint64_t offset, size_t n,
                                        std::string& scratch) const override {
    STRATA_ASSIGN_OR_RETURN(scratch, ReadValidated(file_, offset, n));
    return std::string_view(scratch);
  }

 private:
  const RandomAccessFile& file_;
};

}  // namespace

TraceLocation LocationOfEntry(const TraceIndexEntry& entry, uint64_t end_row) {
  return {entry.first_row, end_row};
}

uint64_t TraceFilterKey(const otlp::TraceId& trace_id) {
  return XXH3_64bits(trace_id.data(), trace_id.size());
}

// ---------------------------------------------------------------------------
// Writer

absl::StatusOr<std::string> BuildTraceIndex(std::span<const TraceRun> runs, uint64_t span_rows,
                                            uint64_t first_covered_row) {
  if (runs.empty()) {
    return absl::InvalidArgumentError("BuildTraceIndex: no trace runs");
  }
  if (first_covered_row > kTraceIndexMaxRowEnd ||
      span_rows > kTraceIndexMaxRowEnd - first_covered_row) {
    return absl::InvalidArgumentError(
        fmt::format("BuildTraceIndex: rows [{}, {} + {}) pass row 2^32-1", first_covered_row,
                    first_covered_row, span_rows));
  }
  if (runs.front().first_row != first_covered_row) {
    return absl::InvalidArgumentError(
        fmt::format("BuildTraceIndex: run 0 starts at row {}, not the first covered row {}",
                    runs.front().first_row, first_covered_row));
  }
  if (runs.back().first_row >= first_covered_row + span_rows) {
    return absl::InvalidArgumentError(
        fmt::format("BuildTraceIndex: the last run starts at row {}, past the covered rows",
                    runs.back().first_row));
  }
  std::vector<uint64_t> keys(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    const TraceRun& run = runs[i];
    if (i > 0 && (CompareIds(runs[i - 1].trace_id, run.trace_id) >= 0 ||
                  runs[i - 1].first_row >= run.first_row)) {
      return absl::InvalidArgumentError(fmt::format(
          "BuildTraceIndex: run {} does not follow run {} in trace id and first row", i, i - 1));
    }
    keys[i] = TraceFilterKey(run.trace_id);
  }
  STRATA_ASSIGN_OR_RETURN(const BinaryFuse8Filter filter, BinaryFuse8Filter::Build(keys));
  const auto entry_at = [runs](size_t i) {
    return TraceIndexEntry{runs[i].trace_id, runs[i].first_row};
  };
  return EncodeTraceIndex(runs.size(), entry_at, span_rows, first_covered_row, filter);
}

// ---------------------------------------------------------------------------
// Readers

absl::StatusOr<TraceIndex> TraceIndex::OpenSource(const TraceIndexSource& source,
                                                  bool keep_entries) {
  const std::string& name = source.name();
  STRATA_ASSIGN_OR_RETURN(const uint64_t size, source.Size());
  if (size < kTraceIndexHeaderBytes) {
    return FormatError(name, "file size",
                       fmt::format("{} bytes, shorter than the 64-byte header", size));
  }
  std::string header_scratch;
  STRATA_ASSIGN_OR_RETURN(const std::string_view header_bytes,
                          source.Read(0, kTraceIndexHeaderBytes, header_scratch));
  STRATA_ASSIGN_OR_RETURN(const Header header, ParseHeader(header_bytes, size, name));

  const uint64_t entries_end = EntriesEnd(header.trace_count, header.entry_bytes);
  const uint64_t filter_offset = FilterOffset(header.trace_count, header.entry_bytes);
  std::string filter_scratch;
  STRATA_ASSIGN_OR_RETURN(const std::string_view filter_bytes,
                          source.Read(filter_offset, header.filter_bytes, filter_scratch));
  absl::StatusOr<BinaryFuse8Filter> filter = BinaryFuse8Filter::Deserialize(filter_bytes, name);

  // One pass: checksum every byte, check every entry, report the checksum
  // first (a damaged file should say so, not name a symptom).
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(),
                                                                 &XXH3_freeState);
  if (state == nullptr || XXH3_64bits_reset(state.get()) != XXH_OK) {
    return absl::ResourceExhaustedError("spans.tidx: cannot allocate an XXH3 state");
  }
  std::string zeroed_header(header_bytes);
  std::fill(zeroed_header.begin() + kChecksumOffset, zeroed_header.end(), '\0');
  XXH3_64bits_update(state.get(), zeroed_header.data(), zeroed_header.size());
  EntryChecker checker(header, filter.ok() ? &*filter : nullptr, name);
  std::vector<TraceIndexEntry> entries;
  if (keep_entries) {
    entries.reserve(header.trace_count);
  }
  std::string piece_scratch;
  for (uint64_t first = 0; first < header.trace_count; first += kEntriesPerPiece) {
    const uint64_t count = std::min(kEntriesPerPiece, header.trace_count - first);
    STRATA_ASSIGN_OR_RETURN(const std::string_view piece,
                            source.Read(kTraceIndexHeaderBytes + first * header.entry_bytes,
                                        count * header.entry_bytes, piece_scratch));
    XXH3_64bits_update(state.get(), piece.data(), piece.size());
    for (uint64_t i = 0; i < count; ++i) {
      const TraceIndexEntry entry = DecodeEntry(piece.data() + i * header.entry_bytes);
      checker.Add(entry);
      if (keep_entries) {
        entries.push_back(entry);
      }
    }
  }
  std::string padding_scratch;
  STRATA_ASSIGN_OR_RETURN(const std::string_view padding,
                          source.Read(entries_end, filter_offset - entries_end, padding_scratch));
  XXH3_64bits_update(state.get(), padding.data(), padding.size());
  XXH3_64bits_update(state.get(), filter_bytes.data(), filter_bytes.size());
  if (const uint64_t computed = XXH3_64bits_digest(state.get()); computed != header.checksum) {
    return FormatError(name, "checksum",
                       fmt::format("stored {:016x}, computed {:016x}", header.checksum, computed));
  }
  if (!filter.ok()) {
    return filter.status();
  }
  if (padding.find_first_not_of('\0') != std::string_view::npos) {
    return FormatError(name, "padding", "the bytes between the entries and the filter are not 0");
  }
  STRATA_RETURN_IF_ERROR(checker.Finish());
  return TraceIndex(TraceFilter(name, *std::move(filter), header.trace_count, header.span_rows,
                                header.first_covered_row, header.entry_bytes),
                    std::move(entries));
}

absl::StatusOr<TraceIndex> TraceIndex::Open(std::string_view bytes, std::string_view file_name) {
  return OpenSource(BytesSource(bytes, file_name), /*keep_entries=*/true);
}

absl::StatusOr<TraceIndex> TraceIndex::Open(const RandomAccessFile& file) {
  return OpenSource(IndexFileSource(file), /*keep_entries=*/true);
}

absl::StatusOr<TraceFilter> TraceFilter::Open(const RandomAccessFile& file) {
  STRATA_ASSIGN_OR_RETURN(TraceIndex index,
                          TraceIndex::OpenSource(IndexFileSource(file), /*keep_entries=*/false));
  return std::move(index.filter_);
}

TraceFilter::TraceFilter(std::string file_name, BinaryFuse8Filter filter, uint64_t trace_count,
                         uint64_t span_rows, uint64_t first_covered_row, uint64_t entry_bytes)
    : file_name_(std::move(file_name)),
      filter_(std::move(filter)),
      trace_count_(trace_count),
      span_rows_(span_rows),
      first_covered_row_(first_covered_row),
      entry_bytes_(entry_bytes) {}

absl::Status TraceFilter::Validate(uint64_t expected_traces, uint64_t expected_span_rows) const {
  if (trace_count_ != expected_traces) {
    return FormatError(
        file_name_, "meta.json traces",
        fmt::format("{} entries, meta.json says {} traces", trace_count_, expected_traces));
  }
  if (span_rows_ != expected_span_rows) {
    return FormatError(file_name_, "meta.json rows",
                       fmt::format("{} span rows covered, meta.json says {} rows", span_rows_,
                                   expected_span_rows));
  }
  return absl::OkStatus();
}

size_t TraceFilter::MemoryBytes() const {
  return sizeof(*this) + filter_.fingerprints().size() + file_name_.capacity();
}

absl::StatusOr<std::optional<TraceLocation>> TraceFilter::Find(
    const RandomAccessFile& file, const otlp::TraceId& trace_id) const {
  if (!MayContain(trace_id)) {
    return std::nullopt;
  }
  // Invariant: entries before `low` hold smaller ids, entries from `high`
  // on hold ids at least as large; the answer, if any, is entry `high`'s
  // lower bound in [low, high].
  uint64_t low = 0;
  uint64_t high = trace_count_;
  while (high - low > kFindScanEntries) {
    const uint64_t middle = low + (high - low) / 2;
    STRATA_ASSIGN_OR_RETURN(const std::string id,
                            ReadValidated(file, EntryOffset(middle), sizeof(otlp::TraceId)));
    if (std::memcmp(id.data(), trace_id.data(), trace_id.size()) < 0) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  // Entries low..high and the one after high (for the end row).
  const uint64_t stop = std::min(high + 2, trace_count_);
  STRATA_ASSIGN_OR_RETURN(const std::string piece,
                          ReadValidated(file, EntryOffset(low), (stop - low) * entry_bytes_));
  const uint64_t row_end = first_covered_row_ + span_rows_;
  for (uint64_t i = low; i < stop && i <= high; ++i) {
    const TraceIndexEntry entry = DecodeEntry(piece.data() + (i - low) * entry_bytes_);
    const int order = CompareIds(entry.trace_id, trace_id);
    if (order > 0) {
      break;
    }
    if (order < 0) {
      continue;
    }
    const uint64_t end_row =
        i + 1 < trace_count_ ? DecodeEntry(piece.data() + (i + 1 - low) * entry_bytes_).first_row
                             : row_end;
    if (entry.first_row < first_covered_row_ || entry.first_row >= end_row || end_row > row_end) {
      return FormatError(file.path(), "first rows",
                         fmt::format("entry {} rows [{}, {}) no longer lie in [{}, {})", i,
                                     entry.first_row, end_row, first_covered_row_, row_end));
    }
    return LocationOfEntry(entry, end_row);
  }
  return std::nullopt;
}

absl::Status TraceFilter::ReadEntries(const RandomAccessFile& file, uint64_t first, uint64_t count,
                                      std::vector<TraceIndexEntry>* entries,
                                      std::vector<uint64_t>* ends) const {
  entries->clear();
  ends->clear();
  if (first > trace_count_ || count > trace_count_ - first) {
    return FormatError(file.path(), "entry count",
                       fmt::format("entries [{}, {}) asked for, the index has {}", first,
                                   first + count, trace_count_));
  }
  if (count == 0) return absl::OkStatus();
  // One entry more than asked, when there is one, for the last end row.
  const uint64_t stop = std::min(first + count + 1, trace_count_);
  STRATA_ASSIGN_OR_RETURN(const std::string piece,
                          ReadValidated(file, EntryOffset(first), (stop - first) * entry_bytes_));
  const uint64_t row_end = first_covered_row_ + span_rows_;
  entries->reserve(count);
  ends->reserve(count);
  for (uint64_t i = first; i < stop; ++i) {
    const TraceIndexEntry entry = DecodeEntry(piece.data() + (i - first) * entry_bytes_);
    if (i > first) {
      const TraceIndexEntry& previous = entries->back();
      if (CompareIds(previous.trace_id, entry.trace_id) >= 0 ||
          previous.first_row >= entry.first_row) {
        return FormatError(file.path(), "entry order",
                           fmt::format("entry {} no longer follows entry {}", i, i - 1));
      }
      ends->push_back(entry.first_row);
    }
    if (i == first + count) break;  // the extra entry gave the last end row
    entries->push_back(entry);
  }
  if (ends->size() < entries->size()) ends->push_back(row_end);
  if (entries->front().first_row < first_covered_row_ || ends->back() > row_end) {
    return FormatError(file.path(), "first rows",
                       fmt::format("entries [{}, {}) no longer lie in rows [{}, {})", first,
                                   first + count, first_covered_row_, row_end));
  }
  return absl::OkStatus();
}

std::optional<TraceLocation> TraceIndex::Find(const otlp::TraceId& trace_id) const {
  if (!MayContain(trace_id)) {
    return std::nullopt;
  }
  const auto it = std::lower_bound(entries_.begin(), entries_.end(), trace_id,
                                   [](const TraceIndexEntry& entry, const otlp::TraceId& id) {
                                     return CompareIds(entry.trace_id, id) < 0;
                                   });
  if (it == entries_.end() || CompareIds(it->trace_id, trace_id) != 0) {
    return std::nullopt;
  }
  return LocationOf(static_cast<size_t>(it - entries_.begin()));
}

TraceLocation TraceIndex::LocationOf(size_t index) const {
  const uint64_t end_row = index + 1 < entries_.size()
                               ? entries_[index + 1].first_row
                               : filter_.first_covered_row() + filter_.span_rows();
  return LocationOfEntry(entries_[index], end_row);
}

std::string TraceIndex::Serialize() const {
  const auto entry_at = [this](size_t i) { return entries_[i]; };
  return EncodeTraceIndex(entries_.size(), entry_at, filter_.span_rows(),
                          filter_.first_covered_row(), filter_.filter());
}

}  // namespace strata::storage
