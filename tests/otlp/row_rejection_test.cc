// Row-level rejection (docs/otlp.md, "Rejected rows"), differentially: for
// seeded random requests (otlp_reference/generator.h) with some rows made
// semantically invalid, both decoders must
//   1. keep exactly the valid rows: the batch converts to the request with
//      the invalid rows deleted (libprotobuf's copy, normalized);
//   2. count the deleted rows per reason, as the test made them;
//   3. agree with each other on the counts and on the first message;
//   4. leave a batch that passes ValidateBatch() (no child row of a
//      rejected row stays behind).
// Log records with invalid ids are kept instead, those ids cleared
// ("Cleared log record ids"): the batch must convert to the request with
// just those ids removed, every other id byte for byte, and both decoders
// must count the cleared ids per field.
//
// Environment: STRATA_DIFF_CASES (seeds, default 2000; this suite runs a
// quarter of them) and STRATA_DIFF_SEED (first seed, default 1).

#include <array>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "otlp/batch.h"
#include "otlp/decode.h"
#include "otlp_reference/compare.h"
#include "otlp_reference/generator.h"
#include "otlp_reference/normalize.h"
#include "otlp_reference/otlp_json.h"
#include "otlp_reference/to_message.h"

namespace strata::otlp_reference {
namespace {

using otlp::RowRejections;
using otlp::RowRejectReason;

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  return std::strtoull(value, nullptr, 10);
}

uint64_t CaseCount() { return std::max<uint64_t>(1, EnvOr("STRATA_DIFF_CASES", 2000) / 4); }
uint64_t FirstSeed() { return EnvOr("STRATA_DIFF_SEED", 1); }

using Counts = std::array<uint64_t, otlp::kRowRejectReasonCount>;

void Count(Counts* counts, RowRejectReason reason) { ++(*counts)[static_cast<size_t>(reason)]; }

// Makes `span` invalid in one of the ways row_checks.h names; returns which.
RowRejectReason Spoil(std::mt19937_64& rng, opentelemetry::proto::trace::v1::Span* span) {
  switch (rng() % 8) {
    case 0:
      span->clear_trace_id();
      return RowRejectReason::kTraceId;
    case 1:
      span->set_trace_id(std::string(15, '\x11'));
      return RowRejectReason::kTraceId;
    case 2:
      span->set_trace_id(std::string(16, '\0'));
      return RowRejectReason::kTraceId;
    case 3:
      span->clear_span_id();
      return RowRejectReason::kSpanId;
    case 4:
      span->set_span_id(std::string(9, '\x22'));
      return RowRejectReason::kSpanId;
    case 5:
      span->set_span_id(std::string(8, '\0'));
      return RowRejectReason::kSpanId;
    case 6:
      span->set_parent_span_id("1234");
      return RowRejectReason::kParentSpanId;
    default: {
      auto* link = span->add_links();
      link->set_trace_id(std::string(16, '\x33'));
      if (rng() % 2 == 0) link->set_span_id("abc");
      return RowRejectReason::kLinkId;
    }
  }
}

struct Decoded {
  std::string error;  // empty when the batch matched
  RowRejections rejected;
  otlp::ClearedIds cleared_ids;  // log batches only
};

template <typename Batch, typename Request, typename DecodeFn, typename ToMessageFn>
Decoded DecodeAndCompare(DecodeFn decode, ToMessageFn to_message, std::string_view input,
                         const Request& expected) {
  Decoded out;
  Batch batch;
  if (absl::Status s = decode(input, &batch); !s.ok()) {
    out.error = absl::StrCat("decode failed: ", s.ToString());
    return out;
  }
  out.rejected = batch.rejected;
  if constexpr (std::is_same_v<Batch, otlp::LogBatch>) out.cleared_ids = batch.cleared_ids;
  if (absl::Status s = otlp::ValidateBatch(batch); !s.ok()) {
    out.error = absl::StrCat("ValidateBatch: ", s.ToString());
    return out;
  }
  auto actual = to_message(batch);
  if (!actual.ok()) {
    out.error = absl::StrCat("to_message: ", actual.status().ToString());
    return out;
  }
  if (std::string diff = MessageDifferences(expected, *actual); !diff.empty()) {
    out.error = absl::StrCat("differences (expected -> actual):\n", diff);
  }
  return out;
}

// Checks both decoders against `expected` and each other; "" when all hold.
template <typename Batch, typename Request, typename ProtoFn, typename JsonFn, typename ToMessageFn>
std::string CheckBoth(const Request& spoiled, Request expected, uint64_t rows, const Counts& counts,
                      ProtoFn proto, JsonFn json, ToMessageFn to_message, uint64_t seed) {
  Normalize(&expected);
  absl::StatusOr<std::string> json_text =
      ToOtlpJson(spoiled, OtlpJsonStyle{.print_defaults = seed % 2 == 1});
  if (!json_text.ok()) return absl::StrCat("harness: ToOtlpJson: ", json_text.status().ToString());
  const Decoded p =
      DecodeAndCompare<Batch>(proto, to_message, spoiled.SerializeAsString(), expected);
  const Decoded j = DecodeAndCompare<Batch>(json, to_message, *json_text, expected);
  if (!p.error.empty()) return absl::StrCat("protobuf: ", p.error);
  if (!j.error.empty()) return absl::StrCat("JSON: ", j.error);
  for (const Decoded* d : {&p, &j}) {
    const char* what = d == &p ? "protobuf" : "JSON";
    if (d->rejected.rows != rows) {
      return absl::StrCat(what, ": rejected ", d->rejected.rows, " rows, want ", rows);
    }
    if (d->rejected.by_reason != counts) return absl::StrCat(what, ": counts by reason differ");
    if (rows != 0 && d->rejected.first_message.empty()) {
      return absl::StrCat(what, ": no message");
    }
  }
  if (p.rejected.first_message != j.rejected.first_message) {
    return absl::StrCat("first messages differ: protobuf \"", p.rejected.first_message,
                        "\", JSON \"", j.rejected.first_message, "\"");
  }
  return "";
}

TEST(RowRejectionTest, BothDecodersDropExactlyTheInvalidSpans) {
  int failures = 0;
  uint64_t spoiled_total = 0;
  for (uint64_t seed = FirstSeed(); seed < FirstSeed() + CaseCount(); ++seed) {
    std::mt19937_64 rng(seed);
    TraceRequest spoiled = RandomTraceRequest(seed);
    TraceRequest expected = spoiled;
    Counts counts{};
    uint64_t rows = 0;
    for (int r = 0; r < spoiled.resource_spans_size(); ++r) {
      for (int s = 0; s < spoiled.resource_spans(r).scope_spans_size(); ++s) {
        auto* spans = spoiled.mutable_resource_spans(r)->mutable_scope_spans(s)->mutable_spans();
        auto* kept = expected.mutable_resource_spans(r)->mutable_scope_spans(s)->mutable_spans();
        for (int i = spans->size() - 1; i >= 0; --i) {
          if (rng() % 3 != 0) continue;
          Count(&counts, Spoil(rng, spans->Mutable(i)));
          kept->DeleteSubrange(i, 1);
          ++rows;
        }
      }
    }
    spoiled_total += rows;
    std::string error = CheckBoth<otlp::TraceBatch>(
        spoiled, expected, rows, counts,
        [](std::string_view in, otlp::TraceBatch* b) { return otlp::DecodeTracesProto(in, b); },
        [](std::string_view in, otlp::TraceBatch* b) { return otlp::DecodeTracesJson(in, b); },
        [](const otlp::TraceBatch& b) { return ToTraceRequest(b); }, seed);
    if (!error.empty() && ++failures <= 5) ADD_FAILURE() << "seed " << seed << ": " << error;
  }
  EXPECT_EQ(failures, 0);
  EXPECT_GT(spoiled_total, 0u) << "the generator made no spans to spoil";
}

TEST(RowRejectionTest, BothDecodersDropExactlyTheInvalidHistogramPoints) {
  int failures = 0;
  uint64_t spoiled_total = 0;
  for (uint64_t seed = FirstSeed(); seed < FirstSeed() + CaseCount(); ++seed) {
    std::mt19937_64 rng(seed);
    MetricsRequest spoiled = RandomMetricsRequest(seed);
    MetricsRequest expected = spoiled;
    Counts counts{};
    uint64_t rows = 0;
    for (int r = 0; r < spoiled.resource_metrics_size(); ++r) {
      for (int s = 0; s < spoiled.resource_metrics(r).scope_metrics_size(); ++s) {
        auto* metrics =
            spoiled.mutable_resource_metrics(r)->mutable_scope_metrics(s)->mutable_metrics();
        auto* kept =
            expected.mutable_resource_metrics(r)->mutable_scope_metrics(s)->mutable_metrics();
        for (int m = metrics->size() - 1; m >= 0; --m) {
          auto* metric = metrics->Mutable(m);
          if (!metric->has_histogram()) continue;
          auto* points = metric->mutable_histogram()->mutable_data_points();
          auto* kept_points = kept->Mutable(m)->mutable_histogram()->mutable_data_points();
          for (int i = points->size() - 1; i >= 0; --i) {
            if (rng() % 3 != 0) continue;
            auto* point = points->Mutable(i);
            point->clear_bucket_counts();
            for (int k = 0; k < point->explicit_bounds_size() + 2; ++k) point->add_bucket_counts(1);
            kept_points->DeleteSubrange(i, 1);
            Count(&counts, RowRejectReason::kHistogramBuckets);
            ++rows;
          }
        }
      }
    }
    spoiled_total += rows;
    std::string error = CheckBoth<otlp::MetricBatch>(
        spoiled, expected, rows, counts,
        [](std::string_view in, otlp::MetricBatch* b) { return otlp::DecodeMetricsProto(in, b); },
        [](std::string_view in, otlp::MetricBatch* b) { return otlp::DecodeMetricsJson(in, b); },
        [](const otlp::MetricBatch& b) { return ToMetricsRequest(b); }, seed);
    if (!error.empty() && ++failures <= 5) ADD_FAILURE() << "seed " << seed << ": " << error;
  }
  EXPECT_EQ(failures, 0);
  EXPECT_GT(spoiled_total, 0u) << "the generator made no histogram points to spoil";
}

// A span_id whose JSON text the test replaces with text that is not hex;
// its protobuf form is simply of the wrong length. No generated id has
// 5 bytes, so its quoted hex is unique in the request.
constexpr std::string_view kNotHexMarker = "\xde\xad\xbe\xef\x42";
constexpr std::string_view kNotHexMarkerJson = R"("spanId":"deadbeef42")";
constexpr std::string_view kNotHexJson = R"("spanId":"not hex!")";

// Makes one or both ids of `record` invalid; counts and clears in `kept`
// what a decoder must clear. Returns whether it used kNotHexMarker.
bool SpoilIds(std::mt19937_64& rng, opentelemetry::proto::logs::v1::LogRecord* record,
              opentelemetry::proto::logs::v1::LogRecord* kept, otlp::ClearedIds* cleared) {
  const uint64_t mode = rng() % 7;
  if (mode == 0 || mode == 1 || mode == 4) {
    const size_t bytes = 1 + rng() % 31;
    record->set_trace_id(mode == 1 ? std::string(16, '\0')
                                   : std::string(bytes == 16 ? 17 : bytes, '\x5a'));
    kept->clear_trace_id();
    ++cleared->trace_id;
  }
  if (mode < 2) return false;
  const size_t bytes = 1 + rng() % 15;
  if (mode == 5) {
    record->set_span_id(std::string(kNotHexMarker));
  } else if (mode == 3) {
    record->set_span_id(std::string(8, '\0'));
  } else {
    record->set_span_id(std::string(bytes == 8 || bytes == 5 ? 9 : bytes, '\x6b'));
  }
  kept->clear_span_id();
  ++cleared->span_id;
  return mode == 5;
}

TEST(RowRejectionTest, BothDecodersKeepLogRecordsAndClearExactlyTheInvalidIds) {
  int failures = 0;
  uint64_t spoiled_total = 0;
  for (uint64_t seed = FirstSeed(); seed < FirstSeed() + CaseCount(); ++seed) {
    std::mt19937_64 rng(seed);
    LogsRequest spoiled = RandomLogsRequest(seed);
    LogsRequest expected = spoiled;
    otlp::ClearedIds cleared;
    uint64_t not_hex = 0;
    for (int r = 0; r < spoiled.resource_logs_size(); ++r) {
      for (int s = 0; s < spoiled.resource_logs(r).scope_logs_size(); ++s) {
        auto* records =
            spoiled.mutable_resource_logs(r)->mutable_scope_logs(s)->mutable_log_records();
        auto* kept =
            expected.mutable_resource_logs(r)->mutable_scope_logs(s)->mutable_log_records();
        for (int i = 0; i < records->size(); ++i) {
          if (rng() % 3 != 0) continue;
          not_hex += SpoilIds(rng, records->Mutable(i), kept->Mutable(i), &cleared) ? 1 : 0;
        }
      }
    }
    spoiled_total += cleared.trace_id + cleared.span_id;
    Normalize(&expected);
    absl::StatusOr<std::string> json =
        ToOtlpJson(spoiled, OtlpJsonStyle{.print_defaults = seed % 2 == 1});
    ASSERT_TRUE(json.ok()) << json.status();
    for (size_t at = json->find(kNotHexMarkerJson); at != std::string::npos;
         at = json->find(kNotHexMarkerJson, at)) {
      json->replace(at, kNotHexMarkerJson.size(), kNotHexJson);
      --not_hex;
    }
    ASSERT_EQ(not_hex, 0u) << "seed " << seed << ": a marker id is missing from the JSON";
    const Decoded p = DecodeAndCompare<otlp::LogBatch>(
        [](std::string_view in, otlp::LogBatch* b) { return otlp::DecodeLogsProto(in, b); },
        [](const otlp::LogBatch& b) { return ToLogsRequest(b); }, spoiled.SerializeAsString(),
        expected);
    const Decoded j = DecodeAndCompare<otlp::LogBatch>(
        [](std::string_view in, otlp::LogBatch* b) { return otlp::DecodeLogsJson(in, b); },
        [](const otlp::LogBatch& b) { return ToLogsRequest(b); }, *json, expected);
    std::string error;
    for (const Decoded* d : {&p, &j}) {
      const std::string what = d == &p ? "protobuf: " : "JSON: ";
      if (!d->error.empty()) {
        error = what + d->error;
      } else if (!d->rejected.empty()) {
        error = what + "rejected " + std::to_string(d->rejected.rows) + " records";
      } else if (d->cleared_ids.trace_id != cleared.trace_id ||
                 d->cleared_ids.span_id != cleared.span_id) {
        error = what + "cleared " + std::to_string(d->cleared_ids.trace_id) + " trace_id and " +
                std::to_string(d->cleared_ids.span_id) + " span_id, want " +
                std::to_string(cleared.trace_id) + " and " + std::to_string(cleared.span_id);
      }
      if (!error.empty()) break;
    }
    if (!error.empty() && ++failures <= 5) ADD_FAILURE() << "seed " << seed << ": " << error;
  }
  EXPECT_EQ(failures, 0);
  EXPECT_GT(spoiled_total, 0u) << "the generator made no log records to spoil";
}

}  // namespace
}  // namespace strata::otlp_reference
