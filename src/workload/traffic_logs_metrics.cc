// TrafficGenerator: logs and metrics (traffic_generator.h).

#include <array>
#include <bit>
#include <cmath>
#include <initializer_list>
#include <string_view>

#include "fmt/format.h"
#include "workload/traffic_generator.h"
#include "workload/traffic_internal.h"

namespace strata::workload {

using internal::AddBool;
using internal::AddDouble;
using internal::AddInt;
using internal::AddString;
using internal::kServices;
using internal::Since;

namespace {

struct LogTemplate {
  int32_t severity_number;
  std::string_view severity_text;
  std::string_view body;
};

constexpr std::array<LogTemplate, 6> kLogTemplates = {{
    {9, "INFO", "request completed"},
    {9, "INFO", "cache refreshed for tenant"},
    {5, "DEBUG", "selected upstream endpoint from pool"},
    {13, "WARN", "slow query: exceeded 250ms budget"},
    {9, "INFO", "order accepted for fulfilment"},
    {17, "ERROR", "upstream request failed: connection reset by peer"},
}};

constexpr std::array<std::string_view, 4> kStructuredMessages = {
    "payment failed", "Zahlung abgelehnt: Kartenprüfung", "支払いに失敗しました ✗",
    "retrying with backoff"};
constexpr std::array<std::string_view, 3> kUserNames = {"Zoë", "Þórr", "Алиса"};
constexpr std::string_view kBodyBytes = std::string_view("\x00\x01\xfe\xff", 4);

// Appends `count` children for a kvlist or array at the end of its table
// and returns their range.
otlp::Range KvListOf(otlp::BatchBase* batch, std::initializer_list<otlp::AttributeRow> entries) {
  const size_t begin = batch->nested_attributes.size();
  for (const otlp::AttributeRow& entry : entries) batch->nested_attributes.Append(entry);
  return otlp::Range{static_cast<uint32_t>(begin), static_cast<uint32_t>(entries.size())};
}
otlp::Range ArrayOf(otlp::BatchBase* batch, std::initializer_list<otlp::ValueRow> values) {
  const size_t begin = batch->nested_values.size();
  for (const otlp::ValueRow& value : values) batch->nested_values.Append(value);
  return otlp::Range{static_cast<uint32_t>(begin), static_cast<uint32_t>(values.size())};
}

// A structured body: a kvlist like {"message", "code", "amount", "retry",
// "user": {"id", "name"}, "tags": [string, int, double, bool, bytes,
// empty], "raw": bytes, "none": empty}, or an array of a message, an
// int, a double and a kvlist. Children are appended before the values
// that hold them, so each value's children are contiguous.
otlp::ValueRow StructuredBody(otlp::BatchBase* batch, uint64_t bits) {
  const std::string_view message = kStructuredMessages[bits % kStructuredMessages.size()];
  const auto code = static_cast<int64_t>(400 + bits % 8);
  const double amount = static_cast<double>(bits % 10'000) / 100.0;
  const std::string_view name = kUserNames[(bits >> 8) % kUserNames.size()];
  const auto user_id = static_cast<int64_t>((bits >> 16) % 100);
  auto value = [](otlp::ValueType type, std::string_view str, uint64_t value_bits) {
    return otlp::ValueRow{type, str, value_bits};
  };
  if ((bits >> 24) % 4 == 0) {
    const otlp::Range detail =
        KvListOf(batch, {{"code", value(otlp::ValueType::kInt, {}, static_cast<uint64_t>(code))},
                         {"user", value(otlp::ValueType::kString, name, 0)}});
    const otlp::Range items =
        ArrayOf(batch, {value(otlp::ValueType::kString, message, 0),
                        value(otlp::ValueType::kInt, {}, static_cast<uint64_t>(code)),
                        value(otlp::ValueType::kDouble, {}, std::bit_cast<uint64_t>(amount)),
                        value(otlp::ValueType::kKvList, {}, otlp::ValueColumns::Pack(detail))});
    return value(otlp::ValueType::kArray, {}, otlp::ValueColumns::Pack(items));
  }
  const otlp::Range user =
      KvListOf(batch, {{"id", value(otlp::ValueType::kInt, {}, static_cast<uint64_t>(user_id))},
                       {"name", value(otlp::ValueType::kString, name, 0)}});
  const otlp::Range tags =
      ArrayOf(batch, {value(otlp::ValueType::kString, "checkout", 0),
                      value(otlp::ValueType::kInt, {}, static_cast<uint64_t>(code)),
                      value(otlp::ValueType::kDouble, {}, std::bit_cast<uint64_t>(amount)),
                      value(otlp::ValueType::kBool, {}, bits & 1),
                      value(otlp::ValueType::kBytes, kBodyBytes, 0),
                      value(otlp::ValueType::kEmpty, {}, 0)});
  const otlp::Range body = KvListOf(
      batch, {{"message", value(otlp::ValueType::kString, message, 0)},
              {"code", value(otlp::ValueType::kInt, {}, static_cast<uint64_t>(code))},
              {"amount", value(otlp::ValueType::kDouble, {}, std::bit_cast<uint64_t>(amount))},
              {"retry", value(otlp::ValueType::kBool, {}, (bits >> 1) & 1)},
              {"user", value(otlp::ValueType::kKvList, {}, otlp::ValueColumns::Pack(user))},
              {"tags", value(otlp::ValueType::kArray, {}, otlp::ValueColumns::Pack(tags))},
              {"raw", value(otlp::ValueType::kBytes, kBodyBytes, 0)},
              {"none", value(otlp::ValueType::kEmpty, {}, 0)}});
  return value(otlp::ValueType::kKvList, {}, otlp::ValueColumns::Pack(body));
}

}  // namespace

std::unique_ptr<otlp::LogBatch> TrafficGenerator::Logs(int record_count) {
  auto batch = std::make_unique<otlp::LogBatch>();
  const uint32_t first_resource = internal::AppendServiceResources(batch.get());
  std::array<uint32_t, kServices.size()> scopes{};
  for (size_t s = 0; s < kServices.size(); ++s) {
    scopes[s] = internal::AppendScope(batch.get(), first_resource + static_cast<uint32_t>(s),
                                      "io.opentelemetry.logback", "1.32.0");
  }
  Random& rng = *rng_;
  for (int i = 0; i < record_count; ++i) {
    otlp::LogRecordRow row;
    const bool correlated = !recent_.empty() && rng.Percent(85);
    int service = static_cast<int>(rng.Below(kServices.size()));
    uint64_t time = now_unix_nano_ + rng.Below(1'000'000);
    bool error = false;
    if (correlated) {
      const RecentSpan& span = recent_[rng.Below(recent_.size())];
      row.trace_id = span.trace_id;
      row.has_trace_id = 1;
      row.span_id = span.span_id;
      row.has_span_id = 1;
      row.flags = 1;
      service = span.service;
      time = span.time_unix_nano;
      error = span.error;
    }
    const LogTemplate& t =
        error ? kLogTemplates.back() : kLogTemplates[rng.Below(kLogTemplates.size() - 1)];
    row.scope = scopes[service];
    row.time_unix_nano = time;
    row.observed_time_unix_nano = time + 50'000 + rng.Below(500'000);
    row.severity_number = t.severity_number;
    row.severity_text = t.severity_text;
    row.body = {otlp::ValueType::kString, t.body, 0};
    const bool structured = options_.structured_values && i % 4 == 0;
    if (structured) {
      // {"message": ..., "code": ..., "where": {"city": ..., "tags": [...]}}
      constexpr std::array<std::string_view, 3> kCities = {"Köln", "東京", "São Paulo"};
      const otlp::ValueRow tags = internal::StringArray(batch.get(), {"checkout", "ünïcode ✓"});
      otlp::AttributeColumns& nested = batch->nested_attributes;
      const uint32_t where = static_cast<uint32_t>(nested.size());
      nested.Append({"city", {otlp::ValueType::kString, kCities[i / 4 % kCities.size()], 0}});
      nested.Append({"tags", tags});
      const uint32_t top = static_cast<uint32_t>(nested.size());
      nested.Append({"message", {otlp::ValueType::kString, t.body, 0}});
      nested.Append({"code", {otlp::ValueType::kInt, {}, error ? 402u : 200u}});
      nested.Append(
          {"where", {otlp::ValueType::kKvList, {}, otlp::ValueColumns::Pack({where, 2})}});
      row.body = {otlp::ValueType::kKvList, {}, otlp::ValueColumns::Pack({top, 3})};
    }
    if (options_.structured_body_percent > 0 &&
        rng.Percent(static_cast<uint64_t>(options_.structured_body_percent))) {
      row.body = StructuredBody(batch.get(), rng.Next());
    }
    const size_t begin = batch->log_attributes.size();
    otlp::AttributeColumns* attrs = &batch->log_attributes;
    if (structured) {
      attrs->Append({"labels", internal::StringArray(batch.get(), {"a", "β"})});
    }
    AddString(attrs, "logger.name", "com.shop.web.RequestHandler");
    AddString(attrs, "thread.name", "http-nio-8080-exec-4");
    AddInt(attrs, "tenant.id", static_cast<int64_t>(rng.Below(50)));
    if (error) {
      AddString(attrs, "exception.type", "java.net.SocketException");
      AddString(attrs, "exception.message", "Connection reset");
    }
    row.attributes = Since(*attrs, begin);
    batch->logs.Append(row);
    now_unix_nano_ += 1'000 + rng.Below(20'000);
  }
  return batch;
}

