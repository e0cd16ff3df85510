// Trace lookup by id (storage/trace_lookup.h) over batches written by the
// real Storage into a temporary directory, and the span-row range reader it
// uses (ReadSpansRows, spans_table.h). Ground truth is what the tests
// wrote; DuckDB over every spans.parquet is the differential reference.

#include "storage/trace_lookup.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "otlp/decode.h"
#include "parquet/file_reader.h"
#include "query/duckdb_engine.h"
#include "storage/index/trace_index.h"
#include "storage/storage.h"
#include "storage/table/spans_table.h"
#include "storage/testing/commit_testing.h"
#include "storage/testing/table_test_batches.h"

namespace strata::storage {
namespace {

using table_testing::BatchBuilder;
using table_testing::MakeSpanId;
using table_testing::MakeTraceId;
using ::testing::HasSubstr;

std::string Hex(std::span<const uint8_t> bytes) {
  std::string out;
  for (uint8_t b : bytes) out += fmt::format("{:02x}", b);
  return out;
}

// ------------------------------------------------------------ rendering

std::string RenderAttributes(const otlp::BatchBase& b, const otlp::AttributeColumns& table,
                             otlp::Range range);

std::string RenderValue(const otlp::BatchBase& b, const otlp::ValueColumns& v, size_t i) {
  switch (v.type[i]) {
    case otlp::ValueType::kEmpty:
      return "empty";
    case otlp::ValueType::kString:
      return fmt::format("s:{}", v.str[i]);
    case otlp::ValueType::kBytes:
      return fmt::format("b:{}",
                         Hex({reinterpret_cast<const uint8_t*>(v.str[i].data()), v.str[i].size()}));
    case otlp::ValueType::kBool:
      return v.bool_at(i) ? "true" : "false";
    case otlp::ValueType::kInt:
      return fmt::format("i:{}", v.int_at(i));
    case otlp::ValueType::kDouble:
      return fmt::format("d:{:x}", v.bits[i]);
    case otlp::ValueType::kArray: {
      const otlp::Range r = v.children_at(i);
      std::string out = "[";
      for (uint32_t k = r.begin; k < r.end(); ++k) out += RenderValue(b, b.nested_values, k) + ",";
      return out + "]";
    }
    case otlp::ValueType::kKvList:
      return "{" + RenderAttributes(b, b.nested_attributes, v.children_at(i)) + "}";
  }
  return "?";
}

std::string RenderAttributes(const otlp::BatchBase& b, const otlp::AttributeColumns& table,
                             otlp::Range range) {
  std::string out;
  for (uint32_t k = range.begin; k < range.end(); ++k) {
    out += fmt::format("{}={};", table.key[k], RenderValue(b, table.value, k));
  }
  return out;
}

// Everything the tests check about one span, as one comparable string.
std::string SpanFacts(const otlp::TraceBatch& b, size_t i) {
  const otlp::SpanColumns& s = b.spans;
  std::string events;
  for (uint32_t e = s.events[i].begin; e < s.events[i].end(); ++e) {
    events += fmt::format("({} {} {} [{}])", b.events.time_unix_nano[e], b.events.name[e],
                          b.events.dropped_attributes_count[e],
                          RenderAttributes(b, b.event_attributes, b.events.attributes[e]));
  }
  std::string links;
  for (uint32_t l = s.links[i].begin; l < s.links[i].end(); ++l) {
    links += fmt::format("({} {} [{}])", Hex(b.links.trace_id[l]), Hex(b.links.span_id[l]),
                         RenderAttributes(b, b.link_attributes, b.links.attributes[l]));
  }
  const uint32_t scope = s.scope[i];
  const uint32_t resource = b.scopes.resource[scope];
  return fmt::format(
      "span={} trace={} parent={} name={} kind={} start={} duration={} status={}/{} attrs=[{}] "
      "events=[{}] links=[{}] scope={}/{} [{}] resource=[{}]",
      Hex(s.span_id[i]), Hex(s.trace_id[i]),
      s.has_parent_span_id[i] ? Hex(s.parent_span_id[i]) : "-", s.name[i], s.kind[i],
      s.start_time_unix_nano[i], s.end_time_unix_nano[i] - s.start_time_unix_nano[i],
      s.status_code[i], s.status_message[i],
      RenderAttributes(b, b.span_attributes, s.attributes[i]), events, links, b.scopes.name[scope],
      b.scopes.version[scope], RenderAttributes(b, b.scope_attributes, b.scopes.attributes[scope]),
      RenderAttributes(b, b.resource_attributes, b.resources.attributes[resource]));
}

std::vector<std::string> SortedFacts(const otlp::TraceBatch& b) {
  std::vector<std::string> out;
  for (size_t i = 0; i < b.spans.size(); ++i) out.push_back(SpanFacts(b, i));
  std::sort(out.begin(), out.end());
  return out;
}

// ------------------------------------------------------------ traffic

// Builds requests whose spans belong to a few traces each: `target` gets
// spans in every request, the `shared` traces in several, the rest are new
// per request. Keeps every span's facts by trace id.
class Traffic {
 public:
  explicit Traffic(uint64_t seed) : rng_(seed) {
    target_ = MakeTraceId(0x7a7a7a7a00000000ULL | seed, 0x1234);
    for (uint64_t k = 0; k < 4; ++k) shared_.push_back(MakeTraceId(0x5500 + k, seed * 31 + k));
  }

  const otlp::TraceId& target() const { return target_; }
  // Benchmarks: keep the ids of only a sample of the traces (about one in 256)
  // and no facts, so memory stays small.
  void KeepSampleOnly() { sample_only_ = true; }
  const std::map<otlp::TraceId, std::vector<std::string>>& facts() const { return facts_; }

