// PointCache and the series read through it: the same answers as DuckDB's
// (MetricsSeriesSource without a cache) across compaction, within the
// cache's byte bound, and with two threads reading at once.

#include "api/prometheus_point_cache.h"

#include <algorithm>
#include <map>
#include <thread>

#include "api/api_test_server.h"
#include "api/params.h"
#include "api/prometheus_series.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "otlp/decode.h"
#include "storage/testing/commit_testing.h"

namespace strata::api {
namespace {

namespace promql = compat::promql;
constexpr int kBatches = 8;  // what compaction merges into one
// A batch file's cache entries once every metric is read: its catalog and
// its three metrics' points.
constexpr size_t kEntriesPerFile = 4;

// Batch `b` of the data: a counter, a gauge and a histogram of two
// services. Batches 2k and 2k + 1 both hold a gauge point at one time
// (the later one read wins), and every batch's times step by 10 s.
std::string BatchJson(int64_t t0, int b) {
  std::string resources;
  for (const char* service : {"cart", "checkout"}) {
    const std::string t = std::to_string(t0 + b * 10 * kNanosPerSecond);
    const std::string shared_t = std::to_string(t0 + (b / 2) * 10 * kNanosPerSecond + 5);
    resources += fmt::format(
        R"({}{{"resource":{{"attributes":[{{"key":"service.name","value":{{"stringValue":"{}"}}}}]}},)"
        R"("scopeMetrics":[{{"scope":{{"name":"t"}},"metrics":[)"
        R"({{"name":"requests","sum":{{"aggregationTemporality":2,"isMonotonic":true,"dataPoints":[)"
        R"({{"timeUnixNano":"{}","asInt":"{}","attributes":[{{"key":"route","value":{{"stringValue":"/a"}}}}]}},)"
        R"({{"timeUnixNano":"{}","asInt":"{}","attributes":[{{"key":"route","value":{{"stringValue":"/b"}}}}]}}]}}}},)"
        R"({{"name":"queue.depth","description":"depth {}","gauge":{{"dataPoints":[{{"timeUnixNano":"{}","asDouble":{}}}]}}}},)"
        R"({{"name":"latency","unit":"s","histogram":{{"aggregationTemporality":2,"dataPoints":[)"
        R"({{"timeUnixNano":"{}","count":"{}","sum":{},"bucketCounts":["{}","{}","1"],"explicitBounds":[0.1,1]}}]}}}})"
        R"(]}}]}})",
        resources.empty() ? "" : ",", service, t, 10 * b, t, 3 * b, b, shared_t, b, t, b + 3,
        b * 0.5, b, 2);
  }
  return fmt::format(R"({{"resourceMetrics":[{}]}})", resources);
}

// Batch `b` of a gauge with many points per series: two series of 400
// points each, 100 ms apart from t0 + b seconds, so that its points take
// far more room than its label shapes (two rows).
std::string BusyBatchJson(int64_t t0, int b) {
  std::string points;
  for (int i = 0; i < 400; ++i) {
    for (const char* cpu : {"0", "1"}) {
      points += fmt::format(
          R"({}{{"timeUnixNano":"{}","asDouble":{},"attributes":[{{"key":"cpu","value":{{"stringValue":"{}"}}}}]}})",
          points.empty() ? "" : ",", t0 + b * kNanosPerSecond + int64_t{i} * 100'000'000, i % 7,
          cpu);
    }
  }
  return fmt::format(
      R"({{"resourceMetrics":[{{"resource":{{"attributes":[{{"key":"service.name","value":{{"stringValue":"busy"}}}}]}},)"
      R"("scopeMetrics":[{{"scope":{{"name":"t"}},"metrics":[{{"name":"busy.level","gauge":{{"dataPoints":[{}]}}}}]}}]}}]}})",
      points);
}

class PrometheusPointCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    t0_ = (SystemNowUnixNano() / kNanosPerSecond - 600) * kNanosPerSecond;
    data_dir_ = tmp_.path() + "/data";
    auto opened = storage::Storage::Open(fs_, data_dir_);
    ASSERT_TRUE(opened.ok()) << opened.status();
    storage_ = *std::move(opened);
    for (int b = 0; b < kBatches; ++b) WriteBatch(BatchJson(t0_, b));
    pool_ = test_support::OpenTestPool(data_dir_, 2, 1);
    ASSERT_NE(pool_, nullptr);
  }
  void WriteBatch(const std::string& json) {
    auto metrics = std::make_unique<otlp::MetricBatch>();
    const absl::Status decoded = otlp::DecodeMetricsJson(json, metrics.get());
    ASSERT_TRUE(decoded.ok()) << decoded;
    storage::WriteRequest request;
    request.metrics = std::move(metrics);
    request.rows = 10;
    request.bytes = 4096;
    ASSERT_TRUE(storage_->Write(std::move(request)).ok());
  }
  void TearDown() override {
    pool_.reset();
    if (storage_ != nullptr) storage_->Shutdown(std::chrono::seconds(5));
  }