namespace {

// Builds the metrics of one batch: each service reports the same set of
// instruments, each with a few attribute sets (one data point per set).
class MetricWriter {
 public:
  MetricWriter(otlp::MetricBatch* batch, uint64_t now, uint64_t interval, uint64_t seed_bits)
      : batch_(batch), now_(now), interval_(interval), seed_bits_(seed_bits) {}

  // Appends one metric of `type` with `points` data points under `scope`.
  void Add(uint32_t scope, int kind, int points);

 private:
  void PointAttributes(int point) {
    constexpr std::array<std::string_view, 4> kRoutes = {"/api/cart/items", "/api/checkout",
                                                         "/api/products/{id}", "/api/payment"};
    otlp::AttributeColumns* attrs = &batch_->point_attributes;
    AddString(attrs, "http.route", kRoutes[point % kRoutes.size()]);
    AddString(attrs, "http.request.method", point % 3 == 0 ? "POST" : "GET");
    AddInt(attrs, "http.response.status_code", point % 7 == 0 ? 500 : 200);
  }
  otlp::PointRowBase Base(uint32_t metric, int point, size_t attrs_begin) {
    otlp::PointRowBase base;
    base.metric = metric;
    base.attributes = Since(batch_->point_attributes, attrs_begin);
    base.start_time_unix_nano = now_ - 3600'000'000'000ULL;
    base.time_unix_nano = now_ + static_cast<uint64_t>(point) * 1000;
    base.exemplars = otlp::Range{static_cast<uint32_t>(batch_->exemplars.size()), 0};
    return base;
  }
  uint64_t Mix(uint64_t a) {
    uint64_t z = a * 0x9e3779b97f4a7c15ULL + seed_bits_;
    return z ^ (z >> 29);
  }

