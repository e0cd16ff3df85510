#pragma once

// Test-only helpers for the logs and metrics merge suites
// (logs_merge_test.cc, metrics_merge_test.cc): table files on a real
// FileSystem in a temporary directory, running a merge there, the fixture
// of the corrupt-input tests, DuckDB comparing the rows of a merge's output
// with the union of its inputs' rows on every column, and in-place
// reorderings of read-back batches into the merge order (the expected
// read-back of a merge output). Header-only, included only by tests.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "otlp/batch.h"
#include "parquet/testing/parquet_testing.h"
#include "query/duckdb_engine.h"
#include "storage/maintenance/table_merge.h"
#include "storage/table/logs_table.h"
#include "storage/testing/commit_testing.h"
#include "storage/testing/table_testing.h"

namespace strata::storage::merge_testing {

// A test's batch id for input `n` (any string works: readers compare it
// with the footer's).
inline std::string InputBatchId(int n) { return fmt::format("20250614093015{:09}", n); }
inline constexpr char kOutputBatchId[] = "20250614093015999999001";

// Table files in a temporary directory, and a scratch directory for runs.
class MergeDir {
 public:
  explicit MergeDir(std::string_view label) : temp_(label) { EXPECT_FALSE(temp_.path().empty()); }

  FileSystem& fs() { return fs_; }
  const std::string& path() const { return temp_.path(); }

  // Writes `bytes` as a new input file and returns the MergeInput for it.
  MergeInput AddInput(const std::string& bytes, const std::string& batch_id, uint64_t file_rows,
                      std::string_view table) {
    MergeInput input;
    input.path = fmt::format("{}/{}-{}.parquet", temp_.path(), table, next_++);
    input.batch_id = batch_id;
    input.file_rows = file_rows;
    EXPECT_TRUE(WriteFile(fs_, input.path, bytes).ok());
    return input;
  }

  // A new empty scratch directory.
  std::string NewScratch() {
    const std::string dir = fmt::format("{}/scratch-{}", temp_.path(), next_++);
    EXPECT_TRUE(fs_.CreateDir(dir).ok());
    return dir;
  }

 private:
  PosixFileSystem fs_;
  testing::ScopedTempDir temp_;
  int next_ = 0;
};

// The inputs of one merge: their files, meta.json members and bytes.
struct Inputs {
  std::vector<MergeInput> files;
  std::vector<SignalMeta> metas;
  std::vector<std::string> bytes;

  // The batch id the next input's footer must name.
  std::string NextBatchId() const { return InputBatchId(static_cast<int>(files.size())); }

  // Adds `bytes`, a `table` ("logs", "metrics") file written for
  // NextBatchId(), as the next input, written to a new file in `dir`.
  void Add(MergeDir& dir, std::string_view table, const std::string& bytes,
           const SignalMeta& meta) {
    const std::string id = NextBatchId();
    files.push_back(dir.AddInput(bytes, id, meta.file_rows, table));
    metas.push_back(meta);
    this->bytes.push_back(bytes);
  }
};

// The merge under test: MergeLogsTables or MergeMetricsTables.
using MergeTablesFunction = absl::StatusOr<SignalMeta> (*)(FileSystem&, std::span<const MergeInput>,
                                                           std::string_view, const MergeOptions&,
                                                           parquet::ByteSink*);

// Runs `merge` over `inputs` into *out, with `options` and a new scratch
// directory in `dir`. When it succeeds, expects every run consumed and
// removed (the scratch directory empty).
inline absl::StatusOr<SignalMeta> RunMerge(MergeTablesFunction merge, MergeDir& dir,
                                           const Inputs& inputs, const MergeOptions& options,
                                           std::string_view output_id, std::string* out) {
  MergeOptions with_scratch = options;
  with_scratch.scratch_dir = dir.NewScratch();
  parquet::StringSink sink(out);
  absl::StatusOr<SignalMeta> meta = merge(dir.fs(), inputs.files, output_id, with_scratch, &sink);
  if (meta.ok()) {
    absl::StatusOr<std::vector<std::string>> left = dir.fs().ListDir(with_scratch.scratch_dir);
    EXPECT_TRUE(left.ok() && left->empty());
  }
  return meta;
}

// Tiny chunks and fan-in: many runs, intermediate passes, chunk
// boundaries everywhere.
inline MergeOptions Tiny() {
  MergeOptions options;
  options.chunk_rows = 3;
  options.fan_in = 2;
  return options;
}

// Small chunks and fan-in, and several row groups per file.
inline MergeOptions Small() {
  MergeOptions options;
  options.chunk_rows = 7;
  options.fan_in = 3;
  options.tables.row_group_bytes = 4096;
  return options;
}

// Whether `bytes` is a whole Parquet file (its footer parses).
inline bool IsCompleteParquet(const std::string& bytes) {
  parquet::StringSource source(bytes);
  return parquet::FileReader::Open(&source).ok();
}

// The fixture of the corrupt-input tests: a suite's SetUp fills inputs_
// with valid inputs in dir_, and each test breaks one of them.
class MergeCorruptionTest : public ::testing::Test {
 protected:
  MergeCorruptionTest(MergeTablesFunction merge, std::string_view label)
      : merge_(merge), dir_(label) {}

