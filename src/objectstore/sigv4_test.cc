#include "objectstore/sigv4.h"

#include <gtest/gtest.h>

#include "objectstore/digests.h"

namespace strata::objectstore {
namespace {

// The example credentials, bucket and date of AWS's Signature V4 examples
// for S3 ("Examples: Signature Calculations in AWS Signature Version 4",
// Amazon S3 API reference).
const SigV4Credentials kExampleCredentials{"AKIAIOSFODNN7EXAMPLE",
                                           "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"};
constexpr char kExampleDate[] = "20130524T000000Z";
constexpr char kExampleHost[] = "examplebucket.s3.amazonaws.com";
constexpr char kEmptySha256[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

SigV4Request ExampleRequest(std::string method, std::string path, std::string payload_sha256) {
  SigV4Request request;
  request.method = std::move(method);
  request.path = std::move(path);
  request.headers = {{"Host", kExampleHost},
                     {"x-amz-date", kExampleDate},
                     {"x-amz-content-sha256", payload_sha256}};
  request.payload_sha256_hex = std::move(payload_sha256);
  return request;
}

TEST(SigV4Test, EmptyPayloadHashIsTheSha256OfNothing) {
  EXPECT_EQ(HexLower(Sha256("")), kEmptySha256);
}

TEST(SigV4Test, GetObjectWithRangeMatchesAwsExample) {
  SigV4Request request = ExampleRequest("GET", "/test.txt", kEmptySha256);
  request.headers.emplace_back("Range", "bytes=0-9");
  SigV4Signature signature = SignV4(kExampleCredentials, "us-east-1", "s3", kExampleDate, request);
  EXPECT_EQ(signature.canonical_request,
            "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\n"
            "x-amz-content-sha256:" +
                std::string(kEmptySha256) +
                "\nx-amz-date:20130524T000000Z\n\n"
                "host;range;x-amz-content-sha256;x-amz-date\n" +
                kEmptySha256);
  EXPECT_EQ(signature.signature_hex,
            "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
  EXPECT_EQ(signature.authorization,
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
            "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST(SigV4Test, PutObjectMatchesAwsExample) {
  std::string payload_sha256 = HexLower(Sha256("Welcome to Amazon S3."));
  EXPECT_EQ(payload_sha256, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  SigV4Request request = ExampleRequest("PUT", "/test$file.text", payload_sha256);
  request.headers.emplace_back("Date", "Fri, 24 May 2013 00:00:00 GMT");
  request.headers.emplace_back("x-amz-storage-class", "REDUCED_REDUNDANCY");
  SigV4Signature signature = SignV4(kExampleCredentials, "us-east-1", "s3", kExampleDate, request);
  EXPECT_NE(signature.canonical_request.find("\n/test%24file.text\n"), std::string::npos);
  EXPECT_EQ(signature.signature_hex,
            "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
}

TEST(SigV4Test, GetBucketLifecycleMatchesAwsExample) {
  SigV4Request request = ExampleRequest("GET", "/", kEmptySha256);
  request.query = {{"lifecycle", ""}};
  SigV4Signature signature = SignV4(kExampleCredentials, "us-east-1", "s3", kExampleDate, request);
  EXPECT_NE(signature.canonical_request.find("\n/\nlifecycle=\n"), std::string::npos);
  EXPECT_EQ(signature.signature_hex,
            "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
}

TEST(SigV4Test, ListObjectsMatchesAwsExampleWithQuerySorted) {
  SigV4Request request = ExampleRequest("GET", "/", kEmptySha256);
  request.query = {{"prefix", "J"}, {"max-keys", "2"}};  // out of order on purpose
  SigV4Signature signature = SignV4(kExampleCredentials, "us-east-1", "s3", kExampleDate, request);
  EXPECT_NE(signature.canonical_request.find("\n/\nmax-keys=2&prefix=J\n"), std::string::npos);
  EXPECT_EQ(signature.signature_hex,
            "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}

TEST(SigV4Test, ASecretThatDiffersByOneCharacterChangesTheSignature) {
  SigV4Request request = ExampleRequest("GET", "/test.txt", kEmptySha256);
  SigV4Credentials other = kExampleCredentials;
  other.secret_access_key.back() = 'X';
  EXPECT_NE(SignV4(kExampleCredentials, "us-east-1", "s3", kExampleDate, request).signature_hex,
            SignV4(other, "us-east-1", "s3", kExampleDate, request).signature_hex);
}

TEST(SigV4Test, UriEncodeKeepsUnreservedAndEncodesTheRest) {
  EXPECT_EQ(UriEncode("a-Z_0.9~", false), "a-Z_0.9~");
  EXPECT_EQ(UriEncode("day=2026-12-04/x y", true), "day%3D2026-12-04/x%20y");
  EXPECT_EQ(UriEncode("a/b", false), "a%2Fb");
  EXPECT_EQ(UriEncode("\xff", false), "%FF");
}

TEST(SigV4Test, AmzDateFormatsUtc) {
  EXPECT_EQ(AmzDate(1369353600), "20130524T000000Z");
  EXPECT_EQ(AmzDate(0), "19700101T000000Z");
}

}  // namespace
}  // namespace strata::objectstore
