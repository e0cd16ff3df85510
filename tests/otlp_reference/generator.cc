// Random mode of the OTLP request generators (generator.h).

#include "otlp_reference/generator.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "otlp_reference/random_source.h"

namespace strata::otlp_reference {
namespace {

namespace common = opentelemetry::proto::common::v1;
namespace resource = opentelemetry::proto::resource::v1;
namespace trace = opentelemetry::proto::trace::v1;
namespace logs = opentelemetry::proto::logs::v1;
namespace metrics = opentelemetry::proto::metrics::v1;

using google::protobuf::RepeatedPtrField;

// Deepest AnyValue nesting random mode produces (the decoders accept 16).
constexpr int kMaxValueDepth = 12;
// Upper bound on spans, log records or data points per random request.
constexpr int kMaxRows = 20;

// Strings chosen for what they do to a decoder: empty, multi-byte UTF-8 of
// every length, JSON escapes, control characters, an embedded NUL, the
// JavaScript line separators, and lengths around the varint boundary.
std::string SpecialString(RandomSource& rng) {
  switch (rng.Below(12)) {
    case 0:
      return "";
    case 1:
      return "caf\u00e9 \u00fcber na\u00efve";  // 2-byte UTF-8
    case 2:
      return "\u4e2d\u6587\u65e5\u672c\u8a9e\ud55c\uad6d\uc5b4";  // 3-byte UTF-8
    case 3:
      return "rocket \U0001F680 \U0001F9EA \U00010348";  // 4-byte UTF-8
    case 4:
      return "quote\" backslash\\ slash/ tab\t newline\n cr\r";
    case 5:
      return std::string("nul\0inside", 10);
    case 6:
      return "ctl\x01\x08\x0c\x1f\x7f end";
    case 7:
      return "line\u2028sep\u2029para";
    case 8:
      return std::string(127, 'x');
    case 9:
      return std::string(128, 'y');
    case 10:
      return "e\u0301 combining, \ufeff bom, \ufffd replacement";
    default:
      return std::string(300 + rng.Below(200), 'z');
  }
}

std::string AsciiString(RandomSource& rng, size_t max_length) {
  static constexpr std::string_view kAlphabet =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/ :=";
  size_t length = rng.Below(max_length + 1);
  std::string out(length, ' ');
  for (char& c : out) c = kAlphabet[rng.Below(kAlphabet.size())];
  return out;
}

std::string AnyString(RandomSource& rng) {
  return rng.OneIn(4) ? SpecialString(rng) : AsciiString(rng, 24);
}

int64_t AnyInt(RandomSource& rng) {
  switch (rng.Below(8)) {
    case 0:
      return 0;
    case 1:
      return std::numeric_limits<int64_t>::min();
    case 2:
      return std::numeric_limits<int64_t>::max();
    case 3:
      return -1;
    case 4:
      return rng.Between(-1000, 1000);
    case 5:
      return -static_cast<int64_t>(rng.Next64() >> rng.Below(64));
    default:
      return static_cast<int64_t>(rng.Next64() >> rng.Below(64));
  }
}

double AnyDouble(RandomSource& rng) {
  switch (rng.Below(12)) {
    case 0:
      return 0.0;
    case 1:
      return -0.0;
    case 2:
      return std::numeric_limits<double>::quiet_NaN();
    case 3:
      return std::numeric_limits<double>::infinity();
    case 4:
      return -std::numeric_limits<double>::infinity();
    case 5:
      return std::numeric_limits<double>::max();
    case 6:
      return std::numeric_limits<double>::denorm_min();
    case 7:
      return -std::numeric_limits<double>::min();
    case 8:
      return 0.1;
    case 9:
      return static_cast<double>(rng.Between(-100000, 100000));
    default:
      return (rng.Unit() - 0.5) * std::pow(10.0, static_cast<double>(rng.Between(-30, 30)));
  }
}

// A finite double for fields where only the value matters to a decoder but
// NaN would make bounds meaningless.
double FiniteDouble(RandomSource& rng) {
  double v = AnyDouble(rng);
  return std::isfinite(v) ? v : 1.5;
}

uint64_t AnyU64(RandomSource& rng) {
  switch (rng.Below(6)) {
    case 0:
      return 0;
    case 1:
      return std::numeric_limits<uint64_t>::max();
    case 2:
      return rng.Below(1000);
    case 3:
      return 1'700'000'000'000'000'000ULL + rng.Below(1'000'000'000'000ULL);
    default:
      return rng.Next64() >> rng.Below(64);
  }
}

uint32_t AnyU32(RandomSource& rng) {
  switch (rng.Below(6)) {
    case 0:
    case 1:
    case 2:
      return 0;
    case 3:
      return std::numeric_limits<uint32_t>::max();
    case 4:
      return static_cast<uint32_t>(rng.Below(200));
    default:
      return rng.Next32();
  }
}

std::string SchemaUrl(RandomSource& rng) {
  if (rng.Percent(60)) return "";
  return rng.Pick<std::string>({"https://opentelemetry.io/schemas/1.21.0",
                                "https://opentelemetry.io/schemas/1.4.0", SpecialString(rng)});
}

// Builders for one random request; each method fills one message.
class RandomBuilder {
 public:
  explicit RandomBuilder(uint64_t seed) : rng_(seed) {}