  // Replaces input k's file with `bytes` and expects the merge to fail with
  // DataLoss naming that file and `needle`, leaving no footer in the sink;
  // then restores the file.
  void ExpectDataLoss(size_t k, const std::string& bytes, const std::string& needle,
                      const MergeOptions& options = Tiny()) {
    ASSERT_TRUE(WriteFile(dir_.fs(), inputs_.files[k].path, bytes).ok());
    std::string output;
    absl::StatusOr<SignalMeta> meta =
        RunMerge(merge_, dir_, inputs_, options, kOutputBatchId, &output);
    ASSERT_FALSE(meta.ok()) << needle;
    EXPECT_TRUE(absl::IsDataLoss(meta.status())) << meta.status();
    EXPECT_THAT(std::string(meta.status().message()), ::testing::HasSubstr(inputs_.files[k].path));
    EXPECT_THAT(std::string(meta.status().message()), ::testing::HasSubstr(needle));
    EXPECT_FALSE(IsCompleteParquet(output));
    ASSERT_TRUE(WriteFile(dir_.fs(), inputs_.files[k].path, inputs_.bytes[k]).ok());
  }

  const MergeTablesFunction merge_;
  MergeDir dir_;
  Inputs inputs_;
};

// Prints a bounded-memory test's measurement of one merge (`signal`:
// "logs", "metrics").
inline void PrintRowsHeld(std::string_view signal, const SignalMeta& meta,
                          const MergeOptions& options, const MergeStats& stats) {
  std::printf(
      "[measure] %s merge of %llu rows (chunk_rows %llu, fan_in %u): %llu runs, %llu "
      "intermediate passes, at most %llu rows held (bound %llu)\n",
      std::string(signal).c_str(), static_cast<unsigned long long>(meta.file_rows),
      static_cast<unsigned long long>(options.chunk_rows), options.fan_in,
      static_cast<unsigned long long>(stats.runs_written),
      static_cast<unsigned long long>(stats.merge_passes),
      static_cast<unsigned long long>(stats.rows_held_peak),
      static_cast<unsigned long long>((options.fan_in + 2) * options.chunk_rows));
}

inline query::QueryResult Query(query::DuckDbEngine& db, const std::string& sql) {
  return parquet::parquet_testing::MustQuery(db, sql);
}

inline uint64_t QueryCount(query::DuckDbEngine& db, const std::string& sql) {
  const query::QueryResult r = Query(db, sql);
  EXPECT_EQ(r.rows.size(), 1u) << sql;
  if (r.rows.size() != 1 || !r.rows[0][0].has_value()) return UINT64_MAX;
  return std::stoull(*r.rows[0][0]);
}

// Expects the rows of `output` (a table file) to be, as a multiset, the
// rows of the `inputs` on every column, rendered as strings by DuckDB
// (table_testing::ColumnSql: bytes as hex, doubles with 17 digits), with
// each input's `index_columns` shifted past the indexes of the inputs
// before it (max + 1 of each, as the merge numbers them).
inline void ExpectSameRowsAsInputs(query::DuckDbEngine& db, std::span<const MergeInput> inputs,
                                   const std::string& output,
                                   const std::vector<parquet::ColumnSpec>& specs,
                                   const std::vector<std::string>& index_columns) {
  std::vector<uint64_t> base(index_columns.size(), 0);
  std::string all_inputs;
  for (const MergeInput& input : inputs) {
    std::string select;
    for (const parquet::ColumnSpec& spec : specs) {
      if (!select.empty()) select += ", ";
      const auto index = std::find(index_columns.begin(), index_columns.end(), spec.name);
      if (index == index_columns.end()) {
        select += table_testing::ColumnSql(spec);
      } else {
        select += fmt::format("CAST(\"{}\" + {} AS VARCHAR)", spec.name,
                              base[index - index_columns.begin()]);
      }
    }
    if (!all_inputs.empty()) all_inputs += " UNION ALL ";
    all_inputs += fmt::format("SELECT {} FROM read_parquet('{}')", select, input.path);
    for (size_t k = 0; k < index_columns.size(); ++k) {
      base[k] += QueryCount(db, fmt::format("SELECT coalesce(max(\"{}\") + 1, 0) FROM "
                                            "read_parquet('{}')",
                                            index_columns[k], input.path));
    }
  }
  std::string select_output;
  for (const parquet::ColumnSpec& spec : specs) {
    select_output += (select_output.empty() ? "" : ", ") + table_testing::ColumnSql(spec);
  }
  const std::string output_rows =
      fmt::format("SELECT {} FROM read_parquet('{}')", select_output, output);
  const uint64_t input_rows = QueryCount(db, fmt::format("SELECT count(*) FROM ({})", all_inputs));
  EXPECT_EQ(QueryCount(db, fmt::format("SELECT count(*) FROM ({})", output_rows)), input_rows);
  EXPECT_EQ(QueryCount(db, fmt::format("SELECT count(*) FROM (({}) EXCEPT ALL ({}))", all_inputs,
                                       output_rows)),
            0u)
      << "input rows missing from the output";
  EXPECT_EQ(QueryCount(db, fmt::format("SELECT count(*) FROM (({}) EXCEPT ALL ({}))", output_rows,
                                       all_inputs)),
            0u)
      << "output rows that no input has";
}

// Reorders rows of every column of a table struct: new row i is old row
// order[i].
template <typename T>
void Permute(std::vector<T>* column, const std::vector<uint32_t>& order) {
  std::vector<T> out;
  out.reserve(order.size());
  for (uint32_t i : order) out.push_back((*column)[i]);
  *column = std::move(out);
}

// Sorts a read-back LogBatch's records stably by LogEventTime: the record
// order of a merge's output.
inline void SortByEventTime(otlp::LogBatch* b) {
  otlp::LogRecordColumns& l = b->logs;
  std::vector<uint32_t> order(l.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    return LogEventTime(l.time_unix_nano[x], l.observed_time_unix_nano[x]) <
           LogEventTime(l.time_unix_nano[y], l.observed_time_unix_nano[y]);
  });
  Permute(&l.scope, order);
  Permute(&l.time_unix_nano, order);
  Permute(&l.observed_time_unix_nano, order);
  Permute(&l.severity_number, order);
  Permute(&l.severity_text, order);
  Permute(&l.body.type, order);
  Permute(&l.body.str, order);
  Permute(&l.body.bits, order);
  Permute(&l.attributes, order);
  Permute(&l.dropped_attributes_count, order);
  Permute(&l.flags, order);
  Permute(&l.trace_id, order);
  Permute(&l.has_trace_id, order);
  Permute(&l.span_id, order);
  Permute(&l.has_span_id, order);
  Permute(&l.event_name, order);
}

