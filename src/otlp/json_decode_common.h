#pragma once

// Shared machinery of the OTLP/JSON decoders (json_decode_traces.cc,
// json_decode_logs.cc, json_decode_metrics.cc); not part of strata's API.
//
// JsonReader walks one simdjson On-Demand document and appends rows to one
// batch. It knows the proto3 JSON mapping as OTLP uses it: lowerCamelCase
// and snake_case field names, null meaning "absent", 64-bit integers as
// numbers or decimal strings, doubles as numbers or "NaN"/"Infinity"
// strings, enums as integers or value names, hex trace and span ids, base64
// bytes. It decodes the messages every signal shares (AnyValue, KeyValue,
// Resource with its entity refs, InstrumentationScope) and gives each
// signal's decoder iteration helpers that check nesting depth, reject
// duplicate fields and skip unknown ones.
//
// Errors are InvalidArgument, "otlp/json: <path>: <what> (at byte N)",
// where <path> names the field ("resourceSpans[0].scopeSpans[1].spans[3]
// .traceId") and N is the offset of the field's key (or of the array element)
// in the input. The path is a chain of PathFrames on the C++ stack and is
// only turned into a string when an error is reported.
//
// Invariants the decoders keep (batch.h):
//  1. A row's index is known before its children are decoded (it is the
//     table's size when decoding of the row starts, because rows of one table
//     never nest), and the row itself is appended after its children.
//  2. Children of one parent are appended in one uninterrupted run. AnyValue
//     arrays and kvlists, whose children share tables with their
//     grandchildren, collect their children in a per-depth scratch list and
//     append them after all grandchildren are in place.
//
// Performance: simdjson's On-Demand front end is compiled for the
// instruction set the build targets; with the default x86-64 flags that is
// its portable "fallback" kernel, not AVX2. Selecting a kernel at run time
// would mean templating this code on simdjson's implementation namespace.
//
// Thread-safety: single owner; one JsonReader per decode call.

#include <simdjson.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "otlp/batch.h"
#include "otlp/decode.h"
#include "otlp/row_checks.h"

namespace strata::otlp::json_internal {

namespace od = simdjson::ondemand;

// One step of the path from the document root to a JSON value. Frames live
// on the C++ stack of the recursive descent; each names its parent.
struct PathFrame {
  const PathFrame* parent = nullptr;
  std::string_view name;     // canonical (lowerCamelCase) field name, or empty
  int64_t index = -1;        // for an array element (name empty): its position, else -1
  const char* at = nullptr;  // start of the field's key or of the array element
  uint32_t depth = 1;        // JSON nesting depth of this value if it is an object or array
};

// The field names of one OTLP message, both spellings, mapped to small ids
// (0..kMaxFields-1) that the message's decoder switches on. Lookup compares
// only keys of the same length.
class FieldTable {
 public:
  static constexpr int kMaxFields = 64;
  struct Entry {
    int id;
    std::string_view json_name;   // lowerCamelCase
    std::string_view proto_name;  // snake_case, as in the .proto file
  };

  FieldTable(std::initializer_list<Entry> entries);

  // Returns the id of the field spelled `key`, or -1 when the message has no
  // such field.
  int Find(std::string_view key) const;
  std::string_view json_name(int id) const { return json_names_[id]; }

 private:
  static constexpr size_t kMaxKeyLength = 31;
  struct Slot {
    std::string_view key;
    int id;
  };
  std::array<std::vector<Slot>, kMaxKeyLength + 1> by_length_;
  std::array<std::string_view, kMaxFields> json_names_;
};

// The field tables of a signal's three outer levels. Each must use id 0 for
// the child message (resource / scope), 1 for the repeated child list and 2
// for schemaUrl; `root` has id 0 for the list of resource envelopes.
struct SignalTables {
  const FieldTable* root;
  const FieldTable* resource_envelope;  // Resource{Spans,Logs,Metrics}
  const FieldTable* scope_envelope;     // Scope{Spans,Logs,Metrics}
};

// Decodes one record (span, log record, metric) of scope row `scope`.
using ItemFn = absl::FunctionRef<absl::Status(od::value&, const PathFrame&, uint32_t scope)>;

// Enum value names indexed by value, e.g. {"SPAN_KIND_UNSPECIFIED", ...}.
using EnumNames = std::span<const std::string_view>;

class JsonReader {
 public:
  // `input` is the padded copy simdjson parses; `poison`, when not null,
  // points at a byte of it that was invalid UTF-8 in the caller's input:
  // reading a string or key that covers it fails with "invalid UTF-8".
  JsonReader(std::string_view input, od::document* doc, BatchBase* batch,
             const DecodeLimits& limits, const char* poison);

