#pragma once

// Test-only helpers shared by the Parquet round-trip suites: writing a table
// through FileWriter, checking that FileReader gives it back (whole, and in
// random projections and row ranges), temp files for DuckDB to read, and the
// writer options a test variant names. Header-only and included only by
// *_test.cc files, so none of it is linked into strata_parquet.

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "parquet/file_reader.h"
#include "parquet/file_writer.h"
#include "query/duckdb_engine.h"

namespace strata::parquet::parquet_testing {

// Upper-case hex, as DuckDB renders BLOBs through hex().
inline std::string Hex(std::string_view bytes) {
  std::string out;
  for (unsigned char c : bytes) out += fmt::format("{:02X}", c);
  return out;
}

// Rows [begin, end) of `column`, compacted into a new vector.
inline ColumnVector Slice(const ColumnVector& column, size_t begin, size_t end) {
  ColumnVector slice = column.is_list ? ColumnVector::List(column.type) : ColumnVector(column.type);
  slice.AppendSlice(column, begin, end);
  return slice;
}

// A parameterised test's file shape: codec, sizes, limits and seed.
struct Variant {
  const char* name;
  CompressionCodec codec;
  size_t rows;
  size_t dictionary_limit;
  size_t page_bytes;
  size_t page_rows;
  int64_t row_group_rows;
  size_t batch_rows;
  uint64_t seed;
};

inline WriterOptions OptionsFor(const Variant& variant) {
  WriterOptions options;
  options.codec = variant.codec;
  options.column.dictionary_bytes_limit = variant.dictionary_limit;
  options.column.data_page_bytes = variant.page_bytes;
  options.column.data_page_max_rows = variant.page_rows;
  options.row_group_max_rows = variant.row_group_rows;
  return options;
}

// Writes `table` in batches of `batch_rows`. A table that fits one batch
// goes in as it is (list ranges may then be non-contiguous); smaller batches
// are compacted slices.
inline std::string WriteTable(const std::vector<ColumnSpec>& specs,
                              const std::vector<ColumnVector>& table, const WriterOptions& options,
                              size_t batch_rows) {
  std::string bytes;
  StringSink sink(&bytes);
  absl::StatusOr<std::unique_ptr<FileWriter>> writer = FileWriter::Open(specs, options, &sink);
  EXPECT_TRUE(writer.ok()) << writer.status();
  if (!writer.ok()) return bytes;
  const size_t rows = table.empty() ? 0 : table[0].size();
  if (batch_rows >= rows) {
    absl::Status s = (*writer)->WriteBatch(table);
    EXPECT_TRUE(s.ok()) << s;
  } else {
    for (size_t begin = 0; begin < rows; begin += batch_rows) {
      std::vector<ColumnVector> batch;
      for (const ColumnVector& column : table) {
        batch.push_back(Slice(column, begin, std::min(rows, begin + batch_rows)));
      }
      absl::Status s = (*writer)->WriteBatch(batch);
      EXPECT_TRUE(s.ok()) << s;
    }
  }
  absl::Status s = (*writer)->Close();
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ((*writer)->bytes_written(), static_cast<int64_t>(bytes.size()));
  return bytes;
}

// strata's reader gives back `table` from `bytes`: the schema, every column
// whole, and `trials` random pairs of columns over random row ranges of up
// to `max_range_rows` rows.
inline void ExpectReaderReturnsTable(const std::string& bytes, const std::vector<ColumnSpec>& specs,
                                     const std::vector<ColumnVector>& table, uint64_t seed,
                                     int trials, size_t max_range_rows) {
  const size_t rows = table.empty() ? 0 : table[0].size();
  StringSource source(bytes);
  absl::StatusOr<std::unique_ptr<FileReader>> reader = FileReader::Open(&source);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->columns(), specs);
  EXPECT_EQ((*reader)->num_rows(), static_cast<int64_t>(rows));

  std::vector<int> all;
  for (size_t c = 0; c < specs.size(); ++c) all.push_back(static_cast<int>(c));
  absl::StatusOr<std::vector<ColumnVector>> full =
      (*reader)->Read(all, 0, static_cast<int64_t>(rows));
  ASSERT_TRUE(full.ok()) << full.status();
  for (size_t c = 0; c < specs.size(); ++c) {
    EXPECT_TRUE((*full)[c] == table[c]) << specs[c].name;
  }

  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < trials; ++trial) {
    const size_t a = rows == 0 ? 0 : static_cast<size_t>(rng() % rows);
    const size_t b = std::min(rows, a + static_cast<size_t>(rng() % max_range_rows));
    const std::vector<int> chosen = {static_cast<int>(rng() % specs.size()),
                                     static_cast<int>(rng() % specs.size())};
    absl::StatusOr<std::vector<ColumnVector>> part =
        (*reader)->Read(chosen, static_cast<int64_t>(a), static_cast<int64_t>(b));
    ASSERT_TRUE(part.ok()) << part.status();
    ASSERT_EQ(part->size(), chosen.size());
    for (size_t i = 0; i < chosen.size(); ++i) {
      EXPECT_TRUE((*part)[i] == Slice(table[chosen[i]], a, b))
          << specs[chosen[i]].name << " [" << a << ", " << b << ")";
    }
  }
}

// A file in the temp directory holding `bytes`, removed when destroyed.
class TempFile {
 public:
  explicit TempFile(const std::string& bytes) {
    static int counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            fmt::format("strata_parquet_test_{}_{}.parquet", ::getpid(), counter++);
    std::ofstream out(path_, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  ~TempFile() { std::filesystem::remove(path_); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

inline std::unique_ptr<query::DuckDbEngine> OpenDuckDb() {
  query::EngineOptions options;
  options.threads = 2;
  absl::StatusOr<std::unique_ptr<query::DuckDbEngine>> engine = query::DuckDbEngine::Open(options);
  EXPECT_TRUE(engine.ok()) << engine.status();
  return engine.ok() ? *std::move(engine) : nullptr;
}

inline query::QueryResult MustQuery(query::DuckDbEngine& db, const std::string& sql) {
  absl::StatusOr<query::QueryResult> result = db.Query(sql);
  EXPECT_TRUE(result.ok()) << result.status() << "\n" << sql;
  return result.ok() ? *std::move(result) : query::QueryResult{};
}

}  // namespace strata::parquet::parquet_testing
