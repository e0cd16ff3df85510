#include "parquet/column_writer.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "parquet/encoding.h"
#include "parquet/file_writer.h"
#include "parquet/testing/parquet_testing.h"

namespace strata::parquet {
namespace {

// ColumnWriter adds flat rows, and runs of empty lists, several at a time
// and checks the page limits once per run. These tests hold it to the rule
// the class comment states: a page is cut after the first row at which the
// open page's estimate reaches data_page_bytes or its rows reach
// data_page_max_rows. A reference model replays that rule row by row and
// the writer's page index must list the same first rows.

// The first row of every data page of the one chunk `values` makes, added in
// random slices (as FileWriter hands them over).
std::vector<int64_t> PageFirstRows(const ColumnSpec& spec, const ColumnWriterOptions& options,
                                   const ColumnVector& values, std::mt19937_64& rng) {
  PageCompressor compressor(CompressionCodec::kUncompressed, 0);
  ColumnWriter writer(spec, options, &compressor);
  writer.BeginBatch();
  size_t row = 0;
  while (row < values.size()) {
    const size_t end = std::min(values.size(), row + 1 + rng() % 700);
    EXPECT_TRUE(writer.AppendRows(values, row, end).ok());
    row = end;
  }
  std::string file;
  StringSink sink(&file);
  OffsetIndex index;
  EXPECT_TRUE(writer.FlushChunk(0, sink, &index).ok());
  std::vector<int64_t> first_rows;
  for (const PageLocation& location : index.page_locations) {
    first_rows.push_back(location.first_row_index);
  }
  return first_rows;
}

// The reference: the estimate after every row, as the class comment gives
// it (levels / 8, plus 1 + indices * width / 8 with a dictionary, else the
// PLAIN bytes), and a cut as soon as a limit is reached.
class PageModel {
 public:
  explicit PageModel(const ColumnWriterOptions& options) : options_(options) {}

  // One row of `levels` level entries per level stream (`streams` of them),
  // adding `plain_bytes` PLAIN bytes or `indices` dictionary indices.
  void AddRow(size_t levels, int streams, size_t plain_bytes, size_t indices,
              size_t dictionary_size) {
    level_entries_ += levels * static_cast<size_t>(streams);
    plain_bytes_ += plain_bytes;
    indices_ += indices;
    ++page_rows_;
    ++row_;
    size_t estimate = level_entries_ / 8;
    if (options_.dictionary_enabled) {
      const int width =
          BitWidthFor(dictionary_size == 0 ? 0 : static_cast<uint32_t>(dictionary_size - 1));
      estimate += 1 + indices_ * static_cast<size_t>(width) / 8;
    } else {
      estimate += plain_bytes_;
    }
    if (page_rows_ >= options_.data_page_max_rows || estimate >= options_.data_page_bytes) {
      first_rows_.push_back(row_);
      level_entries_ = plain_bytes_ = indices_ = page_rows_ = 0;
    }
  }
  // The first rows of the pages, given `rows` rows in all.
  std::vector<int64_t> FirstRows(size_t rows) const {
    std::vector<int64_t> out = first_rows_;
    if (!out.empty() && out.back() == static_cast<int64_t>(rows)) out.pop_back();
    return out;
  }

