#include "storage/table/spans_table.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "otlp/decode.h"

namespace strata::storage {

using parquet::ColumnSpec;
using parquet::ColumnVector;
using parquet::PhysicalType;

namespace {

// The span promoted columns after the resource ones, in file order. The
// last two are exception_type / exception_message, which look at the first
// event named "exception" before the span's own attributes.
std::vector<PromotionRule> SpanPromotionRules() {
  using otlp::ValueType;
  return {
      {"http_method", {"http.request.method", "http.method"}, ValueType::kString},
      {"http_route", {"http.route"}, ValueType::kString},
      {"http_status_code", {"http.response.status_code", "http.status_code"}, ValueType::kInt},
      {"db_system", {"db.system.name", "db.system"}, ValueType::kString},
      {"rpc_service", {"rpc.service"}, ValueType::kString},
      {"rpc_method", {"rpc.method"}, ValueType::kString},
      {"peer_service", {"peer.service"}, ValueType::kString},
      {"messaging_system", {"messaging.system"}, ValueType::kString},
      {"messaging_destination", {"messaging.destination.name"}, ValueType::kString},
      {"exception_type", {"exception.type"}, ValueType::kString},
      {"exception_message", {"exception.message"}, ValueType::kString},
  };
}
constexpr int kSpanPromotedColumns = 11;

// The columns compressed above fast_zstd_level, each at the level that
// pays for it (capped at TableOptions::zstd_level; spans-parquet.md
// "File-level rules"). Measured on src/workload/ traffic, files of 54,000
// spans, every page compressed at levels 1 to 6: these are the columns
// that lose more than 0.015 bytes per span at level 1, each at the lowest
// level within about 0.02 bytes per span of level 6 (resource_attr_str
// and attr_types come out smaller at 4 than at 6). The other 78 together
// lose nothing at level 1 (span_id, parent_span_id, trace_id, name, the
// promoted columns and the resource and scope indexes compress no better
// higher; duration_nano compresses better at 1).
constexpr ColumnZstdLevel kSpansZstdLevels[] = {
    {"start_time_unix_nano", 5},
    {"event_time_unix_nano", 5},
    {"resource_attr_str", 4},
    {"attr_keys", 4},
    {"attr_types", 4},
    {"attr_str", 5},
    {"attr_int", 5},
    {"attr_double", 6},
    {"attr_bool", 6},
    {"attr_bytes", 6},
};

// The columns spans-parquet.md marks "plain": ids and times that (almost)
// never repeat are written PLAIN from the first value, with no dictionary
// to build and throw away.
constexpr std::string_view kSpansPlainColumns[] = {
    "span_id",       "parent_span_id",       "start_time_unix_nano",
    "duration_nano", "event_time_unix_nano", "link_trace_id",
    "link_span_id",
};

constexpr int kExceptionRules = 2;  // the last two rules
static_assert(kSpansColumnCount ==
              kSpansPromoted + kResourcePromotedColumns + kSpanPromotedColumns);

std::vector<ColumnSpec> SpansColumnSpecs() {
  std::vector<ColumnSpec> s;
  AppendRowKindSpec(&s);
  AppendResourceScopeSpecs(&s);
  s.push_back(ColumnSpec::FixedBytes("trace_id", 16, true));
  s.push_back(ColumnSpec::FixedBytes("span_id", 8, true));
  s.push_back(ColumnSpec::FixedBytes("parent_span_id", 8, true));
  s.push_back(ColumnSpec::String("trace_state", true));
  s.push_back(ColumnSpec::Integer("flags", 32, false, true));
  s.push_back(ColumnSpec::String("name", true));
  s.push_back(ColumnSpec::Int32("kind", true));
  s.push_back(ColumnSpec::Integer("start_time_unix_nano", 64, false, true));
  s.push_back(ColumnSpec::Int64("duration_nano", true));
  AppendAttributeFamilySpecs("attr", &s);
  s.push_back(ColumnSpec::Integer("dropped_attributes_count", 32, false, true));
  s.push_back(ColumnSpec::List(ColumnSpec::Integer("event_time_unix_nano", 64, false)));
  s.push_back(ColumnSpec::List(ColumnSpec::String("event_name")));
  s.push_back(ColumnSpec::List(ColumnSpec::Integer("event_dropped_attributes_count", 32, false)));
  AppendElementCountSpec("event_attr_count", &s);
  AppendAttributeFamilySpecs("event_attr", &s);
  s.push_back(ColumnSpec::Integer("dropped_events_count", 32, false, true));
  s.push_back(ColumnSpec::List(ColumnSpec::FixedBytes("link_trace_id", 16)));
  s.push_back(ColumnSpec::List(ColumnSpec::FixedBytes("link_span_id", 8)));
  s.push_back(ColumnSpec::List(ColumnSpec::String("link_trace_state")));
  s.push_back(ColumnSpec::List(ColumnSpec::Integer("link_flags", 32, false)));
  s.push_back(ColumnSpec::List(ColumnSpec::Integer("link_dropped_attributes_count", 32, false)));
  AppendElementCountSpec("link_attr_count", &s);
  AppendAttributeFamilySpecs("link_attr", &s);
  s.push_back(ColumnSpec::Integer("dropped_links_count", 32, false, true));
  s.push_back(ColumnSpec::Int32("status_code", true));
  s.push_back(ColumnSpec::String("status_message", true));
  AppendResourcePromotedSpecs(&s);
  for (const PromotionRule& rule : SpanPromotionRules()) {
    s.push_back(rule.type == otlp::ValueType::kInt
                    ? ColumnSpec::Int64(std::string(rule.column), true)
                    : ColumnSpec::String(std::string(rule.column), true));
  }
  STRATA_CHECK(s.size() == kSpansColumnCount, "spans column count");
  STRATA_CHECK(s[kSpansTraceId].name == "trace_id" &&
                   s[kSpansDroppedLinks].name == "dropped_links_count" &&
                   s[kSpansPromoted].name == "service_name",
               "spans column positions");
  return s;
}

using spans_internal::SortKey;

uint64_t LoadBigEndian64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return std::endian::native == std::endian::little ? __builtin_bswap64(v) : v;
}

template <size_t N>
void AppendFixed(ColumnVector& c, const std::array<uint8_t, N>& id) {
  c.bytes.append(reinterpret_cast<const char*>(id.data()), N);
  c.offsets.push_back(c.bytes.size());
}

// A present id in an optional column (ColumnVector::AppendBytes, with the
// length known at compile time).
template <size_t N>
void AppendPresentFixed(ColumnVector& c, const std::array<uint8_t, N>& id) {
  if (!c.validity.empty()) c.validity.push_back(1);
  AppendFixed(c, id);
}

// Builds every column of spans.parquet, one row at a time.
class SpansBuilder {
 public:
  // `owners[k]` gives batch k's resource and scope rows their file indexes.
  SpansBuilder(std::span<const otlp::TraceBatch* const> batches,
               std::vector<OwnerNumbering::Assigned> owners);

