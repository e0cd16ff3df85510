// Round trips through the encoders (encode.h) and the decoders (decode.h):
// batch -> EncodeXProto -> DecodeXProto and batch -> EncodeXJson ->
// DecodeXJson must give back an equal batch, and libprotobuf-generated random
// requests must survive decode -> encode unchanged.
//
// Batches are compared by structure (BatchDiff): resources in row order,
// under each its scopes, under each scope its items, every Range-covered
// child row pairwise, AnyValues by value. Row positions and view pointers
// do not matter, since a decoder groups rows that the input left ungrouped.

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/util/field_comparator.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "otlp/batch.h"
#include "otlp/decode.h"
#include "otlp/encode.h"
#include "otlp/encode_common.h"
#include "otlp/encoder_test_batches.h"
#include "otlp_reference/generator.h"
#include "otlp_reference/normalize.h"

namespace strata::otlp {
namespace {

using ::testing::PrintToString;

// Collects the differences between two batches of the same signal.
class BatchDiff {
 public:
  BatchDiff(const BatchBase& a, const BatchBase& b) : a_(a), b_(b) {}

  const std::vector<std::string>& errors() const { return errors_; }

  template <typename T>
  void Eq(const T& x, const T& y, const std::string& path) {
    if (!(x == y)) errors_.push_back(path + ": " + PrintToString(x) + " != " + PrintToString(y));
  }
  void Bits(double x, double y, const std::string& path) {
    Eq(std::bit_cast<uint64_t>(x), std::bit_cast<uint64_t>(y), path);
  }

  // Calls fn(row_a, row_b, path) for each pair of rows the ranges cover.
  template <typename Fn>
  void Rows(Range ra, Range rb, const std::string& path, Fn fn) {
    Eq(ra.count, rb.count, path + ".size");
    for (uint32_t k = 0; k < ra.count && k < rb.count; ++k) {
      fn(ra.begin + k, rb.begin + k, path + "[" + std::to_string(k) + "]");
    }
  }

  void Attributes(const AttributeColumns& ta, Range ra, const AttributeColumns& tb, Range rb,
                  const std::string& path) {
    Rows(ra, rb, path, [&](size_t i, size_t j, const std::string& p) {
      Eq(ta.key[i], tb.key[j], p + ".key");
      Value(ta.value, i, tb.value, j, p + ".value");
    });
  }

  void Value(const ValueColumns& va, size_t i, const ValueColumns& vb, size_t j,
             const std::string& path) {
    Eq(static_cast<int>(va.type[i]), static_cast<int>(vb.type[j]), path + ".type");
    if (va.type[i] != vb.type[j]) return;
    switch (va.type[i]) {
      case ValueType::kString:
      case ValueType::kBytes:
        Eq(va.str[i], vb.str[j], path);
        break;
      case ValueType::kBool:
      case ValueType::kInt:
      case ValueType::kDouble:
        Eq(va.bits[i], vb.bits[j], path);
        break;
      case ValueType::kArray:
        Rows(va.children_at(i), vb.children_at(j), path, [&](size_t x, size_t y, const auto& p) {
          Value(a_.nested_values, x, b_.nested_values, y, p);
        });
        break;
      case ValueType::kKvList:
        Attributes(a_.nested_attributes, va.children_at(i), b_.nested_attributes, vb.children_at(j),
                   path);
        break;
      case ValueType::kEmpty:
        break;
    }
  }

