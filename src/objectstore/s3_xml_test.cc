#include "objectstore/s3_xml.h"

#include <gtest/gtest.h>

#include "common/markup_escape.h"

namespace strata::objectstore {
namespace {

TEST(S3XmlTest, ListObjectsV2ReadsKeysSizesAndTheContinuation) {
  auto result = ParseListObjectsV2(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<Name>b</Name><Prefix>t/</Prefix><KeyCount>2</KeyCount><MaxKeys>2</MaxKeys>"
      "<IsTruncated>true</IsTruncated><NextContinuationToken>tok&amp;en</NextContinuationToken>"
      "<Contents><Key>t/a&lt;1&gt;</Key><LastModified>x</LastModified><ETag>&quot;e&quot;</ETag>"
      "<Size>12</Size><StorageClass>STANDARD</StorageClass></Contents>"
      "<Contents><Key><![CDATA[t/b&c]]></Key><Size>0</Size><Owner><ID>o</ID></Owner></Contents>"
      "</ListBucketResult>");
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->objects.size(), 2u);
  EXPECT_EQ(result->objects[0].key, "t/a<1>");
  EXPECT_EQ(result->objects[0].size, 12u);
  EXPECT_EQ(result->objects[1].key, "t/b&c");
  EXPECT_EQ(result->objects[1].size, 0u);
  EXPECT_TRUE(result->truncated);
  EXPECT_EQ(result->next_continuation_token, "tok&en");
}

TEST(S3XmlTest, ListWithoutContentsIsEmptyAndNotTruncated) {
  auto result = ParseListObjectsV2(
      "<ListBucketResult><IsTruncated>false</IsTruncated><KeyCount>0</KeyCount/>"
      "</ListBucketResult>");
  EXPECT_FALSE(result.ok());  // <KeyCount>0</KeyCount/> is malformed
  result = ParseListObjectsV2(
      "<ListBucketResult><IsTruncated>false</IsTruncated><Marker/></ListBucketResult>");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->objects.empty());
  EXPECT_FALSE(result->truncated);
}

TEST(S3XmlTest, ErrorBodyGivesCodeAndMessage) {
  auto body = ParseS3Error(
      "<?xml version=\"1.0\"?><Error><Code>NoSuchBucket</Code><Message>The bucket &#x41;&#66; "
      "does not exist</Message><BucketName>x</BucketName></Error>");
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_EQ(body->code, "NoSuchBucket");
  EXPECT_EQ(body->message, "The bucket AB does not exist");
}

TEST(S3XmlTest, DeleteResultListsOnlyTheErrors) {
  auto errors = ParseDeleteResult(
      "<DeleteResult><Deleted><Key>a</Key></Deleted><Error><Key>b</Key><Code>AccessDenied</Code>"
      "<Message>no</Message></Error></DeleteResult>");
  ASSERT_TRUE(errors.ok()) << errors.status();
  ASSERT_EQ(errors->size(), 1u);
  EXPECT_EQ((*errors)[0].key, "b");
  EXPECT_EQ((*errors)[0].code, "AccessDenied");
}

TEST(S3XmlTest, RefusesMalformedAndHostileInput) {
  const char* bad[] = {
      "",
      "<Error><Code>x</Error>",                    // mismatched end tag
      "<Error><Code>x</Code>",                     // unterminated
      "<!DOCTYPE x [<!ENTITY a \"b\">]><Error/>",  // DOCTYPE refused
      "<Error>&unknown;</Error>",                  // unknown entity
      "<Error>&#0;</Error>",                       // no character
      "<Error>&#x110000;</Error>",                 // out of range
      "<Error></Error><Error></Error>",            // two roots
      "text<Error/>",                              // text outside the root
      "<Error><Code>x</Code></Error",              // unterminated end tag
      "<ListBucketResult><Contents><Size>1</Size></Contents></ListBucketResult>",
  };
  for (const char* xml : bad) {
    EXPECT_FALSE(ParseS3Error(xml).ok() && ParseListObjectsV2(xml).ok()) << xml;
  }
  EXPECT_FALSE(ParseS3Error("<Error>&unknown;</Error>").ok());
  EXPECT_FALSE(
      ParseListObjectsV2("<ListBucketResult><Contents><Key>k</Key><Size>-1</Size></Contents>"
                         "</ListBucketResult>")
          .ok());
  EXPECT_FALSE(
      ParseListObjectsV2("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>")
          .ok());
  std::string deep;
  for (int i = 0; i < kMaxS3XmlDepth + 1; ++i) deep += "<a>";
  for (int i = 0; i < kMaxS3XmlDepth + 1; ++i) deep += "</a>";
  EXPECT_FALSE(ParseS3Error(deep).ok());
}

TEST(S3XmlTest, EscapeRoundTripsThroughTheParser) {
  std::string key = "a&b<c>\"d'e";
  auto body = ParseS3Error("<Error><Code>" + EscapeMarkup(key) + "</Code></Error>");
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_EQ(body->code, key);
}

TEST(S3XmlTest, MultipartAnswers) {
  auto id = ParseInitiateMultipartUpload(
      "<?xml version=\"1.0\"?><InitiateMultipartUploadResult><Bucket>b</Bucket><Key>k</Key>"
      "<UploadId>2~abc&amp;def</UploadId></InitiateMultipartUploadResult>");
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*id, "2~abc&def");
  EXPECT_FALSE(ParseInitiateMultipartUpload("<InitiateMultipartUploadResult><UploadId></UploadId>"
                                            "</InitiateMultipartUploadResult>")
                   .ok());
  EXPECT_FALSE(ParseInitiateMultipartUpload("<Error><Code>AccessDenied</Code></Error>").ok());

  auto done = ParseCompleteMultipartUpload(
      "<CompleteMultipartUploadResult><ETag>\"x-3\"</ETag></CompleteMultipartUploadResult>");
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_FALSE(done->has_value());
  auto failed = ParseCompleteMultipartUpload(
      "<Error><Code>InternalError</Code><Message>try again</Message></Error>");
  ASSERT_TRUE(failed.ok()) << failed.status();
  ASSERT_TRUE(failed->has_value());
  EXPECT_EQ((*failed)->code, "InternalError");
  EXPECT_FALSE(ParseCompleteMultipartUpload("<Other/>").ok());
}

}  // namespace
}  // namespace strata::objectstore