  // ---- Errors (all InvalidArgument).
  absl::Status Error(const PathFrame& f, std::string_view what) const;
  absl::Status ErrorAt(const PathFrame& f, const char* at, std::string_view what) const;
  // A simdjson error while reading the value of `f`.
  absl::Status SyntaxError(const PathFrame& f, simdjson::error_code code) const;
  // Reports INCORRECT_TYPE as "expected <expected>", anything else as syntax.
  absl::Status TypeError(const PathFrame& f, simdjson::error_code code,
                         std::string_view expected) const;
  // "<name>: required field missing", `name` a field of the object at `f`.
  absl::Status MissingField(const PathFrame& f, std::string_view name) const;

  // ---- Structure.
  // Calls fn(id, value, frame) for every known, non-null field of the object
  // `v`; skips unknown fields; rejects duplicates and excess depth.
  template <typename Fn>
  absl::Status ForEachField(od::value& v, const PathFrame& f, const FieldTable& fields, Fn&& fn);
  // Calls fn(element, frame) for every element of the array `v`.
  template <typename Fn>
  absl::Status ForEachElement(od::value& v, const PathFrame& f, Fn&& fn);
  // Reads and discards any JSON value, checking its syntax and depth.
  absl::Status Skip(od::value& v, const PathFrame& f);

  // Decodes {"resourceX": [{"resource", "scopeX": [{"scope", "<items>": [...],
  // "schemaUrl"}], "schemaUrl"}]}, calling `item` for every record.
  absl::Status DecodeSignal(od::value& root, const PathFrame& f, const SignalTables& tables,
                            ItemFn item);

  // ---- Scalars. Each accepts what the proto3 JSON mapping allows for the
  // proto type; a JSON null never reaches them through ForEachField.
  // A string as a view into simdjson's buffer, valid until the decode ends.
  absl::Status ReadString(od::value& v, const PathFrame& f, std::string_view* out);
  // A string copied into the batch arena.
  absl::Status String(od::value& v, const PathFrame& f, std::string_view* out);
  absl::Status Bool(od::value& v, const PathFrame& f, bool* out);
  absl::Status Uint64(od::value& v, const PathFrame& f, uint64_t* out);
  absl::Status Int64(od::value& v, const PathFrame& f, int64_t* out);
  absl::Status Uint32(od::value& v, const PathFrame& f, uint32_t* out);
  absl::Status Int32(od::value& v, const PathFrame& f, int32_t* out);
  absl::Status Double(od::value& v, const PathFrame& f, double* out);
  // An enum: an int32 (number or string) or one of `names`.
  absl::Status Enum(od::value& v, const PathFrame& f, EnumNames names, int32_t* out);
  // Hex ids; the empty string means absent (*present = 0, else 1).
  absl::Status TraceIdHex(od::value& v, const PathFrame& f, TraceId* out, uint8_t* present);
  absl::Status SpanIdHex(od::value& v, const PathFrame& f, SpanId* out, uint8_t* present);
  // A hex id whose length decides whether its row is kept (row_checks.h):
  // any even number of hex digits is read and *length set to the bytes they
  // make; *out is filled only when that is out.size(), else zeroed. Odd
  // length or a non-hex digit is an error (a span's ids).
  absl::Status HexIdAnyLength(od::value& v, const PathFrame& f, std::span<uint8_t> out,
                              internal::IdLength* length);
  // As HexIdAnyLength, but a string that is not an even number of hex
  // digits sets length->not_hex (and zeroes *out) instead of failing: a log
  // record's ids, which CheckLogIds clears when invalid. A value that is
  // not a string is still an error.
  absl::Status HexIdOrInvalid(od::value& v, const PathFrame& f, std::span<uint8_t> out,
                              internal::IdLength* length);
  // base64 (standard or URL-safe, padding optional), decoded into the arena.
  absl::Status Base64Bytes(od::value& v, const PathFrame& f, std::string_view* out);
  // Arrays of scalars, appended to `table`; *range covers the new rows.
  absl::Status Uint64List(od::value& v, const PathFrame& f, std::vector<uint64_t>* table,
                          Range* range);
  absl::Status DoubleList(od::value& v, const PathFrame& f, std::vector<double>* table,
                          Range* range);