  // One request: `target_spans` spans of the target, 1 or 2 of each
  // shared trace, and `other_traces` new traces of 1 to 6 spans.
  std::unique_ptr<otlp::TraceBatch> Request(int target_spans, int other_traces) {
    auto batch = std::make_unique<otlp::TraceBatch>();
    BatchBuilder bb(batch.get());
    const int request = requests_++;
    std::vector<uint32_t> scopes;
    for (int r = 0; r < 2; ++r) {
      const uint32_t resource =
          bb.Resource({{bb.S("service.name"), BatchBuilder::Str(bb.S(fmt::format("svc-{}", r)))},
                       {bb.S("request"), BatchBuilder::Int(request)}},
                      "https://opentelemetry.io/schemas/1.26.0", 0, r);
      for (int s = 0; s <= r; ++s) {
        scopes.push_back(bb.Scope(resource, fmt::format("scope-{}-{}", r, s), "1.0",
                                  {{bb.S("scope.k"), BatchBuilder::Int(s)}}, 0, ""));
      }
    }
    // A scope without spans: a placeholder row before the spans.
    bb.Scope(0, "scope-idle", "", {}, 0, "");
    const uint64_t base = 1'750'000'000'000'000'000ULL + uint64_t(request) * 1'000'000'000ULL;
    for (int k = 0; k < target_spans; ++k) {
      // Pairs of spans share a start time, so the span id orders them.
      AddSpan(batch.get(), &bb, scopes, target_, base + uint64_t(k / 2) * 1000);
    }
    for (const otlp::TraceId& id : shared_) {
      const int n = 1 + static_cast<int>(rng_() % 2);
      for (int k = 0; k < n; ++k) AddSpan(batch.get(), &bb, scopes, id, base + rng_() % 500'000);
    }
    for (int t = 0; t < other_traces; ++t) {
      const otlp::TraceId id = MakeTraceId(rng_(), rng_());
      const int n = 1 + static_cast<int>(rng_() % 6);
      for (int k = 0; k < n; ++k) AddSpan(batch.get(), &bb, scopes, id, base + rng_() % 900'000);
    }
    EXPECT_TRUE(otlp::ValidateBatch(*batch).ok());
    for (size_t i = 0; i < batch->spans.size(); ++i) {
      const otlp::TraceId& id = batch->spans.trace_id[i];
      if (!sample_only_) {
        facts_[id].push_back(SpanFacts(*batch, i));
      } else if (id[15] == 0) {
        facts_[id].emplace_back();
      }
    }
    return batch;
  }

 private:
  void AddSpan(otlp::TraceBatch* b, BatchBuilder* bb, const std::vector<uint32_t>& scopes,
               const otlp::TraceId& trace_id, uint64_t start) {
    const uint64_t n = next_span_++;
    otlp::SpanRow span;
    span.scope = scopes[rng_() % scopes.size()];
    span.trace_id = trace_id;
    span.span_id = MakeSpanId(rng_() | 1);
    if (n % 3 != 0) {
      span.parent_span_id = MakeSpanId(n * 7 + 1);
      span.has_parent_span_id = 1;
    }
    span.name = bb->S(fmt::format("op-{}", n % 17));
    span.kind = static_cast<int32_t>(n % 5);
    span.start_time_unix_nano = start;
    span.end_time_unix_nano = start + rng_() % 10'000'000;
    const otlp::ValueRow tags = bb->Array({BatchBuilder::Str(bb->S(fmt::format("t{}", n % 4))),
                                           BatchBuilder::Int(static_cast<int64_t>(n))});
    span.attributes = BatchBuilder::Attributes(
        &b->span_attributes,
        {{bb->S("http.route"), BatchBuilder::Str(bb->S(fmt::format("/r/{}", n % 9)))},
         {bb->S("attempt"), BatchBuilder::Int(static_cast<int64_t>(rng_() % 1000))},
         {bb->S("ratio"), BatchBuilder::Double(static_cast<double>(n) / 7.0)},
         {bb->S("ok"), BatchBuilder::Bool(n % 2 == 0)},
         {bb->S("tags"), tags}});
    const uint32_t event_count = static_cast<uint32_t>(n % 3);
    span.events = {static_cast<uint32_t>(b->events.size()), event_count};
    for (uint32_t e = 0; e < event_count; ++e) {
      otlp::EventRow event;
      event.time_unix_nano = start + e;
      event.name = bb->S(fmt::format("event-{}", e));
      event.attributes = BatchBuilder::Attributes(
          &b->event_attributes, {{bb->S("e.k"), BatchBuilder::Int(static_cast<int64_t>(n + e))}});
      event.dropped_attributes_count = e;
      b->events.Append(event);
    }
    if (n % 4 == 0) {
      otlp::LinkRow link;
      link.trace_id = MakeTraceId(n, n + 1);
      link.span_id = MakeSpanId(n + 2);
      link.attributes = BatchBuilder::Attributes(
          &b->link_attributes, {{bb->S("l.k"), BatchBuilder::Str(bb->S("linked"))}});
      span.links = {static_cast<uint32_t>(b->links.size()), 1};
      b->links.Append(link);
    }
    span.status_code = static_cast<int32_t>(n % 3);
    span.status_message = bb->S(n % 3 == 2 ? "failed" : "");
    b->spans.Append(span);
  }

  std::mt19937_64 rng_;
  otlp::TraceId target_;
  std::vector<otlp::TraceId> shared_;
  std::map<otlp::TraceId, std::vector<std::string>> facts_;
  int requests_ = 0;
  uint64_t next_span_ = 1;
  bool sample_only_ = false;
};

WriteRequest TracesRequest(std::unique_ptr<otlp::TraceBatch> batch) {
  WriteRequest request;
  request.rows = batch->spans.size();
  request.bytes = request.rows * 300;
  request.traces = std::move(batch);
  return request;
}

// Counts what the Parquet reader reads.
class CountingSource final : public parquet::RandomAccessSource {
 public:
  explicit CountingSource(std::string_view bytes) : inner_(bytes) {}
  uint64_t size() const override { return inner_.size(); }
  absl::Status ReadAt(uint64_t offset, size_t length, std::string* out) override {
    ++reads;
    bytes += length;
    ranges.emplace_back(offset, length);
    return inner_.ReadAt(offset, length, out);
  }
  uint64_t reads = 0;
  uint64_t bytes = 0;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;  // (offset, length)

 private:
  parquet::StringSource inner_;
};

class TraceLookupTest : public ::testing::Test {
 protected:
  std::string DataDir() const { return tmp_.path() + "/data"; }

  // The measurements take the writer's page row limit from
  // STRATA_LOOKUP_PAGE_ROWS and spans.parquet's page byte limit from
  // STRATA_LOOKUP_PAGE_BYTES, to compare page sizes; the rest use defaults.
  void OpenStorage(bool page_rows_from_env = false) {
    StorageOptions options;
    if (const char* env = std::getenv("STRATA_LOOKUP_PAGE_ROWS");
        page_rows_from_env && env != nullptr) {
      options.tables.page_rows = static_cast<size_t>(std::atoll(env));
    }
    if (const char* env = std::getenv("STRATA_LOOKUP_PAGE_BYTES");
        page_rows_from_env && env != nullptr) {
      options.tables.spans_page_bytes = static_cast<size_t>(std::atoll(env));
    }
    options.lookup_cache_bytes = lookup_cache_bytes_;
    absl::StatusOr<std::unique_ptr<Storage>> storage =
        Storage::Open(fs_, DataDir(), std::move(options));
    ASSERT_TRUE(storage.ok()) << storage.status();
    storage_ = *std::move(storage);
  }

  // The bytes the batches of `snapshot` hold in their lookup caches, and
  // how many batches hold some.
  static std::pair<size_t, size_t> Cached(const Snapshot& snapshot) {
    size_t bytes = 0, batches = 0;
    for (const auto& batch : snapshot.batches()) {
      const BatchLookupState* state = BatchLookupStateOf(*batch);
      if (state == nullptr) continue;
      bytes += state->cached_bytes();
      batches += state->spans_layout() != nullptr;
    }
    return {bytes, batches};
  }

  // Writes `requests` requests one at a time, so each is its own batch.
  void WriteRequests(int requests, int target_spans, int other_traces) {
    for (int i = 0; i < requests; ++i) {
      absl::Status s = storage_->Write(TracesRequest(traffic_.Request(target_spans, other_traces)));
      ASSERT_TRUE(s.ok()) << s;
    }
  }

  std::vector<std::string> Expected(const otlp::TraceId& id) const {
    std::vector<std::string> facts = traffic_.facts().at(id);
    std::sort(facts.begin(), facts.end());
    return facts;
  }

  // Overwrites `bytes.size()` bytes at `offset` of an existing file.
  void Patch(const std::string& path, uint64_t offset, std::string_view bytes) {
    absl::StatusOr<std::string> content = fs_.ReadFile(path);
    ASSERT_TRUE(content.ok()) << content.status();
    ASSERT_LE(offset + bytes.size(), content->size());
    content->replace(offset, bytes.size(), bytes);
    absl::StatusOr<std::unique_ptr<WritableFile>> file = fs_.NewWritableFile(path);
    ASSERT_TRUE(file.ok()) << file.status();
    ASSERT_TRUE((*file)->Append(*content).ok());
    ASSERT_TRUE((*file)->Close().ok());
  }

  // The batch of `snapshot` that holds `id` first, and its location.
  std::pair<const LiveBatch*, TraceLocation> Holder(const Snapshot& snapshot,
                                                    const otlp::TraceId& id) {
    for (const auto& batch : snapshot.batches()) {
      const TraceFilter* filter = BatchTraceFilter(*batch);
      if (filter == nullptr) continue;
      auto index = fs_.NewRandomAccessFile(batch->dir() + "/" + kTraceIndexFileName);
      EXPECT_TRUE(index.ok());
      absl::StatusOr<std::optional<TraceLocation>> location = filter->Find(**index, id);
      EXPECT_TRUE(location.ok()) << location.status();
      if (location.ok() && location->has_value()) return {batch.get(), **location};
    }
    ADD_FAILURE() << "no batch holds " << Hex(id);
    return {nullptr, {}};
  }

  PosixFileSystem fs_;
  testing::ScopedTempDir tmp_{"trace_lookup"};
  Traffic traffic_{7};
  size_t lookup_cache_bytes_ = StorageOptions::kDefaultLookupCacheBytes;
  std::unique_ptr<Storage> storage_;
};

TEST_F(TraceLookupTest, TraceSplitAcrossTwentyBatchesComesBackWhole) {
  ASSERT_NO_FATAL_FAILURE(OpenStorage());
  ASSERT_NO_FATAL_FAILURE(WriteRequests(20, 6, 30));
  std::shared_ptr<const Snapshot> snapshot = storage_->Pin();
  ASSERT_EQ(snapshot->size(), 20u);

  TraceLookupStats stats;
  absl::StatusOr<std::optional<otlp::TraceBatch>> found =
      LookupTrace(fs_, DataDir(), *snapshot, traffic_.target(), &stats);
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_TRUE(found->has_value());
  // The batch owns its bytes: nothing it points at belongs to the storage.
  snapshot.reset();
  storage_.reset();
  ASSERT_TRUE(fs_.RemoveAll(DataDir()).ok());

  const otlp::TraceBatch& trace = **found;
  EXPECT_TRUE(otlp::ValidateBatch(trace).ok()) << otlp::ValidateBatch(trace);
  EXPECT_EQ(SortedFacts(trace), Expected(traffic_.target()));
  ASSERT_EQ(trace.spans.size(), 120u);
  for (size_t i = 1; i < trace.spans.size(); ++i) {
    const auto key = [&](size_t k) {
      return std::make_pair(trace.spans.start_time_unix_nano[k], trace.spans.span_id[k]);
    };
    EXPECT_LT(key(i - 1), key(i)) << "span " << i;
  }
  // Resources and scopes: one per resource and scope the rows name, per batch.
  EXPECT_LE(trace.resources.size(), 40u);
  EXPECT_LE(trace.scopes.size(), 60u);
  EXPECT_EQ(stats.batches, 20u);
  EXPECT_EQ(stats.batches_read, 20u);
  EXPECT_EQ(stats.filter_matches, 20u);  // every batch holds it
  EXPECT_EQ(stats.rows_read, 120u);
}

TEST_F(TraceLookupTest, EveryWrittenTraceComesBackWithExactlyItsSpans) {
  ASSERT_NO_FATAL_FAILURE(OpenStorage());
  ASSERT_NO_FATAL_FAILURE(WriteRequests(4, 3, 25));
  std::shared_ptr<const Snapshot> snapshot = storage_->Pin();
  for (const auto& [id, facts] : traffic_.facts()) {
    TraceLookupStats stats;
    auto found = LookupTrace(fs_, DataDir(), *snapshot, id, &stats);
    ASSERT_TRUE(found.ok()) << found.status();
    ASSERT_TRUE(found->has_value()) << Hex(id);
    EXPECT_EQ(SortedFacts(**found), Expected(id)) << Hex(id);
    EXPECT_EQ(stats.rows_read, facts.size());
    EXPECT_GE(stats.filter_matches, stats.batches_read);
  }
}

// The skeleton lookup (the REST API's compact trace) reads no attribute,
// event or link column: the same spans, in the same order, with the same
// resources and scopes, every other field equal, and no details.
TEST_F(TraceLookupTest, SkeletonLookupHasEverySpanWithoutItsDetails) {
  ASSERT_NO_FATAL_FAILURE(OpenStorage());
  ASSERT_NO_FATAL_FAILURE(WriteRequests(4, 3, 25));
  std::shared_ptr<const Snapshot> snapshot = storage_->Pin();
  size_t with_details = 0;
  for (const auto& [id, facts] : traffic_.facts()) {
    auto full = LookupTrace(fs_, DataDir(), *snapshot, id);
    auto skeleton =
        LookupTrace(fs_, DataDir(), *snapshot, id, nullptr, TraceLookupDetail::kSkeleton);
    ASSERT_TRUE(full.ok() && skeleton.ok()) << full.status() << skeleton.status();
    ASSERT_TRUE(full->has_value() && skeleton->has_value()) << Hex(id);
    const otlp::TraceBatch& f = **full;
    const otlp::TraceBatch& k = **skeleton;
    EXPECT_TRUE(otlp::ValidateBatch(k).ok()) << otlp::ValidateBatch(k);
    ASSERT_EQ(k.spans.size(), f.spans.size()) << Hex(id);
    EXPECT_EQ(k.span_attributes.size(), 0u);
    EXPECT_EQ(k.events.size(), 0u);
    EXPECT_EQ(k.links.size(), 0u);
    EXPECT_EQ(k.resources.size(), f.resources.size());
    EXPECT_EQ(k.resource_attributes.key, f.resource_attributes.key);
    EXPECT_EQ(k.scopes.name, f.scopes.name);
    with_details += f.span_attributes.size() + f.events.size() + f.links.size();
    for (size_t i = 0; i < f.spans.size(); ++i) {
      const otlp::SpanColumns& a = f.spans;
      const otlp::SpanColumns& b = k.spans;
      EXPECT_EQ(std::tie(a.scope[i], a.span_id[i], a.parent_span_id[i], a.has_parent_span_id[i],
                         a.name[i], a.kind[i], a.start_time_unix_nano[i], a.end_time_unix_nano[i],
                         a.status_code[i], a.status_message[i], a.trace_state[i], a.flags[i],
                         a.dropped_attributes_count[i], a.dropped_events_count[i],
                         a.dropped_links_count[i]),
                std::tie(b.scope[i], b.span_id[i], b.parent_span_id[i], b.has_parent_span_id[i],
                         b.name[i], b.kind[i], b.start_time_unix_nano[i], b.end_time_unix_nano[i],
                         b.status_code[i], b.status_message[i], b.trace_state[i], b.flags[i],
                         b.dropped_attributes_count[i], b.dropped_events_count[i],
                         b.dropped_links_count[i]))
          << Hex(id) << " span " << i;
      EXPECT_EQ(b.attributes[i].count + b.events[i].count + b.links[i].count, 0u);
    }
  }
  EXPECT_GT(with_details, 0u);  // the full lookups had some to leave out
}

TEST_F(TraceLookupTest, AbsentIdsReturnNullopt) {
  ASSERT_NO_FATAL_FAILURE(OpenStorage());
  // An empty catalog holds nothing.
  auto none = LookupTrace(fs_, DataDir(), *storage_->Pin(), traffic_.target());
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value());

  ASSERT_NO_FATAL_FAILURE(WriteRequests(20, 2, 30));
  std::shared_ptr<const Snapshot> snapshot = storage_->Pin();
  std::mt19937_64 rng(99);
  size_t matches = 0;
  constexpr int kIds = 2000;
  for (int i = 0; i < kIds; ++i) {
    const otlp::TraceId id = MakeTraceId(rng(), rng());
    ASSERT_EQ(traffic_.facts().count(id), 0u);
    TraceLookupStats stats;
    auto found = LookupTrace(fs_, DataDir(), *snapshot, id, &stats);
    ASSERT_TRUE(found.ok()) << found.status();
    EXPECT_FALSE(found->has_value());
    EXPECT_EQ(stats.batches, 20u);
    EXPECT_EQ(stats.batches_read, 0u);
    EXPECT_EQ(stats.rows_read, 0u);
    matches += stats.filter_matches;
  }
  // False positives at about 1/256 per batch: 2000 * 20 / 256 = 156 expected.
  EXPECT_LT(matches, 300u);
}

TEST_F(TraceLookupTest, SpanIdsMatchDuckDbOverEverySpansFile) {
  ASSERT_NO_FATAL_FAILURE(OpenStorage());
  ASSERT_NO_FATAL_FAILURE(WriteRequests(12, 4, 25));
  std::shared_ptr<const Snapshot> snapshot = storage_->Pin();
  std::string files;
  for (const auto& batch : snapshot->batches()) {
    if (!files.empty()) files += ", ";
    files += fmt::format("'{}/spans.parquet'", batch->dir());
  }
  auto engine = query::DuckDbEngine::Open({});
  ASSERT_TRUE(engine.ok()) << engine.status();
  // A sample: the target, the shared traces, and every 7th other trace.
  std::vector<otlp::TraceId> sample;
  size_t k = 0;
  for (const auto& [id, facts] : traffic_.facts()) {
    if (facts.size() > 6 || k++ % 7 == 0) sample.push_back(id);
  }
  ASSERT_GE(sample.size(), 20u);
  for (const otlp::TraceId& id : sample) {
    auto result = (*engine)->Query(fmt::format(
        "SELECT lower(hex(span_id)) AS s FROM read_parquet([{}]) WHERE row_kind = 0 AND "
        "trace_id = from_hex('{}') ORDER BY s",
        files, Hex(id)));
    ASSERT_TRUE(result.ok()) << result.status();
    std::vector<std::string> expected;
    for (const auto& row : result->rows) expected.push_back(row[0].value_or("NULL"));
    auto found = LookupTrace(fs_, DataDir(), *snapshot, id);
    ASSERT_TRUE(found.ok()) << found.status();
    ASSERT_TRUE(found->has_value());
    std::vector<std::string> got;
    for (const otlp::SpanId& span : (**found).spans.span_id) got.push_back(Hex(span));
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, expected) << Hex(id);
    EXPECT_FALSE(expected.empty());
  }
}

TEST_F(TraceLookupTest, CorruptIndexEntryUnderPinnedSnapshotIsDataLossNamingTheFile) {
  ASSERT_NO_FATAL_FAILURE(OpenStorage());
  ASSERT_NO_FATAL_FAILURE(WriteRequests(3, 4, 30));
  std::shared_ptr<const Snapshot> snapshot = storage_->Pin();
  auto [batch, location] = Holder(*snapshot, traffic_.target());
  ASSERT_NE(batch, nullptr);
  const std::string path = batch->dir() + "/" + kTraceIndexFileName;
  absl::StatusOr<std::string> bytes = fs_.ReadFile(path);
  ASSERT_TRUE(bytes.ok());
  absl::StatusOr<TraceIndex> index = TraceIndex::Open(*bytes);
  ASSERT_TRUE(index.ok()) << index.status();
  const auto entries = index->entries();
  const auto it = std::find_if(entries.begin(), entries.end(), [&](const TraceIndexEntry& e) {
    return e.trace_id == traffic_.target();
  });
  ASSERT_NE(it, entries.end());
  ASSERT_NE(it, entries.begin());  // placeholders and 30 other traces come first
  const size_t entry = static_cast<size_t>(it - entries.begin());
  const uint64_t first_row_offset = kTraceIndexHeaderBytes + entry * kTraceIndexEntryBytes + 16;

  // The entry now starts at the previous trace's rows: the rows read hold
  // another trace id.
  const uint32_t previous = entries[entry - 1].first_row;
  ASSERT_NO_FATAL_FAILURE(
      Patch(path, first_row_offset, std::string_view(reinterpret_cast<const char*>(&previous), 4)));
  auto found = LookupTrace(fs_, DataDir(), *snapshot, traffic_.target());
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().code(), absl::StatusCode::kDataLoss) << found.status();
  EXPECT_THAT(found.status().message(), HasSubstr(path));

