#pragma once

// Internals shared by the trace, log and metric halves of TrafficGenerator:
// the seeded randomness, the service catalogue, and builders that append
// resources, scopes and attributes to a batch.

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "otlp/batch.h"
#include "workload/traffic_generator.h"

namespace strata::workload {

// splitmix64: a fixed algorithm, so a seed replays on every platform.
class TrafficGenerator::Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n), n > 0 (the modulo bias does not matter here).
  uint64_t Below(uint64_t n) { return Next() % n; }
  bool Percent(uint64_t percent) { return Below(100) < percent; }
  // A double in [0, 1).
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  template <size_t N>
  std::array<uint8_t, N> NonZeroId() {
    std::array<uint8_t, N> id{};
    do {
      for (size_t i = 0; i < N; i += 8) {
        const uint64_t bits = Next();
        for (size_t j = 0; j < 8 && i + j < N; ++j)
          id[i + j] = static_cast<uint8_t>(bits >> (8 * j));
      }
    } while (id == std::array<uint8_t, N>{});
    return id;
  }

 private:
  uint64_t state_;
};

// A span kept for log correlation.
struct TrafficGenerator::RecentSpan {
  otlp::TraceId trace_id{};
  otlp::SpanId span_id{};
  int service = 0;
  uint64_t time_unix_nano = 0;
  bool error = false;
};

// A cross-service call whose CLIENT span is held back: what writing it
// later needs (its callee's SERVER span was written with it as parent).
struct TrafficGenerator::HeldCall {
  otlp::TraceId trace_id{};
  otlp::SpanId span_id{};
  otlp::SpanId parent_span_id{};
  int service = 0;
  int callee = 0;
  bool rpc = false;
  size_t route = 0;
  std::string_view method;
  bool fail = false;
  uint64_t start = 0;
  uint64_t end = 0;
};

namespace internal {

struct Service {
  std::string_view name;
  std::string_view version;
  std::string_view host;
  std::string_view pod;
  std::string_view language;
};

inline constexpr std::array<Service, 5> kServices = {{
    {"frontend", "2.14.1", "ip-10-0-1-17.ec2.internal", "frontend-7d9f8b6c5-x2x4q", "nodejs"},
    {"cart", "1.8.0", "ip-10-0-2-4.ec2.internal", "cart-5c6d7f8b9-k3l9m", "java"},
    {"checkout", "3.0.2", "ip-10-0-2-9.ec2.internal", "checkout-6b7c8d9e0-p4q2r", "go"},
    {"payment", "0.9.7", "ip-10-0-3-21.ec2.internal", "payment-4a5b6c7d8-s8t1u", "python"},
    {"inventory", "5.2.0", "ip-10-0-3-30.ec2.internal", "inventory-3f4e5d6c7-v5w6x", "dotnet"},
}};

inline void AddString(otlp::AttributeColumns* attrs, std::string_view key, std::string_view value) {
  attrs->Append({key, {otlp::ValueType::kString, value, 0}});
}
inline void AddInt(otlp::AttributeColumns* attrs, std::string_view key, int64_t value) {
  attrs->Append({key, {otlp::ValueType::kInt, {}, static_cast<uint64_t>(value)}});
}
inline void AddDouble(otlp::AttributeColumns* attrs, std::string_view key, double value) {
  attrs->Append({key, {otlp::ValueType::kDouble, {}, std::bit_cast<uint64_t>(value)}});
}
inline void AddBool(otlp::AttributeColumns* attrs, std::string_view key, bool value) {
  attrs->Append({key, {otlp::ValueType::kBool, {}, value ? 1u : 0u}});
}

// The range of rows appended to `table` since it held `begin` rows.
// Appends an array of strings to batch->nested_values and returns the value
// that refers to it.
inline otlp::ValueRow StringArray(otlp::BatchBase* batch,
                                  std::initializer_list<std::string_view> items) {
  const uint32_t begin = static_cast<uint32_t>(batch->nested_values.size());
  for (std::string_view item : items) batch->nested_values.AppendString(item);
  return {otlp::ValueType::kArray,
          {},
          otlp::ValueColumns::Pack({begin, static_cast<uint32_t>(items.size())})};
}

inline otlp::Range Since(const otlp::AttributeColumns& table, size_t begin) {
  return otlp::Range{static_cast<uint32_t>(begin), static_cast<uint32_t>(table.size() - begin)};
}

// Appends one resource per service (service.name etc.), in kServices order,
// so resource row i is service i. Returns the first resource row.
uint32_t AppendServiceResources(otlp::BatchBase* batch);

// Appends a scope under `resource` and returns its row.
uint32_t AppendScope(otlp::BatchBase* batch, uint32_t resource, std::string_view name,
                     std::string_view version);

}  // namespace internal
}  // namespace strata::workload