  // Compares resources, scopes and their attributes, and calls
  // item(row_a, row_b, path) for each pair of items under matching scopes.
  template <typename ItemFn>
  void Envelope(const std::vector<uint32_t>& item_scope_a,
                const std::vector<uint32_t>& item_scope_b, ItemFn item) {
    internal::RowGroups scopes_a(a_.scopes.resource, a_.resources.size());
    internal::RowGroups scopes_b(b_.scopes.resource, b_.resources.size());
    internal::RowGroups items_a(item_scope_a, a_.scopes.size());
    internal::RowGroups items_b(item_scope_b, b_.scopes.size());
    Eq(a_.resources.size(), b_.resources.size(), "resources.size");
    for (size_t r = 0; r < a_.resources.size() && r < b_.resources.size(); ++r) {
      std::string path = "resources[" + std::to_string(r) + "]";
      Resource(r, r, path);
      Children(scopes_a.children(r), scopes_b.children(r), path + ".scopes",
               [&](uint32_t s, uint32_t t, const std::string& p) {
                 Scope(s, t, p);
                 Children(items_a.children(s), items_b.children(t), p + ".items", item);
               });
    }
  }

 private:
  template <typename Fn>
  void Children(std::span<const uint32_t> x, std::span<const uint32_t> y, const std::string& path,
                Fn fn) {
    Eq(x.size(), y.size(), path + ".size");
    for (size_t k = 0; k < x.size() && k < y.size(); ++k) {
      fn(x[k], y[k], path + "[" + std::to_string(k) + "]");
    }
  }

  void Resource(size_t i, size_t j, const std::string& path) {
    const ResourceColumns& x = a_.resources;
    const ResourceColumns& y = b_.resources;
    Attributes(a_.resource_attributes, x.attributes[i], b_.resource_attributes, y.attributes[j],
               path + ".attributes");
    Eq(x.dropped_attributes_count[i], y.dropped_attributes_count[j], path + ".dropped");
    Eq(x.schema_url[i], y.schema_url[j], path + ".schema_url");
    Rows(x.entity_refs[i], y.entity_refs[j], path + ".entity_refs",
         [&](size_t e, size_t f, const std::string& p) {
           const EntityRefColumns& ea = a_.entity_refs;
           const EntityRefColumns& eb = b_.entity_refs;
           Eq(ea.schema_url[e], eb.schema_url[f], p + ".schema_url");
           Eq(ea.type[e], eb.type[f], p + ".type");
           auto key = [&](size_t k, size_t l, const std::string& q) {
             Eq(a_.entity_keys[k], b_.entity_keys[l], q);
           };
           Rows(ea.id_keys[e], eb.id_keys[f], p + ".id_keys", key);
           Rows(ea.description_keys[e], eb.description_keys[f], p + ".description_keys", key);
         });
  }

  void Scope(size_t i, size_t j, const std::string& path) {
    const ScopeColumns& x = a_.scopes;
    const ScopeColumns& y = b_.scopes;
    Eq(x.name[i], y.name[j], path + ".name");
    Eq(x.version[i], y.version[j], path + ".version");
    Attributes(a_.scope_attributes, x.attributes[i], b_.scope_attributes, y.attributes[j],
               path + ".attributes");
    Eq(x.dropped_attributes_count[i], y.dropped_attributes_count[j], path + ".dropped");
    Eq(x.schema_url[i], y.schema_url[j], path + ".schema_url");
  }