 private:
  const ColumnWriterOptions options_;
  size_t level_entries_ = 0, plain_bytes_ = 0, indices_ = 0, page_rows_ = 0;
  int64_t row_ = 0;
  std::vector<int64_t> first_rows_{0};
};

ColumnWriterOptions SmallPages(bool dictionary, uint64_t seed) {
  ColumnWriterOptions options;
  options.dictionary_enabled = dictionary;
  options.data_page_bytes = 40 + seed % 300;
  options.data_page_max_rows = 50 + seed % 900;
  return options;
}

TEST(ColumnWriterPagesTest, FlatPlainInt64CutsWhereARowByRowCheckWould) {
  for (uint64_t seed = 0; seed < 40; ++seed) {
    std::mt19937_64 rng(seed);
    const ColumnWriterOptions options = SmallPages(false, seed);
    const bool optional = seed % 2 == 0;
    ColumnVector values(PhysicalType::kInt64);
    PageModel model(options);
    for (int i = 0; i < 6000; ++i) {
      const bool present = !optional || rng() % 3 != 0;
      if (present) {
        values.AppendInt64(static_cast<int64_t>(rng()));
      } else {
        values.AppendNull();
      }
      model.AddRow(optional ? 1 : 0, 1, present ? 8 : 0, 0, 0);
    }
    EXPECT_EQ(PageFirstRows(ColumnSpec::Int64("v", optional), options, values, rng),
              model.FirstRows(values.size()))
        << "seed " << seed;
  }
}

TEST(ColumnWriterPagesTest, FlatByteArraysCutWhereARowByRowCheckWould) {
  for (uint64_t seed = 0; seed < 40; ++seed) {
    std::mt19937_64 rng(seed);
    const bool dictionary = seed % 2 == 0;
    const ColumnWriterOptions options = SmallPages(dictionary, seed);
    ColumnVector values(PhysicalType::kByteArray);
    PageModel model(options);
    std::set<std::string> seen;
    // Few distinct values at first, more later, so the index width grows
    // inside pages.
    for (int i = 0; i < 6000; ++i) {
      const bool present = rng() % 4 != 0;
      size_t length = 0;
      if (present) {
        const std::string value = std::to_string(rng() % (2 + static_cast<uint64_t>(i) / 8));
        values.AppendBytes(value);
        seen.insert(value);
        length = value.size();
      } else {
        values.AppendNull();
      }
      model.AddRow(1, 1, present ? 4 + length : 0, present ? 1 : 0, seen.size());
    }
    EXPECT_EQ(PageFirstRows(ColumnSpec::String("v", true), options, values, rng),
              model.FirstRows(values.size()))
        << "seed " << seed;
  }
}

TEST(ColumnWriterPagesTest, FlatFixedBytesCutWhereARowByRowCheckWould) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    std::mt19937_64 rng(seed);
    const ColumnWriterOptions options = SmallPages(false, seed);
    const bool optional = seed % 2 == 1;
    ColumnVector values(PhysicalType::kFixedLenByteArray);
    PageModel model(options);
    for (int i = 0; i < 4000; ++i) {
      const bool present = !optional || rng() % 5 != 0;
      if (present) {
        values.AppendBytes(std::string(8, static_cast<char>('a' + rng() % 26)));
      } else {
        values.AppendNull();
      }
      model.AddRow(optional ? 1 : 0, 1, present ? 8 : 0, 0, 0);
    }
    EXPECT_EQ(PageFirstRows(ColumnSpec::FixedBytes("v", 8, optional), options, values, rng),
              model.FirstRows(values.size()))
        << "seed " << seed;
  }
}

TEST(ColumnWriterPagesTest, ListsWithRunsOfEmptyListsCutWhereARowByRowCheckWould) {
  for (uint64_t seed = 0; seed < 40; ++seed) {
    std::mt19937_64 rng(seed);
    const ColumnWriterOptions options = SmallPages(false, seed);
    const bool optional_list = seed % 2 == 0;
    ColumnVector values = ColumnVector::List(PhysicalType::kInt64);
    PageModel model(options);
    for (int i = 0; i < 6000; ++i) {
      // Mostly empty (and, when allowed, null) lists, in runs of any length.
      const uint64_t pick = rng() % 10;
      if (pick < 2) {
        const size_t count = 1 + rng() % 4;
        values.AppendList(values.int64s.size(), count);
        for (size_t k = 0; k < count; ++k) values.int64s.push_back(static_cast<int64_t>(rng()));
        model.AddRow(count, 2, 8 * count, 0, 0);
      } else if (pick < 4 && optional_list) {
        values.AppendNullList();
        model.AddRow(1, 2, 0, 0, 0);
      } else {
        values.AppendList(0, 0);
        model.AddRow(1, 2, 0, 0, 0);
      }
    }
    EXPECT_EQ(PageFirstRows(ColumnSpec::List(ColumnSpec::Int64("v"), optional_list), options,
                            values, rng),
              model.FirstRows(values.size()))
        << "seed " << seed;
  }
}

