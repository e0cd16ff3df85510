#include "parquet/column_writer.h"

#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/base/attributes.h"
#include "common/check.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "parquet/encoding.h"

namespace strata::parquet {
namespace {

size_t FixedWidth(PhysicalType type) {
  switch (type) {
    case PhysicalType::kInt32:
      return 4;
    case PhysicalType::kInt64:
    case PhysicalType::kDouble:
      return 8;
    default:
      return 0;
  }
}

// The first byte of value slot 0's fixed-width array (BOOLEAN, INT32, INT64,
// DOUBLE).
const char* SlotData(const ColumnVector& values) {
  switch (values.type) {
    case PhysicalType::kBoolean:
      return reinterpret_cast<const char*>(values.bools.data());
    case PhysicalType::kInt32:
      return reinterpret_cast<const char*>(values.int32s.data());
    case PhysicalType::kDouble:
      return reinterpret_cast<const char*>(values.doubles.data());
    default:
      return reinterpret_cast<const char*>(values.int64s.data());
  }
}

// A lower bound for v no longer than max_bytes (cut at a UTF-8 character
// boundary for strings).
std::string LowerBound(std::string_view v, size_t max_bytes, bool utf8, bool* exact) {
  if (v.size() <= max_bytes) {
    *exact = true;
    return std::string(v);
  }
  size_t n = max_bytes;
  if (utf8) {
    while (n > 0 && (static_cast<uint8_t>(v[n]) & 0xC0) == 0x80) --n;
  }
  *exact = false;
  return std::string(v.substr(0, n));
}

// An upper bound for v no longer than max_bytes: a prefix with its last
// incrementable byte incremented. For strings only ASCII bytes are
// incremented so the bound stays valid UTF-8.
std::optional<std::string> UpperBound(std::string_view v, size_t max_bytes, bool utf8,
                                      bool* exact) {
  if (v.size() <= max_bytes) {
    *exact = true;
    return std::string(v);
  }
  *exact = false;
  std::string bound(v.substr(0, max_bytes));
  for (size_t i = bound.size(); i-- > 0;) {
    const uint8_t byte = static_cast<uint8_t>(bound[i]);
    if (utf8 ? byte < 0x7F : byte < 0xFF) {
      bound[i] = static_cast<char>(byte + 1);
      bound.resize(i + 1);
      return bound;
    }
  }
  return std::nullopt;
}

}  // namespace

// ---- PageCompressor ----

namespace {

// One zstd context per thread, shared by every PageCompressor that runs on
// it: the context's workspace (megabytes at level 6) is then allocated and
// faulted in once per thread instead of once per file. ZSTD_compressCCtx is
// one-shot, so compressors sharing a context never see each other's state.
struct ThreadZstdContext {
  ZSTD_CCtx* context = nullptr;
  ~ThreadZstdContext() { ZSTD_freeCCtx(context); }
};

ZSTD_CCtx* ThisThreadZstdContext() {
  thread_local ThreadZstdContext cache;
  if (cache.context == nullptr) {
    cache.context = ZSTD_createCCtx();
    STRATA_CHECK(cache.context != nullptr, "ZSTD_createCCtx failed (out of memory)");
  }
  return cache.context;
}

}  // namespace

PageCompressor::PageCompressor(CompressionCodec codec, int zstd_level)
    : codec_(codec), zstd_level_(zstd_level) {
  STRATA_CHECK(codec == CompressionCodec::kUncompressed || codec == CompressionCodec::kZstd,
               "only UNCOMPRESSED and ZSTD are supported");
}

absl::Status PageCompressor::Compress(std::string_view input, std::string* out,
                                      std::optional<int> zstd_level) {
  if (codec_ == CompressionCodec::kUncompressed) {
    out->assign(input.data(), input.size());
    return absl::OkStatus();
  }
  out->resize(ZSTD_compressBound(input.size()));
  const size_t written = ZSTD_compressCCtx(ThisThreadZstdContext(), out->data(),
                                           out->size(), input.data(), input.size(),
                                           zstd_level.value_or(zstd_level_));
  if (ZSTD_isError(written)) {
    return absl::InternalError(
        fmt::format("zstd compression failed: {}", ZSTD_getErrorName(written)));
  }
  out->resize(written);
  return absl::OkStatus();
}

// ---- ColumnWriter ----

ColumnWriter::ColumnWriter(ColumnSpec spec, const ColumnWriterOptions& options,
                           PageCompressor* compressor)
    : spec_(std::move(spec)),
      options_(options),
      compressor_(compressor),
      unsigned_order_(spec_.logical_type.kind == LogicalType::Kind::kInteger &&
                      !spec_.logical_type.is_signed),
      dictionary_allowed_(options.dictionary_enabled && spec_.type != PhysicalType::kBoolean) {
  STRATA_CHECK(ValidateColumnSpec(spec_).ok(), "column spec validated by the file writer");
  ResetChunk();
}

void ColumnWriter::ForgetMemos() {
  has_last_bytes_ = false;
  memo_values_ = nullptr;
  memo_enabled_ = false;
  memos_.clear();
  memo_definition_levels_.clear();
  memo_indices_.clear();
}

void ColumnWriter::PrepareListMemo(const ColumnVector& values) {
  if (memo_values_ == &values) return;
  ForgetMemos();
  memo_values_ = &values;
  if (!dictionary_active_) return;
  uint64_t named = 0;
  for (size_t row = 0; row < values.lists.size(); ++row) {
    if (!values.is_null_list(row)) named += values.lists[row].count;
  }
  const uint64_t elements = values.element_count();
  memo_enabled_ = named > 2 * elements;
  if (memo_enabled_) memo_by_begin_.assign(elements, -1);
}

void ColumnWriter::ResetChunk() {
  ForgetMemos();
  dictionary_active_ = dictionary_allowed_;
  dictionary_plain_.clear();
  dictionary_size_ = 0;
  dictionary_arena_ = Arena();
  dictionary_bytes_.Clear();
  dictionary_fixed_.Clear();
  pages_.clear();
  page_locations_.clear();
  pages_uncompressed_bytes_ = 0;
  chunk_rows_ = 0;
  chunk_values_ = 0;
  null_count_ = 0;
  wrote_dictionary_page_data_ = false;
  wrote_plain_page_ = false;
  has_bounds_ = false;
  min_bytes_.clear();
  max_bytes_.clear();
}

void ColumnWriter::UpdateStatistics(const ColumnVector& values, size_t row) {
  switch (spec_.type) {
    case PhysicalType::kBoolean:
    case PhysicalType::kInt32:
    case PhysicalType::kInt64: {
      int64_t v;
      if (spec_.type == PhysicalType::kBoolean) {
        v = values.bools[row];
      } else if (spec_.type == PhysicalType::kInt32) {
        v = unsigned_order_ ? static_cast<int64_t>(static_cast<uint32_t>(values.int32s[row]))
                            : values.int32s[row];
      } else {
        v = values.int64s[row];
      }
      const bool as_unsigned = unsigned_order_ && spec_.type == PhysicalType::kInt64;
      auto less = [as_unsigned](int64_t a, int64_t b) {
        return as_unsigned ? static_cast<uint64_t>(a) < static_cast<uint64_t>(b) : a < b;
      };
      if (!has_bounds_) {
        min_int_ = max_int_ = v;
        has_bounds_ = true;
      } else {
        if (less(v, min_int_)) min_int_ = v;
        if (less(max_int_, v)) max_int_ = v;
      }
      return;
    }
    case PhysicalType::kDouble: {
      const double v = values.doubles[row];
      if (v != v) return;  // NaN has no place in the order
      if (!has_bounds_) {
        min_double_ = max_double_ = v;
        has_bounds_ = true;
      } else {
        if (v < min_double_) min_double_ = v;
        if (v > max_double_) max_double_ = v;
      }
      return;
    }
    default: {
      const std::string_view v = values.bytes_at(row);
      if (!has_bounds_) {
        min_bytes_.assign(v.data(), v.size());
        max_bytes_.assign(v.data(), v.size());
        has_bounds_ = true;
      } else {
        if (v < std::string_view(min_bytes_)) min_bytes_.assign(v.data(), v.size());
        if (v > std::string_view(max_bytes_)) max_bytes_.assign(v.data(), v.size());
      }
      return;
    }
  }
}

// The lookups keep what a run touches on every value in members of an object
// on the caller's stack, which the compiler holds in registers once the run's
// loop is inlined around Find.
class ColumnWriter::ByteLookup {
 public:
  ByteLookup(ColumnWriter& writer, const ColumnVector& values)
      : writer_(writer),
        values_(values),
        bytes_(values.bytes.data()),
        offsets_(values.offsets.data()),
        byte_array_(writer.spec_.type == PhysicalType::kByteArray),
        has_last_(writer.has_last_bytes_),
        last_(writer.last_bytes_),
        last_index_(writer.last_bytes_index_) {}