  // ---- Messages every signal shares.
  // A repeated KeyValue, appended to `table` (never nested_attributes).
  absl::Status Attributes(od::value& v, const PathFrame& f, AttributeColumns* table, Range* range);
  // An AnyValue at nesting depth `value_depth` (0 for an attribute value or
  // a log body); its array or kvlist children go to the nested tables.
  absl::Status AnyValue(od::value& v, const PathFrame& f, uint32_t value_depth, ValueRow* out);
  absl::Status Resource(od::value& v, const PathFrame& f, ResourceRow* row);
  absl::Status Scope(od::value& v, const PathFrame& f, ScopeRow* row);

  // An empty range at the end of `table`, for a child list not (yet) seen.
  template <typename Table>
  static Range EmptyRangeAtEnd(const Table& table) {
    return Range{static_cast<uint32_t>(table.size()), 0};
  }
  // The range from row `begin` to the end of `table`.
  template <typename Table>
  static Range RangeToEnd(const Table& table, size_t begin) {
    return Range{static_cast<uint32_t>(begin), static_cast<uint32_t>(table.size() - begin)};
  }

 private:
  absl::Status DepthError(const PathFrame& f) const;
  absl::Status CheckKeyPoison(const PathFrame& f, const char* key_at) const;
  // Reads an integer (JSON number or decimal string) into sign and
  // magnitude, and checks it lies in [-max_negative, max_positive].
  absl::Status Integer(od::value& v, const PathFrame& f, uint64_t max_negative,
                       uint64_t max_positive, bool* negative, uint64_t* magnitude);
  absl::Status HexId(od::value& v, const PathFrame& f, std::span<uint8_t> out, uint8_t* present);
  absl::Status KeyValue(od::value& v, const PathFrame& f, uint32_t value_depth,
                        std::string_view* key, ValueRow* value);
  absl::Status ArrayValue(od::value& v, const PathFrame& f, uint32_t depth, uint64_t* bits);
  absl::Status KvListValue(od::value& v, const PathFrame& f, uint32_t depth, uint64_t* bits);
  absl::Status EntityRef(od::value& v, const PathFrame& f);
  absl::Status ResourceEnvelope(od::value& v, const PathFrame& f, const SignalTables& tables,
                                ItemFn item);
  absl::Status ScopeEnvelope(od::value& v, const PathFrame& f, uint32_t resource,
                             const SignalTables& tables, ItemFn item);
  std::vector<ValueRow>& ValueScratch(uint32_t depth);
  std::vector<AttributeRow>& KeyValueScratch(uint32_t depth);

  // Constant after construction.
  std::string_view input_;
  od::document* doc_;
  BatchBase* batch_;
  DecodeLimits limits_;
  const char* poison_;