  void FillTraces(TraceRequest* request);
  void FillLogs(LogsRequest* request);
  void FillMetrics(MetricsRequest* request);

 private:
  void FillValue(common::AnyValue* value, int depth);
  void FillAttributes(RepeatedPtrField<common::KeyValue>* attributes, int depth);
  void FillDeepValue(common::AnyValue* value, int depth);
  void MaybeFillResource(bool has_resource, resource::Resource* resource);
  void MaybeFillScope(bool has_scope, common::InstrumentationScope* scope);
  int TakeRows(int max_per_parent);

  void FillSpan(trace::Span* span);
  void FillEvent(trace::Span::Event* event);
  void FillLink(trace::Span::Link* link);
  void FillLogRecord(logs::LogRecord* record);
  void FillMetric(metrics::Metric* metric);
  void FillNumberPoint(metrics::NumberDataPoint* point);
  void FillHistogramPoint(metrics::HistogramDataPoint* point);
  void FillExponentialPoint(metrics::ExponentialHistogramDataPoint* point);
  void FillSummaryPoint(metrics::SummaryDataPoint* point);
  void FillExemplars(RepeatedPtrField<metrics::Exemplar>* exemplars);
  metrics::AggregationTemporality Temporality();

  RandomSource rng_;
  int rows_left_ = 0;
};

int RandomBuilder::TakeRows(int max_per_parent) {
  int n = static_cast<int>(rng_.Below(static_cast<uint64_t>(max_per_parent) + 1));
  if (n > rows_left_) n = rows_left_;
  rows_left_ -= n;
  return n;
}

void RandomBuilder::FillValue(common::AnyValue* value, int depth) {
  // Nesting is rarer the deeper it goes, but one value in a while runs a
  // chain down to kMaxValueDepth.
  bool may_nest = depth < kMaxValueDepth && (depth < 2 || rng_.Percent(70));
  switch (rng_.Below(may_nest ? 8 : 6)) {
    case 0:
      break;  // empty AnyValue: the oneof stays unset
    case 1:
      value->set_string_value(AnyString(rng_));
      break;
    case 2:
      value->set_bool_value(rng_.Bool());
      break;
    case 3:
      value->set_int_value(AnyInt(rng_));
      break;
    case 4:
      value->set_double_value(AnyDouble(rng_));
      break;
    case 5:
      value->set_bytes_value(rng_.Bytes(rng_.Pick<size_t>({0, 1, 3, 16, 40})));
      break;
    case 6: {
      common::ArrayValue* array = value->mutable_array_value();
      int n = static_cast<int>(rng_.Below(4));
      for (int i = 0; i < n; ++i) FillValue(array->add_values(), depth + 1);
      break;
    }
    default:
      FillAttributes(value->mutable_kvlist_value()->mutable_values(), depth + 1);
      break;
  }
}

// A chain of alternating arrays and kvlists down to kMaxValueDepth, which
// random nesting alone almost never reaches.
void RandomBuilder::FillDeepValue(common::AnyValue* value, int depth) {
  if (depth >= kMaxValueDepth) {
    value->set_string_value("bottom");
  } else if (depth % 2 == 0) {
    FillDeepValue(value->mutable_array_value()->add_values(), depth + 1);
  } else {
    common::KeyValue* kv = value->mutable_kvlist_value()->add_values();
    kv->set_key("level" + std::to_string(depth));
    FillDeepValue(kv->mutable_value(), depth + 1);
  }
}

void RandomBuilder::FillAttributes(RepeatedPtrField<common::KeyValue>* attributes, int depth) {
  int n = static_cast<int>(rng_.Below(rng_.OneIn(8) ? 12 : 4));
  for (int i = 0; i < n; ++i) {
    common::KeyValue* kv = attributes->Add();
    kv->set_key(rng_.OneIn(10) ? SpecialString(rng_) : AsciiString(rng_, 16));
    // An absent value and an empty AnyValue are both legal and mean the same.
    if (rng_.OneIn(12)) continue;
    if (depth == 1 && rng_.OneIn(40)) {
      FillDeepValue(kv->mutable_value(), depth);
    } else {
      FillValue(kv->mutable_value(), depth);
    }
  }
}

void RandomBuilder::MaybeFillResource(bool has_resource, resource::Resource* resource) {
  if (!has_resource) return;
  FillAttributes(resource->mutable_attributes(), 1);
  resource->set_dropped_attributes_count(AnyU32(rng_));
}

void RandomBuilder::MaybeFillScope(bool has_scope, common::InstrumentationScope* scope) {
  if (!has_scope) return;
  scope->set_name(rng_.OneIn(5) ? SpecialString(rng_) : AsciiString(rng_, 30));
  if (rng_.Bool()) scope->set_version(AsciiString(rng_, 8));
}

void RandomBuilder::FillTraces(TraceRequest* request) {
  rows_left_ = static_cast<int>(rng_.Below(kMaxRows + 1));
  int resources = rng_.OneIn(10) ? 0 : static_cast<int>(1 + rng_.Below(3));
  for (int r = 0; r < resources; ++r) {
    trace::ResourceSpans* rs = request->add_resource_spans();
    MaybeFillResource(!rng_.OneIn(6), rs->mutable_resource());
    if (rng_.OneIn(10)) rs->clear_resource();
    rs->set_schema_url(SchemaUrl(rng_));
    int scopes = static_cast<int>(rng_.Below(4));
    for (int s = 0; s < scopes; ++s) {
      trace::ScopeSpans* ss = rs->add_scope_spans();
      MaybeFillScope(!rng_.OneIn(5), ss->mutable_scope());
      if (rng_.OneIn(8)) ss->clear_scope();
      ss->set_schema_url(SchemaUrl(rng_));
      int spans = TakeRows(8);
      for (int i = 0; i < spans; ++i) FillSpan(ss->add_spans());
    }
  }
}

void RandomBuilder::FillSpan(trace::Span* span) {
  span->set_trace_id(rng_.NonZeroBytes(16));
  span->set_span_id(rng_.NonZeroBytes(8));
  if (rng_.OneIn(4)) {
    span->set_trace_state(rng_.Pick<std::string>(
        {"rojo=00f067aa0ba902b7,congo=t61rcWkgMzE", "vendor@tenant=1", AsciiString(rng_, 20)}));
  }
  if (!rng_.OneIn(3)) span->set_parent_span_id(rng_.NonZeroBytes(8));
  span->set_name(rng_.OneIn(5) ? SpecialString(rng_) : AsciiString(rng_, 40));
  span->set_kind(static_cast<trace::Span::SpanKind>(rng_.Below(6)));
  span->set_start_time_unix_nano(AnyU64(rng_));
  span->set_end_time_unix_nano(AnyU64(rng_));
  FillAttributes(span->mutable_attributes(), 1);
  span->set_dropped_attributes_count(AnyU32(rng_));
  int events = static_cast<int>(rng_.Below(rng_.OneIn(3) ? 4 : 1));
  for (int i = 0; i < events; ++i) FillEvent(span->add_events());
  span->set_dropped_events_count(AnyU32(rng_));
  int links = static_cast<int>(rng_.Below(rng_.OneIn(3) ? 3 : 1));
  for (int i = 0; i < links; ++i) FillLink(span->add_links());
  span->set_dropped_links_count(AnyU32(rng_));
  switch (rng_.Below(4)) {
    case 0:
      break;  // no status
    case 1:
      span->mutable_status();
      break;  // present but empty
    default:
      span->mutable_status()->set_code(static_cast<trace::Status::StatusCode>(rng_.Below(3)));
      if (rng_.Bool()) span->mutable_status()->set_message(AnyString(rng_));
  }
}

void RandomBuilder::FillEvent(trace::Span::Event* event) {
  event->set_time_unix_nano(AnyU64(rng_));
  event->set_name(rng_.OneIn(6) ? SpecialString(rng_) : AsciiString(rng_, 20));
  FillAttributes(event->mutable_attributes(), 1);
  event->set_dropped_attributes_count(AnyU32(rng_));
}

void RandomBuilder::FillLink(trace::Span::Link* link) {
  link->set_trace_id(rng_.NonZeroBytes(16));
  link->set_span_id(rng_.NonZeroBytes(8));
  if (rng_.Bool()) link->set_trace_state(AsciiString(rng_, 30));
  FillAttributes(link->mutable_attributes(), 1);
  link->set_dropped_attributes_count(AnyU32(rng_));
}

void RandomBuilder::FillLogs(LogsRequest* request) {
  rows_left_ = static_cast<int>(rng_.Below(kMaxRows + 1));
  int resources = rng_.OneIn(10) ? 0 : static_cast<int>(1 + rng_.Below(3));
  for (int r = 0; r < resources; ++r) {
    logs::ResourceLogs* rl = request->add_resource_logs();
    MaybeFillResource(!rng_.OneIn(6), rl->mutable_resource());
    if (rng_.OneIn(10)) rl->clear_resource();
    rl->set_schema_url(SchemaUrl(rng_));
    int scopes = static_cast<int>(rng_.Below(4));
    for (int s = 0; s < scopes; ++s) {
      logs::ScopeLogs* sl = rl->add_scope_logs();
      MaybeFillScope(!rng_.OneIn(5), sl->mutable_scope());
      if (rng_.OneIn(8)) sl->clear_scope();
      sl->set_schema_url(SchemaUrl(rng_));
      int records = TakeRows(8);
      for (int i = 0; i < records; ++i) FillLogRecord(sl->add_log_records());
    }
  }
}

void RandomBuilder::FillLogRecord(logs::LogRecord* record) {
  record->set_time_unix_nano(AnyU64(rng_));
  record->set_observed_time_unix_nano(AnyU64(rng_));
  record->set_severity_number(static_cast<logs::SeverityNumber>(rng_.Below(25)));
  if (rng_.Bool()) {
    record->set_severity_text(
        rng_.Pick<std::string>({"INFO", "WARN", "ERROR", "debug", AnyString(rng_)}));
  }
  // The body: absent, empty, or any kind of AnyValue including nested ones.
  if (!rng_.OneIn(6)) FillValue(record->mutable_body(), 1);
  FillAttributes(record->mutable_attributes(), 1);
  record->set_dropped_attributes_count(AnyU32(rng_));
  record->set_flags(rng_.Pick<uint32_t>({0, 1, 0xff, 0xffffffff, rng_.Next32()}));
  if (!rng_.OneIn(3)) record->set_trace_id(rng_.NonZeroBytes(16));
  if (!rng_.OneIn(3)) record->set_span_id(rng_.NonZeroBytes(8));
}

void RandomBuilder::FillMetrics(MetricsRequest* request) {
  rows_left_ = static_cast<int>(rng_.Below(kMaxRows + 1));
  int resources = rng_.OneIn(10) ? 0 : static_cast<int>(1 + rng_.Below(3));
  for (int r = 0; r < resources; ++r) {
    metrics::ResourceMetrics* rm = request->add_resource_metrics();
    MaybeFillResource(!rng_.OneIn(6), rm->mutable_resource());
    if (rng_.OneIn(10)) rm->clear_resource();
    rm->set_schema_url(SchemaUrl(rng_));
    int scopes = static_cast<int>(rng_.Below(4));
    for (int s = 0; s < scopes; ++s) {
      metrics::ScopeMetrics* sm = rm->add_scope_metrics();
      MaybeFillScope(!rng_.OneIn(5), sm->mutable_scope());
      if (rng_.OneIn(8)) sm->clear_scope();
      sm->set_schema_url(SchemaUrl(rng_));
      int n = static_cast<int>(rng_.Below(4));
      for (int i = 0; i < n; ++i) FillMetric(sm->add_metrics());
    }
  }
}

metrics::AggregationTemporality RandomBuilder::Temporality() {
  return static_cast<metrics::AggregationTemporality>(rng_.Below(3));
}

void RandomBuilder::FillMetric(metrics::Metric* metric) {
  metric->set_name(rng_.OneIn(6) ? SpecialString(rng_) : AsciiString(rng_, 30));
  if (rng_.Bool()) metric->set_description(AnyString(rng_));
  if (rng_.Bool()) metric->set_unit(rng_.Pick<std::string>({"ms", "By", "1", "{request}"}));
  int points = TakeRows(4);
  switch (rng_.Below(11)) {
    case 0:
      break;  // the data oneof stays unset
    case 1:
    case 2: {
      metrics::Gauge* gauge = metric->mutable_gauge();
      for (int i = 0; i < points; ++i) FillNumberPoint(gauge->add_data_points());
      break;
    }
    case 3:
    case 4: {
      metrics::Sum* sum = metric->mutable_sum();
      sum->set_aggregation_temporality(Temporality());
      sum->set_is_monotonic(rng_.Bool());
      for (int i = 0; i < points; ++i) FillNumberPoint(sum->add_data_points());
      break;
    }
    case 5:
    case 6: {
      metrics::Histogram* histogram = metric->mutable_histogram();
      histogram->set_aggregation_temporality(Temporality());
      for (int i = 0; i < points; ++i) FillHistogramPoint(histogram->add_data_points());
      break;
    }
    case 7:
    case 8: {
      metrics::ExponentialHistogram* histogram = metric->mutable_exponential_histogram();
      histogram->set_aggregation_temporality(Temporality());
      for (int i = 0; i < points; ++i) FillExponentialPoint(histogram->add_data_points());
      break;
    }
    default: {
      metrics::Summary* summary = metric->mutable_summary();
      for (int i = 0; i < points; ++i) FillSummaryPoint(summary->add_data_points());
    }
  }
}

void RandomBuilder::FillNumberPoint(metrics::NumberDataPoint* point) {
  FillAttributes(point->mutable_attributes(), 1);
  point->set_start_time_unix_nano(AnyU64(rng_));
  point->set_time_unix_nano(AnyU64(rng_));
  switch (rng_.Below(5)) {
    case 0:
      break;  // the value oneof stays unset
    case 1:
      point->set_as_double(rng_.Bool() ? 0.0 : AnyDouble(rng_));
      break;
    case 2:
      point->set_as_double(AnyDouble(rng_));
      break;
    case 3:
      point->set_as_int(rng_.Bool() ? 0 : AnyInt(rng_));
      break;
    default:
      point->set_as_int(AnyInt(rng_));
  }
  FillExemplars(point->mutable_exemplars());
  point->set_flags(rng_.Pick<uint32_t>({0, 0, 1, AnyU32(rng_)}));
}

void RandomBuilder::FillHistogramPoint(metrics::HistogramDataPoint* point) {
  FillAttributes(point->mutable_attributes(), 1);
  point->set_start_time_unix_nano(AnyU64(rng_));
  point->set_time_unix_nano(AnyU64(rng_));
  point->set_count(AnyU64(rng_));
  if (rng_.Bool()) point->set_sum(rng_.OneIn(4) ? 0.0 : AnyDouble(rng_));
  // No buckets at all, or one more bucket than bounds, bounds ascending.
  if (!rng_.OneIn(4)) {
    int bounds = static_cast<int>(rng_.Below(12));
    double bound = FiniteDouble(rng_) - 1000.0;
    for (int i = 0; i < bounds; ++i) {
      point->add_explicit_bounds(bound);
      bound += 0.5 + static_cast<double>(rng_.Below(1000));
    }
    for (int i = 0; i <= bounds; ++i) point->add_bucket_counts(AnyU64(rng_));
  }
  FillExemplars(point->mutable_exemplars());
  point->set_flags(rng_.Pick<uint32_t>({0, 0, 1, AnyU32(rng_)}));
  if (rng_.Bool()) point->set_min(rng_.OneIn(4) ? 0.0 : AnyDouble(rng_));
  if (rng_.Bool()) point->set_max(rng_.OneIn(4) ? 0.0 : AnyDouble(rng_));
}

void RandomBuilder::FillExponentialPoint(metrics::ExponentialHistogramDataPoint* point) {
  FillAttributes(point->mutable_attributes(), 1);
  point->set_start_time_unix_nano(AnyU64(rng_));
  point->set_time_unix_nano(AnyU64(rng_));
  point->set_count(AnyU64(rng_));
  if (rng_.Bool()) point->set_sum(rng_.OneIn(4) ? 0.0 : AnyDouble(rng_));
  point->set_scale(static_cast<int32_t>(rng_.Between(-10, 20)));
  point->set_zero_count(AnyU64(rng_));
  for (auto* buckets : {point->mutable_positive(), point->mutable_negative()}) {
    buckets->set_offset(rng_.Pick<int32_t>({0, -1, 1, std::numeric_limits<int32_t>::min(),
                                            std::numeric_limits<int32_t>::max(),
                                            static_cast<int32_t>(rng_.Between(-500, 500))}));
    int n = static_cast<int>(rng_.Below(10));
    for (int i = 0; i < n; ++i) buckets->add_bucket_counts(AnyU64(rng_));
  }
  // Buckets messages absent or present-but-empty.
  if (rng_.OneIn(4)) point->clear_positive();
  if (rng_.OneIn(4)) point->clear_negative();
  point->set_flags(rng_.Pick<uint32_t>({0, 0, 1, AnyU32(rng_)}));
  FillExemplars(point->mutable_exemplars());
  if (rng_.Bool()) point->set_min(rng_.OneIn(4) ? 0.0 : AnyDouble(rng_));
  if (rng_.Bool()) point->set_max(rng_.OneIn(4) ? 0.0 : AnyDouble(rng_));
}

void RandomBuilder::FillSummaryPoint(metrics::SummaryDataPoint* point) {
  FillAttributes(point->mutable_attributes(), 1);
  point->set_start_time_unix_nano(AnyU64(rng_));
  point->set_time_unix_nano(AnyU64(rng_));
  point->set_count(AnyU64(rng_));
  point->set_sum(AnyDouble(rng_));
  int n = static_cast<int>(rng_.Below(6));
  for (int i = 0; i < n; ++i) {
    metrics::SummaryDataPoint::ValueAtQuantile* q = point->add_quantile_values();
    q->set_quantile(rng_.Pick<double>({0.0, 0.5, 0.9, 0.99, 1.0, rng_.Unit()}));
    q->set_value(AnyDouble(rng_));
  }
  point->set_flags(rng_.Pick<uint32_t>({0, 0, 1, AnyU32(rng_)}));
}

void RandomBuilder::FillExemplars(RepeatedPtrField<metrics::Exemplar>* exemplars) {
  int n = static_cast<int>(rng_.Below(rng_.OneIn(3) ? 3 : 1));
  for (int i = 0; i < n; ++i) {
    metrics::Exemplar* exemplar = exemplars->Add();
    FillAttributes(exemplar->mutable_filtered_attributes(), 1);
    exemplar->set_time_unix_nano(AnyU64(rng_));
    switch (rng_.Below(3)) {
      case 0:
        break;  // the value oneof stays unset
      case 1:
        exemplar->set_as_double(AnyDouble(rng_));
        break;
      default:
        exemplar->set_as_int(AnyInt(rng_));
    }
    if (!rng_.OneIn(3)) exemplar->set_span_id(rng_.NonZeroBytes(8));
    if (!rng_.OneIn(3)) exemplar->set_trace_id(rng_.NonZeroBytes(16));
  }
}

}  // namespace

TraceRequest RandomTraceRequest(uint64_t seed) {
  TraceRequest request;
  RandomBuilder(seed).FillTraces(&request);
  return request;
}

LogsRequest RandomLogsRequest(uint64_t seed) {
  LogsRequest request;
  RandomBuilder(seed).FillLogs(&request);
  return request;
}

MetricsRequest RandomMetricsRequest(uint64_t seed) {
  MetricsRequest request;
  RandomBuilder(seed).FillMetrics(&request);
  return request;
}

}  // namespace strata::otlp_reference