  // Sets *index to the dictionary index of slot's value, adding the value
  // when new; false, with nothing added, when adding it would pass
  // dictionary_bytes_limit.
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool Find(size_t slot, uint32_t* index) {
    const std::string_view v(bytes_ + offsets_[slot], offsets_[slot + 1] - offsets_[slot]);
    if (!has_last_ || v.size() != last_.size() || !SameBytes(v.data(), last_.data(), v.size())) {
      uint64_t hash;
      uint32_t found = writer_.dictionary_bytes_.Find(v, &hash);
      if (found != ByteDictionaryIndex::kNotFound) {
        last_ = writer_.dictionary_bytes_.value(found);
      } else {
        const size_t entry = byte_array_ ? 4 + v.size() : v.size();
        if (writer_.dictionary_plain_.size() + entry > writer_.options_.dictionary_bytes_limit) {
          return false;
        }
        found = writer_.dictionary_size_++;
        last_ = writer_.dictionary_arena_.Copy(v);
        writer_.dictionary_bytes_.Insert(last_, hash);
        if (byte_array_) {
          EncodePlainByteArray(v, &writer_.dictionary_plain_);
        } else {
          writer_.dictionary_plain_.append(v.data(), v.size());
        }
        writer_.UpdateStatistics(values_, slot);
      }
      last_index_ = found;
      has_last_ = true;
    }
    *index = last_index_;
    return true;
  }

