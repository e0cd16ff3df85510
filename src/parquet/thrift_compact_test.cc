#include "parquet/thrift_compact.h"

#include <string>

#include "gtest/gtest.h"
#include "parquet/metadata.h"

namespace strata::parquet {
namespace {

FileMetaData SampleMetadata() {
  FileMetaData m;
  m.version = 2;
  SchemaElement root;
  root.name = "schema";
  root.num_children = 3;
  m.schema.push_back(root);
  SchemaElement s;
  s.name = "name";
  s.type = PhysicalType::kByteArray;
  s.repetition_type = Repetition::kOptional;
  s.converted_type = ConvertedType::kUtf8;
  s.logical_type.kind = LogicalType::Kind::kString;
  m.schema.push_back(s);
  SchemaElement t;
  t.name = "time";
  t.type = PhysicalType::kInt64;
  t.repetition_type = Repetition::kRequired;
  t.logical_type.kind = LogicalType::Kind::kTimestamp;
  t.logical_type.unit = TimeUnit::kNanos;
  t.logical_type.is_adjusted_to_utc = true;
  m.schema.push_back(t);
  SchemaElement u;
  u.name = "small";
  u.type = PhysicalType::kInt32;
  u.repetition_type = Repetition::kRequired;
  u.converted_type = ConvertedType::kUint8;
  u.logical_type.kind = LogicalType::Kind::kInteger;
  u.logical_type.bit_width = 8;
  u.logical_type.is_signed = false;
  u.field_id = -7;
  m.schema.push_back(u);
  m.num_rows = 1234567890123;
  for (int g = 0; g < 20; ++g) {  // more than 15 list elements: long list header
    RowGroup group;
    group.num_rows = g * 1000;
    group.total_byte_size = -1 - g;
    group.sorting_columns = {{1, false, true}, {0, true, false}};
    group.ordinal = static_cast<int16_t>(g);
    group.file_offset = 4;
    ColumnChunk chunk;
    chunk.file_offset = 4 + g;
    ColumnMetaData& meta = chunk.meta_data.emplace();
    meta.type = PhysicalType::kByteArray;
    meta.encodings = {Encoding::kPlain, Encoding::kRleDictionary, Encoding::kRle};
    meta.path_in_schema = {"name"};
    meta.codec = CompressionCodec::kZstd;
    meta.num_values = g * 1000;
    meta.total_uncompressed_size = INT64_MAX;
    meta.total_compressed_size = INT64_MIN;
    meta.data_page_offset = 100;
    meta.dictionary_page_offset = 50;
    Statistics& stats = meta.statistics.emplace();
    stats.min_value = std::string("a\0b", 3);
    stats.max_value = "zzz";
    stats.null_count = 0;
    stats.is_max_value_exact = false;
    stats.is_min_value_exact = true;
    meta.key_value_metadata = {{"k", std::nullopt}};
    group.columns.push_back(chunk);
    m.row_groups.push_back(group);
  }
  m.key_value_metadata = {{"strata.version", "1"}, {"empty", ""}, {"novalue", std::nullopt}};
  m.created_by = "strata test";
  m.column_orders = {1, 1, 1};
  return m;
}

TEST(ThriftCompactTest, FileMetaDataRoundTrips) {
  const FileMetaData m = SampleMetadata();
  std::string bytes;
  SerializeFileMetaData(m, &bytes);
  absl::StatusOr<FileMetaData> parsed = ParseFileMetaData(bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, m);
}

TEST(ThriftCompactTest, PageHeadersRoundTrip) {
  PageHeader data;
  data.type = PageType::kDataPage;
  data.uncompressed_page_size = 1 << 20;
  data.compressed_page_size = 12345;
  data.crc = -5;
  data.data_page_header.emplace();
  data.data_page_header->num_values = 20000;
  data.data_page_header->encoding = Encoding::kRleDictionary;
  data.data_page_header->statistics.emplace().null_count = 3;
  PageHeader dict;
  dict.type = PageType::kDictionaryPage;
  dict.uncompressed_page_size = 7;
  dict.compressed_page_size = 7;
  dict.dictionary_page_header.emplace();
  dict.dictionary_page_header->num_values = 2;
  dict.dictionary_page_header->is_sorted = true;
  for (const PageHeader& header : {data, dict}) {
    std::string bytes;
    SerializePageHeader(header, &bytes);
    bytes += "trailing page body";
    size_t consumed = 0;
    absl::StatusOr<PageHeader> parsed = ParsePageHeader(bytes, &consumed);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, header);
    EXPECT_EQ(bytes.substr(consumed), "trailing page body");
  }
}

TEST(ThriftCompactTest, PrimitivesRoundTripWithLongFieldDeltas) {
  std::string bytes;
  CompactWriter w(&bytes);
  w.BeginStruct();
  w.FieldI32(1, INT32_MIN);
  w.FieldI64(300, INT64_MIN);  // delta > 15: explicit id
  w.FieldI64(2, INT64_MAX);    // decreasing id: explicit id
  w.FieldDouble(3, -2.5);
  w.FieldBool(4, true);
  w.FieldBool(5, false);
  w.FieldI8(6, -128);
  w.FieldI16(7, -32768);
  w.FieldBinary(8, std::string(300, 'x'));
  w.FieldListBegin(9, CompactType::kI32, 100);
  for (int i = 0; i < 100; ++i) w.ElementI32(i - 50);
  w.FieldStructBegin(10);
  w.FieldBool(1, true);
  w.EndStruct();
  w.EndStruct();

  CompactReader r(bytes);
  ASSERT_TRUE(r.BeginStruct().ok());
  auto next = [&]() {
    absl::StatusOr<CompactReader::FieldHeader> h = r.ReadFieldHeader();
    EXPECT_TRUE(h.ok()) << h.status();
    return *h;
  };
  CompactReader::FieldHeader h = next();
  EXPECT_EQ(h.id, 1);
  EXPECT_EQ(*r.ReadI32(), INT32_MIN);
  h = next();
  EXPECT_EQ(h.id, 300);
  EXPECT_EQ(*r.ReadI64(), INT64_MIN);
  h = next();
  EXPECT_EQ(h.id, 2);
  EXPECT_EQ(*r.ReadI64(), INT64_MAX);
  h = next();
  EXPECT_EQ(*r.ReadDouble(), -2.5);
  h = next();
  EXPECT_TRUE(*r.ReadBool(h.type));
  h = next();
  EXPECT_FALSE(*r.ReadBool(h.type));
  h = next();
  EXPECT_EQ(*r.ReadI8(), -128);
  h = next();
  EXPECT_EQ(*r.ReadI16(), -32768);
  h = next();
  EXPECT_EQ(*r.ReadBinary(), std::string(300, 'x'));
  h = next();
  absl::StatusOr<CompactReader::ListHeader> list = r.ReadListHeader();
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->size, 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(*r.ReadI32(), i - 50);
  h = next();
  EXPECT_EQ(h.type, CompactType::kStruct);
  ASSERT_TRUE(r.Skip(h.type).ok());
  EXPECT_EQ(next().type, CompactType::kStop);
  EXPECT_EQ(r.remaining(), 0u);
}

TEST(ThriftCompactTest, EveryTruncationIsRejected) {
  std::string bytes;
  SerializeFileMetaData(SampleMetadata(), &bytes);
  for (size_t n = 0; n < bytes.size(); ++n) {
    absl::StatusOr<FileMetaData> parsed = ParseFileMetaData(std::string_view(bytes).substr(0, n));
    ASSERT_FALSE(parsed.ok()) << "prefix of " << n << " bytes parsed";
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(ThriftCompactTest, EveryByteFlipParsesOrFailsCleanly) {
  std::string bytes;
  SerializeFileMetaData(SampleMetadata(), &bytes);
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (uint8_t mask : {0x01, 0x10, 0x80, 0xFF}) {
      std::string corrupt = bytes;
      corrupt[i] = static_cast<char>(corrupt[i] ^ mask);
      (void)ParseFileMetaData(corrupt);  // must not crash or read out of bounds
    }
  }
}

TEST(ThriftCompactTest, UnknownWireTypeIsRejected) {
  for (char type : {'\x0d', '\x0e', '\x0f'}) {
    std::string bytes(1, static_cast<char>(0x10 | type));
    bytes += std::string(8, '\0');
    absl::StatusOr<FileMetaData> parsed = ParseFileMetaData(bytes);
    ASSERT_FALSE(parsed.ok());
    EXPECT_NE(parsed.status().message().find("unknown wire type"), absl::string_view::npos)
        << parsed.status();
  }
}

TEST(ThriftCompactTest, WrongWireTypeForKnownFieldIsRejected) {
  std::string bytes;
  CompactWriter w(&bytes);
  w.BeginStruct();
  w.FieldBinary(1, "not an i32");  // FileMetaData.version is an i32
  w.EndStruct();
  EXPECT_FALSE(ParseFileMetaData(bytes).ok());
}

TEST(ThriftCompactTest, MissingRequiredFieldIsRejected) {
  std::string bytes;
  CompactWriter w(&bytes);
  w.BeginStruct();
  w.FieldI32(1, 1);
  w.EndStruct();
  absl::StatusOr<FileMetaData> parsed = ParseFileMetaData(bytes);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("required field 2"), absl::string_view::npos);
}

TEST(ThriftCompactTest, DeepNestingIsRejected) {
  // An unknown field 20 of FileMetaData holding structs nested 100 deep.
  std::string bytes;
  CompactWriter w(&bytes);
  w.BeginStruct();
  for (int i = 0; i < 100; ++i) w.FieldStructBegin(20);
  for (int i = 0; i < 100; ++i) w.EndStruct();
  w.EndStruct();
  absl::StatusOr<FileMetaData> parsed = ParseFileMetaData(bytes);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("nesting"), absl::string_view::npos) << parsed.status();
}

TEST(ThriftCompactTest, OversizedLengthsAreRejected) {
  // A binary claiming 2^40 bytes, and a list claiming 2^30 elements.
  const std::string huge_binary = "\x18\x80\x80\x80\x80\x80\x20";
  CompactReader r1(huge_binary);
  ASSERT_TRUE(r1.BeginStruct().ok());
  ASSERT_TRUE(r1.ReadFieldHeader().ok());
  EXPECT_FALSE(r1.ReadBinary().ok());
  const std::string huge_list = "\x19\xF5\x80\x80\x80\x80\x04";
  EXPECT_FALSE(ParseFileMetaData(huge_list).ok());
  CompactReader r2("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff");
  EXPECT_FALSE(r2.ReadI64().ok());
}

}  // namespace
}  // namespace strata::parquet
