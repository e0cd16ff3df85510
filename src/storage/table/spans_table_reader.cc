// ReadSpansTable and ReadSpansRows: spans.parquet, whole or a row range,
// back into a TraceBatch (spans_table.h). Both read their columns and then
// share one path (AppendSpanRows) that rebuilds resources, scopes and spans.

#include <algorithm>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "common/check.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "otlp/decode.h"
#include "storage/table/spans_table.h"

namespace strata::storage {

using parquet::ColumnVector;

namespace {

const std::string& ColumnName(int column) { return SpansTableColumns()[column].name; }

// The position of a column of the schema, which must have it.
int SpansColumnIndex(std::string_view name) {
  const std::vector<parquet::ColumnSpec>& columns = SpansTableColumns();
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].name == name) return static_cast<int>(i);
  }
  STRATA_CHECK(false, "spans.parquet has no such column");
  return -1;
}

template <size_t N>
void CopyId(const ColumnVector& column, size_t i, std::array<uint8_t, N>* id) {
  std::memcpy(id->data(), column.bytes.data() + column.offsets[i], N);
}

// Row kinds are 0..2 and placeholders (1, 2) come before spans (0). Returns
// the first span row. Vector row r is file row first_row + r (for messages).
absl::StatusOr<size_t> CheckRowKinds(const ColumnVector& kinds, const RowOwners& owners,
                                     std::string_view file_name, uint64_t first_row) {
  size_t first_span = kinds.size();
  for (size_t r = 0; r < kinds.size(); ++r) {
    const int32_t kind = kinds.int32s[r];
    if (kind < 0 || kind > 2) {
      return ColumnDataLoss(file_name, "row_kind", first_row + r,
                            fmt::format("row kind {} outside 0..2", kind));
    }
    if (kind == 0 && first_span == kinds.size()) first_span = r;
    if (kind != 0 && first_span < r) {
      return ColumnDataLoss(file_name, "row_kind", first_row + r,
                            "placeholder row after a span row");
    }
    if ((kind == 2) != (owners.scope[r] == RowOwners::kNoScope)) {
      return ColumnDataLoss(file_name, "scope_index", first_row + r,
                            kind == 2 ? "not null on a resource placeholder" : "null");
    }
  }
  return first_span;
}

// Reads span rows of the columns into *batch, one ReadRow() per row in
// column order. Vector row r is file row first_row + r (for messages).
class SpanRowReader {
 public:
  // Without `details`, spans get no attributes, events or links (their
  // columns were not read).
  SpanRowReader(std::vector<ColumnVector>& c, std::string_view file_name, uint64_t first_row,
                otlp::TraceBatch* batch, bool details)
      : c_(c), file_name_(file_name), first_row_(first_row), batch_(batch), details_(details) {}

  [[nodiscard]] absl::Status Init();
  [[nodiscard]] absl::Status ReadRow(size_t r, uint32_t scope);

 private:
  [[nodiscard]] absl::Status CheckPresent(size_t r) const;
  [[nodiscard]] absl::Status CheckOrder(size_t r);
  [[nodiscard]] absl::Status CheckListLengths(size_t r, std::initializer_list<int> columns) const;
  [[nodiscard]] absl::StatusOr<otlp::Range> ReadEvents(size_t r);
  [[nodiscard]] absl::StatusOr<otlp::Range> ReadLinks(size_t r);
  std::string_view Str(int column, size_t i) const {
    return BytesAt(c_[column], views_[column], i);
  }

  std::vector<ColumnVector>& c_;
  std::string_view file_name_;
  uint64_t first_row_;
  otlp::TraceBatch* batch_;
  bool details_;
  std::vector<std::string_view> views_ = std::vector<std::string_view>(kSpansColumnCount);
  std::optional<AttributeFamilyReader> attributes_;
  std::optional<AttributeFamilyReader> event_attributes_;
  std::optional<AttributeFamilyReader> link_attributes_;
  std::vector<otlp::Range> ranges_;
  bool has_previous_ = false;
  size_t previous_row_ = 0;
};