  // The entry now starts past the covered rows.
  const uint32_t past = 0xfffffff0u;
  ASSERT_NO_FATAL_FAILURE(
      Patch(path, first_row_offset, std::string_view(reinterpret_cast<const char*>(&past), 4)));
  found = LookupTrace(fs_, DataDir(), *snapshot, traffic_.target());
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().code(), absl::StatusCode::kDataLoss) << found.status();
  EXPECT_THAT(found.status().message(), HasSubstr(path));

  // Truncated below the entries.
  {
    auto file = fs_.NewWritableFile(path);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Append(bytes->substr(0, 64)).ok());
    ASSERT_TRUE((*file)->Close().ok());
  }
  found = LookupTrace(fs_, DataDir(), *snapshot, traffic_.target());
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().code(), absl::StatusCode::kDataLoss) << found.status();
  EXPECT_THAT(found.status().message(), HasSubstr(path));
}

TEST_F(TraceLookupTest, CorruptSpansFileUnderPinnedSnapshotIsDataLossNamingTheFile) {
  ASSERT_NO_FATAL_FAILURE(OpenStorage());
  ASSERT_NO_FATAL_FAILURE(WriteRequests(3, 4, 30));
  std::shared_ptr<const Snapshot> snapshot = storage_->Pin();
  auto [batch, location] = Holder(*snapshot, traffic_.target());
  ASSERT_NE(batch, nullptr);
  const std::string path = batch->dir() + "/spans.parquet";
  absl::StatusOr<std::string> original = fs_.ReadFile(path);
  ASSERT_TRUE(original.ok());

  // The footer's magic, before any lookup cached the footer.
  ASSERT_NO_FATAL_FAILURE(Patch(path, original->size() - 4, "PAR0"));
  auto found = LookupTrace(fs_, DataDir(), *snapshot, traffic_.target());
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().code(), absl::StatusCode::kDataLoss) << found.status();
  EXPECT_THAT(found.status().message(), HasSubstr(path));
  EXPECT_EQ(Cached(*snapshot).second, 0u);

  // The first page header of the first column chunk.
  ASSERT_NO_FATAL_FAILURE(Patch(path, original->size() - 4, "PAR1"));
  ASSERT_NO_FATAL_FAILURE(Patch(path, 4, std::string(48, '\xff')));
  found = LookupTrace(fs_, DataDir(), *snapshot, traffic_.target());
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().code(), absl::StatusCode::kDataLoss) << found.status();
  EXPECT_THAT(found.status().message(), HasSubstr(path));

  // Once a lookup has cached the footer, later ones do not read it again
  // (the file is immutable; verify and boot check footers), but a file of
  // another size is still caught.
  ASSERT_NO_FATAL_FAILURE(Patch(path, 4, original->substr(4, 48)));
  ASSERT_TRUE(LookupTrace(fs_, DataDir(), *snapshot, traffic_.target()).ok());
  EXPECT_NE(BatchLookupStateOf(*batch)->spans_layout(), nullptr);
  ASSERT_NO_FATAL_FAILURE(Patch(path, original->size() - 4, "PAR0"));
  found = LookupTrace(fs_, DataDir(), *snapshot, traffic_.target());
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(SortedFacts(**found), Expected(traffic_.target()));
  {
    auto file = fs_.NewWritableFile(path);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Append(original->substr(0, original->size() - 1)).ok());
    ASSERT_TRUE((*file)->Close().ok());
  }
  found = LookupTrace(fs_, DataDir(), *snapshot, traffic_.target());
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().code(), absl::StatusCode::kDataLoss) << found.status();
  EXPECT_THAT(found.status().message(), HasSubstr(path));
}