  // Every series `matchers` select in the window (from `from_s` seconds
  // after t0), read through `cache` (null: DuckDB), as "labels" -> "t:v ...".
  std::map<std::string, std::string> Select(const std::vector<promql::LabelMatcher>& matchers,
                                            internal::PointCache* cache, int64_t from_s = -10) {
    const auto snapshot = storage_->Pin();
    const query::ViewFiles files = ViewFilesFor(*snapshot, data_dir_);
    CallOptions call;
    MetricsSeriesSource source(*pool_, files, call, cache);
    const int64_t t0_ms = t0_ / 1'000'000;
    auto selected = source.Select(matchers, t0_ms + from_s * 1000, t0_ms + 100'000, {});
    EXPECT_TRUE(selected.ok()) << selected.status();
    std::map<std::string, std::string> out;
    if (!selected.ok()) return out;
    for (const auto& series : *selected) {
      std::string labels, samples;
      for (const auto& label : series.labels) {
        labels += fmt::format("{}{}={}", labels.empty() ? "" : ",", label.name, label.value);
      }
      for (const auto& sample : series.samples) {
        samples +=
            fmt::format("{}{}:{}", samples.empty() ? "" : " ", sample.t_ms - t0_ms, sample.v);
      }
      out[labels] = samples;
    }
    return out;
  }

  // The label sets of every series `matchers` select in the window (from
  // `from_s` seconds after t0), as /api/v1/labels and /series read them,
  // through `cache` (null: DuckDB), each as "name=value,...".
  std::vector<std::string> Listed(const std::vector<promql::LabelMatcher>& matchers,
                                  internal::PointCache* cache, int64_t from_s = -10) {
    const auto snapshot = storage_->Pin();
    const query::ViewFiles files = ViewFilesFor(*snapshot, data_dir_);
    CallOptions call;
    MetricsSeriesSource source(*pool_, files, call, cache);
    const int64_t t0_ms = t0_ / 1'000'000;
    auto listed = source.SelectLabels(matchers, t0_ms + from_s * 1000, t0_ms + 100'000, 10'000);
    EXPECT_TRUE(listed.ok()) << listed.status();
    std::vector<std::string> out;
    if (!listed.ok()) return out;
    for (const auto& labels : *listed) {
      std::string text;
      for (const auto& label : labels) {
        text += fmt::format("{}{}={}", text.empty() ? "" : ",", label.name, label.value);
      }
      out.push_back(std::move(text));
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // The families /api/v1/metadata lists for the window (from `from_s`
  // seconds after t0), through `cache` (null: DuckDB), as
  // "name type unit help" lines.
  std::vector<std::string> Metadata(internal::PointCache* cache, int64_t from_s = -10) {
    const auto snapshot = storage_->Pin();
    const query::ViewFiles files = ViewFilesFor(*snapshot, data_dir_);
    CallOptions call;
    MetricsSeriesSource source(*pool_, files, call, cache);
    const int64_t t0_ms = t0_ / 1'000'000;
    auto listed = source.Metadata(t0_ms + from_s * 1000, t0_ms + 100'000);
    EXPECT_TRUE(listed.ok()) << listed.status();
    std::vector<std::string> out;
    if (!listed.ok()) return out;
    for (const PromMetadata& m : *listed) {
      out.push_back(fmt::format("{} {} {} {}", m.name, m.type, m.unit, m.help));
    }
    return out;
  }

  // The matchers the tests ask with: every series, and a few narrower.
  static std::vector<std::vector<promql::LabelMatcher>> Questions() {
    using enum promql::MatchType;
    return {{{kRegexMatch, "__name__", ".+"}},
            {{kEqual, "__name__", "requests_total"}, {kEqual, "route", "/b"}},
            {{kEqual, "__name__", "latency_seconds_bucket"}},
            {{kEqual, "__name__", "latency_seconds_count"}},
            {{kEqual, "__name__", "queue_depth"}}};
  }

  PosixFileSystem fs_;
  storage::testing::ScopedTempDir tmp_{"promcache"};
  std::string data_dir_;
  std::unique_ptr<storage::Storage> storage_;
  std::unique_ptr<query::QueryPool> pool_;
  int64_t t0_ = 0;
};

TEST_F(PrometheusPointCacheTest, AnswersAsDuckDbBeforeAndAfterCompaction) {
  internal::PointCache cache(internal::PointCache::kDefaultMaxBytes);
  for (const auto& matchers : Questions()) {
    const auto want = Select(matchers, nullptr);
    EXPECT_FALSE(want.empty());
    EXPECT_EQ(Select(matchers, &cache), want);
    EXPECT_EQ(Select(matchers, &cache), want);                               // all from the cache
    EXPECT_EQ(Select(matchers, &cache, 25), Select(matchers, nullptr, 25));  // a later window
  }
  EXPECT_EQ(cache.entries(), kBatches * kEntriesPerFile);
  for (const auto& matchers : Questions()) {
    EXPECT_EQ(Listed(matchers, &cache), Listed(matchers, nullptr));
    EXPECT_EQ(Listed(matchers, &cache, 25), Listed(matchers, nullptr, 25));
  }
  EXPECT_EQ(Metadata(&cache), Metadata(nullptr));
  EXPECT_EQ(Metadata(nullptr).size(), 3u);
  // The least description among the window's points: batch 6's from 25 s on.
  EXPECT_EQ(Metadata(&cache, 25), Metadata(nullptr, 25));
  EXPECT_EQ(Metadata(nullptr, 25)[1], "queue_depth gauge  depth 6");
  // After every point: nothing.
  EXPECT_EQ(Metadata(&cache, 200), Metadata(nullptr, 200));
  EXPECT_TRUE(Metadata(nullptr, 200).empty());
  for (int step = 0; step < 20 && storage_->Pin()->size() > 1; ++step) {
    storage_->maintenance().RunStep();
  }
  ASSERT_EQ(storage_->Pin()->size(), 1u) << "compaction did not merge the batches";
  for (const auto& matchers : Questions()) {
    EXPECT_EQ(Select(matchers, &cache), Select(matchers, nullptr));
  }
  EXPECT_EQ(Metadata(&cache), Metadata(nullptr));
  // The merged batch is a new file, decoded once (its label shapes are
  // not made yet).
  EXPECT_EQ(cache.entries(), kBatches * (2 * kEntriesPerFile - 1) + kEntriesPerFile);
  // The merged file's metrics have points before 25 s and after: a
  // listing from 25 s reads their points in the window, the whole
  // window's from their label shapes.
  for (const auto& matchers : Questions()) {
    EXPECT_EQ(Listed(matchers, &cache), Listed(matchers, nullptr));
    EXPECT_EQ(Listed(matchers, &cache, 25), Listed(matchers, nullptr, 25));
  }
  EXPECT_EQ(cache.label_queries(), 0u);  // every metric's points decoded already
}

TEST_F(PrometheusPointCacheTest, HoldsNoMoreThanItsBound) {
  internal::PointCache measure(internal::PointCache::kDefaultMaxBytes);
  const auto all = Questions()[0];
  const auto want = Select(all, nullptr);
  EXPECT_EQ(Select(all, &measure), want);
  ASSERT_EQ(measure.entries(), kBatches * kEntriesPerFile);
  // Room for about three of the eight files' entries.
  const size_t bound = measure.bytes() * 3 / kBatches + 1;
  internal::PointCache small(bound);
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(Select(all, &small), want);
    EXPECT_LE(small.bytes(), bound);
    EXPECT_GE(small.entries(), kEntriesPerFile);
    EXPECT_LT(small.entries(), measure.entries());
  }
  // Too small for any one file: answered from DuckDB, nothing kept, and
  // the first file, which sent the query to DuckDB, is not decoded again.
  internal::PointCache tiny(16);
  EXPECT_EQ(Select(all, &tiny), want);
  EXPECT_EQ(Select(all, &tiny), want);
  EXPECT_EQ(tiny.entries(), 0u);
  EXPECT_EQ(tiny.bytes(), 0u);
  const query::ViewFiles files = ViewFilesFor(*storage_->Pin(), data_dir_);
  const std::string first_catalog = internal::PointCache::CatalogKey(files.metrics[0]);
  EXPECT_TRUE(tiny.IsTooLarge(first_catalog));
  EXPECT_FALSE(small.IsTooLarge(first_catalog));
}

TEST(PointCacheTest, DropsTheLeastRecentlyUsed) {
  auto file = [](size_t bytes) {
    auto out = std::make_shared<internal::DecodedMetricsFile>();
    out->bytes = bytes;
    return out;
  };
  internal::PointCache cache(100);
  cache.Add("a", file(40));
  cache.Add("b", file(40));
  ASSERT_NE(cache.Find("a"), nullptr);  // a is now the most recent
  cache.Add("c", file(40));             // drops b
  EXPECT_NE(cache.Find("a"), nullptr);
  EXPECT_EQ(cache.Find("b"), nullptr);
  EXPECT_NE(cache.Find("c"), nullptr);
  EXPECT_EQ(cache.bytes(), 80u);
  cache.Add("a", file(10));  // replaces a
  EXPECT_EQ(cache.bytes(), 50u);
  cache.Add("big", file(101));  // larger than the bound: not kept
  EXPECT_EQ(cache.Find("big"), nullptr);
  EXPECT_EQ(cache.bytes(), 50u);
  EXPECT_EQ(cache.entries(), 2u);
}

// A first query of one metric decodes that metric's points and no other's
// (counted against DuckDB's count of each metric's rows); a later query of
// another metric decodes only that one, and nothing is decoded twice.
TEST_F(PrometheusPointCacheTest, AColdQueryDecodesOnlyTheMetricsItSelects) {
  const query::ViewFiles files = ViewFilesFor(*storage_->Pin(), data_dir_);
  auto rows_of = [&](const std::string& where) -> size_t {
    auto counted =
        pool_->RunTyped(files, "SELECT count(*)::UBIGINT FROM metrics_stored WHERE " + where);
    EXPECT_TRUE(counted.ok()) << counted.status();
    if (!counted.ok() || counted->rows != 1) return 0;
    return counted->columns[0].uint64s[0];
  };
  const size_t depth_rows = rows_of("metric_name = 'queue.depth'");
  const size_t requests_rows = rows_of("metric_name = 'requests'");
  const size_t named_rows = rows_of("metric_name IS NOT NULL");
  ASSERT_GT(depth_rows, 0u);
  ASSERT_GT(named_rows, depth_rows + requests_rows);
  using enum promql::MatchType;
  internal::PointCache cache(internal::PointCache::kDefaultMaxBytes);
  const std::vector<promql::LabelMatcher> depth = {{kEqual, "__name__", "queue_depth"}};
  EXPECT_EQ(Select(depth, &cache), Select(depth, nullptr));
  EXPECT_EQ(cache.points_added(), depth_rows);
  EXPECT_EQ(cache.entries(), 2u * kBatches);  // each file's catalog and queue.depth
  const std::vector<promql::LabelMatcher> requests = {{kEqual, "__name__", "requests_total"}};
  EXPECT_EQ(Select(requests, &cache), Select(requests, nullptr));
  EXPECT_EQ(cache.points_added(), depth_rows + requests_rows);
  const std::vector<promql::LabelMatcher> all = Questions()[0];
  EXPECT_EQ(Select(all, &cache), Select(all, nullptr));
  EXPECT_EQ(Select(depth, &cache), Select(depth, nullptr));
  EXPECT_EQ(cache.points_added(), named_rows);
  EXPECT_EQ(cache.entries(), kBatches * kEntriesPerFile);
}

// Every field of `file` as text: its identities, each row's columns
// (validity and value) in read order, and its time order.
std::string Dump(const internal::DecodedMetricsFile& file) {
  std::string out;
  for (const internal::MetricIdentity& m : file.identities) {
    out += fmt::format("id {}|{}|{}|{}|{}|{}|{}|{}|{}|{}\n", m.otlp_name, m.unit, m.type,
                       m.monotonic, m.temporality, m.service, m.service_namespace, m.instance,
                       m.attributes, m.resource);
  }
  for (size_t r = 0; r < file.points.rows; ++r) {
    out += "row";
    for (const query::TypedColumn& c : file.points.columns) {
      // A column the cache drops: no values, and its name is whatever
      // the query that read it called it.
      if (c.valid.empty()) {
        out += " (dropped)";
        continue;
      }
      out += fmt::format(" {}:", c.name);
      out += c.is_valid(r) ? "" : "null/";
      switch (c.kind) {
        case query::TypedKind::kBool:
        case query::TypedKind::kInt64:
          out += std::to_string(c.int64s[r]);
          break;
        case query::TypedKind::kUInt64:
          out += std::to_string(c.uint64s[r]);
          break;
        case query::TypedKind::kDouble:
          out += fmt::format("{}", c.doubles[r]);
          break;
        case query::TypedKind::kString:
          out += c.strings[r];
          break;
        case query::TypedKind::kDoubleList:
          for (size_t i = 0; i < c.list_size(r); ++i)
            out += fmt::format("{},", c.double_list(r)[i]);
          break;
        case query::TypedKind::kUInt64List:
          for (size_t i = 0; i < c.list_size(r); ++i)
            out += fmt::format("{},", c.uint64_list(r)[i]);
          break;
      }
    }
    out += "\n";
  }
  out += "by time";
  for (const uint32_t r : file.by_time) out += fmt::format(" {}", r);
  return out;
}

// A request that needs every metric of cold files decodes them with one
// query per file, and keeps the same entries of each metric (identities,
// points, time order) as requests of one metric each, which decode them
// with one query per metric and file; so does one that needs the two
// metrics of each file not yet decoded (six of its eight rows).
TEST_F(PrometheusPointCacheTest, OneQueryPerFileKeepsWhatOneQueryPerMetricKeeps) {
  const query::ViewFiles files = ViewFilesFor(*storage_->Pin(), data_dir_);
  const size_t file_count = files.metrics.size();
  ASSERT_EQ(file_count, static_cast<size_t>(kBatches));
  using enum promql::MatchType;
  const std::vector<promql::LabelMatcher> all = Questions()[0];
  const std::vector<promql::LabelMatcher> depth = {{kEqual, "__name__", "queue_depth"}};
  const auto want = Select(all, nullptr);

  internal::PointCache whole(internal::PointCache::kDefaultMaxBytes);
  EXPECT_EQ(Select(all, &whole), want);
  EXPECT_EQ(whole.decode_queries(), file_count);

  internal::PointCache each(internal::PointCache::kDefaultMaxBytes);
  for (const char* name : {"requests_total", "queue_depth", "latency_seconds_count"}) {
    const std::vector<promql::LabelMatcher> one = {{kEqual, "__name__", name}};
    EXPECT_EQ(Select(one, &each), Select(one, nullptr));
  }
  EXPECT_EQ(each.decode_queries(), 3 * file_count);
  EXPECT_EQ(Select(all, &each), want);  // every metric decoded already
  EXPECT_EQ(each.decode_queries(), 3 * file_count);

  internal::PointCache rest(internal::PointCache::kDefaultMaxBytes);
  EXPECT_EQ(Select(depth, &rest), Select(depth, nullptr));
  EXPECT_EQ(rest.decode_queries(), file_count);
  EXPECT_EQ(Select(all, &rest), want);
  EXPECT_EQ(rest.decode_queries(), 2 * file_count);

  EXPECT_EQ(whole.points_added(), each.points_added());
  EXPECT_EQ(rest.points_added(), each.points_added());
  for (const std::string& path : files.metrics) {
    for (const char* otlp_name : {"requests", "queue.depth", "latency"}) {
      const std::string key = internal::PointCache::PointsKey(path, otlp_name);
      const auto by_metric = each.Find(key);
      ASSERT_NE(by_metric, nullptr) << key;
      EXPECT_GT(by_metric->points.rows, 0u) << key;
      for (internal::PointCache* cache : {&whole, &rest}) {
        const auto found = cache->Find(key);
        ASSERT_NE(found, nullptr) << key;
        EXPECT_EQ(Dump(*found), Dump(*by_metric)) << key;
      }
    }
  }
}

// Every field of `catalog` as text, in an order of its own (a catalog's
// order of variants and times is the order it met them in).
std::string Dump(const internal::FileCatalog& catalog) {
  std::vector<std::string> lines;
  for (const internal::FileCatalog::Times& t : catalog.times) {
    const internal::CatalogVariant& v = catalog.variants[t.variant];
    std::string line = fmt::format(
        "{}|{}|{}|{}|{}|{}|rows {}|", v.otlp_name, v.unit, v.type, v.monotonic, v.temporality,
        t.description < 0 ? "NULL" : catalog.descriptions[t.description], t.rows);
    for (const uint64_t time : t.times) line += fmt::format(" {}", time);
    lines.push_back(std::move(line));
  }
  std::sort(lines.begin(), lines.end());
  std::string out = fmt::format("{} variants, names", catalog.variants.size());
  for (const std::string& name : catalog.names) out += " " + name;
  for (const std::string& line : lines) out += "\n" + line;
  return out;
}

// A cold listing of every series (no metric name, as /api/v1/labels and
// /label/__name__/values ask) decodes no point: per file, its catalog (the
// grouped query) and one query for the label shapes of its metrics, kept
// apart from points; a warm listing reads nothing. A sample query of every
// metric decodes each cold file with one query, which gives its catalog
// too (the same catalog as the grouped query's), and a listing after it
// makes its label shapes from the points the cache holds, with no query.
TEST_F(PrometheusPointCacheTest, AColdListingReadsLabelShapesAndNoPoints) {
  const query::ViewFiles files = ViewFilesFor(*storage_->Pin(), data_dir_);
  const size_t file_count = files.metrics.size();
  ASSERT_EQ(file_count, static_cast<size_t>(kBatches));
  ASSERT_EQ(files.metrics_meta.size(), file_count);
  using enum promql::MatchType;
  const std::vector<promql::LabelMatcher> all = Questions()[0];
  const auto want = Listed(all, nullptr);
  ASSERT_FALSE(want.empty());

  internal::PointCache cold(internal::PointCache::kDefaultMaxBytes);
  EXPECT_EQ(Listed(all, &cold), want);
  EXPECT_EQ(cold.decode_queries(), 0u);
  EXPECT_EQ(cold.points_added(), 0u);
  EXPECT_EQ(cold.catalog_queries(), file_count);
  EXPECT_EQ(cold.label_queries(), file_count);
  EXPECT_EQ(cold.entries(), kBatches * kEntriesPerFile);  // catalogs and label shapes
  EXPECT_EQ(Listed(all, &cold), want);                    // warm: nothing read
  EXPECT_EQ(cold.catalog_queries(), file_count);
  EXPECT_EQ(cold.label_queries(), file_count);
  EXPECT_EQ(cold.decode_queries(), 0u);
  EXPECT_EQ(Metadata(&cold), Metadata(nullptr));

  // Samples of every metric: each file decoded whole with one query.
  internal::PointCache whole(internal::PointCache::kDefaultMaxBytes);
  EXPECT_EQ(Select(all, &whole), Select(all, nullptr));
  EXPECT_EQ(whole.decode_queries(), file_count);
  EXPECT_EQ(whole.catalog_queries(), 0u);
  EXPECT_EQ(Listed(all, &whole), want);  // label shapes from the points held
  EXPECT_EQ(whole.label_queries(), 0u);
  EXPECT_EQ(whole.decode_queries(), file_count);
  EXPECT_EQ(whole.entries(), kBatches * (2 * kEntriesPerFile - 1));

  // The catalogs the grouped query reads (metadata reads no points).
  for (const std::string& path : files.metrics) {
    const std::string key = internal::PointCache::CatalogKey(path);
    const auto from_points = whole.FindCatalog(key);
    const auto from_groups = cold.FindCatalog(key);
    ASSERT_NE(from_points, nullptr) << key;
    ASSERT_NE(from_groups, nullptr) << key;
    EXPECT_EQ(Dump(*from_points), Dump(*from_groups)) << key;
  }

  // No name but a label: every metric's label shapes all the same.
  internal::PointCache by_job(internal::PointCache::kDefaultMaxBytes);
  const std::vector<promql::LabelMatcher> cart = {{kEqual, "job", "cart"}};
  EXPECT_EQ(Listed(cart, &by_job), Listed(cart, nullptr));
  EXPECT_EQ(by_job.decode_queries(), 0u);
  EXPECT_EQ(by_job.label_queries(), file_count);

  // From 25 s on: each batch's metrics have one time each, so a metric
  // lies in the window whole or not at all; batches 3 to 7 have a metric
  // in it (requests and latency from batch 3, the gauge from batch 6 on),
  // one label query each; no points.
  internal::PointCache partial(internal::PointCache::kDefaultMaxBytes);
  EXPECT_EQ(Listed(all, &partial, 25), Listed(all, nullptr, 25));
  EXPECT_EQ(partial.catalog_queries(), file_count);
  EXPECT_EQ(partial.label_queries(), 5u);
  EXPECT_EQ(partial.decode_queries(), 0u);
}

// A file whose metric has a series only before the window and one in it
// (a file at the window's edge): a listing of the window lists only the
// latter, as DuckDB does, from the metric's points (not its label
// shapes, which hold both); over the whole file, both, from its shapes.
TEST_F(PrometheusPointCacheTest, AListingAtTheWindowsEdgeListsOnlyItsSeries) {
  std::string points;
  for (const auto& [cpu, at_s] : {std::pair{"0", 1}, std::pair{"1", 40}}) {
    points += fmt::format(
        R"({}{{"timeUnixNano":"{}","asDouble":1,"attributes":[{{"key":"cpu","value":{{"stringValue":"{}"}}}}]}})",
        points.empty() ? "" : ",", t0_ + at_s * kNanosPerSecond, cpu);
  }
  WriteBatch(fmt::format(
      R"({{"resourceMetrics":[{{"resource":{{"attributes":[{{"key":"service.name","value":{{"stringValue":"edge"}}}}]}},)"
      R"("scopeMetrics":[{{"scope":{{"name":"t"}},"metrics":[{{"name":"edge.level","gauge":{{"dataPoints":[{}]}}}}]}}]}}]}})",
      points));
  using enum promql::MatchType;
  const std::vector<promql::LabelMatcher> edge = {{kEqual, "__name__", "edge_level"}};
  const auto has_cpu = [](const std::vector<std::string>& listed, const std::string& cpu) {
    return std::any_of(listed.begin(), listed.end(), [&](const std::string& labels) {
      return labels.find(",cpu=" + cpu + ",") != std::string::npos;
    });
  };
  internal::PointCache cache(internal::PointCache::kDefaultMaxBytes);
  for (int round = 0; round < 2; ++round) {  // cold, then warm
    const auto recent = Listed(edge, &cache, 25);
    EXPECT_EQ(recent, Listed(edge, nullptr, 25)) << round;
    EXPECT_FALSE(has_cpu(recent, "0")) << round;
    EXPECT_TRUE(has_cpu(recent, "1")) << round;
    const auto whole = Listed(edge, &cache);
    EXPECT_EQ(whole, Listed(edge, nullptr)) << round;
    EXPECT_TRUE(has_cpu(whole, "0")) << round;
    EXPECT_TRUE(has_cpu(whole, "1")) << round;
  }
  EXPECT_EQ(cache.decode_queries(), 1u);  // the edge metric's points, once
  EXPECT_EQ(cache.label_queries(), 0u);   // its shapes made from them
}

// A cache with room for every file's catalog and label shapes but not for
// all their points answers listings and sample queries as DuckDB does,
// within its bound, and a listing after sample queries, warm, reads
// nothing: the points the sample queries decode do not push the label
// shapes out for good (they are kept apart, and small), and no listing
// decodes points only to evict them again.
TEST_F(PrometheusPointCacheTest, ListingsStayWarmWhenThePointsExceedTheBound) {
  for (int b = 0; b < 4; ++b) WriteBatch(BusyBatchJson(t0_, b));
  using enum promql::MatchType;
  const std::vector<promql::LabelMatcher> all = Questions()[0];
  const auto want_listed = Listed(all, nullptr);
  const auto want_selected = Select(all, nullptr);
  internal::PointCache listing(internal::PointCache::kDefaultMaxBytes);
  EXPECT_EQ(Listed(all, &listing), want_listed);
  internal::PointCache points(internal::PointCache::kDefaultMaxBytes);
  EXPECT_EQ(Select(all, &points), want_selected);
  ASSERT_LT(listing.bytes() * 2, points.bytes());
  // The listing's entries and about half the points.
  const size_t bound = listing.bytes() + points.bytes() / 2;
  internal::PointCache cache(bound);
  EXPECT_EQ(Listed(all, &cache), want_listed);
  const size_t label_queries = cache.label_queries();
  const size_t catalog_queries = cache.catalog_queries();
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(Listed(all, &cache), want_listed);
    EXPECT_EQ(cache.decode_queries(), 0u) << round;
    EXPECT_EQ(cache.label_queries(), label_queries) << round;
    EXPECT_EQ(cache.catalog_queries(), catalog_queries) << round;
    EXPECT_LE(cache.bytes(), bound);
  }
  EXPECT_EQ(Select(all, &cache), want_selected);
  EXPECT_LE(cache.bytes(), bound);
  EXPECT_GT(cache.decode_queries(), 0u);
  // The sample query evicted the least recently used entries, some label
  // shapes among them maybe; a listing reads those again, once.
  EXPECT_EQ(Listed(all, &cache), want_listed);
  const size_t decoded = cache.decode_queries();
  const size_t relisted = cache.label_queries();
  EXPECT_EQ(Listed(all, &cache), want_listed);
  EXPECT_EQ(cache.decode_queries(), decoded);
  EXPECT_EQ(cache.label_queries(), relisted);
  EXPECT_LE(cache.bytes(), bound);
}

// A listing whose first file has more label shapes than the cache would
// decode (PointCache::MostRows, here 5 rows: its catalog's 3 groups fit,
// its 8 shapes do not) is answered through DuckDB, and the shapes are
// remembered as too large: a second listing runs no label query.
TEST_F(PrometheusPointCacheTest, LabelShapesTooLargeAreReadThroughDuckDbOnce) {
  const std::vector<promql::LabelMatcher> all = Questions()[0];
  const auto want = Listed(all, nullptr);
  internal::PointCache cache(5 * internal::PointCache::kLeastBytesPerPoint);
  ASSERT_EQ(cache.MostRows(), 5u);
  EXPECT_EQ(Listed(all, &cache), want);
  EXPECT_EQ(cache.label_queries(), 1u);
  EXPECT_EQ(cache.decode_queries(), 0u);
  const query::ViewFiles files = ViewFilesFor(*storage_->Pin(), data_dir_);
  EXPECT_TRUE(cache.IsTooLarge(internal::PointCache::LabelShapesKey(files.metrics[0], "requests")));
  EXPECT_EQ(Listed(all, &cache), want);
  EXPECT_EQ(cache.label_queries(), 1u);
  EXPECT_EQ(cache.decode_queries(), 0u);
}

// The cache's own bookkeeping under two threads: many adds and finds on
// few keys, with evictions all along.
TEST(PointCacheTest, TwoThreadsAddingAndFindingAtOnce) {
  internal::PointCache cache(1000);
  auto work = [&](int seed) {
    for (int i = 0; i < 1'000'000; ++i) {
      const std::string key = std::to_string((i * 7 + seed) % 40);
      if (i % 3 == 0) {
        auto file = std::make_shared<internal::DecodedMetricsFile>();
        file->bytes = 50 + (i % 5) * 10;
        cache.Add(key, std::move(file));
      } else if (auto found = cache.Find(key); found != nullptr) {
        EXPECT_GE(found->bytes, 50u);
      }
    }
  };
  std::thread a(work, 0);
  std::thread b(work, 1);
  a.join();
  b.join();
  EXPECT_LE(cache.bytes(), 1000u);
  size_t held = 0;
  for (int k = 0; k < 40; ++k) {
    if (auto found = cache.Find(std::to_string(k)); found != nullptr) held += found->bytes;
  }
  EXPECT_EQ(held, cache.bytes());
}

TEST_F(PrometheusPointCacheTest, TwoThreadsAskingAtOnceGetDuckDbsAnswers) {
  std::vector<std::map<std::string, std::string>> want;
  std::vector<std::vector<std::string>> want_listed;
  for (const auto& matchers : Questions()) {
    want.push_back(Select(matchers, nullptr));
    want_listed.push_back(Listed(matchers, nullptr));
  }
  // Room for about half the files, so the threads also evict each other's.
  internal::PointCache measure(internal::PointCache::kDefaultMaxBytes);
  Select(Questions()[0], &measure);
  internal::PointCache cache(measure.bytes() / 2);
  // Sample queries and listings in turn: label shapes made from points
  // and read apart, while the other thread evicts them.
  auto ask = [&](int offset, int* wrong) {
    for (int round = 0; round < 6; ++round) {
      const size_t q = (round + offset) % want.size();
      if (Select(Questions()[q], &cache) != want[q]) ++*wrong;
      if (Listed(Questions()[(q + 1) % want.size()], &cache) != want_listed[(q + 1) % want.size()])
        ++*wrong;
    }
  };
  int wrong_a = 0, wrong_b = 0;
  std::thread a(ask, 0, &wrong_a);
  std::thread b(ask, 2, &wrong_b);
  a.join();
  b.join();
  EXPECT_EQ(wrong_a, 0);
  EXPECT_EQ(wrong_b, 0);
  EXPECT_LE(cache.bytes(), cache.max_bytes());
}

}  // namespace
}  // namespace strata::api