absl::Status SpanRowReader::Init() {
  for (int k :
       {kSpansTraceState, kSpansName, kSpansStatusMessage, kSpansEventName, kSpansLinkTraceState}) {
    views_[k] = RetainBytes(&c_[k], batch_);
  }
  if (!details_) return absl::OkStatus();
  std::span<ColumnVector> all(c_);
  STRATA_ASSIGN_OR_RETURN(attributes_, AttributeFamilyReader::Make(
                                           all.subspan(kSpansAttributes, kAttributeFamilyColumns),
                                           "attr", file_name_, batch_));
  STRATA_ASSIGN_OR_RETURN(
      event_attributes_,
      AttributeFamilyReader::Make(all.subspan(kSpansEventAttributes, kAttributeFamilyColumns),
                                  "event_attr", file_name_, batch_));
  STRATA_ASSIGN_OR_RETURN(
      link_attributes_,
      AttributeFamilyReader::Make(all.subspan(kSpansLinkAttributes, kAttributeFamilyColumns),
                                  "link_attr", file_name_, batch_));
  return absl::OkStatus();
}

absl::Status SpanRowReader::CheckPresent(size_t r) const {
  for (int k : {kSpansTraceId, kSpansSpanId, kSpansTraceState, kSpansFlags, kSpansName, kSpansKind,
                kSpansStartTime, kSpansDuration, kSpansDroppedAttributes, kSpansDroppedEvents,
                kSpansDroppedLinks, kSpansStatusCode, kSpansStatusMessage}) {
    if (c_[k].is_null(r)) {
      return ColumnDataLoss(file_name_, ColumnName(k), first_row_ + r, "null on a span row");
    }
  }
  return absl::OkStatus();
}

// Spans are sorted by trace id (bytewise), then start time (unsigned).
absl::Status SpanRowReader::CheckOrder(size_t r) {
  if (has_previous_) {
    const ColumnVector& ids = c_[kSpansTraceId];
    const int order = std::memcmp(ids.bytes.data() + ids.offsets[previous_row_],
                                  ids.bytes.data() + ids.offsets[r], 16);
    const auto start = [&](size_t row) {
      return static_cast<uint64_t>(c_[kSpansStartTime].int64s[row]);
    };
    if (order > 0 || (order == 0 && start(previous_row_) > start(r))) {
      return ColumnDataLoss(file_name_, order > 0 ? "trace_id" : "start_time_unix_nano",
                            first_row_ + r, "rows are not in the declared sort order");
    }
  }
  has_previous_ = true;
  previous_row_ = r;
  return absl::OkStatus();
}