  // Hands the last-value cache back to the writer at the end of the run.
  void Save() {
    writer_.has_last_bytes_ = has_last_;
    writer_.last_bytes_ = last_;
    writer_.last_bytes_index_ = last_index_;
  }

 private:
  ColumnWriter& writer_;
  const ColumnVector& values_;
  const char* const bytes_;
  const uint64_t* const offsets_;
  const bool byte_array_;
  // The previous value and its index.
  bool has_last_;
  std::string_view last_;
  uint32_t last_index_;
};

template <typename T>
class ColumnWriter::FixedLookup {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8);

 public:
  FixedLookup(ColumnWriter& writer, const ColumnVector& values, const T* data)
      : writer_(writer), values_(values), data_(data) {}

  // As ByteLookup::Find.
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool Find(size_t slot, uint32_t* index) {
    // The key is the value's bits (zero-extended for INT32); its first
    // sizeof(T) bytes are the PLAIN encoding.
    uint64_t key;
    if constexpr (sizeof(T) == 4) {
      uint32_t bits;
      std::memcpy(&bits, &data_[slot], 4);
      key = bits;
    } else {
      std::memcpy(&key, &data_[slot], 8);
    }
    uint32_t found = writer_.dictionary_fixed_.Find(key);
    if (found == FixedDictionaryIndex::kNotFound) {
      if (writer_.dictionary_plain_.size() + sizeof(T) > writer_.options_.dictionary_bytes_limit) {
        return false;
      }
      found = writer_.dictionary_size_++;
      writer_.dictionary_fixed_.Insert(key);
      writer_.dictionary_plain_.append(reinterpret_cast<const char*>(&key), sizeof(T));
      writer_.UpdateStatistics(values_, slot);
    }
    *index = found;
    return true;
  }

  void Save() {}

 private:
  ColumnWriter& writer_;
  const ColumnVector& values_;
  const T* const data_;
};

template <typename F>
size_t ColumnWriter::WithLookup(const ColumnVector& values, F&& f) {
  auto run = [&f](auto lookup) {
    const size_t result = f(lookup);
    lookup.Save();
    return result;
  };
  switch (spec_.type) {
    case PhysicalType::kInt32:
      return run(FixedLookup<int32_t>(*this, values, values.int32s.data()));
    case PhysicalType::kInt64:
      return run(FixedLookup<int64_t>(*this, values, values.int64s.data()));
    case PhysicalType::kDouble:
      return run(FixedLookup<double>(*this, values, values.doubles.data()));
    default:
      return run(ByteLookup(*this, values));
  }
}

template <typename Lookup>
ABSL_ATTRIBUTE_ALWAYS_INLINE size_t ColumnWriter::AddDictionarySlots(const ColumnVector& values,
                                                                     size_t begin, size_t end,
                                                                     Lookup& lookup) {
  const uint8_t* const validity = values.validity.empty() ? nullptr : values.validity.data();
  // The indices go straight into room made for the whole run; slots that
  // were null or not reached are truncated away at the end.
  const size_t indices_begin = indices_.size();
  uint32_t* const first_out = indices_.Extend(end - begin);
  uint32_t* out = first_out;
  size_t slot = begin;
  for (; slot < end; ++slot) {
    if (validity != nullptr && validity[slot] == 0) continue;
    if (!lookup.Find(slot, out)) break;
    ++out;
  }
  indices_.Truncate(indices_begin + static_cast<size_t>(out - first_out));
  return slot;
}

size_t ColumnWriter::AddDictionaryRun(const ColumnVector& values, size_t begin, size_t end) {
  return WithLookup(values,
                    [&](auto& lookup) { return AddDictionarySlots(values, begin, end, lookup); });
}

void ColumnWriter::AddPlainValue(const ColumnVector& values, size_t row) {
  switch (spec_.type) {
    case PhysicalType::kBoolean:
      plain_bools_.push_back(values.bools[row]);
      break;
    case PhysicalType::kInt32:
      EncodePlainFixed(&values.int32s[row], 1, 4, &plain_values_);
      break;
    case PhysicalType::kInt64:
      EncodePlainFixed(&values.int64s[row], 1, 8, &plain_values_);
      break;
    case PhysicalType::kDouble:
      EncodePlainFixed(&values.doubles[row], 1, 8, &plain_values_);
      break;
    case PhysicalType::kByteArray:
      EncodePlainByteArray(values.bytes_at(row), &plain_values_);
      break;
    default: {
      const std::string_view v = values.bytes_at(row);
      plain_values_.append(v.data(), v.size());
      break;
    }
  }
  UpdateStatistics(values, row);
}

