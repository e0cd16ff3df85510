#include "parquet/column_writer.h"

#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "parquet/encoding.h"
#include "parquet/file_writer.h"

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
      const int width = BitWidthFor(
          dictionary_size == 0 ? 0 : static_cast<uint32_t>(dictionary_size - 1));
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

}  // namespace
}  // namespace strata::parquet
