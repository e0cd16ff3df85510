#include "parquet/metadata.h"

#include <utility>

#include "fmt/format.h"
#include "common/status_macros.h"
#include "parquet/thrift_compact.h"

namespace strata::parquet {
namespace {

using CT = CompactType;

// ---- Serialization ----

void WriteStatistics(const Statistics& s, CompactWriter& w) {
  if (s.max) w.FieldBinary(1, *s.max);
  if (s.min) w.FieldBinary(2, *s.min);
  if (s.null_count) w.FieldI64(3, *s.null_count);
  if (s.distinct_count) w.FieldI64(4, *s.distinct_count);
  if (s.max_value) w.FieldBinary(5, *s.max_value);
  if (s.min_value) w.FieldBinary(6, *s.min_value);
  if (s.is_max_value_exact) w.FieldBool(7, *s.is_max_value_exact);
  if (s.is_min_value_exact) w.FieldBool(8, *s.is_min_value_exact);
}

void WriteKeyValues(int16_t id, const std::vector<KeyValue>& kvs, CompactWriter& w) {
  if (kvs.empty()) return;
  w.FieldListBegin(id, CT::kStruct, static_cast<uint32_t>(kvs.size()));
  for (const KeyValue& kv : kvs) {
    w.BeginStruct();
    w.FieldBinary(1, kv.key);
    if (kv.value) w.FieldBinary(2, *kv.value);
    w.EndStruct();
  }
}

void WriteLogicalType(const LogicalType& t, CompactWriter& w) {
  switch (t.kind) {
    case LogicalType::Kind::kNone:
    case LogicalType::Kind::kOther:
      return;
    case LogicalType::Kind::kString:
      w.FieldStructBegin(10);
      w.FieldStructBegin(1);
      w.EndStruct();
      w.EndStruct();
      return;
    case LogicalType::Kind::kTimestamp:
      w.FieldStructBegin(10);
      w.FieldStructBegin(8);
      w.FieldBool(1, t.is_adjusted_to_utc);
      w.FieldStructBegin(2);
      w.FieldStructBegin(static_cast<int16_t>(t.unit));
      w.EndStruct();
      w.EndStruct();
      w.EndStruct();
      w.EndStruct();
      return;
    case LogicalType::Kind::kList:
      w.FieldStructBegin(10);
      w.FieldStructBegin(3);
      w.EndStruct();
      w.EndStruct();
      return;
    case LogicalType::Kind::kInteger:
      w.FieldStructBegin(10);
      w.FieldStructBegin(10);
      w.FieldI8(1, t.bit_width);
      w.FieldBool(2, t.is_signed);
      w.EndStruct();
      w.EndStruct();
      return;
  }
}

void WriteSchemaElement(const SchemaElement& e, CompactWriter& w) {
  w.BeginStruct();
  if (e.type) w.FieldI32(1, static_cast<int32_t>(*e.type));
  if (e.type_length) w.FieldI32(2, *e.type_length);
  if (e.repetition_type) w.FieldI32(3, static_cast<int32_t>(*e.repetition_type));
  w.FieldBinary(4, e.name);
  if (e.num_children) w.FieldI32(5, *e.num_children);
  if (e.converted_type) w.FieldI32(6, static_cast<int32_t>(*e.converted_type));
  if (e.scale) w.FieldI32(7, *e.scale);
  if (e.precision) w.FieldI32(8, *e.precision);
  if (e.field_id) w.FieldI32(9, *e.field_id);
  WriteLogicalType(e.logical_type, w);
  w.EndStruct();
}

void WriteColumnMetaData(const ColumnMetaData& m, CompactWriter& w) {
  w.FieldI32(1, static_cast<int32_t>(m.type));
  w.FieldListBegin(2, CT::kI32, static_cast<uint32_t>(m.encodings.size()));
  for (Encoding e : m.encodings) w.ElementI32(static_cast<int32_t>(e));
  w.FieldListBegin(3, CT::kBinary, static_cast<uint32_t>(m.path_in_schema.size()));
  for (const std::string& p : m.path_in_schema) w.ElementBinary(p);
  w.FieldI32(4, static_cast<int32_t>(m.codec));
  w.FieldI64(5, m.num_values);
  w.FieldI64(6, m.total_uncompressed_size);
  w.FieldI64(7, m.total_compressed_size);
  WriteKeyValues(8, m.key_value_metadata, w);
  w.FieldI64(9, m.data_page_offset);
  if (m.index_page_offset) w.FieldI64(10, *m.index_page_offset);
  if (m.dictionary_page_offset) w.FieldI64(11, *m.dictionary_page_offset);
  if (m.statistics) {
    w.FieldStructBegin(12);
    WriteStatistics(*m.statistics, w);
    w.EndStruct();
  }
}

void WriteRowGroup(const RowGroup& g, CompactWriter& w) {
  w.BeginStruct();
  w.FieldListBegin(1, CT::kStruct, static_cast<uint32_t>(g.columns.size()));
  for (const ColumnChunk& c : g.columns) {
    w.BeginStruct();
    if (c.file_path) w.FieldBinary(1, *c.file_path);
    w.FieldI64(2, c.file_offset);
    if (c.meta_data) {
      w.FieldStructBegin(3);
      WriteColumnMetaData(*c.meta_data, w);
      w.EndStruct();
    }
    if (c.offset_index_offset) w.FieldI64(4, *c.offset_index_offset);
    if (c.offset_index_length) w.FieldI32(5, *c.offset_index_length);
    w.EndStruct();
  }
  w.FieldI64(2, g.total_byte_size);
  w.FieldI64(3, g.num_rows);
  if (!g.sorting_columns.empty()) {
    w.FieldListBegin(4, CT::kStruct, static_cast<uint32_t>(g.sorting_columns.size()));
    for (const SortingColumn& s : g.sorting_columns) {
      w.BeginStruct();
      w.FieldI32(1, s.column_idx);
      w.FieldBool(2, s.descending);
      w.FieldBool(3, s.nulls_first);
      w.EndStruct();
    }
  }
  if (g.file_offset) w.FieldI64(5, *g.file_offset);
  if (g.total_compressed_size) w.FieldI64(6, *g.total_compressed_size);
  if (g.ordinal) w.FieldI16(7, *g.ordinal);
  w.EndStruct();
}

// ---- Parsing ----

// Reads a struct, calling on_field(header) for each field; on_field returns
// true when it consumed the value and false to have it skipped.
template <typename OnField>
absl::Status ParseStruct(CompactReader& r, OnField&& on_field) {
  STRATA_RETURN_IF_ERROR(r.BeginStruct());
  while (true) {
    STRATA_ASSIGN_OR_RETURN(CompactReader::FieldHeader h, r.ReadFieldHeader());
    if (h.type == CT::kStop) break;
    STRATA_ASSIGN_OR_RETURN(bool consumed, on_field(h));
    if (!consumed) STRATA_RETURN_IF_ERROR(r.Skip(h.type));
  }
  return r.EndStruct();
}

// Field readers: each checks the wire type and stores the value.
absl::StatusOr<bool> Expect(CompactReader& r, CompactReader::FieldHeader h, CT type) {
  if (!CompactTypeMatches(h.type, type)) {
    return r.Error(fmt::format("field {} has wire type {}, expected {}", h.id,
                               static_cast<int>(h.type), static_cast<int>(type)));
  }
  return true;
}

template <typename T>
absl::StatusOr<bool> GetI32(CompactReader& r, CompactReader::FieldHeader h, T* out) {
  // Thrift enums and i32 share a wire type; i16/i8 fields written by other
  // writers as i32 are accepted too.
  if (h.type == CT::kByte) {
    STRATA_ASSIGN_OR_RETURN(int8_t v, r.ReadI8());
    *out = static_cast<T>(v);
    return true;
  }
  if (h.type != CT::kI32 && h.type != CT::kI16) return Expect(r, h, CT::kI32);
  STRATA_ASSIGN_OR_RETURN(int32_t v, r.ReadI32());
  *out = static_cast<T>(v);
  return true;
}

template <typename T>
absl::StatusOr<bool> GetI32(CompactReader& r, CompactReader::FieldHeader h, std::optional<T>* out) {
  T v{};
  STRATA_RETURN_IF_ERROR(GetI32(r, h, &v).status());
  *out = v;
  return true;
}

absl::StatusOr<bool> GetI64(CompactReader& r, CompactReader::FieldHeader h, int64_t* out) {
  if (h.type != CT::kI64 && h.type != CT::kI32) return Expect(r, h, CT::kI64);
  STRATA_ASSIGN_OR_RETURN(*out, r.ReadI64());
  return true;
}

absl::StatusOr<bool> GetI64(CompactReader& r, CompactReader::FieldHeader h,
                            std::optional<int64_t>* out) {
  int64_t v = 0;
  STRATA_RETURN_IF_ERROR(GetI64(r, h, &v).status());
  *out = v;
  return true;
}

absl::StatusOr<bool> GetBool(CompactReader& r, CompactReader::FieldHeader h, bool* out) {
  STRATA_RETURN_IF_ERROR(Expect(r, h, CT::kBoolTrue).status());
  STRATA_ASSIGN_OR_RETURN(*out, r.ReadBool(h.type));
  return true;
}

absl::StatusOr<bool> GetBool(CompactReader& r, CompactReader::FieldHeader h,
                             std::optional<bool>* out) {
  bool v = false;
  STRATA_RETURN_IF_ERROR(GetBool(r, h, &v).status());
  *out = v;
  return true;
}

absl::StatusOr<bool> GetString(CompactReader& r, CompactReader::FieldHeader h, std::string* out) {
  STRATA_RETURN_IF_ERROR(Expect(r, h, CT::kBinary).status());
  STRATA_ASSIGN_OR_RETURN(std::string_view v, r.ReadBinary());
  out->assign(v.data(), v.size());
  return true;
}

absl::StatusOr<bool> GetString(CompactReader& r, CompactReader::FieldHeader h,
                               std::optional<std::string>* out) {
  std::string v;
  STRATA_RETURN_IF_ERROR(GetString(r, h, &v).status());
  *out = std::move(v);
  return true;
}

// Reads a list field whose elements are parsed by read_element(r).
template <typename ReadElement>
absl::StatusOr<bool> GetList(CompactReader& r, CompactReader::FieldHeader h, CT element_type,
                             ReadElement&& read_element) {
  STRATA_RETURN_IF_ERROR(Expect(r, h, CT::kList).status());
  STRATA_ASSIGN_OR_RETURN(CompactReader::ListHeader list, r.ReadListHeader());
  if (list.element_type != element_type &&
      !(element_type == CT::kI32 && list.element_type == CT::kI16)) {
    return r.Error(fmt::format("list field {} has element type {}, expected {}", h.id,
                               static_cast<int>(list.element_type),
                               static_cast<int>(element_type)));
  }
  for (uint32_t i = 0; i < list.size; ++i) STRATA_RETURN_IF_ERROR(read_element());
  return true;
}

absl::Status RequireFields(CompactReader& r, const char* what, uint32_t seen, uint32_t required) {
  if ((seen & required) == required) return absl::OkStatus();
  for (int id = 0; id < 32; ++id) {
    if ((required & (1u << id)) && !(seen & (1u << id))) {
      return r.Error(fmt::format("{} lacks required field {}", what, id));
    }
  }
  return absl::OkStatus();
}

uint32_t Bit(int16_t id) { return id >= 0 && id < 32 ? 1u << id : 0; }

absl::Status ParseStatistics(CompactReader& r, Statistics* s) {
  return ParseStruct(r, [&](CompactReader::FieldHeader h) -> absl::StatusOr<bool> {
    switch (h.id) {
      case 1:
        return GetString(r, h, &s->max);
      case 2:
        return GetString(r, h, &s->min);
      case 3:
        return GetI64(r, h, &s->null_count);
      case 4:
        return GetI64(r, h, &s->distinct_count);
      case 5:
        return GetString(r, h, &s->max_value);
      case 6:
        return GetString(r, h, &s->min_value);
      case 7:
        return GetBool(r, h, &s->is_max_value_exact);
      case 8:
        return GetBool(r, h, &s->is_min_value_exact);
      default:
        return false;
    }
  });
}

absl::Status ParseKeyValue(CompactReader& r, KeyValue* kv) {
  uint32_t seen = 0;
  STRATA_RETURN_IF_ERROR(
      ParseStruct(r, [&](CompactReader::FieldHeader h) -> absl::StatusOr<bool> {
        seen |= Bit(h.id);
        switch (h.id) {
          case 1:
            return GetString(r, h, &kv->key);
          case 2:
            return GetString(r, h, &kv->value);
          default:
            return false;
        }
      }));
  return RequireFields(r, "KeyValue", seen, Bit(1));
}

// An empty struct (the members of LogicalType and TimeUnit carry no fields).
absl::Status SkipStructValue(CompactReader& r, CompactReader::FieldHeader h) {
  STRATA_RETURN_IF_ERROR(Expect(r, h, CT::kStruct).status());
  return r.Skip(CT::kStruct);
}

absl::Status ParseTimestampType(CompactReader& r, LogicalType* t) {
  uint32_t seen = 0;
  STRATA_RETURN_IF_ERROR(
      ParseStruct(r, [&](CompactReader::FieldHeader h) -> absl::StatusOr<bool> {
        seen |= Bit(h.id);
        switch (h.id) {
          case 1:
            return GetBool(r, h, &t->is_adjusted_to_utc);
          case 2: {
            STRATA_RETURN_IF_ERROR(Expect(r, h, CT::kStruct).status());
            int unions = 0;
            STRATA_RETURN_IF_ERROR(
                ParseStruct(r, [&](CompactReader::FieldHeader u) -> absl::StatusOr<bool> {
                  if (u.id < 1 || u.id > 3) return false;
                  ++unions;
                  t->unit = static_cast<TimeUnit>(u.id);
                  STRATA_RETURN_IF_ERROR(SkipStructValue(r, u));
                  return true;
                }));
            if (unions != 1) return r.Error("TimeUnit must have exactly one member");
            return true;
          }
          default:
            return false;
        }
      }));
  return RequireFields(r, "TimestampType", seen, Bit(1) | Bit(2));
}

absl::Status ParseIntType(CompactReader& r, LogicalType* t) {
  uint32_t seen = 0;
  STRATA_RETURN_IF_ERROR(
      ParseStruct(r, [&](CompactReader::FieldHeader h) -> absl::StatusOr<bool> {
        seen |= Bit(h.id);
        switch (h.id) {
          case 1:
            return GetI32(r, h, &t->bit_width);
          case 2:
            return GetBool(r, h, &t->is_signed);
          default:
            return false;
        }
      }));
  return RequireFields(r, "IntType", seen, Bit(1) | Bit(2));
}

absl::Status ParseLogicalType(CompactReader& r, LogicalType* t) {
  int members = 0;
  STRATA_RETURN_IF_ERROR(
      ParseStruct(r, [&](CompactReader::FieldHeader h) -> absl::StatusOr<bool> {
        ++members;
        STRATA_RETURN_IF_ERROR(Expect(r, h, CT::kStruct).status());
        switch (h.id) {
          case 1:
            t->kind = LogicalType::Kind::kString;
            STRATA_RETURN_IF_ERROR(r.Skip(CT::kStruct));
            return true;
          case 3:
            t->kind = LogicalType::Kind::kList;
            STRATA_RETURN_IF_ERROR(r.Skip(CT::kStruct));
            return true;
          case 8:
            t->kind = LogicalType::Kind::kTimestamp;
            STRATA_RETURN_IF_ERROR(ParseTimestampType(r, t));
            return true;
          case 10:
            t->kind = LogicalType::Kind::kInteger;
            STRATA_RETURN_IF_ERROR(ParseIntType(r, t));
            return true;
          default:
            t->kind = LogicalType::Kind::kOther;
            t->other_id = h.id;
            return false;
        }
      }));
  if (members > 1) return r.Error("LogicalType union has more than one member");
  return absl::OkStatus();
}

absl::Status ParseSchemaElement(CompactReader& r, SchemaElement* e) {
  uint32_t seen = 0;
  STRATA_RETURN_IF_ERROR(
      ParseStruct(r, [&](CompactReader::FieldHeader h) -> absl::StatusOr<bool> {
        seen |= Bit(h.id);
        switch (h.id) {
          case 1:
            return GetI32(r, h, &e->type);
          case 2:
            return GetI32(r, h, &e->type_length);
          case 3:
            return GetI32(r, h, &e->repetition_type);
          case 4:
            return GetString(r, h, &e->name);
          case 5:
            return GetI32(r, h, &e->num_children);
          case 6:
            return GetI32(r, h, &e->converted_type);
          case 7:
            return GetI32(r, h, &e->scale);
          case 8:
            return GetI32(r, h, &e->precision);
          case 9:
            return GetI32(r, h, &e->field_id);
          case 10:
            STRATA_RETURN_IF_ERROR(Expect(r, h, CT::kStruct).status());
            STRATA_RETURN_IF_ERROR(ParseLogicalType(r, &e->logical_type));
            return true;
          default:
            return false;
        }
      }));
  return RequireFields(r, "SchemaElement", seen, Bit(4));
}

absl::Status ParseColumnMetaData(CompactReader& r, ColumnMetaData* m) {
  uint32_t seen = 0;
  STRATA_RETURN_IF_ERROR(
      ParseStruct(r, [&](CompactReader::FieldHeader h) -> absl::StatusOr<bool> {
        seen |= Bit(h.id);
        switch (h.id) {
          case 1:
            return GetI32(r, h, &m->type);
          case 2:
            return GetList(r, h, CT::kI32, [&]() -> absl::Status {
              STRATA_ASSIGN_OR_RETURN(int32_t v, r.ReadI32());
              m->encodings.push_back(static_cast<Encoding>(v));
              return absl::OkStatus();
            });
          case 3:
            return GetList(r, h, CT::kBinary, [&]() -> absl::Status {
              STRATA_ASSIGN_OR_RETURN(std::string_view v, r.ReadBinary());
              m->path_in_schema.emplace_back(v);
              return absl::OkStatus();
            });
          case 4:
            return GetI32(r, h, &m->codec);
          case 5:
            return GetI64(r, h, &m->num_values);
          case 6:
            return GetI64(r, h, &m->total_uncompressed_size);
          case 7:
            return GetI64(r, h, &m->total_compressed_size);
          case 8:
            return GetList(r, h, CT::kStruct, [&]() -> absl::Status {
              return ParseKeyValue(r, &m->key_value_metadata.emplace_back());
            });
          case 9:
            return GetI64(r, h, &m->data_page_offset);
          case 10:
            return GetI64(r, h, &m->index_page_offset);
          case 11:
            return GetI64(r, h, &m->dictionary_page_offset);
          case 12:
            STRATA_RETURN_IF_ERROR(Expect(r, h, CT::kStruct).status());
            STRATA_RETURN_IF_ERROR(ParseStatistics(r, &m->statistics.emplace()));
            return true;
          default:
            return false;
        }
      }));
  return RequireFields(r, "ColumnMetaData", seen,
                       Bit(1) | Bit(2) | Bit(3) | Bit(4) | Bit(5) | Bit(6) | Bit(7) | Bit(9));
}

absl::Status ParseColumnChunk(CompactReader& r, ColumnChunk* c) {
  uint32_t seen = 0;
  STRATA_RETURN_IF_ERROR(
      ParseStruct(r, [&](CompactReader::FieldHeader h) -> absl::StatusOr<bool> {
        seen |= Bit(h.id);
        switch (h.id) {
          case 1:
            return GetString(r, h, &c->file_path);
          case 2:
            return GetI64(r, h, &c->file_offset);
          case 3:
            STRATA_RETURN_IF_ERROR(Expect(r, h, CT::kStruct).status());
            STRATA_RETURN_IF_ERROR(ParseColumnMetaData(r, &c->meta_data.emplace()));
            return true;
          case 4:
            return GetI64(r, h, &c->offset_index_offset);
          case 5:
            return GetI32(r, h, &c->offset_index_length);
          default:
            return false;
        }
      }));
  return RequireFields(r, "ColumnChunk", seen, Bit(2));
}

absl::Status ParseSortingColumn(CompactReader& r, SortingColumn* s) {
  uint32_t seen = 0;
  STRATA_RETURN_IF_ERROR(
      ParseStruct(r, [&](CompactReader::FieldHeader h) -> absl::StatusOr<bool> {
        seen |= Bit(h.id);
        switch (h.id) {
          case 1:
            return GetI32(r, h, &s->column_idx);
          case 2:
            return GetBool(r, h, &s->descending);
          case 3:
            return GetBool(r, h, &s->nulls_first);
          default:
            return false;
        }
      }));
  return RequireFields(r, "SortingColumn", seen, Bit(1) | Bit(2) | Bit(3));
}

absl::Status ParseRowGroup(CompactReader& r, RowGroup* g) {
  uint32_t seen = 0;
  STRATA_RETURN_IF_ERROR(
      ParseStruct(r, [&](CompactReader::FieldHeader h) -> absl::StatusOr<bool> {
        seen |= Bit(h.id);
        switch (h.id) {
          case 1:
            return GetList(r, h, CT::kStruct, [&]() -> absl::Status {
              return ParseColumnChunk(r, &g->columns.emplace_back());
            });
          case 2:
            return GetI64(r, h, &g->total_byte_size);
          case 3:
            return GetI64(r, h, &g->num_rows);
          case 4:
            return GetList(r, h, CT::kStruct, [&]() -> absl::Status {
              return ParseSortingColumn(r, &g->sorting_columns.emplace_back());
            });
          case 5:
            return GetI64(r, h, &g->file_offset);
          case 6:
            return GetI64(r, h, &g->total_compressed_size);
          case 7:
            return GetI32(r, h, &g->ordinal);
          default:
            return false;
        }
      }));
  return RequireFields(r, "RowGroup", seen, Bit(1) | Bit(2) | Bit(3));
}

absl::Status ParseFileMetaDataStruct(CompactReader& r, FileMetaData* m) {
  uint32_t seen = 0;
  STRATA_RETURN_IF_ERROR(
      ParseStruct(r, [&](CompactReader::FieldHeader h) -> absl::StatusOr<bool> {
        seen |= Bit(h.id);
        switch (h.id) {
          case 1:
            return GetI32(r, h, &m->version);
          case 2:
            return GetList(r, h, CT::kStruct, [&]() -> absl::Status {
              return ParseSchemaElement(r, &m->schema.emplace_back());
            });
          case 3:
            return GetI64(r, h, &m->num_rows);
          case 4:
            return GetList(r, h, CT::kStruct, [&]() -> absl::Status {
              return ParseRowGroup(r, &m->row_groups.emplace_back());
            });
          case 5:
            return GetList(r, h, CT::kStruct, [&]() -> absl::Status {
              return ParseKeyValue(r, &m->key_value_metadata.emplace_back());
            });
          case 6:
            return GetString(r, h, &m->created_by);
          case 7:
            return GetList(r, h, CT::kStruct, [&]() -> absl::Status {
              int16_t member = 0;
              STRATA_RETURN_IF_ERROR(
                  ParseStruct(r, [&](CompactReader::FieldHeader u) -> absl::StatusOr<bool> {
                    member = u.id;
                    return false;
                  }));
              m->column_orders.push_back(member);
              return absl::OkStatus();
            });
          default:
            return false;
        }
      }));
  return RequireFields(r, "FileMetaData", seen, Bit(1) | Bit(2) | Bit(3) | Bit(4));
}

absl::Status ParseDataPageHeader(CompactReader& r, DataPageHeader* d) {
  uint32_t seen = 0;
  STRATA_RETURN_IF_ERROR(
      ParseStruct(r, [&](CompactReader::FieldHeader h) -> absl::StatusOr<bool> {
        seen |= Bit(h.id);
        switch (h.id) {
          case 1:
            return GetI32(r, h, &d->num_values);
          case 2:
            return GetI32(r, h, &d->encoding);
          case 3:
            return GetI32(r, h, &d->definition_level_encoding);
          case 4:
            return GetI32(r, h, &d->repetition_level_encoding);
          case 5:
            STRATA_RETURN_IF_ERROR(Expect(r, h, CT::kStruct).status());
            STRATA_RETURN_IF_ERROR(ParseStatistics(r, &d->statistics.emplace()));
            return true;
          default:
            return false;
        }
      }));
  return RequireFields(r, "DataPageHeader", seen, Bit(1) | Bit(2) | Bit(3) | Bit(4));
}

absl::Status ParseDictionaryPageHeader(CompactReader& r, DictionaryPageHeader* d) {
  uint32_t seen = 0;
  STRATA_RETURN_IF_ERROR(
      ParseStruct(r, [&](CompactReader::FieldHeader h) -> absl::StatusOr<bool> {
        seen |= Bit(h.id);
        switch (h.id) {
          case 1:
            return GetI32(r, h, &d->num_values);
          case 2:
            return GetI32(r, h, &d->encoding);
          case 3:
            return GetBool(r, h, &d->is_sorted);
          default:
            return false;
        }
      }));
  return RequireFields(r, "DictionaryPageHeader", seen, Bit(1) | Bit(2));
}

absl::Status ParsePageHeaderStruct(CompactReader& r, PageHeader* p) {
  uint32_t seen = 0;
  STRATA_RETURN_IF_ERROR(
      ParseStruct(r, [&](CompactReader::FieldHeader h) -> absl::StatusOr<bool> {
        seen |= Bit(h.id);
        switch (h.id) {
          case 1:
            return GetI32(r, h, &p->type);
          case 2:
            return GetI32(r, h, &p->uncompressed_page_size);
          case 3:
            return GetI32(r, h, &p->compressed_page_size);
          case 4:
            return GetI32(r, h, &p->crc);
          case 5:
            STRATA_RETURN_IF_ERROR(Expect(r, h, CT::kStruct).status());
            STRATA_RETURN_IF_ERROR(ParseDataPageHeader(r, &p->data_page_header.emplace()));
            return true;
          case 7:
            STRATA_RETURN_IF_ERROR(Expect(r, h, CT::kStruct).status());
            STRATA_RETURN_IF_ERROR(
                ParseDictionaryPageHeader(r, &p->dictionary_page_header.emplace()));
            return true;
          case 8:
            p->has_data_page_header_v2 = true;
            return false;
          default:
            return false;
        }
      }));
  return RequireFields(r, "PageHeader", seen, Bit(1) | Bit(2) | Bit(3));
}

}  // namespace

void SerializeFileMetaData(const FileMetaData& m, std::string* out) {
  CompactWriter w(out);
  w.BeginStruct();
  w.FieldI32(1, m.version);
  w.FieldListBegin(2, CT::kStruct, static_cast<uint32_t>(m.schema.size()));
  for (const SchemaElement& e : m.schema) WriteSchemaElement(e, w);
  w.FieldI64(3, m.num_rows);
  w.FieldListBegin(4, CT::kStruct, static_cast<uint32_t>(m.row_groups.size()));
  for (const RowGroup& g : m.row_groups) WriteRowGroup(g, w);
  WriteKeyValues(5, m.key_value_metadata, w);
  if (m.created_by) w.FieldBinary(6, *m.created_by);
  if (!m.column_orders.empty()) {
    w.FieldListBegin(7, CT::kStruct, static_cast<uint32_t>(m.column_orders.size()));
    for (int16_t member : m.column_orders) {
      w.BeginStruct();
      w.FieldStructBegin(member);
      w.EndStruct();
      w.EndStruct();
    }
  }
  w.EndStruct();
}

void SerializePageHeader(const PageHeader& p, std::string* out) {
  CompactWriter w(out);
  w.BeginStruct();
  w.FieldI32(1, static_cast<int32_t>(p.type));
  w.FieldI32(2, p.uncompressed_page_size);
  w.FieldI32(3, p.compressed_page_size);
  if (p.crc) w.FieldI32(4, *p.crc);
  if (p.data_page_header) {
    const DataPageHeader& d = *p.data_page_header;
    w.FieldStructBegin(5);
    w.FieldI32(1, d.num_values);
    w.FieldI32(2, static_cast<int32_t>(d.encoding));
    w.FieldI32(3, static_cast<int32_t>(d.definition_level_encoding));
    w.FieldI32(4, static_cast<int32_t>(d.repetition_level_encoding));
    if (d.statistics) {
      w.FieldStructBegin(5);
      WriteStatistics(*d.statistics, w);
      w.EndStruct();
    }
    w.EndStruct();
  }
  if (p.dictionary_page_header) {
    const DictionaryPageHeader& d = *p.dictionary_page_header;
    w.FieldStructBegin(7);
    w.FieldI32(1, d.num_values);
    w.FieldI32(2, static_cast<int32_t>(d.encoding));
    if (d.is_sorted) w.FieldBool(3, *d.is_sorted);
    w.EndStruct();
  }
  w.EndStruct();
}

void SerializeOffsetIndex(const OffsetIndex& index, std::string* out) {
  CompactWriter w(out);
  w.BeginStruct();
  w.FieldListBegin(1, CT::kStruct, static_cast<uint32_t>(index.page_locations.size()));
  for (const PageLocation& page : index.page_locations) {
    w.BeginStruct();
    w.FieldI64(1, page.offset);
    w.FieldI32(2, page.compressed_page_size);
    w.FieldI64(3, page.first_row_index);
    w.EndStruct();
  }
  w.EndStruct();
}

absl::StatusOr<OffsetIndex> ParseOffsetIndex(std::string_view bytes) {
  CompactReader r(bytes);
  OffsetIndex index;
  uint32_t seen = 0;
  STRATA_RETURN_IF_ERROR(
      ParseStruct(r, [&](CompactReader::FieldHeader h) -> absl::StatusOr<bool> {
        seen |= Bit(h.id);
        if (h.id != 1) return false;
        return GetList(r, h, CT::kStruct, [&]() -> absl::Status {
          PageLocation& page = index.page_locations.emplace_back();
          uint32_t page_seen = 0;
          STRATA_RETURN_IF_ERROR(
              ParseStruct(r, [&](CompactReader::FieldHeader f) -> absl::StatusOr<bool> {
                page_seen |= Bit(f.id);
                switch (f.id) {
                  case 1:
                    return GetI64(r, f, &page.offset);
                  case 2:
                    return GetI32(r, f, &page.compressed_page_size);
                  case 3:
                    return GetI64(r, f, &page.first_row_index);
                  default:
                    return false;
                }
              }));
          return RequireFields(r, "PageLocation", page_seen, Bit(1) | Bit(2) | Bit(3));
        });
      }));
  STRATA_RETURN_IF_ERROR(RequireFields(r, "OffsetIndex", seen, Bit(1)));
  if (r.remaining() != 0) return r.Error("bytes after the OffsetIndex");
  return index;
}

absl::StatusOr<FileMetaData> ParseFileMetaData(std::string_view bytes) {
  CompactReader r(bytes);
  FileMetaData m;
  STRATA_RETURN_IF_ERROR(ParseFileMetaDataStruct(r, &m));
  return m;
}

absl::StatusOr<PageHeader> ParsePageHeader(std::string_view bytes, size_t* consumed) {
  CompactReader r(bytes);
  PageHeader p;
  STRATA_RETURN_IF_ERROR(ParsePageHeaderStruct(r, &p));
  *consumed = r.position();
  return p;
}

}  // namespace strata::parquet