absl::Status ColumnWriter::FallBackToPlain() {
  STRATA_RETURN_IF_ERROR(FlushPage());
  dictionary_active_ = false;
  dictionary_allowed_ = false;
  // The dictionary itself stays until the chunk is flushed: the pages already
  // written refer to it. Its lookup tables are no longer needed.
  dictionary_bytes_.Clear();
  dictionary_fixed_.Clear();
  ForgetMemos();
  return absl::OkStatus();
}

template <typename AddValues>
size_t ColumnWriter::AddListRows(const ColumnVector& values, size_t begin, size_t end,
                                 AddValues&& add_values, bool* overflowed) {
  const uint8_t max_definition = static_cast<uint8_t>(spec_.max_definition_level());
  const uint8_t* const validity = values.validity.empty() ? nullptr : values.validity.data();
  const ListRange* const lists = values.lists.data();
  // Rows point anywhere in the element arrays (spans' attributes, in a table
  // shared by the spans), so the loop asks for the cache lines it will need
  // some rows ahead: an element's slot (its offset, for byte arrays),
  // validity and memo entry, and, once the offsets are in, the bytes. (A
  // null list's range is unchecked, hence the clamps.)
  constexpr size_t kPrefetchRows = 16;
  constexpr size_t kPrefetchBytesRows = 4;
  const bool byte_values =
      spec_.type == PhysicalType::kByteArray || spec_.type == PhysicalType::kFixedLenByteArray;
  const char* const slots =
      byte_values ? reinterpret_cast<const char*>(values.offsets.data()) : SlotData(values);
  const size_t slot_bytes =
      byte_values ? sizeof(uint64_t) : std::max<size_t>(1, FixedWidth(spec_.type));
  const uint64_t elements = values.element_count();
  size_t levels = 0;
  size_t row = begin;
  *overflowed = false;
  while (row < end) {
    if (row + kPrefetchRows < end) {
      const size_t ahead =
          static_cast<size_t>(std::min(lists[row + kPrefetchRows].begin, elements));
      __builtin_prefetch(slots + ahead * slot_bytes);
      if (validity != nullptr) __builtin_prefetch(validity + ahead);
      if (memo_enabled_) __builtin_prefetch(memo_by_begin_.data() + ahead);
      if (byte_values) {
        const size_t near =
            static_cast<size_t>(std::min(lists[row + kPrefetchBytesRows].begin, elements));
        __builtin_prefetch(values.bytes.data() + values.offsets[near]);
      }
    }
    const ListRange range = lists[row];
    const size_t count = static_cast<size_t>(range.count);
    const size_t first = static_cast<size_t>(range.begin);
    if (values.is_null_list(row) || count == 0) break;
    // The check before a row (the caller made it for the first).
    if (row > begin && page_values_ + levels + count > kMaxPageValues) break;
    // Repetition levels for the whole row at once: 0 then 1s.
    const size_t levels_begin = definition_levels_.size();
    repetition_levels_.push_back(0);
    repetition_levels_.Append(count - 1, 1);
    const int32_t m = memo_enabled_ ? memo_by_begin_[first] : -1;
    if (m >= 0 && memos_[m].count == range.count) {
      // Elements added before: the same levels, the same indices.
      const ListMemo& memo = memos_[m];
      definition_levels_.Append(memo_definition_levels_.data() + memo.levels_at, count);
      indices_.Append(memo_indices_.data() + memo.indices_at, memo.indices_count);
      null_count_ += memo.nulls;
    } else {
      // Definition levels: max_definition except for null elements.
      const size_t indices_begin = indices_.size();
      const int64_t nulls_begin = null_count_;
      definition_levels_.Append(count, max_definition);
      if (validity != nullptr) {
        uint8_t* definition = definition_levels_.data() + levels_begin;
        for (size_t k = 0; k < count; ++k) {
          if (validity[first + k] == 0) {
            definition[k] = static_cast<uint8_t>(max_definition - 1);
            ++null_count_;
          }
        }
      }
      if (!add_values(first, count)) {
        repetition_levels_.Truncate(levels_begin);
        definition_levels_.Truncate(levels_begin);
        indices_.Truncate(indices_begin);
        null_count_ = nulls_begin;
        *overflowed = true;
        break;
      }
      if (memo_enabled_ && dictionary_active_ && m < 0 &&
          memo_definition_levels_.size() + count <= kMaxMemoLevels) {
        RememberListRow(range.begin, range.count, levels_begin, indices_begin, nulls_begin);
      }
    }
    levels += count;
    ++row;
    // The check after a row: the page is full.
    if (page_rows_ + (row - begin) >= options_.data_page_max_rows ||
        OpenPageBytes() >= options_.data_page_bytes) {
      break;
    }
  }
  page_values_ += levels;
  chunk_values_ += static_cast<int64_t>(levels);
  page_rows_ += row - begin;
  chunk_rows_ += static_cast<int64_t>(row - begin);
  return row;
}

