// FileReader::ChunkMayHold: a value absent from a chunk is reported absent
// only when the statistics or a dictionary that covers every page prove it;
// every value present is always reported as possibly there.

#include <cstdint>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "parquet/column_vector.h"
#include "parquet/file_reader.h"
#include "parquet/file_writer.h"
#include "parquet/testing/parquet_testing.h"

namespace strata::parquet {
namespace {

// A file of one LIST<STRING> column `keys` (row i holds the keys
// `pick(i)` gives) and one flat STRING column `name`.
struct KeysFile {
  std::string bytes;
  std::set<std::string> keys;  // every key some row holds
};

KeysFile WriteKeys(size_t rows, const std::vector<std::string>& vocabulary, uint64_t seed,
                   size_t dictionary_limit, int64_t row_group_rows) {
  std::mt19937_64 rng(seed);
  ColumnVector keys = ColumnVector::List(PhysicalType::kByteArray);
  ColumnVector name(PhysicalType::kByteArray);
  KeysFile out;
  for (size_t row = 0; row < rows; ++row) {
    const uint64_t begin = keys.element_count();
    const size_t count = vocabulary.empty() ? 0 : rng() % 4;
    for (size_t i = 0; i < count; ++i) {
      const std::string& key = vocabulary[rng() % vocabulary.size()];
      keys.AppendBytes(key);
      out.keys.insert(key);
    }
    keys.AppendList(begin, count);
    name.AppendBytes(vocabulary.empty() ? "" : vocabulary[row % vocabulary.size()]);
  }
  WriterOptions options;
  options.column.dictionary_bytes_limit = dictionary_limit;
  options.column.data_page_max_rows = 500;
  options.row_group_max_rows = row_group_rows;
  out.bytes = parquet_testing::WriteTable(
      {ColumnSpec::List(ColumnSpec::String("keys")), ColumnSpec::String("name")}, {keys, name},
      options, rows);
  return out;
}

// Whether any chunk of `column` may hold `value`.
bool AnyChunkMayHold(FileReader& reader, int column, const std::string& value,
                     int64_t max_read_bytes = 0) {
  bool any = false;
  for (size_t g = 0; g < reader.metadata().row_groups.size(); ++g) {
    absl::StatusOr<bool> may =
        reader.ChunkMayHold(static_cast<int>(g), column, value, max_read_bytes);
    EXPECT_TRUE(may.ok()) << may.status();
    any = any || may.value_or(true);
  }
  return any;
}

std::vector<std::string> Vocabulary(size_t n, const std::string& prefix) {
  std::vector<std::string> words;
  for (size_t i = 0; i < n; ++i) words.push_back(prefix + std::to_string(i * 7 % n));
  return words;
}

TEST(ChunkMayHoldTest, DictionaryChunksAnswerExactlyAndPresentKeysAreNeverMissed) {
  const std::vector<std::string> vocabulary = Vocabulary(40, "key.");
  const KeysFile file = WriteKeys(5000, vocabulary, 7, 16 << 10, 2000);
  StringSource source(file.bytes);
  absl::StatusOr<std::unique_ptr<FileReader>> reader = FileReader::Open(&source);
  ASSERT_TRUE(reader.ok()) << reader.status();
  ASSERT_GT((*reader)->metadata().row_groups.size(), 1u);
  const int keys = (*reader)->FindColumn("keys");
  ASSERT_GE(keys, 0);
  for (const std::string& key : file.keys) {
    EXPECT_TRUE(AnyChunkMayHold(**reader, keys, key)) << key;
  }
  // Inside the statistics' range, so only the dictionary can tell: a key
  // between two present ones, and one sharing a present key's prefix.
  for (const std::string absent : {"key.10x", "key.1a", "key.", "key.3 "}) {
    ASSERT_FALSE(file.keys.contains(absent));
    EXPECT_FALSE(AnyChunkMayHold(**reader, keys, absent)) << absent;
  }
  // Outside the statistics' range.
  EXPECT_FALSE(AnyChunkMayHold(**reader, keys, "a"));
  EXPECT_FALSE(AnyChunkMayHold(**reader, keys, "zzz"));
  EXPECT_FALSE(AnyChunkMayHold(**reader, keys, ""));
  // The flat column too.
  const int name = (*reader)->FindColumn("name");
  EXPECT_TRUE(AnyChunkMayHold(**reader, name, vocabulary[3]));
  EXPECT_FALSE(AnyChunkMayHold(**reader, name, "key.10x"));
}

TEST(ChunkMayHoldTest, AChunkThatFellBackToPlainIsReadWhenSmallEnough) {
  // 3,000 distinct keys pass a 1 KiB dictionary early: later pages are
  // PLAIN, so a key the dictionary lacks may still be in them, unless the
  // chunk is read.
  const std::vector<std::string> vocabulary = Vocabulary(3000, "key.");
  const KeysFile file = WriteKeys(4000, vocabulary, 11, 1 << 10, 1 << 20);
  StringSource source(file.bytes);
  absl::StatusOr<std::unique_ptr<FileReader>> reader = FileReader::Open(&source);
  ASSERT_TRUE(reader.ok()) << reader.status();
  const int keys = (*reader)->FindColumn("keys");
  for (const std::string& key : file.keys) {
    ASSERT_TRUE(AnyChunkMayHold(**reader, keys, key)) << key;
    ASSERT_TRUE(AnyChunkMayHold(**reader, keys, key, 1 << 20)) << key;
  }
  // Absent, inside the range: with PLAIN pages only a read rules it out.
  EXPECT_TRUE(AnyChunkMayHold(**reader, keys, "key.10x"));
  EXPECT_FALSE(AnyChunkMayHold(**reader, keys, "key.10x", 1 << 20));
}

TEST(ChunkMayHoldTest, AChunkOfEmptyListsHasNoDictionaryAndHoldsNothing) {
  // Every row's list empty: no values, no statistics bounds, no
  // dictionary page.
  const KeysFile file = WriteKeys(3000, {}, 3, 16 << 10, 1 << 20);
  ASSERT_TRUE(file.keys.empty());
  StringSource source(file.bytes);
  absl::StatusOr<std::unique_ptr<FileReader>> reader = FileReader::Open(&source);
  ASSERT_TRUE(reader.ok()) << reader.status();
  const int keys = (*reader)->FindColumn("keys");
  EXPECT_TRUE(AnyChunkMayHold(**reader, keys, "level"));
  EXPECT_FALSE(AnyChunkMayHold(**reader, keys, "level", 1 << 20));
}

TEST(ChunkMayHoldTest, OtherTypesAndBadIndexesAreInvalidArguments) {
  ColumnVector n(PhysicalType::kInt64);
  n.AppendInt64(1);
  const std::string bytes =
      parquet_testing::WriteTable({ColumnSpec::Int64("n")}, {n}, WriterOptions{}, 1);
  StringSource source(bytes);
  absl::StatusOr<std::unique_ptr<FileReader>> reader = FileReader::Open(&source);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->ChunkMayHold(0, 0, "x", 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*reader)->ChunkMayHold(1, 0, "x", 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*reader)->ChunkMayHold(0, 1, "x", 0).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace strata::parquet