// Lists with elements go a run at a time too. The reference here is the
// writer itself handed one row per AppendRows call, which checks the page
// limits after every row: runs must give the same bytes, metadata and page
// index, across page cuts, null and empty lists, null elements, rows
// sharing element ranges (the memo) and a dictionary overflow in a run.

struct WrittenChunks {
  std::string bytes;
  std::vector<ColumnChunk> chunks;
  std::vector<OffsetIndex> indexes;
  bool fell_back = false;
};

// Writes each of `batches` as one chunk, in slices of at most max_slice rows
// (1: a row per call).
WrittenChunks WriteListChunks(const ColumnSpec& spec, const ColumnWriterOptions& options,
                              const std::vector<ColumnVector>& batches, size_t max_slice,
                              uint64_t seed) {
  std::mt19937_64 rng(seed);
  PageCompressor compressor(CompressionCodec::kUncompressed, 0);
  ColumnWriter writer(spec, options, &compressor);
  WrittenChunks out;
  StringSink sink(&out.bytes);
  for (const ColumnVector& values : batches) {
    writer.BeginBatch();
    size_t row = 0;
    while (row < values.size()) {
      const size_t end = std::min(values.size(), row + 1 + rng() % max_slice);
      EXPECT_TRUE(writer.AppendRows(values, row, end).ok());
      row = end;
    }
    OffsetIndex index;
    absl::StatusOr<ColumnChunk> chunk =
        writer.FlushChunk(static_cast<int64_t>(out.bytes.size()), sink, &index);
    EXPECT_TRUE(chunk.ok());
    out.chunks.push_back(*chunk);
    out.indexes.push_back(index);
  }
  out.fell_back = writer.dictionary_fallen_back();
  return out;
}

// A batch of list rows over a shared pool of elements (some null): null and
// empty lists, ranges anywhere in the pool, and ranges repeated from
// earlier rows (so the writer remembers rows). Values are drawn from a
// range that widens along the pool, so the dictionary grows and, with a
// small dictionary_bytes_limit, overflows partway.
ColumnVector MakeListBatch(PhysicalType type, bool optional_list, bool optional_element,
                           std::mt19937_64& rng) {
  ColumnVector values = ColumnVector::List(type);
  const size_t pool = 200 + rng() % 400;
  for (size_t i = 0; i < pool; ++i) {
    if (optional_element && rng() % 7 == 0) {
      values.AppendNull();
      continue;
    }
    const uint64_t v = rng() % (4 + i);
    switch (type) {
      case PhysicalType::kBoolean:
        values.AppendBool(v % 2 == 1);
        break;
      case PhysicalType::kInt32:
        values.AppendInt32(static_cast<int32_t>(v));
        break;
      case PhysicalType::kInt64:
        values.AppendInt64(static_cast<int64_t>(v * 1000003));
        break;
      case PhysicalType::kDouble:
        values.AppendDouble(static_cast<double>(v) / 4);
        break;
      case PhysicalType::kFixedLenByteArray:
        values.AppendBytes(fmt::format("{:08}", v));
        break;
      default:
        values.AppendBytes(std::string(v % 5, 'x') + std::to_string(v));
        break;
    }
  }
  const size_t rows = 1500 + rng() % 1500;
  for (size_t row = 0; row < rows; ++row) {
    const uint64_t pick = rng() % 20;
    if (pick < 2 && optional_list) {
      values.AppendNullList();
    } else if (pick < 4) {
      values.AppendList(0, 0);
    } else if (pick < 12 && row > 0) {
      // An earlier row's range, or a range starting where it did.
      const ListRange earlier = values.lists[rng() % row];
      const uint64_t count = rng() % 4 == 0 ? 1 + rng() % 8 : earlier.count;
      if (count == 0 || earlier.begin + count > pool) {
        values.AppendList(0, 0);
      } else {
        values.AppendList(earlier.begin, count);
      }
    } else {
      const uint64_t count = 1 + rng() % 12;
      values.AppendList(rng() % (pool - count), count);
    }
  }
  return values;
}