  // Children of the AnyValue array / kvlist being decoded at each depth.
  // deque: growing it for a deeper level keeps references to shallower
  // levels valid.
  std::deque<std::vector<ValueRow>> value_scratch_;
  std::deque<std::vector<AttributeRow>> key_value_scratch_;
};

// Parses `json` and hands the root value to `root`. Copies the input into a
// padded buffer first (simdjson reads past the end). On success, checks that
// nothing but whitespace follows the document. Sets *invalid_utf8 when
// simdjson rejected the input as invalid UTF-8 before any decoding.
using RootFn = absl::FunctionRef<absl::Status(JsonReader&, od::value&, const PathFrame&)>;
absl::Status RunDocument(std::string_view json, const DecodeLimits& limits, BatchBase* batch,
                         size_t poison_offset, RootFn root, bool* invalid_utf8);

// simdjson validates UTF-8 for the whole input before decoding starts, so
// its error names no field. This reruns the decode on a copy with invalid
// bytes replaced, failing when it reads the string or key that held the
// first one, so the error names the field path.
absl::Status LocateInvalidUtf8(std::string_view json, const DecodeLimits& limits,
                               BatchBase* scratch, RootFn root);

// The decode entry points share this: decode into `batch`, and on invalid
// UTF-8 decode again into a throwaway batch to name the offending field.
template <typename Batch, typename Decode>
absl::Status DecodeDocument(std::string_view json, const DecodeLimits& limits, Batch* batch,
                            Decode decode) {
  bool invalid_utf8 = false;
  absl::Status status = RunDocument(
      json, limits, batch, std::string_view::npos,
      [&](JsonReader& r, od::value& v, const PathFrame& f) { return decode(r, v, f, batch); },
      &invalid_utf8);
  if (!invalid_utf8) return status;
  Batch scratch;
  return LocateInvalidUtf8(
      json, limits, &scratch,
      [&](JsonReader& r, od::value& v, const PathFrame& f) { return decode(r, v, f, &scratch); });
}

// ------------------------------------------------------------ templates

template <typename Fn>
absl::Status JsonReader::ForEachField(od::value& v, const PathFrame& f, const FieldTable& fields,
                                      Fn&& fn) {
  if (f.depth > limits_.max_json_depth) return DepthError(f);
  od::object object;
  if (auto code = v.get_object().get(object); code != simdjson::SUCCESS) {
    return TypeError(f, code, "an object");
  }
  uint64_t seen = 0;
  for (auto field_result : object) {
    od::field field;
    if (auto code = std::move(field_result).get(field); code != simdjson::SUCCESS) {
      return SyntaxError(f, code);
    }
    const char* key_at = field.key().raw() - 1;  // the opening quote
    std::string_view key;
    if (auto code = field.unescaped_key().get(key); code != simdjson::SUCCESS) {
      return SyntaxError(PathFrame{&f, {}, -1, key_at, f.depth + 1}, code);
    }
    if (poison_ != nullptr) {
      if (absl::Status s = CheckKeyPoison(f, key_at); !s.ok()) return s;
    }
    const int id = fields.Find(key);
    PathFrame child{&f, id >= 0 ? fields.json_name(id) : key, -1, key_at, f.depth + 1};
    od::value& value = field.value();
    if (id < 0) {
      if (absl::Status s = Skip(value, child); !s.ok()) return s;
      continue;
    }
    if (seen & (uint64_t{1} << id)) return Error(child, "duplicate field");
    seen |= uint64_t{1} << id;
    od::json_type type;
    if (auto code = value.type().get(type); code != simdjson::SUCCESS) {
      return SyntaxError(child, code);
    }
    if (type == od::json_type::null) {
      // proto3 JSON: null is the field's default (absent message, empty list).
      if (absl::Status s = Skip(value, child); !s.ok()) return s;
      continue;
    }
    if (absl::Status s = fn(id, value, child); !s.ok()) return s;
  }
  return absl::OkStatus();
}

template <typename Fn>
absl::Status JsonReader::ForEachElement(od::value& v, const PathFrame& f, Fn&& fn) {
  if (f.depth > limits_.max_json_depth) return DepthError(f);
  od::array array;
  if (auto code = v.get_array().get(array); code != simdjson::SUCCESS) {
    return TypeError(f, code, "an array");
  }
  int64_t index = 0;
  for (auto element_result : array) {
    od::value element;
    // get() is &&-qualified, hence the move of a trivially copyable result.
    // NOLINTNEXTLINE(performance-move-const-arg)
    if (auto code = std::move(element_result).get(element); code != simdjson::SUCCESS) {
      return SyntaxError(f, code);
    }
    PathFrame child{&f, {}, index, element.raw_json_token().data(), f.depth + 1};
    if (absl::Status s = fn(element, child); !s.ok()) return s;
    ++index;
  }
  return absl::OkStatus();
}

}  // namespace strata::otlp::json_internal