void ColumnWriter::RememberListRow(uint64_t first, uint64_t count, size_t levels_begin,
                                   size_t indices_begin, int64_t nulls_begin) {
  ListMemo memo;
  memo.count = count;
  memo.levels_at = static_cast<uint32_t>(memo_definition_levels_.size());
  memo.indices_at = static_cast<uint32_t>(memo_indices_.size());
  memo.indices_count = static_cast<uint32_t>(indices_.size() - indices_begin);
  memo.nulls = static_cast<uint32_t>(null_count_ - nulls_begin);
  memo_by_begin_[first] = static_cast<int32_t>(memos_.size());
  memos_.push_back(memo);
  memo_definition_levels_.Append(definition_levels_.data() + levels_begin,
                                 definition_levels_.size() - levels_begin);
  memo_indices_.Append(indices_.data() + indices_begin, indices_.size() - indices_begin);
}

absl::Status ColumnWriter::AddListRun(const ColumnVector& values, size_t begin, size_t end,
                                      size_t* added) {
  auto add_plain = [&](size_t first, size_t count) {
    for (size_t slot = first; slot < first + count; ++slot) {
      if (!values.is_null(slot)) AddPlainValue(values, slot);
    }
    return true;
  };
  bool overflowed = false;
  if (!dictionary_active_) {
    *added = AddListRows(values, begin, end, add_plain, &overflowed) - begin;
    return absl::OkStatus();
  }
  const size_t row = WithLookup(values, [&](auto& lookup) {
    auto add_indices = [&](size_t first, size_t count) {
      return AddDictionarySlots(values, first, first + count, lookup) == first + count;
    };
    return AddListRows(values, begin, end, add_indices, &overflowed);
  });
  if (overflowed) {
    // The rows before this one go into the page FallBackToPlain flushes;
    // the row, rewound, is written again PLAIN.
    STRATA_RETURN_IF_ERROR(FallBackToPlain());
    *added = AddListRows(values, row, row + 1, add_plain, &overflowed) - begin;
    return absl::OkStatus();
  }
  *added = row - begin;
  return absl::OkStatus();
}

absl::Status ColumnWriter::AppendRows(const ColumnVector& values, size_t begin, size_t end) {
  if (spec_.list) {
    PrepareListMemo(values);
    // A run at a time, as flat rows below: runs of empty or null lists (most
    // rows of most list columns), and runs of lists with elements.
    size_t row = begin;
    while (row < end) {
      const size_t row_levels =
          values.is_null_list(row) ? 1 : std::max<size_t>(1, values.lists[row].count);
      if (page_rows_ > 0 && page_values_ + row_levels > kMaxPageValues) {
        STRATA_RETURN_IF_ERROR(FlushPage());
      }
      if (const size_t run = SafeEmptyListRun(values, row, end); run > 0) {
        AddEmptyLists(values, row, row + run);
        row += run;
      } else {
        size_t added = 0;
        STRATA_RETURN_IF_ERROR(AddListRun(values, row, end, &added));
        row += added;
      }
      if (page_rows_ >= options_.data_page_max_rows ||
          OpenPageBytes() >= options_.data_page_bytes) {
        STRATA_RETURN_IF_ERROR(FlushPage());
      }
    }
    return absl::OkStatus();
  }
  // Flat rows go a run at a time: the page limits are checked after the
  // last row of each run only, and SafeFlatRun picks runs short enough that
  // a check after any earlier row could not have cut the page, so pages
  // (and the file bytes) are the same as with a check after every row.
  size_t row = begin;
  while (row < end) {
    const size_t run_end = row + SafeFlatRun(values, row, end);
    size_t added = 0;
    STRATA_RETURN_IF_ERROR(AddFlatRun(values, row, run_end, &added));
    row += added;
    if (page_rows_ >= options_.data_page_max_rows || OpenPageBytes() >= options_.data_page_bytes) {
      STRATA_RETURN_IF_ERROR(FlushPage());
    }
  }
  return absl::OkStatus();
}