// ------------------------------------------------------------ the lookup cache

TEST_F(TraceLookupTest, CachedLayoutsReturnTheSameSpansAsUncachedReads) {
  ASSERT_NO_FATAL_FAILURE(OpenStorage());
  ASSERT_NO_FATAL_FAILURE(WriteRequests(6, 4, 25));
  std::shared_ptr<const Snapshot> snapshot = storage_->Pin();
  EXPECT_EQ(storage_->lookup_cache().used_bytes(), 0u);
  std::map<otlp::TraceId, std::vector<std::string>> first;
  for (const auto& [id, facts] : traffic_.facts()) {
    auto found = LookupTrace(fs_, DataDir(), *snapshot, id);
    ASSERT_TRUE(found.ok()) << found.status();
    ASSERT_TRUE(found->has_value()) << Hex(id);
    first[id] = SortedFacts(**found);
    EXPECT_EQ(first[id], Expected(id)) << Hex(id);
  }
  // Every batch has been read, so every batch holds its layout and the
  // dictionary pages its lookups needed, and the budget counts exactly
  // their bytes.
  const auto [bytes, batches] = Cached(*snapshot);
  EXPECT_EQ(batches, snapshot->size());
  EXPECT_GT(bytes, 0u);
  EXPECT_EQ(storage_->lookup_cache().used_bytes(), bytes);
  for (const auto& batch : snapshot->batches()) {
    EXPECT_GT(BatchLookupStateOf(*batch)->cached_dictionaries(), 0u);
  }
  for (const auto& [id, facts] : first) {
    auto found = LookupTrace(fs_, DataDir(), *snapshot, id);
    ASSERT_TRUE(found.ok() && found->has_value()) << Hex(id);
    EXPECT_EQ(SortedFacts(**found), facts) << Hex(id);
  }
  EXPECT_EQ(storage_->lookup_cache().used_bytes(), bytes);

  // The same data through a storage without a cache.
  snapshot.reset();
  storage_.reset();
  lookup_cache_bytes_ = 0;
  ASSERT_NO_FATAL_FAILURE(OpenStorage());
  snapshot = storage_->Pin();
  for (const auto& [id, facts] : first) {
    auto found = LookupTrace(fs_, DataDir(), *snapshot, id);
    ASSERT_TRUE(found.ok() && found->has_value()) << Hex(id);
    EXPECT_EQ(SortedFacts(**found), facts) << Hex(id);
  }
  EXPECT_EQ(Cached(*snapshot), std::make_pair(size_t{0}, size_t{0}));
  EXPECT_EQ(storage_->lookup_cache().used_bytes(), 0u);
}