// For each metric of `type`, the order of its points sorted stably by time.
inline std::vector<uint32_t> PointOrder(const otlp::MetricBatch& b,
                                        const otlp::PointColumnsBase& table) {
  std::vector<uint32_t> order(table.size());
  std::iota(order.begin(), order.end(), 0);
  for (size_t m = 0; m < b.metrics.size(); ++m) {
    if (b.points_of(b.metrics.type[m]) != &table) continue;
    const otlp::Range r = b.metrics.points[m];
    std::stable_sort(order.begin() + r.begin, order.begin() + r.end(), [&](uint32_t x, uint32_t y) {
      return table.time_unix_nano[x] < table.time_unix_nano[y];
    });
  }
  return order;
}

inline void PermuteBase(otlp::PointColumnsBase* t, const std::vector<uint32_t>& order) {
  Permute(&t->metric, order);
  Permute(&t->attributes, order);
  Permute(&t->start_time_unix_nano, order);
  Permute(&t->time_unix_nano, order);
  Permute(&t->flags, order);
  Permute(&t->exemplars, order);
}

inline void PermuteStats(otlp::HistogramStatsColumns* t, const std::vector<uint32_t>& order) {
  PermuteBase(t, order);
  Permute(&t->count, order);
  Permute(&t->sum, order);
  Permute(&t->min, order);
  Permute(&t->max, order);
  Permute(&t->present, order);
}