size_t ColumnWriter::SafeEmptyListRun(const ColumnVector& values, size_t begin,
                                      size_t end) const {
  // The run of empty or null lists from begin (looked at in slices, so a
  // run costs about what it adds).
  constexpr size_t kMaxRun = 1024;
  const size_t limit = std::min(end, begin + kMaxRun);
  const ListRange* const lists = values.lists.data();
  size_t run_end = begin;
  if (values.list_validity.empty()) {
    while (run_end < limit && lists[run_end].count == 0) ++run_end;
  } else {
    const uint8_t* const list_validity = values.list_validity.data();
    while (run_end < limit && (list_validity[run_end] == 0 || lists[run_end].count == 0)) {
      ++run_end;
    }
  }
  if (run_end - begin <= 1) return run_end - begin;
  // Each such row adds one repetition and one definition level and no value,
  // so after j rows the open page's estimate is exactly the current one plus
  // 2j levels; neither page limit may fire before the run's last row, and the
  // level count never passes kMaxPageValues (whose check runs before a row).
  size_t k = std::min({run_end - begin, options_.data_page_max_rows - page_rows_,
                       kMaxPageValues - std::min(kMaxPageValues, page_values_)});
  const size_t levels = repetition_levels_.size() + definition_levels_.size();
  const size_t rest = OpenPageBytes() - levels / 8;
  while (k > 1 && (levels + 2 * (k - 1)) / 8 + rest >= options_.data_page_bytes) k /= 2;
  return k;
}

void ColumnWriter::AddEmptyLists(const ColumnVector& values, size_t begin, size_t end) {
  const size_t n = end - begin;
  const uint8_t list_present = spec_.list_optional() ? 1 : 0;
  repetition_levels_.Append(n, 0);
  if (values.list_validity.empty()) {
    definition_levels_.Append(n, list_present);
  } else {
    uint8_t* const definition = definition_levels_.Extend(n);
    const uint8_t* const list_validity = values.list_validity.data() + begin;
    for (size_t i = 0; i < n; ++i) definition[i] = list_validity[i] == 0 ? 0 : list_present;
  }
  null_count_ += static_cast<int64_t>(n);
  page_values_ += n;
  chunk_values_ += static_cast<int64_t>(n);
  page_rows_ += n;
  chunk_rows_ += static_cast<int64_t>(n);
}

size_t ColumnWriter::SafeFlatRun(const ColumnVector& values, size_t begin, size_t end) const {
  // Invariant: the open page is below both limits (every row so far ended
  // with a check). page_rows_ + k - 1 < data_page_max_rows keeps the row
  // limit from firing before row k; for the bytes, an upper bound of the
  // estimate OpenPageBytes() would give after j rows must stay below the
  // limit for j = k - 1. Each row adds at most one definition level, one
  // index (and one dictionary entry, which may widen every index), or one
  // PLAIN value whose size is known.
  size_t k = std::min(end - begin, options_.data_page_max_rows - page_rows_);
  const size_t levels = definition_levels_.size();
  const bool optional = spec_.optional();
  auto bound = [&](size_t j) -> size_t {
    size_t bytes = optional ? (levels + j) / 8 : 0;
    if (dictionary_active_) {
      const int width = BitWidthFor(static_cast<uint32_t>(
          std::min<size_t>(dictionary_size_ + j, std::numeric_limits<uint32_t>::max())));
      return bytes + 1 + (indices_.size() + j) * static_cast<size_t>(width) / 8;
    }
    switch (spec_.type) {
      case PhysicalType::kBoolean:
        return bytes + (plain_bools_.size() + j) / 8;
      case PhysicalType::kByteArray:
        return bytes + plain_values_.size() + 4 * j +
               (values.offsets[begin + j] - values.offsets[begin]);
      case PhysicalType::kFixedLenByteArray:
        return bytes + plain_values_.size() + values.offsets[begin + j] - values.offsets[begin];
      default:
        return bytes + plain_values_.size() + j * FixedWidth(spec_.type);
    }
  };
  while (k > 1 && bound(k - 1) >= options_.data_page_bytes) k /= 2;
  return std::max<size_t>(k, 1);
}

void ColumnWriter::AddFlatLevels(const ColumnVector& values, size_t begin, size_t end) {
  const size_t n = end - begin;
  if (values.validity.empty()) {
    if (spec_.optional()) definition_levels_.Append(n, 1);
  } else {
    // A validity byte (1 present, 0 null) is the row's definition level.
    const uint8_t* validity = values.validity.data() + begin;
    size_t present = 0;
    for (size_t i = 0; i < n; ++i) present += validity[i];
    null_count_ += static_cast<int64_t>(n - present);
    if (spec_.optional()) definition_levels_.Append(validity, n);
  }
  page_rows_ += n;
  page_values_ += n;
  chunk_rows_ += static_cast<int64_t>(n);
  chunk_values_ += static_cast<int64_t>(n);
}

absl::Status ColumnWriter::AddFlatRun(const ColumnVector& values, size_t begin, size_t end,
                                      size_t* added) {
  if (!dictionary_active_) {
    AddPlainRun(values, begin, end);
    AddFlatLevels(values, begin, end);
    *added = end - begin;
    return absl::OkStatus();
  }
  if (const size_t row = AddDictionaryRun(values, begin, end); row < end) {
    // The rows before this one go into the page FallBackToPlain flushes.
    AddFlatLevels(values, begin, row);
    STRATA_RETURN_IF_ERROR(FallBackToPlain());
    AddPlainValue(values, row);
    AddFlatLevels(values, row, row + 1);
    *added = row + 1 - begin;
    return absl::OkStatus();
  }
  AddFlatLevels(values, begin, end);
  *added = end - begin;
  return absl::OkStatus();
}