  otlp::MetricBatch* batch_;
  const uint64_t now_;
  const uint64_t interval_;
  const uint64_t seed_bits_;
};

void MetricWriter::Add(uint32_t scope, int kind, int points) {
  static constexpr std::array<std::string_view, 5> kNames = {
      "http.server.request.count", "process.cpu.utilization", "http.server.request.duration",
      "rpc.server.duration", "jvm.gc.pause"};
  static constexpr std::array<std::string_view, 5> kUnits = {"{request}", "1", "s", "ms", "ms"};
  static constexpr std::array<otlp::MetricType, 5> kTypes = {
      otlp::MetricType::kSum, otlp::MetricType::kGauge, otlp::MetricType::kHistogram,
      otlp::MetricType::kExponentialHistogram, otlp::MetricType::kSummary};
  static constexpr std::array<double, 8> kBounds = {0.005, 0.01, 0.025, 0.05,
                                                    0.1,   0.25, 0.5,   1.0};
  otlp::MetricRow metric;
  metric.scope = scope;
  metric.name = kNames[kind];
  metric.unit = kUnits[kind];
  metric.description = "generated by the strata traffic generator";
  metric.metadata = otlp::Range{static_cast<uint32_t>(batch_->metadata_attributes.size()), 0};
  metric.type = kTypes[kind];
  const uint32_t row = static_cast<uint32_t>(batch_->metrics.size());
  uint32_t points_begin = 0;
  for (int p = 0; p < points; ++p) {
    const size_t attrs_begin = batch_->point_attributes.size();
    PointAttributes(p);
    const uint64_t r = Mix(now_ + static_cast<uint64_t>(p) * 131 + static_cast<uint64_t>(kind));
    switch (metric.type) {
      case otlp::MetricType::kSum: {
        otlp::NumberPointRow point;
        static_cast<otlp::PointRowBase&>(point) = Base(row, p, attrs_begin);
        point.value_type = otlp::NumberType::kInt;
        point.value_bits = (now_ / interval_) * 17 + r % 1000;
        const uint32_t i = batch_->number_points.Append(point);
        if (p == 0) points_begin = i;
        break;
      }
      case otlp::MetricType::kGauge: {
        otlp::NumberPointRow point;
        static_cast<otlp::PointRowBase&>(point) = Base(row, p, attrs_begin);
        point.value_type = otlp::NumberType::kDouble;
        point.value_bits = std::bit_cast<uint64_t>(static_cast<double>(r % 10000) / 10000.0);
        const uint32_t i = batch_->number_points.Append(point);
        if (p == 0) points_begin = i;
        break;
      }
      case otlp::MetricType::kHistogram: {
        otlp::HistogramPointRow point;
        static_cast<otlp::PointRowBase&>(point) = Base(row, p, attrs_begin);
        point.bucket_counts = otlp::Range{static_cast<uint32_t>(batch_->bucket_counts.size()),
                                          static_cast<uint32_t>(kBounds.size() + 1)};
        point.explicit_bounds = otlp::Range{static_cast<uint32_t>(batch_->explicit_bounds.size()),
                                            static_cast<uint32_t>(kBounds.size())};
        uint64_t count = 0;
        for (size_t b = 0; b <= kBounds.size(); ++b) {
          const uint64_t c = (r >> (b * 5)) % 40;
          batch_->bucket_counts.push_back(c);
          count += c;
        }
        batch_->explicit_bounds.insert(batch_->explicit_bounds.end(), kBounds.begin(),
                                       kBounds.end());
        point.count = count;
        point.sum = static_cast<double>(count) * 0.042;
        point.min = 0.0007;
        point.max = 1.7;
        point.present = otlp::kHasSum | otlp::kHasMin | otlp::kHasMax;
        if (p % 2 == 0) {  // one exemplar, pointing at a trace
          const size_t ex_attrs = batch_->exemplar_attributes.size();
          AddString(&batch_->exemplar_attributes, "client.address", "203.0.113.9");
          otlp::ExemplarRow exemplar;
          exemplar.filtered_attributes = Since(batch_->exemplar_attributes, ex_attrs);
          exemplar.time_unix_nano = point.time_unix_nano - 5000;
          exemplar.value_type = otlp::NumberType::kDouble;
          exemplar.value_bits = std::bit_cast<uint64_t>(0.031);
          for (size_t b = 0; b < 16; ++b) exemplar.trace_id[b] = static_cast<uint8_t>(r >> (b % 8));
          exemplar.trace_id[0] |= 1;
          exemplar.has_trace_id = 1;
          for (size_t b = 0; b < 8; ++b) exemplar.span_id[b] = static_cast<uint8_t>(r >> b);
          exemplar.span_id[0] |= 1;
          exemplar.has_span_id = 1;
          batch_->exemplars.Append(exemplar);
          point.exemplars = otlp::Range{point.exemplars.begin, 1};
        }
        const uint32_t i = batch_->histogram_points.Append(point);
        if (p == 0) points_begin = i;
        break;
      }
      case otlp::MetricType::kExponentialHistogram: {
        otlp::ExponentialPointRow point;
        static_cast<otlp::PointRowBase&>(point) = Base(row, p, attrs_begin);
        point.scale = 3;
        point.zero_count = r % 3;
        point.zero_threshold = 1e-9;
        point.positive_offset = 10 + static_cast<int32_t>(r % 5);
        point.positive_bucket_counts =
            otlp::Range{static_cast<uint32_t>(batch_->bucket_counts.size()), 6};
        uint64_t count = point.zero_count;
        for (int b = 0; b < 6; ++b) {
          const uint64_t c = (r >> (b * 6)) % 30;
          batch_->bucket_counts.push_back(c);
          count += c;
        }
        point.negative_bucket_counts =
            otlp::Range{static_cast<uint32_t>(batch_->bucket_counts.size()), 0};
        point.count = count;
        point.sum = static_cast<double>(count) * 3.5;
        point.present = otlp::kHasSum;
        const uint32_t i = batch_->exponential_points.Append(point);
        if (p == 0) points_begin = i;
        break;
      }
      default: {  // summary
        otlp::SummaryPointRow point;
        static_cast<otlp::PointRowBase&>(point) = Base(row, p, attrs_begin);
        point.count = 100 + r % 100;
        point.sum = static_cast<double>(point.count) * 12.5;
        point.quantiles = otlp::Range{static_cast<uint32_t>(batch_->quantiles.size()), 3};
        batch_->quantiles.Append({0.5, 9.0 + static_cast<double>(r % 5)});
        batch_->quantiles.Append({0.9, 21.0 + static_cast<double>(r % 7)});
        batch_->quantiles.Append({0.99, 48.0 + static_cast<double>(r % 11)});
        const uint32_t i = batch_->summary_points.Append(point);
        if (p == 0) points_begin = i;
        break;
      }
    }
  }
  metric.points = otlp::Range{points_begin, static_cast<uint32_t>(points)};
  if (metric.type == otlp::MetricType::kSum) {
    metric.aggregation_temporality = 2;  // CUMULATIVE
    metric.is_monotonic = 1;
  } else if (metric.type == otlp::MetricType::kHistogram ||
             metric.type == otlp::MetricType::kExponentialHistogram) {
    metric.aggregation_temporality = 2;
  }
  batch_->metrics.Append(metric);
}

}  // namespace

std::unique_ptr<otlp::MetricBatch> TrafficGenerator::Metrics(int point_count) {
  auto batch = std::make_unique<otlp::MetricBatch>();
  const uint32_t first_resource = internal::AppendServiceResources(batch.get());
  constexpr int kPointsPerMetric = 4;
  constexpr int kKinds = 5;
  const uint64_t interval = 10'000'000'000ULL;
  MetricWriter writer(batch.get(), now_unix_nano_, interval, rng_->Next());
  int points = 0;
  while (points < point_count) {
    for (size_t s = 0; s < kServices.size() && points < point_count; ++s) {
      const uint32_t scope = internal::AppendScope(
          batch.get(), first_resource + static_cast<uint32_t>(s), "io.opentelemetry.runtime",
          "1.32.0");
      for (int kind = 0; kind < kKinds; ++kind) {
        writer.Add(scope, kind, kPointsPerMetric);
        points += kPointsPerMetric;
      }
    }
  }
  now_unix_nano_ += 1'000'000;
  return batch;
}

}  // namespace strata::workload