absl::Status SpanRowReader::CheckListLengths(size_t r, std::initializer_list<int> columns) const {
  const int first = *columns.begin();
  for (int k : columns) {
    if (c_[k].lists[r].count != c_[first].lists[r].count) {
      return ColumnDataLoss(file_name_, ColumnName(k), first_row_ + r,
                            fmt::format("{} elements, {} has {}", c_[k].lists[r].count,
                                        ColumnName(first), c_[first].lists[r].count));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<otlp::Range> SpanRowReader::ReadEvents(size_t r) {
  STRATA_RETURN_IF_ERROR(CheckListLengths(
      r,
      {kSpansEventTime, kSpansEventName, kSpansEventDroppedAttributes, kSpansEventAttributeCount}));
  STRATA_RETURN_IF_ERROR(event_attributes_->AppendSplitRow(
      r, ListU32(c_[kSpansEventAttributeCount], r), batch_, &batch_->event_attributes, &ranges_));
  const otlp::Range events{static_cast<uint32_t>(batch_->events.size()),
                           static_cast<uint32_t>(ranges_.size())};
  const std::span<const uint32_t> dropped = ListU32(c_[kSpansEventDroppedAttributes], r);
  const uint64_t time_begin = c_[kSpansEventTime].lists[r].begin;
  const uint64_t name_begin = c_[kSpansEventName].lists[r].begin;
  for (size_t e = 0; e < ranges_.size(); ++e) {
    otlp::EventRow event;
    event.time_unix_nano = static_cast<uint64_t>(c_[kSpansEventTime].int64s[time_begin + e]);
    event.name = Str(kSpansEventName, name_begin + e);
    event.attributes = ranges_[e];
    event.dropped_attributes_count = dropped[e];
    batch_->events.Append(event);
  }
  return events;
}

absl::StatusOr<otlp::Range> SpanRowReader::ReadLinks(size_t r) {
  STRATA_RETURN_IF_ERROR(CheckListLengths(
      r, {kSpansLinkTraceId, kSpansLinkSpanId, kSpansLinkTraceState, kSpansLinkFlags,
          kSpansLinkDroppedAttributes, kSpansLinkAttributeCount}));
  STRATA_RETURN_IF_ERROR(link_attributes_->AppendSplitRow(
      r, ListU32(c_[kSpansLinkAttributeCount], r), batch_, &batch_->link_attributes, &ranges_));
  const otlp::Range links{static_cast<uint32_t>(batch_->links.size()),
                          static_cast<uint32_t>(ranges_.size())};
  const std::span<const uint32_t> flags = ListU32(c_[kSpansLinkFlags], r);
  const std::span<const uint32_t> dropped = ListU32(c_[kSpansLinkDroppedAttributes], r);
  const uint64_t trace_begin = c_[kSpansLinkTraceId].lists[r].begin;
  const uint64_t span_begin = c_[kSpansLinkSpanId].lists[r].begin;
  const uint64_t state_begin = c_[kSpansLinkTraceState].lists[r].begin;
  for (size_t e = 0; e < ranges_.size(); ++e) {
    otlp::LinkRow link;
    CopyId(c_[kSpansLinkTraceId], trace_begin + e, &link.trace_id);
    CopyId(c_[kSpansLinkSpanId], span_begin + e, &link.span_id);
    link.trace_state = Str(kSpansLinkTraceState, state_begin + e);
    link.attributes = ranges_[e];
    link.dropped_attributes_count = dropped[e];
    link.flags = flags[e];
    batch_->links.Append(link);
  }
  return links;
}

absl::Status SpanRowReader::ReadRow(size_t r, uint32_t scope) {
  STRATA_RETURN_IF_ERROR(CheckPresent(r));
  STRATA_RETURN_IF_ERROR(CheckOrder(r));
  otlp::SpanRow span;
  span.scope = scope;
  CopyId(c_[kSpansTraceId], r, &span.trace_id);
  CopyId(c_[kSpansSpanId], r, &span.span_id);
  span.trace_state = Str(kSpansTraceState, r);
  if (!c_[kSpansParentSpanId].is_null(r)) {
    CopyId(c_[kSpansParentSpanId], r, &span.parent_span_id);
    span.has_parent_span_id = 1;
  }
  span.flags = static_cast<uint32_t>(c_[kSpansFlags].int32s[r]);
  span.name = Str(kSpansName, r);
  span.kind = c_[kSpansKind].int32s[r];
  span.start_time_unix_nano = static_cast<uint64_t>(c_[kSpansStartTime].int64s[r]);
  span.end_time_unix_nano =
      span.start_time_unix_nano + static_cast<uint64_t>(c_[kSpansDuration].int64s[r]);
  if (details_) {
    STRATA_ASSIGN_OR_RETURN(span.attributes,
                            attributes_->AppendRow(r, batch_, &batch_->span_attributes));
    STRATA_ASSIGN_OR_RETURN(span.events, ReadEvents(r));
    STRATA_ASSIGN_OR_RETURN(span.links, ReadLinks(r));
  }
  span.dropped_attributes_count = static_cast<uint32_t>(c_[kSpansDroppedAttributes].int32s[r]);
  span.dropped_events_count = static_cast<uint32_t>(c_[kSpansDroppedEvents].int32s[r]);
  span.dropped_links_count = static_cast<uint32_t>(c_[kSpansDroppedLinks].int32s[r]);
  span.status_code = c_[kSpansStatusCode].int32s[r];
  span.status_message = Str(kSpansStatusMessage, r);
  batch_->spans.Append(span);
  return absl::OkStatus();
}

// What a row range holds: the whole file (placeholder rows allowed before
// the spans), span rows only, or placeholder rows only (a prefix).
enum class RowRange { kWhole, kSpans, kPlaceholders };

// The shared path of both readers: `c` holds every column of the file rows
// [first_row, first_row + c[0].size()), which are the whole file (`whole`:
// placeholder rows allowed before the spans) or a range of span rows.
// Appends their resources, scopes and spans to *batch and validates it.
absl::Status AppendSpanRows(std::vector<ColumnVector>& c, std::string_view file_name,
                            uint64_t first_row, RowRange range, otlp::TraceBatch* batch,
                            FileOwnerIndexes* file_owners = nullptr, bool details = true) {
  if (range != RowRange::kWhole) {
    // A range names only some of the file's resources and scopes, and
    // RebuildResourcesAndScopes requires 0..max; renumbering keeps their
    // order, so also the resource each scope belongs to.
    static const int kResourceIndex = SpansColumnIndex("resource_index");
    static const int kScopeIndex = SpansColumnIndex("scope_index");
    std::vector<uint32_t> resources = RenumberDense(&c[kResourceIndex]);
    std::vector<uint32_t> scopes = RenumberDense(&c[kScopeIndex]);
    if (file_owners != nullptr) *file_owners = {std::move(resources), std::move(scopes)};
  }
  std::span<ColumnVector> resource_scope =
      std::span<ColumnVector>(c).subspan(kSpansResourceScope, kResourceScopeColumns);
  STRATA_ASSIGN_OR_RETURN(const RowOwners owners,
                          RebuildResourcesAndScopes(resource_scope, file_name, batch));
  STRATA_ASSIGN_OR_RETURN(const size_t first_span,
                          CheckRowKinds(c[kSpansRowKind], owners, file_name, first_row));
  if (range == RowRange::kSpans && first_span != 0) {
    return ColumnDataLoss(file_name, "row_kind", first_row, "placeholder row in a span row range");
  }
  if (range == RowRange::kPlaceholders && first_span != c[kSpansRowKind].size()) {
    return ColumnDataLoss(file_name, "row_kind", first_row + first_span,
                          "span row among the placeholder rows");
  }
  SpanRowReader rows(c, file_name, first_row, batch, details);
  STRATA_RETURN_IF_ERROR(rows.Init());
  const size_t row_count = c[kSpansRowKind].size();
  // Room for the rows, growing geometrically: a trace read from many
  // batches appends to the same columns once per batch.
  const size_t span_rows = batch->spans.size() + row_count - first_span;
  if (span_rows > batch->spans.name.capacity()) {
    batch->spans.Reserve(std::max(span_rows, 2 * batch->spans.name.capacity()));
  }
  for (size_t r = first_span; r < row_count; ++r) {
    STRATA_RETURN_IF_ERROR(rows.ReadRow(r, owners.scope[r]));
  }
  absl::Status valid = otlp::ValidateBatch(*batch);
  if (!valid.ok()) {
    return absl::DataLossError(
        fmt::format("{}: rebuilt batch is invalid: {}", file_name, std::string(valid.message())));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<otlp::TraceBatch> ReadSpansTable(parquet::RandomAccessSource* source,
                                                std::string_view batch_id,
                                                std::string_view file_name) {
  STRATA_ASSIGN_OR_RETURN(
      std::unique_ptr<parquet::FileReader> reader,
      OpenTable(source, SpansTableColumns(), kSpansSchema, batch_id, file_name));
  STRATA_ASSIGN_OR_RETURN(std::vector<ColumnVector> c, ReadAllColumns(*reader, file_name));
  otlp::TraceBatch batch;
  STRATA_RETURN_IF_ERROR(AppendSpanRows(c, file_name, 0, RowRange::kWhole, &batch));
  return batch;
}

absl::StatusOr<std::unique_ptr<SpansRangeReader>> SpansRangeReader::Open(
    parquet::RandomAccessSource* source, std::string_view batch_id, std::string_view file_name) {
  STRATA_ASSIGN_OR_RETURN(
      std::unique_ptr<parquet::FileReader> reader,
      OpenTable(source, SpansTableColumns(), kSpansSchema, batch_id, file_name));
  return std::unique_ptr<SpansRangeReader>(new SpansRangeReader(std::move(reader), file_name));
}

absl::StatusOr<std::shared_ptr<const parquet::FileLayout>> ReadSpansLayout(
    parquet::RandomAccessSource* source, std::string_view batch_id, std::string_view file_name) {
  parquet::ReaderOptions options;
  options.file_name = std::string(file_name);
  absl::StatusOr<std::shared_ptr<const parquet::FileLayout>> layout =
      parquet::FileReader::ReadLayout(source, options);
  if (!layout.ok()) return AsDataLoss(layout.status(), file_name);
  STRATA_RETURN_IF_ERROR(CheckTableSchema((*layout)->metadata, (*layout)->columns,
                                          SpansTableColumns(), kSpansSchema, batch_id, file_name));
  return layout;
}

absl::StatusOr<std::unique_ptr<SpansRangeReader>> SpansRangeReader::Open(
    parquet::RandomAccessSource* source, std::shared_ptr<const parquet::FileLayout> layout,
    std::string_view file_name, const parquet::DictionaryPageCache* dictionary_cache) {
  parquet::ReaderOptions options;
  options.file_name = std::string(file_name);
  options.dictionary_cache = dictionary_cache;
  absl::StatusOr<std::unique_ptr<parquet::FileReader>> reader =
      parquet::FileReader::Open(source, std::move(layout), options);
  if (!reader.ok()) return AsDataLoss(reader.status(), file_name);
  return std::unique_ptr<SpansRangeReader>(new SpansRangeReader(*std::move(reader), file_name));
}

SpansRangeReader::SpansRangeReader(std::unique_ptr<parquet::FileReader> reader,
                                   std::string_view file_name)
    : reader_(std::move(reader)), file_name_(file_name) {}

SpansRangeReader::~SpansRangeReader() = default;

uint64_t SpansRangeReader::file_rows() const {
  return static_cast<uint64_t>(std::max<int64_t>(reader_->num_rows(), 0));
}

namespace {

// Range reads longer than this read the resource and scope content
// columns apart (SpansRangeReader::ReadRange). Above parquet::FileReader's
// prefetch limit (4096 rows) a read is not coalesced into one I/O anyway.
constexpr uint64_t kOwnersApartRowsMin = 4096;

// The number of leading rows that name every resource and scope the rows
// name: each is named first within them.
size_t RowsNamingEveryOwner(const ColumnVector& resource_index, const ColumnVector& scope_index) {
  absl::flat_hash_set<int32_t> resources;
  absl::flat_hash_set<int32_t> scopes;
  size_t rows = 0;
  // Neighbouring rows often share their resource and scope; comparing with
  // the previous row skips those set lookups.
  std::optional<int32_t> previous_resource;
  std::optional<int32_t> previous_scope;
  for (size_t r = 0; r < resource_index.size(); ++r) {
    const int32_t resource = resource_index.int32s[r];
    if (resource != previous_resource && resources.insert(resource).second) rows = r + 1;
    previous_resource = resource;
    if (scope_index.is_null(r)) continue;
    const int32_t scope = scope_index.int32s[r];
    if (scope != previous_scope && scopes.insert(scope).second) rows = r + 1;
    previous_scope = scope;
  }
  return rows;
}

}  // namespace

absl::Status SpansRangeReader::ReadRange(uint64_t row_begin, uint64_t row_end, bool placeholders,
                                         otlp::TraceBatch* batch, FileOwnerIndexes* owners) {
  if (row_begin >= row_end || row_end > file_rows()) {
    return absl::DataLossError(fmt::format("{}: rows [{}, {}) asked for, the file has {} rows",
                                           file_name_, row_begin, row_end, file_rows()));
  }
  // Every column but the promoted ones, which AppendSpanRows does not read:
  // they stay empty (unless every page is to be decoded); without details,
  // also but the attribute, event and link columns.
  const auto is_detail = [](int k) {
    return (k >= kSpansAttributes && k < kSpansDroppedAttributes) ||
           (k >= kSpansEventTime && k < kSpansDroppedEvents) ||
           (k >= kSpansLinkTraceId && k < kSpansDroppedLinks);
  };
  // The resource and scope columns other than their indexes: every row
  // repeats its resource's and scope's, and only the first row naming one
  // is read back (RebuildResourcesAndScopes).
  const auto is_owner_content = [](int k) {
    return k >= kSpansResourceScope && k < kSpansResourceScope + kResourceScopeColumns &&
           k != kSpansResourceScope + kResourceIndexOffset &&
           k != kSpansResourceScope + kScopeIndexOffset;
  };
  const bool details = every_column_ || !skip_details_;
  // A long range of span rows reads the owner content columns in a second
  // read, only as far as the last row that first names a resource or scope:
  // a big trace's spans name a few resources many times each. Short ranges
  // read them with the rest, in one prefetched read.
  const bool owners_apart =
      !every_column_ && !placeholders && row_end - row_begin > kOwnersApartRowsMin;
  std::vector<int> wanted;
  std::vector<int> owner_content;
  for (int k = 0; k < (every_column_ ? kSpansColumnCount : kSpansPromoted); ++k) {
    if (!details && is_detail(k)) continue;
    if (owners_apart && is_owner_content(k)) {
      owner_content.push_back(k);
    } else {
      wanted.push_back(k);
    }
  }
  absl::StatusOr<std::vector<ColumnVector>> read =
      reader_->Read(wanted, static_cast<int64_t>(row_begin), static_cast<int64_t>(row_end));
  if (!read.ok()) return AsDataLoss(read.status(), file_name_);
  std::vector<ColumnVector> c(kSpansColumnCount);
  std::vector<bool> filled(kSpansColumnCount);
  for (size_t i = 0; i < wanted.size(); ++i) {
    c[wanted[i]] = std::move((*read)[i]);
    filled[wanted[i]] = true;
  }
  if (!owner_content.empty()) {
    const size_t rows = RowsNamingEveryOwner(c[kSpansResourceScope + kResourceIndexOffset],
                                             c[kSpansResourceScope + kScopeIndexOffset]);
    read = reader_->Read(owner_content, static_cast<int64_t>(row_begin),
                         static_cast<int64_t>(row_begin + std::max<size_t>(rows, 1)));
    if (!read.ok()) return AsDataLoss(read.status(), file_name_);
    for (size_t i = 0; i < owner_content.size(); ++i) {
      c[owner_content[i]] = std::move((*read)[i]);
      filled[owner_content[i]] = true;
    }
  }
  for (int k = 0; k < kSpansColumnCount; ++k) {
    if (filled[k]) continue;
    const parquet::ColumnSpec& spec = SpansTableColumns()[k];
    c[k] = spec.list ? ColumnVector::List(spec.type) : ColumnVector(spec.type);
  }
  return AppendSpanRows(c, file_name_, row_begin,
                        placeholders ? RowRange::kPlaceholders : RowRange::kSpans, batch, owners,
                        details);
}

absl::Status SpansRangeReader::ReadSpans(uint64_t row_begin, uint64_t row_end,
                                         otlp::TraceBatch* batch, FileOwnerIndexes* owners) {
  return ReadRange(row_begin, row_end, /*placeholders=*/false, batch, owners);
}

absl::Status SpansRangeReader::ReadPlaceholders(uint64_t row_end, otlp::TraceBatch* batch,
                                                FileOwnerIndexes* owners) {
  return ReadRange(0, row_end, /*placeholders=*/true, batch, owners);
}

absl::Status ReadSpansRows(parquet::RandomAccessSource* source, std::string_view batch_id,
                           std::string_view file_name, uint64_t row_begin, uint64_t row_end,
                           otlp::TraceBatch* batch) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<SpansRangeReader> reader,
                          SpansRangeReader::Open(source, batch_id, file_name));
  return reader->ReadSpans(row_begin, row_end, batch);
}

absl::StatusOr<otlp::TraceBatch> ReadSpansRows(parquet::RandomAccessSource* source,
                                               std::string_view batch_id,
                                               std::string_view file_name, uint64_t row_begin,
                                               uint64_t row_end) {
  otlp::TraceBatch batch;
  STRATA_RETURN_IF_ERROR(ReadSpansRows(source, batch_id, file_name, row_begin, row_end, &batch));
  return batch;
}

}  // namespace strata::storage