void ColumnWriter::AddPlainRun(const ColumnVector& values, size_t begin, size_t end) {
  const size_t n = end - begin;
  if (values.validity.empty()) {
    switch (spec_.type) {
      case PhysicalType::kInt64:
        // Whole runs of ids and times: one copy, then the bounds.
        EncodePlainFixed(values.int64s.data() + begin, n, 8, &plain_values_);
        for (size_t row = begin; row < end; ++row) UpdateStatistics(values, row);
        return;
      case PhysicalType::kFixedLenByteArray: {
        // PLAIN FIXED_LEN_BYTE_ARRAY is the values back to back, as they are
        // in the vector.
        const uint64_t first = values.offsets[begin];
        plain_values_.append(values.bytes, first, values.offsets[end] - first);
        for (size_t row = begin; row < end; ++row) UpdateStatistics(values, row);
        return;
      }
      default:
        break;
    }
  }
  for (size_t row = begin; row < end; ++row) {
    if (!values.is_null(row)) AddPlainValue(values, row);
  }
}

size_t ColumnWriter::buffered_bytes() const {
  return pages_.size() + OpenPageBytes() + dictionary_plain_.size();
}

absl::Status ColumnWriter::FlushPage() {
  if (page_rows_ == 0) return absl::OkStatus();
  page_body_.clear();
  if (spec_.max_repetition_level() > 0) {
    EncodeLevelsV1(repetition_levels_.data(), repetition_levels_.size(),
                   spec_.max_repetition_level(), &page_body_);
  }
  if (spec_.max_definition_level() > 0) {
    EncodeLevelsV1(definition_levels_.data(), definition_levels_.size(),
                   spec_.max_definition_level(), &page_body_);
  }
  Encoding encoding = Encoding::kPlain;
  // A dictionary page with no entries is legal but unusual; an all-null page
  // before the first value is written PLAIN (it has no values) instead.
  if (dictionary_active_ && dictionary_size_ > 0) {
    encoding = Encoding::kRleDictionary;
    const int width = BitWidthFor(dictionary_size_ - 1);
    page_body_.push_back(static_cast<char>(width));
    EncodeRleHybrid(indices_.data(), indices_.size(), width, &page_body_);
    wrote_dictionary_page_data_ = true;
  } else if (spec_.type == PhysicalType::kBoolean) {
    EncodePlainBooleans(plain_bools_.data(), plain_bools_.size(), &page_body_);
    wrote_plain_page_ = true;
  } else {
    page_body_.append(plain_values_);
    wrote_plain_page_ = true;
  }
  STRATA_RETURN_IF_ERROR(compressor_->Compress(page_body_, &compressed_, options_.zstd_level));

  PageHeader header;
  header.type = PageType::kDataPage;
  header.uncompressed_page_size = static_cast<int32_t>(page_body_.size());
  header.compressed_page_size = static_cast<int32_t>(compressed_.size());
  DataPageHeader& data = header.data_page_header.emplace();
  data.num_values = static_cast<int32_t>(page_values_);
  data.encoding = encoding;
  data.definition_level_encoding = Encoding::kRle;
  data.repetition_level_encoding = Encoding::kRle;
  header_.clear();
  SerializePageHeader(header, &header_);
  PageLocation& location = page_locations_.emplace_back();
  location.offset = static_cast<int64_t>(pages_.size());  // made absolute in FlushChunk
  location.compressed_page_size = static_cast<int32_t>(header_.size() + compressed_.size());
  location.first_row_index = chunk_rows_ - static_cast<int64_t>(page_rows_);
  pages_.append(header_);
  pages_.append(compressed_);
  pages_uncompressed_bytes_ += static_cast<int64_t>(header_.size() + page_body_.size());

  repetition_levels_.clear();
  definition_levels_.clear();
  indices_.clear();
  plain_bools_.clear();
  plain_values_.clear();
  page_rows_ = 0;
  page_values_ = 0;
  return absl::OkStatus();
}