// Sorts each metric's points stably by time_unix_nano (points stay in
// their metric's range): the point order of a merge's output.
inline void SortPointsByTime(otlp::MetricBatch* b) {
  std::vector<uint32_t> order = PointOrder(*b, b->number_points);
  PermuteBase(&b->number_points, order);
  Permute(&b->number_points.value_type, order);
  Permute(&b->number_points.value_bits, order);

  order = PointOrder(*b, b->histogram_points);
  PermuteStats(&b->histogram_points, order);
  Permute(&b->histogram_points.bucket_counts, order);
  Permute(&b->histogram_points.explicit_bounds, order);

  otlp::ExponentialPointColumns& x = b->exponential_points;
  order = PointOrder(*b, x);
  PermuteStats(&x, order);
  Permute(&x.scale, order);
  Permute(&x.zero_count, order);
  Permute(&x.zero_threshold, order);
  Permute(&x.positive_offset, order);
  Permute(&x.positive_bucket_counts, order);
  Permute(&x.negative_offset, order);
  Permute(&x.negative_bucket_counts, order);

  order = PointOrder(*b, b->summary_points);
  PermuteBase(&b->summary_points, order);
  Permute(&b->summary_points.count, order);
  Permute(&b->summary_points.sum, order);
  Permute(&b->summary_points.quantiles, order);
}

// The combined meta.json member of several files' members, as the merge
// must report it: rows and file_rows add up, event times combine over the
// files with data rows ({0, 0} when none has any), misses add up.
inline SignalMeta CombinedMeta(const std::vector<SignalMeta>& metas) {
  SignalMeta out;
  for (const SignalMeta& m : metas) {
    out.rows += m.rows;
    out.file_rows += m.file_rows;
    if (m.rows > 0 && m.event_time.has_value()) {
      if (!out.event_time.has_value()) {
        out.event_time = m.event_time;
      } else {
        out.event_time->min = std::min(out.event_time->min, m.event_time->min);
        out.event_time->max = std::max(out.event_time->max, m.event_time->max);
      }
    }
    for (const auto& [key, n] : m.promotion_misses) out.promotion_misses[key] += n;
  }
  if (out.file_rows > 0 && !out.event_time.has_value()) out.event_time = NanosRange{0, 0};
  return out;
}

}  // namespace strata::storage::merge_testing