  // Room for chunks of `rows` of the `all_rows` rows, and for the whole
  // attribute tables.
  void Reserve(size_t rows, size_t all_rows);
  // Adds every input's span, event and link attribute tables as elements,
  // in batch order; span rows then point into them.
  void AddAttributeTables();
  void AppendPlaceholder(uint32_t batch, uint32_t resource, std::optional<uint32_t> scope);
  void AppendSpan(uint32_t batch, uint32_t span);
  // Spans are appended in sorted order, which jumps between the inputs'
  // rows; prefetching a span's row some spans ahead hides the cache misses
  // (Prefetch: its columns; PrefetchAttributes: its attributes, which needs
  // the attribute range Prefetch fetched).
  void Prefetch(uint32_t batch, uint32_t span) const;
  void PrefetchAttributes(uint32_t batch, uint32_t span) const;
  // The columns of the rows appended since the last ClearRows, in file
  // order: pointers into the builder, valid until ClearRows.
  std::vector<const ColumnVector*> ExposeRows();
  // Forgets those rows for the next chunk, keeping the attribute tables'
  // elements and every buffer's capacity.
  void ClearRows();
  const PromotionMisses& misses() const { return misses_; }

 private:
  void AppendSpanEvents(const otlp::TraceBatch& b, uint32_t batch, uint32_t span);
  void AppendSpanLinks(const otlp::TraceBatch& b, uint32_t batch, uint32_t span);
  void AppendSpanPromoted(const otlp::TraceBatch& b, uint32_t span);
  // Every span column null (or an empty list) for a placeholder row.
  void AppendNullSpan();

  std::span<const otlp::TraceBatch* const> batches_;
  PromotionMatcher span_matcher_;
  PromotionMatcher exception_matcher_;
  PromotionMisses misses_;
  std::vector<int64_t> match_;
  std::vector<int64_t> exception_match_;
  std::vector<std::string_view> missed_;
  // Per input batch: element number of row 0 of its attribute tables.
  std::vector<uint64_t> span_attribute_base_;
  std::vector<uint64_t> event_attribute_base_;
  std::vector<uint64_t> link_attribute_base_;