Statistics ColumnWriter::BuildStatistics() const {
  Statistics stats;
  stats.null_count = null_count_;
  if (!has_bounds_) return stats;
  auto fixed = [](const void* p, size_t n) { return std::string(static_cast<const char*>(p), n); };
  switch (spec_.type) {
    case PhysicalType::kBoolean: {
      const uint8_t lo = static_cast<uint8_t>(min_int_), hi = static_cast<uint8_t>(max_int_);
      stats.min_value = fixed(&lo, 1);
      stats.max_value = fixed(&hi, 1);
      break;
    }
    case PhysicalType::kInt32: {
      const int32_t lo = static_cast<int32_t>(min_int_), hi = static_cast<int32_t>(max_int_);
      stats.min_value = fixed(&lo, 4);
      stats.max_value = fixed(&hi, 4);
      break;
    }
    case PhysicalType::kInt64:
      stats.min_value = fixed(&min_int_, 8);
      stats.max_value = fixed(&max_int_, 8);
      break;
    case PhysicalType::kDouble: {
      // Parquet asks for -0.0 as a zero minimum and +0.0 as a zero maximum so
      // readers need not care which zero the data held.
      const double lo = min_double_ == 0 ? -0.0 : min_double_;
      const double hi = max_double_ == 0 ? 0.0 : max_double_;
      stats.min_value = fixed(&lo, 8);
      stats.max_value = fixed(&hi, 8);
      break;
    }
    case PhysicalType::kFixedLenByteArray:
      if (static_cast<size_t>(spec_.type_length) <= options_.statistics_max_bytes) {
        stats.min_value = min_bytes_;
        stats.max_value = max_bytes_;
      }
      break;
    default: {
      const bool utf8 = spec_.logical_type.kind == LogicalType::Kind::kString;
      bool min_exact = true, max_exact = true;
      stats.min_value = LowerBound(min_bytes_, options_.statistics_max_bytes, utf8, &min_exact);
      std::optional<std::string> max =
          UpperBound(max_bytes_, options_.statistics_max_bytes, utf8, &max_exact);
      if (!max) {
        stats.min_value.reset();
        break;
      }
      stats.max_value = std::move(max);
      if (!min_exact) stats.is_min_value_exact = false;
      if (!max_exact) stats.is_max_value_exact = false;
      break;
    }
  }
  if (stats.min_value && !stats.is_min_value_exact) stats.is_min_value_exact = true;
  if (stats.max_value && !stats.is_max_value_exact) stats.is_max_value_exact = true;
  return stats;
}

absl::StatusOr<ColumnChunk> ColumnWriter::FlushChunk(int64_t file_offset, ByteSink& sink,
                                                     OffsetIndex* offset_index) {
  STRATA_RETURN_IF_ERROR(FlushPage());
  ColumnChunk chunk;
  chunk.file_offset = file_offset;
  ColumnMetaData& meta = chunk.meta_data.emplace();
  meta.type = spec_.type;
  meta.path_in_schema = {spec_.name};
  if (spec_.list) {
    meta.path_in_schema.push_back("list");
    meta.path_in_schema.push_back("element");
  }
  meta.codec = compressor_->codec();
  meta.num_values = chunk_values_;

  int64_t offset = file_offset;
  int64_t uncompressed = 0, compressed = 0;
  if (wrote_dictionary_page_data_) {
    STRATA_RETURN_IF_ERROR(
        compressor_->Compress(dictionary_plain_, &compressed_, options_.zstd_level));
    PageHeader header;
    header.type = PageType::kDictionaryPage;
    header.uncompressed_page_size = static_cast<int32_t>(dictionary_plain_.size());
    header.compressed_page_size = static_cast<int32_t>(compressed_.size());
    DictionaryPageHeader& dict = header.dictionary_page_header.emplace();
    dict.num_values = static_cast<int32_t>(dictionary_size_);
    dict.encoding = Encoding::kPlain;
    header_.clear();
    SerializePageHeader(header, &header_);
    STRATA_RETURN_IF_ERROR(sink.Append(header_));
    STRATA_RETURN_IF_ERROR(sink.Append(compressed_));
    meta.dictionary_page_offset = offset;
    offset += static_cast<int64_t>(header_.size() + compressed_.size());
    uncompressed += static_cast<int64_t>(header_.size() + dictionary_plain_.size());
    compressed += static_cast<int64_t>(header_.size() + compressed_.size());
    meta.encodings.push_back(Encoding::kPlain);
    meta.encodings.push_back(Encoding::kRleDictionary);
  }
  if (wrote_plain_page_ && !wrote_dictionary_page_data_) meta.encodings.push_back(Encoding::kPlain);
  if (spec_.max_definition_level() > 0) meta.encodings.push_back(Encoding::kRle);
  if (meta.encodings.empty()) meta.encodings.push_back(Encoding::kPlain);
  meta.data_page_offset = offset;
  if (offset_index != nullptr) {
    offset_index->page_locations = page_locations_;
    for (PageLocation& location : offset_index->page_locations) location.offset += offset;
  }
  STRATA_RETURN_IF_ERROR(sink.Append(pages_));
  uncompressed += pages_uncompressed_bytes_;
  compressed += static_cast<int64_t>(pages_.size());
  meta.total_uncompressed_size = uncompressed;
  meta.total_compressed_size = compressed;
  meta.statistics = BuildStatistics();
  ResetChunk();
  return chunk;
}

}  // namespace strata::parquet