ColumnSpec ElementSpec(PhysicalType type, bool optional) {
  switch (type) {
    case PhysicalType::kBoolean:
      return ColumnSpec::Boolean("v", optional);
    case PhysicalType::kInt32:
      return ColumnSpec::Int32("v", optional);
    case PhysicalType::kInt64:
      return ColumnSpec::Int64("v", optional);
    case PhysicalType::kDouble:
      return ColumnSpec::Double("v", optional);
    case PhysicalType::kFixedLenByteArray:
      return ColumnSpec::FixedBytes("v", 8, optional);
    default:
      return ColumnSpec::String("v", optional);
  }
}

// Checks that every RLE_DICTIONARY data page in `bytes` (uncompressed
// chunks) holds one index per present value and nothing more: decoding its
// levels and indices and encoding the indices again gives the page's
// remaining bytes back. Rows rewound after a dictionary overflow must leave
// no indices behind, which a reader would not notice.
void ExpectDictionaryPagesHoldTheirValues(std::string_view bytes, int max_definition,
                                          uint64_t seed) {
  while (!bytes.empty()) {
    size_t consumed = 0;
    absl::StatusOr<PageHeader> header = ParsePageHeader(bytes, &consumed);
    ASSERT_TRUE(header.ok()) << header.status();
    std::string_view body = bytes.substr(consumed, header->compressed_page_size);
    bytes.remove_prefix(consumed + body.size());
    if (header->type != PageType::kDataPage ||
        header->data_page_header->encoding != Encoding::kRleDictionary) {
      continue;
    }
    const size_t n = static_cast<size_t>(header->data_page_header->num_values);
    std::vector<uint8_t> repetition(n), definition(n);
    ASSERT_TRUE(DecodeLevelsV1(&body, n, 1, repetition.data()).ok());
    ASSERT_TRUE(DecodeLevelsV1(&body, n, max_definition, definition.data()).ok());
    const size_t present =
        static_cast<size_t>(std::count(definition.begin(), definition.end(), max_definition));
    ASSERT_FALSE(body.empty());
    const int width = static_cast<uint8_t>(body[0]);
    body.remove_prefix(1);
    std::vector<uint32_t> indices(present);
    RleHybridDecoder decoder(body, width);
    ASSERT_TRUE(decoder.Decode(indices.data(), present).ok()) << "seed " << seed;
    std::string again;
    EncodeRleHybrid(indices.data(), present, width, &again);
    EXPECT_EQ(again, body) << "seed " << seed;
  }
}