  ColumnVector row_kind_{PhysicalType::kInt32};
  ResourceScopeWriter resource_scope_;
  ColumnVector trace_id_{PhysicalType::kFixedLenByteArray};
  ColumnVector span_id_{PhysicalType::kFixedLenByteArray};
  ColumnVector parent_span_id_{PhysicalType::kFixedLenByteArray};
  ColumnVector trace_state_{PhysicalType::kByteArray};
  ColumnVector flags_{PhysicalType::kInt32};
  ColumnVector name_{PhysicalType::kByteArray};
  ColumnVector kind_{PhysicalType::kInt32};
  ColumnVector start_{PhysicalType::kInt64};
  ColumnVector duration_{PhysicalType::kInt64};
  AttributeFamilyWriter attributes_;
  ColumnVector dropped_attributes_{PhysicalType::kInt32};
  // Per row: its events (links), the same range in each per-event
  // (per-link) column; Finish gives each of them these lists.
  std::vector<parquet::ListRange> event_lists_;
  std::vector<parquet::ListRange> link_lists_;
  ColumnVector event_time_ = ColumnVector::List(PhysicalType::kInt64);
  ColumnVector event_name_ = ColumnVector::List(PhysicalType::kByteArray);
  ColumnVector event_dropped_ = ColumnVector::List(PhysicalType::kInt32);
  ColumnVector event_attr_count_ = ColumnVector::List(PhysicalType::kInt32);
  AttributeFamilyWriter event_attributes_;
  ColumnVector dropped_events_{PhysicalType::kInt32};
  ColumnVector link_trace_id_ = ColumnVector::List(PhysicalType::kFixedLenByteArray);
  ColumnVector link_span_id_ = ColumnVector::List(PhysicalType::kFixedLenByteArray);
  ColumnVector link_trace_state_ = ColumnVector::List(PhysicalType::kByteArray);
  ColumnVector link_flags_ = ColumnVector::List(PhysicalType::kInt32);
  ColumnVector link_dropped_ = ColumnVector::List(PhysicalType::kInt32);
  ColumnVector link_attr_count_ = ColumnVector::List(PhysicalType::kInt32);
  AttributeFamilyWriter link_attributes_;
  ColumnVector dropped_links_{PhysicalType::kInt32};
  ColumnVector status_code_{PhysicalType::kInt32};
  ColumnVector status_message_{PhysicalType::kByteArray};
  ResourcePromotedWriter resource_promoted_;
  std::array<ColumnVector, kSpanPromotedColumns> promoted_;
};

SpansBuilder::SpansBuilder(std::span<const otlp::TraceBatch* const> batches,
                           std::vector<OwnerNumbering::Assigned> owners)
    : batches_(batches),
      span_matcher_(SpanPromotionRules()),
      exception_matcher_({{"exception_type", {"exception.type"}, otlp::ValueType::kString},
                          {"exception_message", {"exception.message"}, otlp::ValueType::kString}}) {
  STRATA_CHECK(owners.size() == batches_.size(), "one numbering per batch");
  for (size_t k = 0; k < batches_.size(); ++k) {
    resource_scope_.AddBatch(*batches_[k], std::move(owners[k].resource),
                             std::move(owners[k].scope));
    resource_promoted_.AddBatch(*batches_[k]);
  }
  const std::vector<PromotionRule>& rules = span_matcher_.rules();
  for (int i = 0; i < kSpanPromotedColumns; ++i) {
    promoted_[i] = ColumnVector(rules[i].type == otlp::ValueType::kInt ? PhysicalType::kInt64
                                                                       : PhysicalType::kByteArray);
  }
}

void SpansBuilder::Reserve(size_t rows, size_t all_rows) {
  size_t span_attributes = 0, events = 0, event_attributes = 0, links = 0, link_attributes = 0;
  for (const otlp::TraceBatch* b : batches_) {
    span_attributes += b->span_attributes.size();
    events += b->events.size();
    event_attributes += b->event_attributes.size();
    links += b->links.size();
    link_attributes += b->link_attributes.size();
  }
  resource_scope_.Reserve(rows);
  resource_promoted_.Reserve(rows);
  for (ColumnVector* c : {&row_kind_, &flags_, &kind_, &start_, &duration_, &dropped_attributes_,
                          &dropped_events_, &dropped_links_, &status_code_, &trace_id_, &span_id_,
                          &parent_span_id_, &trace_state_, &name_, &status_message_}) {
    c->Reserve(rows);
  }
  trace_id_.bytes.reserve(16 * rows);
  span_id_.bytes.reserve(8 * rows);
  parent_span_id_.bytes.reserve(8 * rows);
  parent_span_id_.validity.reserve(rows);
  name_.bytes.reserve(24 * rows);
  // The attribute tables are added whole (AddAttributeTables); events and
  // links a chunk at a time, each chunk about its share of them.
  attributes_.Reserve(rows, span_attributes);
  event_attributes_.Reserve(rows, event_attributes);
  link_attributes_.Reserve(rows, link_attributes);
  event_lists_.reserve(rows);
  link_lists_.reserve(rows);
  const size_t chunk_events = events * rows / std::max<size_t>(1, all_rows) * 5 / 4;
  const size_t chunk_links = links * rows / std::max<size_t>(1, all_rows) * 5 / 4;
  for (ColumnVector* c : {&event_time_, &event_name_, &event_dropped_, &event_attr_count_}) {
    c->Reserve(chunk_events);
  }
  for (ColumnVector* c : {&link_trace_id_, &link_span_id_, &link_trace_state_, &link_flags_,
                          &link_dropped_, &link_attr_count_}) {
    c->Reserve(chunk_links);
  }
  link_trace_id_.bytes.reserve(16 * chunk_links);
  link_span_id_.bytes.reserve(8 * chunk_links);
  for (ColumnVector& c : promoted_) c.Reserve(rows);
}

void SpansBuilder::AddAttributeTables() {
  for (const otlp::TraceBatch* b : batches_) {
    span_attribute_base_.push_back(attributes_.AddTable(*b, b->span_attributes));
    event_attribute_base_.push_back(event_attributes_.AddTable(*b, b->event_attributes));
    link_attribute_base_.push_back(link_attributes_.AddTable(*b, b->link_attributes));
  }
}

void SpansBuilder::AppendNullSpan() {
  for (ColumnVector* c : {&trace_id_, &span_id_, &parent_span_id_, &trace_state_, &flags_, &name_,
                          &kind_, &start_, &duration_, &dropped_attributes_, &dropped_events_,
                          &dropped_links_, &status_code_, &status_message_}) {
    c->AppendNull();
  }
  attributes_.AppendEmptyRow();
  event_attributes_.AppendEmptyRow();
  link_attributes_.AppendEmptyRow();
  event_lists_.push_back({});
  link_lists_.push_back({});
  resource_promoted_.AppendNullRow();
  for (ColumnVector& c : promoted_) c.AppendNull();
}

void SpansBuilder::AppendPlaceholder(uint32_t batch, uint32_t resource,
                                     std::optional<uint32_t> scope) {
  row_kind_.int32s.push_back(scope.has_value() ? 1 : 2);
  resource_scope_.AppendRow(batch, resource, scope);
  AppendNullSpan();
}

void SpansBuilder::AppendSpan(uint32_t batch, uint32_t span) {
  const otlp::TraceBatch& b = *batches_[batch];
  const otlp::SpanColumns& s = b.spans;
  const uint32_t scope = s.scope[span];
  row_kind_.int32s.push_back(0);
  resource_scope_.AppendRow(batch, b.scopes.resource[scope], scope);
  AppendPresentFixed(trace_id_, s.trace_id[span]);
  AppendPresentFixed(span_id_, s.span_id[span]);
  if (s.has_parent_span_id[span] != 0) {
    AppendPresentFixed(parent_span_id_, s.parent_span_id[span]);
  } else {
    parent_span_id_.AppendNull();
  }
  trace_state_.AppendBytes(s.trace_state[span]);
  flags_.AppendInt32(static_cast<int32_t>(s.flags[span]));
  name_.AppendBytes(s.name[span]);
  kind_.AppendInt32(s.kind[span]);
  start_.AppendInt64(static_cast<int64_t>(s.start_time_unix_nano[span]));
  // Modulo 2^64, so start + duration gives the end back exactly.
  duration_.AppendInt64(
      static_cast<int64_t>(s.end_time_unix_nano[span] - s.start_time_unix_nano[span]));
  attributes_.AppendTableRow(span_attribute_base_[batch], s.attributes[span]);
  dropped_attributes_.AppendInt32(static_cast<int32_t>(s.dropped_attributes_count[span]));
  AppendSpanEvents(b, batch, span);
  dropped_events_.AppendInt32(static_cast<int32_t>(s.dropped_events_count[span]));
  AppendSpanLinks(b, batch, span);
  dropped_links_.AppendInt32(static_cast<int32_t>(s.dropped_links_count[span]));
  status_code_.AppendInt32(s.status_code[span]);
  status_message_.AppendBytes(s.status_message[span]);
  resource_promoted_.AppendRow(batch, b.scopes.resource[scope], &misses_);
  AppendSpanPromoted(b, span);
}

void SpansBuilder::Prefetch(uint32_t batch, uint32_t span) const {
  const otlp::SpanColumns& s = batches_[batch]->spans;
  // Every column AppendSpan reads: each is its own array, so each is a
  // cache miss of its own.
  for (const void* p :
       {static_cast<const void*>(&s.scope[span]), static_cast<const void*>(&s.trace_id[span]),
        static_cast<const void*>(&s.span_id[span]), static_cast<const void*>(&s.trace_state[span]),
        static_cast<const void*>(&s.parent_span_id[span]),
        static_cast<const void*>(&s.has_parent_span_id[span]),
        static_cast<const void*>(&s.flags[span]), static_cast<const void*>(&s.name[span]),
        static_cast<const void*>(&s.kind[span]),
        static_cast<const void*>(&s.start_time_unix_nano[span]),
        static_cast<const void*>(&s.end_time_unix_nano[span]),
        static_cast<const void*>(&s.attributes[span]),
        static_cast<const void*>(&s.dropped_attributes_count[span]),
        static_cast<const void*>(&s.events[span]),
        static_cast<const void*>(&s.dropped_events_count[span]),
        static_cast<const void*>(&s.links[span]),
        static_cast<const void*>(&s.dropped_links_count[span]),
        static_cast<const void*>(&s.status_message[span]),
        static_cast<const void*>(&s.status_code[span])}) {
    __builtin_prefetch(p);
  }
}

void SpansBuilder::PrefetchAttributes(uint32_t batch, uint32_t span) const {
  const otlp::TraceBatch& b = *batches_[batch];
  const otlp::Range r = b.spans.attributes[span];
  if (r.count == 0) return;
  __builtin_prefetch(&b.span_attributes.key[r.begin]);
  __builtin_prefetch(&b.span_attributes.value.str[r.begin]);
  __builtin_prefetch(&b.span_attributes.value.type[r.begin]);
  __builtin_prefetch(&b.span_attributes.value.bits[r.begin]);
  __builtin_prefetch(b.spans.name[span].data());
  attributes_.PrefetchTableRow(span_attribute_base_[batch], r);
}

void SpansBuilder::AppendSpanEvents(const otlp::TraceBatch& b, uint32_t batch, uint32_t span) {
  const otlp::Range events = b.spans.events[span];
  const otlp::EventColumns& e = b.events;
  // Every per-event column gets one element per event, so the running
  // element count is the same in each.
  parquet::PushListRange(&event_lists_, event_time_.int64s.size(), events.count);
  for (uint32_t i = events.begin; i < events.end(); ++i) {
    event_time_.int64s.push_back(static_cast<int64_t>(e.time_unix_nano[i]));
    event_name_.bytes.append(e.name[i]);
    event_name_.offsets.push_back(event_name_.bytes.size());
    event_dropped_.int32s.push_back(static_cast<int32_t>(e.dropped_attributes_count[i]));
    event_attr_count_.int32s.push_back(static_cast<int32_t>(e.attributes[i].count));
  }
  const std::span<const otlp::Range> attributes(e.attributes.data() + events.begin, events.count);
  event_attributes_.AppendTableConcatenatedRow(event_attribute_base_[batch], b, b.event_attributes,
                                               attributes);
}

void SpansBuilder::AppendSpanLinks(const otlp::TraceBatch& b, uint32_t batch, uint32_t span) {
  const otlp::Range links = b.spans.links[span];
  const otlp::LinkColumns& l = b.links;
  // As for events: one element per link in every per-link column.
  parquet::PushListRange(&link_lists_, link_flags_.int32s.size(), links.count);
  for (uint32_t i = links.begin; i < links.end(); ++i) {
    AppendFixed(link_trace_id_, l.trace_id[i]);
    AppendFixed(link_span_id_, l.span_id[i]);
    link_trace_state_.bytes.append(l.trace_state[i]);
    link_trace_state_.offsets.push_back(link_trace_state_.bytes.size());
    link_flags_.int32s.push_back(static_cast<int32_t>(l.flags[i]));
    link_dropped_.int32s.push_back(static_cast<int32_t>(l.dropped_attributes_count[i]));
    link_attr_count_.int32s.push_back(static_cast<int32_t>(l.attributes[i].count));
  }
  const std::span<const otlp::Range> attributes(l.attributes.data() + links.begin, links.count);
  link_attributes_.AppendTableConcatenatedRow(link_attribute_base_[batch], b, b.link_attributes,
                                              attributes);
}

void SpansBuilder::AppendSpanPromoted(const otlp::TraceBatch& b, uint32_t span) {
  missed_.clear();
  // exception.type / exception.message: the first event named "exception"
  // comes first, then the span's own attributes.
  exception_match_.assign(kExceptionRules, -1);
  const otlp::Range events = b.spans.events[span];
  for (uint32_t i = events.begin; i < events.end(); ++i) {
    if (b.events.name[i] == "exception") {
      exception_matcher_.Match(b.event_attributes, b.events.attributes[i], &exception_match_,
                               &missed_);
      break;
    }
  }
  span_matcher_.Match(b.span_attributes, b.spans.attributes[span], &match_, &missed_);
  for (int i = 0; i < kSpanPromotedColumns; ++i) {
    ColumnVector& c = promoted_[i];
    const otlp::AttributeColumns* table = &b.span_attributes;
    int64_t row = match_[i];
    if (i >= kSpanPromotedColumns - kExceptionRules) {
      const int64_t from_event = exception_match_[i - (kSpanPromotedColumns - kExceptionRules)];
      if (from_event >= 0) {
        table = &b.event_attributes;
        row = from_event;
      }
    }
    if (row < 0) {
      c.AppendNull();
    } else if (c.type == PhysicalType::kInt64) {
      c.AppendInt64(table->value.int_at(static_cast<size_t>(row)));
    } else {
      c.AppendBytes(table->value.str[row]);
    }
  }
  for (std::string_view key : missed_) misses_.Add(key);
}

std::vector<const ColumnVector*> SpansBuilder::ExposeRows() {
  std::vector<const ColumnVector*> out;
  out.reserve(kSpansColumnCount);
  out.push_back(&row_kind_);
  resource_scope_.ExposeRows(&out);
  for (const ColumnVector* c : {&trace_id_, &span_id_, &parent_span_id_, &trace_state_, &flags_,
                                &name_, &kind_, &start_, &duration_}) {
    out.push_back(c);
  }
  attributes_.ExposeRows(&out);
  out.push_back(&dropped_attributes_);
  const parquet::ListRanges events(std::move(event_lists_));
  event_lists_ = {};
  for (ColumnVector* c : {&event_time_, &event_name_, &event_dropped_, &event_attr_count_}) {
    c->lists = events;
    out.push_back(c);
  }
  event_attributes_.ExposeRows(&out);
  out.push_back(&dropped_events_);
  const parquet::ListRanges links(std::move(link_lists_));
  link_lists_ = {};
  for (ColumnVector* c : {&link_trace_id_, &link_span_id_, &link_trace_state_, &link_flags_,
                          &link_dropped_, &link_attr_count_}) {
    c->lists = links;
    out.push_back(c);
  }
  link_attributes_.ExposeRows(&out);
  for (const ColumnVector* c : {&dropped_links_, &status_code_, &status_message_}) {
    out.push_back(c);
  }
  resource_promoted_.ExposeRows(&out);
  for (const ColumnVector& c : promoted_) out.push_back(&c);
  STRATA_CHECK(out.size() == kSpansColumnCount, "spans column count");
  return out;
}

void SpansBuilder::ClearRows() {
  const size_t rows = row_kind_.int32s.size();
  for (ColumnVector* c : {&row_kind_, &trace_id_, &span_id_, &parent_span_id_, &trace_state_,
                          &flags_, &name_, &kind_, &start_, &duration_, &dropped_attributes_,
                          &dropped_events_, &dropped_links_, &status_code_, &status_message_}) {
    c->Clear();
  }
  // The per-event and per-link columns' elements are the rows' own.
  for (ColumnVector* c :
       {&event_time_, &event_name_, &event_dropped_, &event_attr_count_, &link_trace_id_,
        &link_span_id_, &link_trace_state_, &link_flags_, &link_dropped_, &link_attr_count_}) {
    c->Clear();
  }
  for (ColumnVector& c : promoted_) c.Clear();
  resource_scope_.ClearRows();
  attributes_.ClearRows();
  event_attributes_.ClearRows();
  link_attributes_.ClearRows();
  resource_promoted_.ClearRows();
  event_lists_.reserve(rows);
  link_lists_.reserve(rows);
}

std::vector<SortKey> SortSpans(std::span<const otlp::TraceBatch* const> batches) {
  size_t spans = 0;
  for (const otlp::TraceBatch* b : batches) spans += b->spans.size();
  std::vector<SortKey> keys;
  keys.reserve(spans);
  for (uint32_t k = 0; k < batches.size(); ++k) {
    const otlp::SpanColumns& s = batches[k]->spans;
    for (uint32_t i = 0; i < s.size(); ++i) {
      const uint8_t* id = s.trace_id[i].data();
      keys.push_back(
          {LoadBigEndian64(id), LoadBigEndian64(id + 8), s.start_time_unix_nano[i], k, i});
    }
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace

const std::vector<ColumnSpec>& SpansTableColumns() {
  static const std::vector<ColumnSpec>* const specs = new std::vector<ColumnSpec>(SpansColumnSpecs());
  return *specs;
}

// ---- SpansTableWriter ----

absl::StatusOr<std::unique_ptr<SpansTableWriter>> SpansTableWriter::Open(
    std::string_view batch_id, const TableOptions& options, parquet::ByteSink* sink) {
  const std::vector<parquet::SortingColumn> sorting = {{kSpansTraceId, false, true},
                                                       {kSpansStartTime, false, true}};
  parquet::WriterOptions writer_options =
      MakeWriterOptions(options, kSpansSchema, batch_id, sorting);
  writer_options.column.data_page_bytes = options.spans_page_bytes;
  writer_options.column.data_page_max_rows = std::min(options.page_rows, options.spans_page_rows);
  writer_options.column_options = PerColumnOptions(
      SpansTableColumns(), options, writer_options.column, kSpansZstdLevels, kSpansPlainColumns);
  STRATA_ASSIGN_OR_RETURN(
      std::unique_ptr<parquet::FileWriter> file,
      parquet::FileWriter::Open(SpansTableColumns(), std::move(writer_options), sink));
  return std::unique_ptr<SpansTableWriter>(new SpansTableWriter(std::move(file)));
}

SpansTableWriter::SpansTableWriter(std::unique_ptr<parquet::FileWriter> file)
    : TableFileWriter("spans", std::move(file)) {
  meta().traces = 0;
}

SpansTableWriter::~SpansTableWriter() = default;

std::vector<SpansTableWriter::Placeholder> SpansTableWriter::Placeholders(
    std::span<const otlp::TraceBatch* const> batches,
    const std::vector<OwnerNumbering::Assigned>& owners) {
  resource_named_.resize(numbering_.resources(), false);
  scope_named_.resize(numbering_.scopes(), false);
  // Per batch: spans per scope row and scopes per resource row.
  std::vector<std::vector<uint32_t>> spans_per_scope(batches.size());
  std::vector<std::vector<uint32_t>> scopes_per_resource(batches.size());
  for (size_t k = 0; k < batches.size(); ++k) {
    const otlp::TraceBatch& b = *batches[k];
    spans_per_scope[k].assign(b.scopes.size(), 0);
    scopes_per_resource[k].assign(b.resources.size(), 0);
    for (uint32_t s : b.spans.scope) ++spans_per_scope[k][s];
    for (uint32_t r : b.scopes.resource) ++scopes_per_resource[k][r];
    for (uint32_t s = 0; s < b.scopes.size(); ++s) {
      if (spans_per_scope[k][s] == 0) continue;
      scope_named_[owners[k].scope[s]] = true;
      resource_named_[owners[k].resource[b.scopes.resource[s]]] = true;
    }
  }
  // Scopes first: a scope placeholder names its resource too.
  std::vector<std::vector<Placeholder>> scope_rows(batches.size());
  for (size_t k = 0; k < batches.size(); ++k) {
    const otlp::TraceBatch& b = *batches[k];
    for (uint32_t s = 0; s < b.scopes.size(); ++s) {
      if (spans_per_scope[k][s] != 0 || scope_named_[owners[k].scope[s]]) continue;
      scope_named_[owners[k].scope[s]] = true;
      resource_named_[owners[k].resource[b.scopes.resource[s]]] = true;
      scope_rows[k].push_back({static_cast<uint32_t>(k), b.scopes.resource[s], s});
    }
  }
  std::vector<Placeholder> out;
  for (size_t k = 0; k < batches.size(); ++k) {
    const otlp::TraceBatch& b = *batches[k];
    for (uint32_t r = 0; r < b.resources.size(); ++r) {
      if (scopes_per_resource[k][r] != 0 || resource_named_[owners[k].resource[r]]) continue;
      resource_named_[owners[k].resource[r]] = true;
      out.push_back({static_cast<uint32_t>(k), r, std::nullopt});
    }
    out.insert(out.end(), scope_rows[k].begin(), scope_rows[k].end());
  }
  return out;
}

absl::Status SpansTableWriter::Append(std::span<const otlp::TraceBatch* const> batches) {
  std::vector<OwnerNumbering::Assigned> owners;
  owners.reserve(batches.size());
  for (const otlp::TraceBatch* b : batches) {
    absl::StatusOr<OwnerNumbering::Assigned> assigned = numbering_.Number(*b);
    if (!assigned.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("spans table: ", assigned.status().message()));
    }
    owners.push_back(std::move(*assigned));
  }
  const std::vector<Placeholder> placeholders = Placeholders(batches, owners);
  if (!placeholders.empty() && meta().rows > 0) {
    return absl::InternalError("spans table: placeholder rows after span rows");
  }
  const std::vector<SortKey> keys = SortSpans(batches);
  const uint64_t rows = placeholders.size() + keys.size();
  if (meta().file_rows + rows > std::numeric_limits<uint32_t>::max()) {
    return absl::InvalidArgumentError("spans table: too many rows for one file");
  }
  if (!keys.empty() && has_last_ &&
      std::tie(keys.front().trace_hi, keys.front().trace_lo, keys.front().start) <
          std::tie(last_.trace_hi, last_.trace_lo, last_.start)) {
    return absl::InternalError("spans table: spans appended out of (trace id, start time) order");
  }
  if (rows == 0) return absl::OkStatus();

  const uint32_t first_span_row = static_cast<uint32_t>(meta().file_rows + placeholders.size());
  if (meta().rows == 0) table_.first_span_row = first_span_row;
  Summarize(batches, keys, first_span_row);
  meta().file_rows += rows;

  // The rows go to the file a chunk at a time: the builder's row buffers,
  // reused chunk after chunk, stay in cache until the file writer reads
  // them, where a whole group's rows would not (the attribute tables'
  // elements are added once and stay). Chunks are whole slices of the file
  // writer, which checks the row-group limits every kRowsPerSlice rows of a
  // call, so the file is the one a single call with every row would give.
  constexpr size_t kChunkRows = parquet::FileWriter::kRowsPerSlice;
  SpansBuilder builder(batches, std::move(owners));
  builder.Reserve(std::min<size_t>(rows, kChunkRows), rows);
  builder.AddAttributeTables();
  // Two stages: a span's row 8 spans ahead, then what it points to 4 ahead.
  constexpr size_t kRowAhead = 8, kAttributesAhead = 4;
  for (size_t chunk = 0; chunk < rows; chunk += kChunkRows) {
    const size_t chunk_end = std::min<size_t>(rows, chunk + kChunkRows);
    // Placeholder rows come first, then the spans in sorted order.
    const size_t placeholder_rows = placeholders.size();
    for (size_t row = chunk; row < std::min(chunk_end, placeholder_rows); ++row) {
      const Placeholder& p = placeholders[row];
      builder.AppendPlaceholder(p.batch, p.resource, p.scope);
    }
    const size_t keys_end = std::max(chunk_end, placeholder_rows) - placeholder_rows;
    for (size_t i = std::max(chunk, placeholder_rows) - placeholder_rows; i < keys_end; ++i) {
      if (i + kRowAhead < keys.size()) {
        builder.Prefetch(keys[i + kRowAhead].batch, keys[i + kRowAhead].row);
      }
      if (i + kAttributesAhead < keys.size()) {
        builder.PrefetchAttributes(keys[i + kAttributesAhead].batch,
                                   keys[i + kAttributesAhead].row);
      }
      builder.AppendSpan(keys[i].batch, keys[i].row);
    }
    STRATA_RETURN_IF_ERROR(file().WriteChunk(builder.ExposeRows(), /*first=*/chunk == 0));
    builder.ClearRows();
  }
  builder.misses().AddTo(&meta().promotion_misses);
  return absl::OkStatus();
}

// Extends the trace runs and time bounds by the sorted spans `keys`, whose
// first lands on file row `first_span_row`.
void SpansTableWriter::Summarize(std::span<const otlp::TraceBatch* const> batches,
                                 const std::vector<SortKey>& keys, uint32_t first_span_row) {
  for (size_t i = 0; i < keys.size(); ++i) {
    const SortKey& k = keys[i];
    const otlp::SpanColumns& s = batches[k.batch]->spans;
    const uint64_t start = s.start_time_unix_nano[k.row];
    const uint64_t end = s.end_time_unix_nano[k.row];
    const uint64_t lo = std::min(start, end), hi = std::max(start, end);
    if (!has_last_ || k.trace_hi != last_.trace_hi || k.trace_lo != last_.trace_lo) {
      TraceRun run;
      run.trace_id = s.trace_id[k.row];
      run.first_row = first_span_row + static_cast<uint32_t>(i);
      table_.trace_runs.push_back(run);
    }
    min_time_ = std::min(min_time_, lo);
    max_time_ = std::max(max_time_, hi);
    last_ = k;
    has_last_ = true;
  }
  meta().rows += keys.size();
  meta().traces = table_.trace_runs.size();
}

absl::StatusOr<SpansTable> SpansTableWriter::Finish() {
  // Placeholder rows alone have no event time ([0, 0], FinishFile).
  if (meta().rows > 0) ExtendEventTime(NanosRange{min_time_, max_time_});
  STRATA_ASSIGN_OR_RETURN(table_.meta, FinishFile());
  return std::move(table_);
}

absl::StatusOr<SpansTable> WriteSpansTable(std::span<const otlp::TraceBatch* const> batches,
                                           std::string_view batch_id, const TableOptions& options) {
  // Every resource gives at least one row (a span or a placeholder).
  size_t rows = 0;
  for (uint32_t k = 0; k < batches.size(); ++k) {
    STRATA_RETURN_IF_ERROR(otlp::ValidateBatch(*batches[k]));
    rows += batches[k]->resources.size() + batches[k]->spans.size();
  }
  if (rows == 0) {
    SpansTable empty;
    empty.meta.traces = 0;
    return empty;
  }
  std::string file;
  parquet::StringSink sink(&file);
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<SpansTableWriter> writer,
                          SpansTableWriter::Open(batch_id, options, &sink));
  STRATA_RETURN_IF_ERROR(writer->Append(batches));
  STRATA_ASSIGN_OR_RETURN(SpansTable out, writer->Finish());
  out.file = std::move(file);
  return out;
}

absl::Status CheckSpansTableFooter(parquet::RandomAccessSource* source, std::string_view batch_id,
                                   uint64_t file_rows, std::string_view file_name) {
  return CheckTableFooter(source, SpansTableColumns(), kSpansSchema, batch_id, file_rows,
                          file_name);
}

}  // namespace strata::storage
