#include "objectstore/s3_config.h"

#include <gtest/gtest.h>

#include <map>

namespace strata::objectstore {
namespace {

EnvironmentLookup Env(std::map<std::string, std::string> values) {
  return [values](std::string_view name) -> std::optional<std::string> {
    auto it = values.find(std::string(name));
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

TEST(S3ConfigTest, StrataVariablesWinOverAwsOnes) {
  auto config = S3ConfigFromEnvironment(Env({{"STRATA_S3_ENDPOINT", "http://127.0.0.1:7480/"},
                                             {"AWS_ENDPOINT_URL", "https://elsewhere"},
                                             {"STRATA_S3_BUCKET", "spans"},
                                             {"STRATA_S3_PREFIX", "/team/a"},
                                             {"STRATA_S3_REGION", "eu-1"},
                                             {"AWS_REGION", "us-west-2"},
                                             {"STRATA_S3_ACCESS_KEY_ID", "K1"},
                                             {"AWS_ACCESS_KEY_ID", "K2"},
                                             {"AWS_SECRET_ACCESS_KEY", "S2"},
                                             {"STRATA_S3_ADDRESSING", "virtual"}}));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->endpoint, "http://127.0.0.1:7480");
  EXPECT_EQ(config->bucket, "spans");
  EXPECT_EQ(config->prefix, "team/a/");
  EXPECT_EQ(config->region, "eu-1");
  EXPECT_EQ(config->credentials.access_key_id, "K1");
  EXPECT_EQ(config->credentials.secret_access_key, "S2");
  EXPECT_EQ(config->addressing, S3Addressing::kVirtualHost);
}

TEST(S3ConfigTest, AwsVariablesAloneAreEnough) {
  auto config = S3ConfigFromEnvironment(Env({{"STRATA_S3_BUCKET", "spans"},
                                             {"AWS_REGION", "eu-west-1"},
                                             {"AWS_ACCESS_KEY_ID", "K"},
                                             {"AWS_SECRET_ACCESS_KEY", "S"}}));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->endpoint, "https://s3.eu-west-1.amazonaws.com");
  EXPECT_EQ(config->addressing, S3Addressing::kPath);
}

TEST(S3ConfigTest, ErrorsNameTheVariableToSet) {
  auto missing_bucket =
      S3ConfigFromEnvironment(Env({{"AWS_ACCESS_KEY_ID", "K"}, {"AWS_SECRET_ACCESS_KEY", "S"}}));
  EXPECT_NE(missing_bucket.status().message().find("STRATA_S3_BUCKET"), std::string::npos);
  auto missing_secret =
      S3ConfigFromEnvironment(Env({{"STRATA_S3_BUCKET", "spans"}, {"AWS_ACCESS_KEY_ID", "K"}}));
  EXPECT_NE(missing_secret.status().message().find("AWS_SECRET_ACCESS_KEY"), std::string::npos);
  auto bad_endpoint = S3ConfigFromEnvironment(Env({{"STRATA_S3_BUCKET", "spans"},
                                                   {"STRATA_S3_ENDPOINT", "ftp://x"},
                                                   {"AWS_ACCESS_KEY_ID", "K"},
                                                   {"AWS_SECRET_ACCESS_KEY", "S"}}));
  EXPECT_NE(bad_endpoint.status().message().find("STRATA_S3_ENDPOINT"), std::string::npos);
  auto bad_bucket = S3ConfigFromEnvironment(Env({{"STRATA_S3_BUCKET", "Upper_Case"},
                                                 {"AWS_ACCESS_KEY_ID", "K"},
                                                 {"AWS_SECRET_ACCESS_KEY", "S"}}));
  EXPECT_FALSE(bad_bucket.ok());
}

}  // namespace
}  // namespace strata::objectstore