TEST(ColumnWriterListRunTest, RunsWriteTheBytesOfOneRowAtATime) {
  const PhysicalType types[] = {PhysicalType::kByteArray,
                                PhysicalType::kInt64,
                                PhysicalType::kInt32,
                                PhysicalType::kDouble,
                                PhysicalType::kFixedLenByteArray,
                                PhysicalType::kBoolean};
  int fallbacks = 0;
  for (uint64_t seed = 0; seed < 120; ++seed) {
    std::mt19937_64 rng(seed);
    const PhysicalType type = types[seed % 6];
    const bool optional_list = rng() % 2 == 0;
    const bool optional_element = rng() % 2 == 0;
    ColumnWriterOptions options;
    options.dictionary_enabled = rng() % 5 != 0;
    switch (rng() % 4) {
      case 0:  // tiny pages by bytes
        options.data_page_bytes = 8 + rng() % 200;
        break;
      case 1:  // tiny pages by rows
        options.data_page_max_rows = 1 + rng() % 60;
        break;
      case 2:  // both
        options.data_page_bytes = 30 + rng() % 600;
        options.data_page_max_rows = 5 + rng() % 300;
        break;
      default:  // the defaults: one page per chunk
        break;
    }
    // Half the runs overflow the dictionary somewhere in the first batch.
    if (rng() % 2 == 0) options.dictionary_bytes_limit = 40 + rng() % 600;
    std::vector<ColumnVector> batches;
    for (int i = 0; i < 3; ++i) {
      batches.push_back(MakeListBatch(type, optional_list, optional_element, rng));
    }
    const ColumnSpec spec = ColumnSpec::List(ElementSpec(type, optional_element), optional_list);
    const WrittenChunks one = WriteListChunks(spec, options, batches, 1, seed);
    const WrittenChunks runs = WriteListChunks(spec, options, batches, 3000, seed);
    EXPECT_EQ(one.bytes, runs.bytes) << "seed " << seed;
    EXPECT_EQ(one.chunks, runs.chunks) << "seed " << seed;
    EXPECT_EQ(one.indexes, runs.indexes) << "seed " << seed;
    EXPECT_EQ(one.fell_back, runs.fell_back) << "seed " << seed;
    if (runs.fell_back) ++fallbacks;
    // What both must hold, counted here: level entries, and those below the
    // maximum definition level (null and empty lists, null elements).
    for (size_t i = 0; i < batches.size() && i < runs.chunks.size(); ++i) {
      const ColumnVector& values = batches[i];
      int64_t level_entries = 0, nulls = 0;
      for (size_t row = 0; row < values.size(); ++row) {
        const ListRange range = values.lists[row];
        if (values.is_null_list(row) || range.count == 0) {
          ++level_entries;
          ++nulls;
          continue;
        }
        level_entries += static_cast<int64_t>(range.count);
        for (uint64_t k = range.begin; k < range.begin + range.count; ++k) {
          nulls += values.is_null(k) ? 1 : 0;
        }
      }
      const ColumnMetaData& meta = *runs.chunks[i].meta_data;
      EXPECT_EQ(meta.num_values, level_entries) << "seed " << seed;
      EXPECT_EQ(meta.statistics->null_count, nulls) << "seed " << seed;
    }
    ExpectDictionaryPagesHoldTheirValues(runs.bytes, spec.max_definition_level(), seed);
    // And the reader gives the rows back.
    if (seed % 3 == 0) {
      WriterOptions writer_options;
      writer_options.column = options;
      const std::string file =
          parquet_testing::WriteTable({spec}, {batches[0]}, writer_options, batches[0].size());
      parquet_testing::ExpectReaderReturnsTable(file, {spec}, {batches[0]}, seed, 5, 500);
    }
  }
  // The overflow case was exercised.
  EXPECT_GT(fallbacks, 10);
}

TEST(ColumnWriterPagesTest, ListsWithElementsCutWhereARowByRowCheckWould) {
  for (uint64_t seed = 0; seed < 40; ++seed) {
    std::mt19937_64 rng(seed);
    const bool dictionary = seed % 2 == 0;
    const ColumnWriterOptions options = SmallPages(dictionary, seed);
    ColumnVector values = ColumnVector::List(PhysicalType::kByteArray);
    PageModel model(options);
    std::set<std::string> seen;
    for (int i = 0; i < 4000; ++i) {
      // Rows of one to six strings, a few null, from a widening range of
      // values so the index width grows inside pages.
      const size_t count = 1 + rng() % 6;
      values.AppendList(values.element_count(), count);
      size_t plain_bytes = 0, present = 0;
      for (size_t k = 0; k < count; ++k) {
        if (rng() % 8 == 0) {
          values.AppendNull();
          continue;
        }
        const std::string value = std::to_string(rng() % (2 + static_cast<uint64_t>(i) / 4));
        values.AppendBytes(value);
        seen.insert(value);
        plain_bytes += 4 + value.size();
        ++present;
      }
      model.AddRow(count, 2, plain_bytes, present, seen.size());
    }
    EXPECT_EQ(PageFirstRows(ColumnSpec::List(ColumnSpec::String("v", true)), options, values, rng),
              model.FirstRows(values.size()))
        << "seed " << seed;
  }
}

}  // namespace
}  // namespace strata::parquet