TEST_F(TraceLookupTest, RetiredBatchGivesBackItsLookupCache) {
  ASSERT_NO_FATAL_FAILURE(OpenStorage());
  ASSERT_NO_FATAL_FAILURE(WriteRequests(3, 4, 20));
  std::shared_ptr<const Snapshot> snapshot = storage_->Pin();
  ASSERT_TRUE(LookupTrace(fs_, DataDir(), *snapshot, traffic_.target()).ok());
  ASSERT_EQ(Cached(*snapshot).second, 3u);  // every request carries the target
  const size_t used = storage_->lookup_cache().used_bytes();
  const LiveBatch& retired = *snapshot->batches()[1];
  const size_t retired_bytes = BatchLookupStateOf(retired)->cached_bytes();
  ASSERT_GT(retired_bytes, 0u);
  ASSERT_LT(retired_bytes, used);

  absl::StatusOr<std::shared_ptr<const Snapshot>> next =
      storage_->data_dir().catalog().Publish({}, {retired.id()});
  ASSERT_TRUE(next.ok()) << next.status();
  // A pinned Snapshot still names the batch: its cache stays.
  EXPECT_EQ(storage_->lookup_cache().used_bytes(), used);
  snapshot.reset();
  // No Snapshot names it any more: the batch, its state and its cache are gone.
  EXPECT_EQ(storage_->lookup_cache().used_bytes(), used - retired_bytes);
  EXPECT_EQ(Cached(**next).first, used - retired_bytes);
}

