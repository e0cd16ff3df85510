// The Loki push decoders: protobuf PushRequests built and serialized by
// libprotobuf (from a descriptor of Loki's push.proto messages, built here)
// decode to the same streams, entries and metadata; JSON pushes as Loki's
// documentation writes them; label sets; limits and malformed bodies.

#include "otlp/loki_push.h"

#include <random>

#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"
#include "google/protobuf/dynamic_message.h"
#include "gtest/gtest.h"

namespace strata::otlp {
namespace {

using google::protobuf::FieldDescriptorProto;

// Loki's PushRequest messages (field numbers and types as push.proto has
// them; Timestamp as google.protobuf.Timestamp's wire form).
class PushSchema {
 public:
  PushSchema() {
    google::protobuf::FileDescriptorProto file;
    file.set_name("loki_push_test.proto");
    file.set_package("logproto");
    file.set_syntax("proto3");
    auto message = [&](const char* name) {
      auto* m = file.add_message_type();
      m->set_name(name);
      return m;
    };
    auto field = [](google::protobuf::DescriptorProto* m, const char* name, int number,
                    FieldDescriptorProto::Type type, bool repeated = false,
                    const char* type_name = nullptr) {
      auto* f = m->add_field();
      f->set_name(name);
      f->set_number(number);
      f->set_type(type);
      f->set_label(repeated ? FieldDescriptorProto::LABEL_REPEATED
                            : FieldDescriptorProto::LABEL_OPTIONAL);
      if (type_name != nullptr) f->set_type_name(type_name);
    };
    auto* ts = message("Timestamp");
    field(ts, "seconds", 1, FieldDescriptorProto::TYPE_INT64);
    field(ts, "nanos", 2, FieldDescriptorProto::TYPE_INT32);
    auto* pair = message("LabelPairAdapter");
    field(pair, "name", 1, FieldDescriptorProto::TYPE_STRING);
    field(pair, "value", 2, FieldDescriptorProto::TYPE_STRING);
    auto* entry = message("EntryAdapter");
    field(entry, "timestamp", 1, FieldDescriptorProto::TYPE_MESSAGE, false, ".logproto.Timestamp");
    field(entry, "line", 2, FieldDescriptorProto::TYPE_STRING);
    field(entry, "structuredMetadata", 3, FieldDescriptorProto::TYPE_MESSAGE, true,
          ".logproto.LabelPairAdapter");
    auto* stream = message("StreamAdapter");
    field(stream, "labels", 1, FieldDescriptorProto::TYPE_STRING);
    field(stream, "entries", 2, FieldDescriptorProto::TYPE_MESSAGE, true, ".logproto.EntryAdapter");
    field(stream, "hash", 3, FieldDescriptorProto::TYPE_UINT64);
    auto* push = message("PushRequest");
    field(push, "streams", 1, FieldDescriptorProto::TYPE_MESSAGE, true, ".logproto.StreamAdapter");
    file_ = pool_.BuildFile(file);
    EXPECT_NE(file_, nullptr);
  }

  std::unique_ptr<google::protobuf::Message> New(const char* name) {
    return std::unique_ptr<google::protobuf::Message>(
        factory_.GetPrototype(pool_.FindMessageTypeByName(std::string("logproto.") + name))->New());
  }