  const BatchBase& a_;
  const BatchBase& b_;
  std::vector<std::string> errors_;
};

std::vector<std::string> Diff(const TraceBatch& a, const TraceBatch& b) {
  BatchDiff d(a, b);
  const SpanColumns& x = a.spans;
  const SpanColumns& y = b.spans;
  d.Envelope(x.scope, y.scope, [&](size_t i, size_t j, const std::string& p) {
    d.Eq(x.trace_id[i], y.trace_id[j], p + ".trace_id");
    d.Eq(x.span_id[i], y.span_id[j], p + ".span_id");
    d.Eq(x.trace_state[i], y.trace_state[j], p + ".trace_state");
    d.Eq(x.parent_span_id[i], y.parent_span_id[j], p + ".parent_span_id");
    d.Eq(x.has_parent_span_id[i], y.has_parent_span_id[j], p + ".has_parent_span_id");
    d.Eq(x.flags[i], y.flags[j], p + ".flags");
    d.Eq(x.name[i], y.name[j], p + ".name");
    d.Eq(x.kind[i], y.kind[j], p + ".kind");
    d.Eq(x.start_time_unix_nano[i], y.start_time_unix_nano[j], p + ".start");
    d.Eq(x.end_time_unix_nano[i], y.end_time_unix_nano[j], p + ".end");
    d.Attributes(a.span_attributes, x.attributes[i], b.span_attributes, y.attributes[j],
                 p + ".attributes");
    d.Eq(x.dropped_attributes_count[i], y.dropped_attributes_count[j], p + ".dropped");
    d.Rows(x.events[i], y.events[j], p + ".events", [&](size_t e, size_t f, const auto& q) {
      d.Eq(a.events.time_unix_nano[e], b.events.time_unix_nano[f], q + ".time");
      d.Eq(a.events.name[e], b.events.name[f], q + ".name");
      d.Attributes(a.event_attributes, a.events.attributes[e], b.event_attributes,
                   b.events.attributes[f], q + ".attributes");
      d.Eq(a.events.dropped_attributes_count[e], b.events.dropped_attributes_count[f],
           q + ".dropped");
    });
    d.Eq(x.dropped_events_count[i], y.dropped_events_count[j], p + ".dropped_events");
    d.Rows(x.links[i], y.links[j], p + ".links", [&](size_t e, size_t f, const auto& q) {
      d.Eq(a.links.trace_id[e], b.links.trace_id[f], q + ".trace_id");
      d.Eq(a.links.span_id[e], b.links.span_id[f], q + ".span_id");
      d.Eq(a.links.trace_state[e], b.links.trace_state[f], q + ".trace_state");
      d.Attributes(a.link_attributes, a.links.attributes[e], b.link_attributes,
                   b.links.attributes[f], q + ".attributes");
      d.Eq(a.links.dropped_attributes_count[e], b.links.dropped_attributes_count[f],
           q + ".dropped");
      d.Eq(a.links.flags[e], b.links.flags[f], q + ".flags");
    });
    d.Eq(x.dropped_links_count[i], y.dropped_links_count[j], p + ".dropped_links");
    d.Eq(x.status_message[i], y.status_message[j], p + ".status_message");
    d.Eq(x.status_code[i], y.status_code[j], p + ".status_code");
  });
  return d.errors();
}

std::vector<std::string> Diff(const LogBatch& a, const LogBatch& b) {
  BatchDiff d(a, b);
  const LogRecordColumns& x = a.logs;
  const LogRecordColumns& y = b.logs;
  d.Envelope(x.scope, y.scope, [&](size_t i, size_t j, const std::string& p) {
    d.Eq(x.time_unix_nano[i], y.time_unix_nano[j], p + ".time");
    d.Eq(x.observed_time_unix_nano[i], y.observed_time_unix_nano[j], p + ".observed_time");
    d.Eq(x.severity_number[i], y.severity_number[j], p + ".severity_number");
    d.Eq(x.severity_text[i], y.severity_text[j], p + ".severity_text");
    d.Value(x.body, i, y.body, j, p + ".body");
    d.Attributes(a.log_attributes, x.attributes[i], b.log_attributes, y.attributes[j],
                 p + ".attributes");
    d.Eq(x.dropped_attributes_count[i], y.dropped_attributes_count[j], p + ".dropped");
    d.Eq(x.flags[i], y.flags[j], p + ".flags");
    d.Eq(x.trace_id[i], y.trace_id[j], p + ".trace_id");
    d.Eq(x.has_trace_id[i], y.has_trace_id[j], p + ".has_trace_id");
    d.Eq(x.span_id[i], y.span_id[j], p + ".span_id");
    d.Eq(x.has_span_id[i], y.has_span_id[j], p + ".has_span_id");
    d.Eq(x.event_name[i], y.event_name[j], p + ".event_name");
  });
  return d.errors();
}

// Compares the fields every data point type has, and its exemplars.
void DiffPointBase(BatchDiff& d, const MetricBatch& a, const PointColumnsBase& x, size_t i,
                   const MetricBatch& b, const PointColumnsBase& y, size_t j,
                   const std::string& p) {
  d.Attributes(a.point_attributes, x.attributes[i], b.point_attributes, y.attributes[j],
               p + ".attributes");
  d.Eq(x.start_time_unix_nano[i], y.start_time_unix_nano[j], p + ".start");
  d.Eq(x.time_unix_nano[i], y.time_unix_nano[j], p + ".time");
  d.Eq(x.flags[i], y.flags[j], p + ".flags");
  const ExemplarColumns& ea = a.exemplars;
  const ExemplarColumns& eb = b.exemplars;
  d.Rows(x.exemplars[i], y.exemplars[j], p + ".exemplars", [&](size_t e, size_t f, const auto& q) {
    d.Attributes(a.exemplar_attributes, ea.filtered_attributes[e], b.exemplar_attributes,
                 eb.filtered_attributes[f], q + ".filtered_attributes");
    d.Eq(ea.time_unix_nano[e], eb.time_unix_nano[f], q + ".time");
    d.Eq(ea.value_type[e], eb.value_type[f], q + ".value_type");
    d.Eq(ea.value_bits[e], eb.value_bits[f], q + ".value");
    d.Eq(ea.trace_id[e], eb.trace_id[f], q + ".trace_id");
    d.Eq(ea.has_trace_id[e], eb.has_trace_id[f], q + ".has_trace_id");
    d.Eq(ea.span_id[e], eb.span_id[f], q + ".span_id");
    d.Eq(ea.has_span_id[e], eb.has_span_id[f], q + ".has_span_id");
  });
}

void DiffPoint(BatchDiff& d, const MetricBatch& a, const MetricBatch& b, MetricType type, size_t i,
               size_t j, const std::string& p) {
  auto u64 = [&](const std::vector<uint64_t>& x, const std::vector<uint64_t>& y) {
    return [&](size_t k, size_t l, const std::string& q) { d.Eq(x[k], y[l], q); };
  };
  auto f64 = [&](const std::vector<double>& x, const std::vector<double>& y) {
    return [&](size_t k, size_t l, const std::string& q) { d.Bits(x[k], y[l], q); };
  };
  if (type == MetricType::kGauge || type == MetricType::kSum) {
    const NumberPointColumns& x = a.number_points;
    const NumberPointColumns& y = b.number_points;
    DiffPointBase(d, a, x, i, b, y, j, p);
    d.Eq(x.value_type[i], y.value_type[j], p + ".value_type");
    d.Eq(x.value_bits[i], y.value_bits[j], p + ".value");
  } else if (type == MetricType::kHistogram) {
    const HistogramPointColumns& x = a.histogram_points;
    const HistogramPointColumns& y = b.histogram_points;
    DiffPointBase(d, a, x, i, b, y, j, p);
    d.Eq(x.count[i], y.count[j], p + ".count");
    d.Eq(x.present[i], y.present[j], p + ".present");
    if (x.present[i] & kHasSum) d.Bits(x.sum[i], y.sum[j], p + ".sum");
    if (x.present[i] & kHasMin) d.Bits(x.min[i], y.min[j], p + ".min");
    if (x.present[i] & kHasMax) d.Bits(x.max[i], y.max[j], p + ".max");
    d.Rows(x.bucket_counts[i], y.bucket_counts[j], p + ".bucket_counts",
           u64(a.bucket_counts, b.bucket_counts));
    d.Rows(x.explicit_bounds[i], y.explicit_bounds[j], p + ".explicit_bounds",
           f64(a.explicit_bounds, b.explicit_bounds));
  } else if (type == MetricType::kExponentialHistogram) {
    const ExponentialPointColumns& x = a.exponential_points;
    const ExponentialPointColumns& y = b.exponential_points;
    DiffPointBase(d, a, x, i, b, y, j, p);
    d.Eq(x.count[i], y.count[j], p + ".count");
    d.Eq(x.present[i], y.present[j], p + ".present");
    if (x.present[i] & kHasSum) d.Bits(x.sum[i], y.sum[j], p + ".sum");
    if (x.present[i] & kHasMin) d.Bits(x.min[i], y.min[j], p + ".min");
    if (x.present[i] & kHasMax) d.Bits(x.max[i], y.max[j], p + ".max");
    d.Eq(x.scale[i], y.scale[j], p + ".scale");
    d.Eq(x.zero_count[i], y.zero_count[j], p + ".zero_count");
    d.Bits(x.zero_threshold[i], y.zero_threshold[j], p + ".zero_threshold");
    d.Eq(x.positive_offset[i], y.positive_offset[j], p + ".positive_offset");
    d.Rows(x.positive_bucket_counts[i], y.positive_bucket_counts[j], p + ".positive",
           u64(a.bucket_counts, b.bucket_counts));
    d.Eq(x.negative_offset[i], y.negative_offset[j], p + ".negative_offset");
    d.Rows(x.negative_bucket_counts[i], y.negative_bucket_counts[j], p + ".negative",
           u64(a.bucket_counts, b.bucket_counts));
  } else if (type == MetricType::kSummary) {
    const SummaryPointColumns& x = a.summary_points;
    const SummaryPointColumns& y = b.summary_points;
    DiffPointBase(d, a, x, i, b, y, j, p);
    d.Eq(x.count[i], y.count[j], p + ".count");
    d.Bits(x.sum[i], y.sum[j], p + ".sum");
    d.Rows(x.quantiles[i], y.quantiles[j], p + ".quantiles",
           [&](size_t k, size_t l, const auto& q) {
             d.Bits(a.quantiles.quantile[k], b.quantiles.quantile[l], q + ".quantile");
             d.Bits(a.quantiles.value[k], b.quantiles.value[l], q + ".value");
           });
  }
}

std::vector<std::string> Diff(const MetricBatch& a, const MetricBatch& b) {
  BatchDiff d(a, b);
  const MetricColumns& x = a.metrics;
  const MetricColumns& y = b.metrics;
  d.Envelope(x.scope, y.scope, [&](size_t i, size_t j, const std::string& p) {
    d.Eq(x.name[i], y.name[j], p + ".name");
    d.Eq(x.description[i], y.description[j], p + ".description");
    d.Eq(x.unit[i], y.unit[j], p + ".unit");
    d.Attributes(a.metadata_attributes, x.metadata[i], b.metadata_attributes, y.metadata[j],
                 p + ".metadata");
    d.Eq(static_cast<int>(x.type[i]), static_cast<int>(y.type[j]), p + ".type");
    d.Eq(x.aggregation_temporality[i], y.aggregation_temporality[j], p + ".temporality");
    d.Eq(x.is_monotonic[i], y.is_monotonic[j], p + ".is_monotonic");
    if (x.type[i] != y.type[j]) return;
    d.Rows(x.points[i], y.points[j], p + ".points",
           [&](size_t k, size_t l, const auto& q) { DiffPoint(d, a, b, x.type[i], k, l, q); });
  });
  return d.errors();
}

// Up to 20 differences, one per line, for a failure message.
std::string Describe(const std::vector<std::string>& errors) {
  std::string out;
  for (size_t i = 0; i < errors.size() && i < 20; ++i) out += errors[i] + "\n";
  return out;
}

// The checks every signal's round trip makes, for one batch:
// decode(encode(batch)) is a valid batch equal to `batch`, through protobuf
// and through JSON, and encoding the decoded batch reproduces the bytes.
template <typename Batch, typename Codec>
void ExpectRoundTrips(const Batch& original, Codec codec) {
  std::string proto = codec.encode_proto(original);
  Batch from_proto;
  absl::Status status = codec.decode_proto(proto, &from_proto);
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_TRUE(ValidateBatch(from_proto).ok()) << ValidateBatch(from_proto);
  EXPECT_THAT(Diff(original, from_proto), ::testing::IsEmpty())
      << "protobuf round trip:\n"
      << Describe(Diff(original, from_proto));
  EXPECT_EQ(codec.encode_proto(from_proto), proto);

  std::string json = codec.encode_json(original);
  Batch from_json;
  status = codec.decode_json(json, &from_json);
  ASSERT_TRUE(status.ok()) << status << "\n" << json;
  ASSERT_TRUE(ValidateBatch(from_json).ok()) << ValidateBatch(from_json);
  EXPECT_THAT(Diff(original, from_json), ::testing::IsEmpty())
      << "JSON round trip:\n"
      << Describe(Diff(original, from_json));
  EXPECT_EQ(codec.encode_json(from_json), json);
}

struct TraceCodec {
  std::string encode_proto(const TraceBatch& b) { return EncodeTracesProto(b); }
  std::string encode_json(const TraceBatch& b) { return EncodeTracesJson(b); }
  absl::Status decode_proto(const std::string& s, TraceBatch* b) { return DecodeTracesProto(s, b); }
  absl::Status decode_json(const std::string& s, TraceBatch* b) { return DecodeTracesJson(s, b); }
};

struct LogCodec {
  std::string encode_proto(const LogBatch& b) { return EncodeLogsProto(b); }
  std::string encode_json(const LogBatch& b) { return EncodeLogsJson(b); }
  absl::Status decode_proto(const std::string& s, LogBatch* b) { return DecodeLogsProto(s, b); }
  absl::Status decode_json(const std::string& s, LogBatch* b) { return DecodeLogsJson(s, b); }
};

struct MetricCodec {
  std::string encode_proto(const MetricBatch& b) { return EncodeMetricsProto(b); }
  std::string encode_json(const MetricBatch& b) { return EncodeMetricsJson(b); }
  absl::Status decode_proto(const std::string& s, MetricBatch* b) {
    return DecodeMetricsProto(s, b);
  }
  absl::Status decode_json(const std::string& s, MetricBatch* b) { return DecodeMetricsJson(s, b); }
};

TEST(RoundTripTest, HandBuiltTracesSurviveProtobufAndJson) {
  for (bool newer_fields : {false, true}) {
    SCOPED_TRACE(newer_fields ? "with newer fields" : "0.38 fields only");
    ExpectRoundTrips(encoder_testing::MakeTraceBatch(newer_fields), TraceCodec());
  }
}

TEST(RoundTripTest, HandBuiltLogsSurviveProtobufAndJson) {
  for (bool newer_fields : {false, true}) {
    SCOPED_TRACE(newer_fields ? "with newer fields" : "0.38 fields only");
    ExpectRoundTrips(encoder_testing::MakeLogBatch(newer_fields), LogCodec());
  }
}

TEST(RoundTripTest, HandBuiltMetricsSurviveProtobufAndJson) {
  for (bool newer_fields : {false, true}) {
    SCOPED_TRACE(newer_fields ? "with newer fields" : "0.38 fields only");
    ExpectRoundTrips(encoder_testing::MakeMetricBatch(newer_fields), MetricCodec());
  }
}

TEST(RoundTripTest, EmptyBatchesStayEmpty) {
  ExpectRoundTrips(TraceBatch(), TraceCodec());
  ExpectRoundTrips(LogBatch(), LogCodec());
  ExpectRoundTrips(MetricBatch(), MetricCodec());
}

// libprotobuf serializes a generated request; strata decodes it and encodes
// it again, through protobuf and through JSON. Both must parse back to the
// same message (after Normalize(), which makes presence the batch does not
// keep explicit). NaN payloads need not survive JSON, so NaNs compare equal.
template <typename Request, typename Batch, typename Codec>
void ExpectRandomRequestsSurvive(Request (*generate)(uint64_t), Codec codec) {
  google::protobuf::util::DefaultFieldComparator comparator;
  comparator.set_treat_nan_as_equal(true);
  google::protobuf::util::MessageDifferencer differencer;
  differencer.set_field_comparator(&comparator);
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Request expected = generate(seed);
    std::string input = expected.SerializeAsString();
    otlp_reference::Normalize(&expected);
    Batch batch;
    absl::Status status = codec.decode_proto(input, &batch);
    ASSERT_TRUE(status.ok()) << status;

    Request via_proto;
    ASSERT_TRUE(via_proto.ParseFromString(codec.encode_proto(batch)));
    otlp_reference::Normalize(&via_proto);
    ASSERT_TRUE(differencer.Compare(via_proto, expected))
        << via_proto.DebugString() << "\nexpected\n"
        << expected.DebugString();

    std::string json = codec.encode_json(batch);
    Batch from_json;
    status = codec.decode_json(json, &from_json);
    ASSERT_TRUE(status.ok()) << status << "\n" << json;
    Request via_json;
    ASSERT_TRUE(via_json.ParseFromString(codec.encode_proto(from_json)));
    otlp_reference::Normalize(&via_json);
    ASSERT_TRUE(differencer.Compare(via_json, expected)) << json << "\n"
                                                         << via_json.DebugString() << "\nexpected\n"
                                                         << expected.DebugString();
  }
}

TEST(RoundTripTest, RandomTraceRequestsSurviveDecodeAndEncode) {
  ExpectRandomRequestsSurvive<otlp_reference::TraceRequest, TraceBatch>(
      &otlp_reference::RandomTraceRequest, TraceCodec());
}

TEST(RoundTripTest, RandomLogsRequestsSurviveDecodeAndEncode) {
  ExpectRandomRequestsSurvive<otlp_reference::LogsRequest, LogBatch>(
      &otlp_reference::RandomLogsRequest, LogCodec());
}

TEST(RoundTripTest, RandomMetricsRequestsSurviveDecodeAndEncode) {
  ExpectRandomRequestsSurvive<otlp_reference::MetricsRequest, MetricBatch>(
      &otlp_reference::RandomMetricsRequest, MetricCodec());
}

// The deepest AnyValue the protobuf decoder accepts (max_value_depth kvlists
// inside each other, the most JSON nesting per level) must also pass the JSON
// decoder's default max_json_depth once encoded, or a request accepted over
// one transport could not be re-read from the other's encoding.
TEST(RoundTripTest, DeepestAcceptedValueSurvivesJsonWithDefaultLimits) {
  const DecodeLimits limits;
  otlp_reference::TraceRequest request;
  auto* span = request.add_resource_spans()->add_scope_spans()->add_spans();
  span->set_trace_id(std::string(16, '\x01'));
  span->set_span_id(std::string(8, '\x02'));
  auto* value = span->add_attributes()->mutable_value();
  value->mutable_kvlist_value();
  for (uint32_t depth = 1; depth < limits.max_value_depth; ++depth) {
    auto* entry = value->mutable_kvlist_value()->add_values();
    entry->set_key("k");
    value = entry->mutable_value();
    value->mutable_kvlist_value();
  }
  // The batch keeps views into the request bytes, so they must outlive it.
  const std::string bytes = request.SerializeAsString();
  TraceBatch batch;
  absl::Status status = DecodeTracesProto(bytes, &batch, limits);
  ASSERT_TRUE(status.ok()) << status;

  TraceBatch from_json;
  status = DecodeTracesJson(EncodeTracesJson(batch), &from_json, limits);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(EncodeTracesProto(from_json), EncodeTracesProto(batch));

  // One level deeper is refused, so the test above sits exactly at the limit.
  value->mutable_kvlist_value()->add_values()->mutable_value()->mutable_kvlist_value();
  const std::string too_deep_bytes = request.SerializeAsString();
  TraceBatch too_deep;
  EXPECT_EQ(DecodeTracesProto(too_deep_bytes, &too_deep, limits).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace strata::otlp