TEST_F(TraceLookupTest, LookupCacheStaysWithinItsBudget) {
  ASSERT_NO_FATAL_FAILURE(OpenStorage());
  ASSERT_NO_FATAL_FAILURE(WriteRequests(4, 4, 20));
  ASSERT_TRUE(LookupTrace(fs_, DataDir(), *storage_->Pin(), traffic_.target()).ok());
  size_t largest = 0;
  for (const auto& batch : storage_->Pin()->batches()) {
    largest = std::max(largest, BatchLookupStateOf(*batch)->cached_bytes());
  }
  ASSERT_GT(largest, 0u);

  // Room for one layout and a half: the first batch read keeps its layout,
  // the rest are read without a cache, and every answer is whole.
  storage_.reset();
  lookup_cache_bytes_ = largest + largest / 2;
  ASSERT_NO_FATAL_FAILURE(OpenStorage());
  std::shared_ptr<const Snapshot> snapshot = storage_->Pin();
  for (int round = 0; round < 2; ++round) {
    auto found = LookupTrace(fs_, DataDir(), *snapshot, traffic_.target());
    ASSERT_TRUE(found.ok() && found->has_value());
    EXPECT_EQ(SortedFacts(**found), Expected(traffic_.target()));
    const auto [bytes, batches] = Cached(*snapshot);
    EXPECT_GE(batches, 1u);
    EXPECT_LT(batches, 4u);
    EXPECT_LE(bytes, lookup_cache_bytes_);
    EXPECT_EQ(storage_->lookup_cache().used_bytes(), bytes);
  }
}