 private:
  google::protobuf::DescriptorPool pool_;
  google::protobuf::DynamicMessageFactory factory_{&pool_};
  const google::protobuf::FileDescriptor* file_ = nullptr;
};

TEST(LokiPushTest, DecodesWhatLibprotobufEncodes) {
  PushSchema schema;
  std::unique_ptr<google::protobuf::Message> request = schema.New("PushRequest");
  const auto* rd = request->GetDescriptor();
  std::mt19937 rng(3);
  LokiPush expected;
  for (int s = 0; s < 5; ++s) {
    auto* stream =
        request->GetReflection()->AddMessage(request.get(), rd->FindFieldByName("streams"));
    const auto* sd = stream->GetDescriptor();
    const std::string service = "svc" + std::to_string(s);
    stream->GetReflection()->SetString(stream, sd->FindFieldByName("labels"),
                                       "{service_name=\"" + service + "\", note=\"a \\\"q\\\"\"}");
    stream->GetReflection()->SetUInt64(stream, sd->FindFieldByName("hash"), rng());
    LokiPushStream& want = expected.streams.emplace_back();
    want.labels = {{"service_name", service}, {"note", "a \"q\""}};
    for (int e = 0; e < 1 + s * 3; ++e) {
      auto* entry = stream->GetReflection()->AddMessage(stream, sd->FindFieldByName("entries"));
      const auto* ed = entry->GetDescriptor();
      LokiPushEntry& w = want.entries.emplace_back();
      const int64_t seconds = 1'764'800'000 + rng() % 100'000;
      const int32_t nanos = static_cast<int32_t>(rng() % 1'000'000'000);
      w.time_unix_nano = seconds * 1'000'000'000 + nanos;
      w.line = "line " + std::to_string(rng()) + (e % 2 == 0 ? " ✓" : "");
      auto* ts = entry->GetReflection()->MutableMessage(entry, ed->FindFieldByName("timestamp"));
      ts->GetReflection()->SetInt64(ts, ts->GetDescriptor()->FindFieldByName("seconds"), seconds);
      ts->GetReflection()->SetInt32(ts, ts->GetDescriptor()->FindFieldByName("nanos"), nanos);
      entry->GetReflection()->SetString(entry, ed->FindFieldByName("line"), w.line);
      for (int m = 0; m < e % 3; ++m) {
        auto* pair =
            entry->GetReflection()->AddMessage(entry, ed->FindFieldByName("structuredMetadata"));
        const std::string name = "k" + std::to_string(m);
        const std::string value = "v" + std::to_string(rng() % 10);
        pair->GetReflection()->SetString(pair, pair->GetDescriptor()->FindFieldByName("name"),
                                         name);
        pair->GetReflection()->SetString(pair, pair->GetDescriptor()->FindFieldByName("value"),
                                         value);
        w.metadata.emplace_back(name, value);
      }
      ++expected.entries;
    }
  }
  const std::string bytes = request->SerializeAsString();
  absl::StatusOr<LokiPush> push = DecodeLokiPushProto(bytes, LokiPushLimits{});
  ASSERT_TRUE(push.ok()) << push.status();
  ASSERT_EQ(push->streams.size(), expected.streams.size());
  EXPECT_EQ(push->entries, expected.entries);
  for (size_t s = 0; s < expected.streams.size(); ++s) {
    EXPECT_EQ(push->streams[s].labels, expected.streams[s].labels);
    ASSERT_EQ(push->streams[s].entries.size(), expected.streams[s].entries.size());
    for (size_t e = 0; e < expected.streams[s].entries.size(); ++e) {
      const LokiPushEntry& got = push->streams[s].entries[e];
      const LokiPushEntry& want = expected.streams[s].entries[e];
      EXPECT_EQ(got.time_unix_nano, want.time_unix_nano);
      EXPECT_EQ(got.line, want.line);
      EXPECT_EQ(got.metadata, want.metadata);
    }
  }
  // Limits: entries and streams.
  EXPECT_EQ(DecodeLokiPushProto(bytes, LokiPushLimits{.entries_max = 10}).status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(DecodeLokiPushProto(bytes, LokiPushLimits{.streams_max = 4}).status().code(),
            absl::StatusCode::kResourceExhausted);
  // Every truncation is refused or decodes a prefix; none crashes.
  for (size_t n = 0; n < bytes.size(); ++n) {
    (void)DecodeLokiPushProto(std::string_view(bytes).substr(0, n), LokiPushLimits{});
  }
}

TEST(LokiPushTest, DecodesTheJsonFormWithStructuredMetadata) {
  const absl::StatusOr<LokiPush> push = DecodeLokiPushJson(
      R"({"streams":[{"stream":{"service_name":"cart","env":"prod"},"values":[)"
      R"(["1570818238000000000","fizzbuzz"],)"
      R"(["1570818238000000001","with metadata",{"trace_id":"0242ac120002","user_id":"u1"}]]}]})",
      LokiPushLimits{});
  ASSERT_TRUE(push.ok()) << push.status();
  ASSERT_EQ(push->streams.size(), 1u);
  EXPECT_EQ(push->entries, 2u);
  EXPECT_EQ(push->streams[0].labels, (LokiLabelPairs{{"service_name", "cart"}, {"env", "prod"}}));
  EXPECT_EQ(push->streams[0].entries[0].time_unix_nano, 1570818238000000000);
  EXPECT_EQ(push->streams[0].entries[1].line, "with metadata");
  EXPECT_EQ(push->streams[0].entries[1].metadata,
            (LokiLabelPairs{{"trace_id", "0242ac120002"}, {"user_id", "u1"}}));
  for (const char* bad : {
           R"({"streams":[{"stream":{},"values":[[1570818238000000000,"a number time"]]}]})",
           R"({"streams":[{"stream":{"a":1},"values":[]}]})",
           R"({"streams":[{"stream":{},"values":[["1","x",{"k":{"nested":"no"}}]]}]})",
           R"({"streams":[{"stream":{}}]})",
           R"({"nothing":1})",
           "not json",
       }) {
    EXPECT_EQ(DecodeLokiPushJson(bad, LokiPushLimits{}).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_EQ(DecodeLokiPushJson(R"({"streams":[{"stream":{},"values":[["1","a"],["2","b"]]}]})",
                               LokiPushLimits{.entries_max = 1})
                .status()
                .code(),
            absl::StatusCode::kResourceExhausted);
}

// As Loki does: a stream whose labels cannot be stored is dropped whole, an
// entry over a per-entry limit alone; the rest is kept, and the drops are
// counted with the first reason.
TEST(LokiPushTest, JsonPushKeepsWhatCanBeStoredAndCountsTheRest) {
  const LokiPushLimits limits{.labels_max = 2, .line_bytes_max = 4};
  const absl::StatusOr<LokiPush> push = DecodeLokiPushJson(
      R"({"streams":[)"
      R"({"stream":{"a":"1"},"values":[["1","ok"],["2","toolong"],["3","ok2",{"x":"1","y":"2","z":"3"}],["4","ok3"]]},)"
      R"({"stream":{"a":"1","b":"2","c":"3"},"values":[["5","gone"],["6","gone"]]},)"
      R"({"stream":{"b":"2"},"values":[["7","kept"]]}]})",
      limits);
  ASSERT_TRUE(push.ok()) << push.status();
  ASSERT_EQ(push->streams.size(), 2u);
  EXPECT_EQ(push->entries, 3u);
  ASSERT_EQ(push->streams[0].entries.size(), 2u);
  EXPECT_EQ(push->streams[0].entries[0].line, "ok");
  EXPECT_EQ(push->streams[0].entries[1].line, "ok3");
  EXPECT_EQ(push->streams[1].labels, (LokiLabelPairs{{"b", "2"}}));
  EXPECT_EQ(push->streams[1].entries[0].line, "kept");
  EXPECT_EQ(push->rejected.rows, 4u);
  EXPECT_EQ(push->rejected.by_reason[static_cast<size_t>(RowRejectReason::kLokiEntry)], 2u);
  EXPECT_EQ(push->rejected.by_reason[static_cast<size_t>(RowRejectReason::kLokiStreamLabels)], 2u);
  EXPECT_EQ(push->rejected.first_message,
            "stream 0, entry 1: a line of 7 bytes is over the limit of 4");
  // Dropped entries count against the cap on entries.
  EXPECT_EQ(
      DecodeLokiPushJson(R"({"streams":[{"stream":{},"values":[["1","toolong"],["2","a"]]}]})",
                         LokiPushLimits{.entries_max = 1, .line_bytes_max = 3})
          .status()
          .code(),
      absl::StatusCode::kResourceExhausted);
}

TEST(LokiPushTest, ProtobufPushKeepsWhatCanBeStoredAndCountsTheRest) {
  PushSchema schema;
  std::unique_ptr<google::protobuf::Message> request = schema.New("PushRequest");
  const auto* rd = request->GetDescriptor();
  // Streams: good labels; unparsable labels; too many labels; good labels
  // given after the entries (protobuf allows any order).
  const char* label_sets[] = {R"({a="1"})", R"({a=1})", R"({a="1",b="2",c="3"})", R"({d="4"})"};
  for (const char* labels : label_sets) {
    auto* stream =
        request->GetReflection()->AddMessage(request.get(), rd->FindFieldByName("streams"));
    const auto* sd = stream->GetDescriptor();
    for (int e = 0; e < 3; ++e) {
      auto* entry = stream->GetReflection()->AddMessage(stream, sd->FindFieldByName("entries"));
      const auto* ed = entry->GetDescriptor();
      auto* ts = entry->GetReflection()->MutableMessage(entry, ed->FindFieldByName("timestamp"));
      // Entry 2 of every stream has a time past year 2255.
      ts->GetReflection()->SetInt64(ts, ts->GetDescriptor()->FindFieldByName("seconds"),
                                    e == 2 ? 9'100'000'000 : 1'764'800'000 + e);
      // Entry 1 of every stream has a line over the limit.
      entry->GetReflection()->SetString(entry, ed->FindFieldByName("line"),
                                        e == 1 ? "too long" : "ok");
    }
    stream->GetReflection()->SetString(stream, sd->FindFieldByName("labels"), labels);
  }
  const std::string bytes = request->SerializeAsString();
  const absl::StatusOr<LokiPush> push =
      DecodeLokiPushProto(bytes, LokiPushLimits{.labels_max = 2, .line_bytes_max = 4});
  ASSERT_TRUE(push.ok()) << push.status();
  ASSERT_EQ(push->streams.size(), 2u);
  EXPECT_EQ(push->streams[0].labels, (LokiLabelPairs{{"a", "1"}}));
  EXPECT_EQ(push->streams[1].labels, (LokiLabelPairs{{"d", "4"}}));
  EXPECT_EQ(push->entries, 2u);
  for (const LokiPushStream& stream : push->streams) {
    ASSERT_EQ(stream.entries.size(), 1u);
    EXPECT_EQ(stream.entries[0].line, "ok");
    EXPECT_EQ(stream.entries[0].time_unix_nano, 1'764'800'000'000'000'000);
  }
  // Streams 1 and 2: 2 entries each left after their own drops; every
  // stream: entries 1 and 2.
  EXPECT_EQ(push->rejected.rows, 10u);
  EXPECT_EQ(push->rejected.by_reason[static_cast<size_t>(RowRejectReason::kLokiEntry)], 8u);
  EXPECT_EQ(push->rejected.by_reason[static_cast<size_t>(RowRejectReason::kLokiStreamLabels)], 2u);
  EXPECT_EQ(push->rejected.first_message,
            "stream 0, entry 1: a line of 8 bytes is over the limit of 4");
}

TEST(LokiPushTest, LabelSets) {
  EXPECT_EQ(*ParseLokiLabelSet(R"( { a = "1" ,b_2="x\ny\\" } )", 10),
            (LokiLabelPairs{{"a", "1"}, {"b_2", "x\ny\\"}}));
  EXPECT_EQ(*ParseLokiLabelSet("{}", 10), LokiLabelPairs{});
  for (const char* bad : {"", "a=\"1\"", "{a=1}", "{1a=\"x\"}", "{a=\"x}", "{a=\"x\" b=\"y\"}",
                          "{a=\"\\q\"}", "{a=\"x\"} tail"}) {
    EXPECT_FALSE(ParseLokiLabelSet(bad, 10).ok()) << bad;
  }
  EXPECT_EQ(ParseLokiLabelSet(R"({a="1",b="2"})", 1).status().code(),
            absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace strata::otlp