TEST_F(TraceLookupTest, ConcurrentLookupsFillTheCacheOnceAndAgree) {
  ASSERT_NO_FATAL_FAILURE(OpenStorage());
  ASSERT_NO_FATAL_FAILURE(WriteRequests(4, 3, 25));
  std::shared_ptr<const Snapshot> snapshot = storage_->Pin();
  std::vector<otlp::TraceId> ids;
  for (const auto& [id, facts] : traffic_.facts()) ids.push_back(id);
  std::vector<std::vector<std::vector<std::string>>> answers(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < answers.size(); ++t) {
    threads.emplace_back([&, t] {
      for (size_t k = 0; k < ids.size(); ++k) {
        const otlp::TraceId& id = ids[(k + t * 7) % ids.size()];
        auto found = LookupTrace(fs_, DataDir(), *snapshot, id);
        answers[t].push_back(found.ok() && found->has_value() ? SortedFacts(**found)
                                                              : std::vector<std::string>{"error"});
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (size_t t = 0; t < answers.size(); ++t) {
    for (size_t k = 0; k < ids.size(); ++k) {
      EXPECT_EQ(answers[t][k], Expected(ids[(k + t * 7) % ids.size()])) << t << " " << k;
    }
  }
  const auto [bytes, batches] = Cached(*snapshot);
  EXPECT_EQ(batches, snapshot->size());
  EXPECT_EQ(storage_->lookup_cache().used_bytes(), bytes);
}

// ------------------------------------------------------------ ReadSpansRows

TEST_F(TraceLookupTest, RowRangesReadLikeTheWholeFile) {
  ASSERT_NO_FATAL_FAILURE(OpenStorage());
  ASSERT_NO_FATAL_FAILURE(WriteRequests(2, 5, 25));
  std::shared_ptr<const Snapshot> snapshot = storage_->Pin();
  for (const auto& batch : snapshot->batches()) {
    absl::StatusOr<std::string> bytes = fs_.ReadFile(batch->dir() + "/spans.parquet");
    ASSERT_TRUE(bytes.ok());
    parquet::StringSource source(*bytes);
    const std::string id = batch->id().ToString();
    absl::StatusOr<otlp::TraceBatch> whole = ReadSpansTable(&source, id, "spans.parquet");
    ASSERT_TRUE(whole.ok()) << whole.status();
    auto index_bytes = fs_.ReadFile(batch->dir() + "/" + kTraceIndexFileName);
    ASSERT_TRUE(index_bytes.ok());
    absl::StatusOr<TraceIndex> index = TraceIndex::Open(*index_bytes);
    ASSERT_TRUE(index.ok());
    const uint64_t placeholders = index->filter().first_covered_row();
    ASSERT_GT(placeholders, 0u);  // scope-idle
    // Every trace's range, alone and all appended into one batch.
    otlp::TraceBatch appended;
    for (size_t e = 0; e < index->entries().size(); ++e) {
      const TraceLocation location = index->LocationOf(e);
      absl::StatusOr<otlp::TraceBatch> rows =
          ReadSpansRows(&source, id, "spans.parquet", location.first_row, location.end_row);
      ASSERT_TRUE(rows.ok()) << rows.status();
      std::vector<std::string> expected;
      for (uint64_t r = location.first_row; r < location.end_row; ++r) {
        expected.push_back(SpanFacts(*whole, r - placeholders));
      }
      std::vector<std::string> got;
      for (size_t i = 0; i < rows->spans.size(); ++i) got.push_back(SpanFacts(*rows, i));
      EXPECT_EQ(got, expected);  // file order, not sorted
      ASSERT_TRUE(ReadSpansRows(&source, id, "spans.parquet", location.first_row, location.end_row,
                                &appended)
                      .ok());
    }
    EXPECT_EQ(SortedFacts(appended), SortedFacts(*whole));
    // A range that holds placeholder rows, an empty one, one past the end.
    const uint64_t end = placeholders + index->filter().span_rows();
    for (auto [b, e] : std::vector<std::pair<uint64_t, uint64_t>>{
             {0, placeholders + 1}, {5, 5}, {end - 1, end + 1}}) {
      absl::StatusOr<otlp::TraceBatch> bad = ReadSpansRows(&source, id, "spans.parquet", b, e);
      EXPECT_EQ(bad.status().code(), absl::StatusCode::kDataLoss) << b << ".." << e;
    }
  }
}

// Ranges of more than 4,096 rows read the resource and scope columns only
// as far as the last row that first names one of the range's resources or
// scopes (SpansRangeReader::ReadRange). A scope first named near the end of
// the range, and ranges that start past the first row naming a resource,
// must still come back as in the whole file, with and without details.
TEST(TraceLookupRangeTest, LongRangesWithAScopeFirstNamedLateReadLikeTheWholeFile) {
  otlp::TraceBatch b;
  BatchBuilder build(&b);
  const uint32_t r0 = build.Resource(build.Many(6, "res0."), "https://schema/r0", 1, 2);
  // Not EveryValueType: its 70,000-byte string on each of 6,000 rows
  // would make the reads slow for nothing here.
  const auto typed = [&build](const std::string& salt) {
    std::vector<otlp::AttributeRow> attributes = build.Many(4, salt);
    attributes.push_back({build.S(salt + "double"), BatchBuilder::Double(-0.5)});
    attributes.push_back({build.S(salt + "bool"), BatchBuilder::Bool(true)});
    attributes.push_back({build.S(salt + "bytes"), BatchBuilder::Bytes(build.S("\x01\x02"))});
    attributes.push_back(
        {build.S(salt + "kv"), build.KvList({{build.S("k"), BatchBuilder::Int(1)}})});
    return attributes;
  };
  const uint32_t r1 = build.Resource(typed("r1."), "", 0, 1);
  const uint32_t s0 = build.Scope(r0, "s0", "1.0", build.Many(2, "s0."), 0, "");
  const uint32_t s1 = build.Scope(r1, "s1", "", typed("s1."), 3, "https://scope");
  const uint32_t late = build.Scope(r1, "late", "2", build.Many(3, "late."), 1, "");
  constexpr uint64_t kSpans = 6000;
  constexpr uint64_t kFirstLate = 5901;
  for (uint64_t i = 0; i < kSpans; ++i) {
    otlp::SpanRow row;
    row.scope = i >= kFirstLate && i % 7 == 0 ? late : (i % 3 == 0 ? s1 : s0);
    row.trace_id = MakeTraceId(7, 7);
    row.span_id = MakeSpanId(i + 1);
    row.name = build.S(fmt::format("op-{}", i % 11));
    row.start_time_unix_nano = 1000 + i;  // the file keeps this order
    row.end_time_unix_nano = 2000 + 2 * i;
    row.attributes = BatchBuilder::Attributes(&b.span_attributes, build.Many(i % 3, "a."));
    b.spans.Append(row);
  }
  const otlp::TraceBatch* inputs[] = {&b};
  const std::string id = "20250614093015123456000";
  absl::StatusOr<SpansTable> table = WriteSpansTable(inputs, id);
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_EQ(table->first_span_row, 0u);
  parquet::StringSource source(table->file);
  absl::StatusOr<otlp::TraceBatch> whole = ReadSpansTable(&source, id, "spans.parquet");
  ASSERT_TRUE(whole.ok()) << whole.status();
  // Without details a span keeps its owners, names and times.
  const auto owners_of = [](const otlp::TraceBatch& batch, size_t i) {
    const uint32_t scope = batch.spans.scope[i];
    const uint32_t resource = batch.scopes.resource[scope];
    return fmt::format(
        "{} {} {} {}/{}/{}/{} [{}] resource {}/{} [{}]", Hex(batch.spans.span_id[i]),
        batch.spans.name[i], batch.spans.start_time_unix_nano[i], batch.scopes.name[scope],
        batch.scopes.version[scope], batch.scopes.schema_url[scope],
        batch.scopes.dropped_attributes_count[scope],
        RenderAttributes(batch, batch.scope_attributes, batch.scopes.attributes[scope]),
        batch.resources.schema_url[resource], batch.resources.dropped_attributes_count[resource],
        RenderAttributes(batch, batch.resource_attributes, batch.resources.attributes[resource]));
  };
  for (auto [begin, end] : std::vector<std::pair<uint64_t, uint64_t>>{
           {0, kSpans}, {1, kSpans}, {1500, kSpans}, {0, kFirstLate + 1}, {0, kFirstLate}}) {
    SCOPED_TRACE(fmt::format("rows [{}, {})", begin, end));
    absl::StatusOr<otlp::TraceBatch> rows = ReadSpansRows(&source, id, "spans.parquet", begin, end);
    ASSERT_TRUE(rows.ok()) << rows.status();
    absl::StatusOr<std::unique_ptr<SpansRangeReader>> reader =
        SpansRangeReader::Open(&source, id, "spans.parquet");
    ASSERT_TRUE(reader.ok()) << reader.status();
    (*reader)->SkipSpanDetails();
    otlp::TraceBatch skeleton;
    ASSERT_TRUE((*reader)->ReadSpans(begin, end, &skeleton).ok());
    ASSERT_EQ(rows->spans.size(), end - begin);
    ASSERT_EQ(skeleton.spans.size(), end - begin);
    EXPECT_EQ(rows->scopes.size(), end > kFirstLate ? 3u : 2u);
    for (uint64_t r = begin; r < end; ++r) {
      ASSERT_EQ(SpanFacts(*rows, r - begin), SpanFacts(*whole, r)) << "row " << r;
      ASSERT_EQ(owners_of(skeleton, r - begin), owners_of(*whole, r)) << "row " << r;
    }
  }
}

// Pages of a file and which of them a CountingSource's reads touched.
struct PageCounts {
  uint64_t pages = 0;
  uint64_t uncompressed_bytes = 0;
  uint64_t pages_read = 0;
  uint64_t uncompressed_bytes_read = 0;
  uint64_t list_uncompressed_bytes_read = 0;  // of LIST columns
};

PageCounts CountPages(const std::string& file, const parquet::FileReader& reader,
                      const std::vector<std::pair<uint64_t, uint64_t>>& reads) {
  PageCounts counts;
  for (const parquet::RowGroup& group : reader.metadata().row_groups) {
    for (size_t column = 0; column < group.columns.size(); ++column) {
      const parquet::ColumnMetaData& meta = *group.columns[column].meta_data;
      uint64_t offset = meta.dictionary_page_offset.value_or(meta.data_page_offset);
      const uint64_t end = offset + meta.total_compressed_size;
      while (offset < end) {
        size_t consumed = 0;
        absl::StatusOr<parquet::PageHeader> header =
            parquet::ParsePageHeader(std::string_view(file).substr(offset), &consumed);
        if (!header.ok()) {
          ADD_FAILURE() << header.status();
          return counts;
        }
        const uint64_t body = offset + consumed;
        ++counts.pages;
        counts.uncompressed_bytes += header->uncompressed_page_size;
        for (const auto& [read_offset, read_length] : reads) {
          if (read_offset <= body && body < read_offset + read_length) {
            ++counts.pages_read;
            counts.uncompressed_bytes_read += header->uncompressed_page_size;
            if (reader.columns()[column].list) {
              counts.list_uncompressed_bytes_read += header->uncompressed_page_size;
            }
            break;
          }
        }
        offset = body + header->compressed_page_size;
      }
    }
  }
  return counts;
}

// What reading one trace's rows costs in a batch of `traces` traces
// (STRATA_LOOKUP_MEASURE_TRACES, default 2,000, about 7,000 spans): bytes
// and pages read from spans.parquet and the bytes decompressed. Prints the
// numbers; checks that a one-trace read reads the file about once at most.
TEST_F(TraceLookupTest, MeasurePagesAndBytesReadPerTrace) {
  ASSERT_NO_FATAL_FAILURE(OpenStorage(/*page_rows_from_env=*/true));
  int traces = 2000;
  if (const char* env = std::getenv("STRATA_LOOKUP_MEASURE_TRACES"); env != nullptr) {
    traces = std::atoi(env);
  }
  ASSERT_NO_FATAL_FAILURE(WriteRequests(1, 4, traces));
  std::shared_ptr<const Snapshot> snapshot = storage_->Pin();
  const LiveBatch& batch = *snapshot->batches().front();
  absl::StatusOr<std::string> bytes = fs_.ReadFile(batch.dir() + "/spans.parquet");
  ASSERT_TRUE(bytes.ok());
  auto index_bytes = fs_.ReadFile(batch.dir() + "/" + kTraceIndexFileName);
  ASSERT_TRUE(index_bytes.ok());
  absl::StatusOr<TraceIndex> index = TraceIndex::Open(*index_bytes);
  ASSERT_TRUE(index.ok());
  CountingSource footer_only(*bytes);
  auto reader = parquet::FileReader::Open(&footer_only);
  ASSERT_TRUE(reader.ok());

  const size_t n = index->entries().size();
  for (size_t e : {size_t{0}, n / 4, n / 2, 3 * n / 4, n - 1}) {
    CountingSource source(*bytes);
    const TraceLocation location = index->LocationOf(e);
    auto rows = ReadSpansRows(&source, batch.id().ToString(), "spans.parquet", location.first_row,
                              location.end_row);
    ASSERT_TRUE(rows.ok()) << rows.status();
    const PageCounts pages = CountPages(*bytes, **reader, source.ranges);
    std::printf(
        "[measure] trace at rows [%llu, %llu) of %llu (file %zu bytes, footer %llu): "
        "read %llu bytes in %llu reads; pages %llu of %llu; decompressed %llu of %llu bytes "
        "(%llu in LIST columns)\n",
        static_cast<unsigned long long>(location.first_row),
        static_cast<unsigned long long>(location.end_row),
        static_cast<unsigned long long>(batch.meta().spans.file_rows), bytes->size(),
        static_cast<unsigned long long>(footer_only.bytes),
        static_cast<unsigned long long>(source.bytes),
        static_cast<unsigned long long>(source.reads),
        static_cast<unsigned long long>(pages.pages_read),
        static_cast<unsigned long long>(pages.pages),
        static_cast<unsigned long long>(pages.uncompressed_bytes_read),
        static_cast<unsigned long long>(pages.uncompressed_bytes),
        static_cast<unsigned long long>(pages.list_uncompressed_bytes_read));
    // Page headers are read with some bytes past them, so a little more
    // than the file can be read in all; never much more.
    EXPECT_LE(source.bytes, bytes->size() + bytes->size() / 4);
    EXPECT_GT(pages.pages_read, 0u);
  }
}

// Lookup time over many batches, on a release build:
//   STRATA_LOOKUP_BENCH_BATCHES=200 [STRATA_LOOKUP_BENCH_TRACES=2000] storage_test
//     --gtest_filter=TraceLookupTest.MeasureLookupTime
// Skipped unless STRATA_LOOKUP_BENCH_BATCHES is set.
TEST_F(TraceLookupTest, MeasureLookupTime) {
  const char* batches_env = std::getenv("STRATA_LOOKUP_BENCH_BATCHES");
  if (batches_env == nullptr) GTEST_SKIP() << "set STRATA_LOOKUP_BENCH_BATCHES";
  const int batches = std::atoi(batches_env);
  int traces = 2000;
  if (const char* env = std::getenv("STRATA_LOOKUP_BENCH_TRACES"); env != nullptr) {
    traces = std::atoi(env);
  }
  ASSERT_NO_FATAL_FAILURE(OpenStorage(/*page_rows_from_env=*/true));
  traffic_.KeepSampleOnly();
  ASSERT_NO_FATAL_FAILURE(WriteRequests(batches, 2, traces));
  std::shared_ptr<const Snapshot> snapshot = storage_->Pin();
  ASSERT_EQ(snapshot->size(), static_cast<size_t>(batches));
  uint64_t spans = 0;
  uint64_t file_bytes = 0;
  for (const auto& batch : snapshot->batches()) {
    spans += batch->meta().spans.rows;
    auto size = fs_.FileSize(batch->dir() + "/spans.parquet");
    ASSERT_TRUE(size.ok());
    file_bytes += *size;
  }
  std::printf("[measure] spans.parquet: %.1f bytes per span\n", double(file_bytes) / spans);

  std::vector<otlp::TraceId> present;
  size_t k = 0;
  for (const auto& [id, facts] : traffic_.facts()) {
    if (facts.size() <= 6 && k++ % 3 == 0 && present.size() < 200) present.push_back(id);
  }
  std::mt19937_64 rng(5);
  std::vector<otlp::TraceId> absent;
  for (int i = 0; i < 200; ++i) absent.push_back(MakeTraceId(rng(), rng()));

  const auto time = [&](const std::vector<otlp::TraceId>& ids, const char* what) {
    std::vector<double> micros;
    TraceLookupStats total;
    for (const otlp::TraceId& id : ids) {
      TraceLookupStats stats;
      const auto start = std::chrono::steady_clock::now();
      auto found = LookupTrace(fs_, DataDir(), *snapshot, id, &stats);
      const auto stop = std::chrono::steady_clock::now();
      ASSERT_TRUE(found.ok()) << found.status();
      micros.push_back(std::chrono::duration<double, std::micro>(stop - start).count());
      total.filter_matches += stats.filter_matches;
      total.batches_read += stats.batches_read;
      total.rows_read += stats.rows_read;
    }
    std::sort(micros.begin(), micros.end());
    std::printf(
        "[measure] %d batches, %llu spans: %zu %s lookups: median %.0f us, p90 %.0f us, max %.0f "
        "us; per lookup %.2f filter matches, %.2f batches read, %.1f rows\n",
        batches, static_cast<unsigned long long>(spans), ids.size(), what,
        micros[micros.size() / 2], micros[micros.size() * 9 / 10], micros.back(),
        double(total.filter_matches) / ids.size(), double(total.batches_read) / ids.size(),
        double(total.rows_read) / ids.size());
  };
  time(present, "present");
  time(absent, "absent");
  time({traffic_.target()}, "target (in every batch)");
}

}  // namespace
}  // namespace strata::storage
