// Whole-binary tests of `strata verify` and `strata quarantine`: the data
// directory is written in-process by the real Storage (real batches), then
// damaged, and the real executable is run against it, alone or beside a
// running `strata serve`.

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "storage/commit/data_dir.h"
#include "storage/testing/verify_testing.h"
#include "subprocess.h"

namespace strata {
namespace {

using ::strata::storage::verify_testing::BatchIdOfDir;
using ::strata::storage::verify_testing::DayOfDir;
using ::strata::testing::RunToCompletion;
using ::strata::testing::Subprocess;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kBinary = STRATA_BINARY;
const std::vector<std::string> kBaseEnv = {"PATH=/usr/bin:/bin"};
const std::vector<std::string> kServeEnv = {
    "PATH=/usr/bin:/bin", "STRATA_OTLP_GRPC_ADDRESS=127.0.0.1:0",
    "STRATA_OTLP_HTTP_ADDRESS=127.0.0.1:0", "STRATA_API_ADDRESS=127.0.0.1:0"};

class VerifyCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "strata-verify-cli-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" +
           std::to_string(::getpid());
    std::filesystem::remove_all(dir_);
    absl::StatusOr<std::vector<std::string>> batches =
        storage::verify_testing::WriteTrafficBatches(fs_, dir_, 3, 200);
    ASSERT_TRUE(batches.ok()) << batches.status();
    ASSERT_EQ(batches->size(), 3u);
    batches_ = *batches;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::pair<int, std::string> Run(std::vector<std::string> args) {
    std::vector<std::string> argv = {kBinary};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--data-dir", dir_});
    return RunToCompletion(argv, kBaseEnv);
  }

  // One byte of the batch's spans.parquet changed, meta.json left alone:
  // corruption that boot refuses.
  void Corrupt(const std::string& batch_dir) {
    const std::string path = batch_dir + "/spans.parquet";
    absl::StatusOr<std::string> bytes = fs_.ReadFile(path);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    (*bytes)[bytes->size() / 2] ^= 0x20;
    ASSERT_TRUE(WriteFile(fs_, path, *bytes).ok());
  }

  // Starts `strata serve` on the data directory; null (with a failure) if
  // it does not get ready.
  std::unique_ptr<Subprocess> StartServer() {
    auto server = std::make_unique<Subprocess>(
        std::vector<std::string>{kBinary, "serve", "--data-dir", dir_}, kServeEnv);
    if (!server->WaitForOutput("waiting for SIGINT or SIGTERM", std::chrono::seconds(30))) {
      ADD_FAILURE() << "server did not get ready:\n" << server->output();
      return nullptr;
    }
    return server;
  }
  static void StopServer(Subprocess& server) {
    server.Signal(SIGTERM);
    EXPECT_EQ(server.Wait(std::chrono::seconds(30)), 0) << server.output();
  }

  PosixFileSystem fs_;
  std::string dir_;
  std::vector<std::string> batches_;
};

TEST_F(VerifyCliTest, HealthyDirectoryExitsZeroWithOneLinePerBatch) {
  auto [code, out] = Run({"verify"});
  EXPECT_EQ(code, 0) << out;
  for (const std::string& batch : batches_) {
    EXPECT_THAT(out,
                ContainsRegex(fmt::format("ok +{} +{}\n", DayOfDir(batch), BatchIdOfDir(batch))));
  }
  EXPECT_THAT(out, HasSubstr("verified 3 batches"));
  EXPECT_THAT(out, HasSubstr("3 ok, 0 corrupt"));

  auto [deep_code, deep] = Run({"verify", "--deep", "--json"});
  EXPECT_EQ(deep_code, 0) << deep;
  EXPECT_THAT(deep, HasSubstr("\"deep\":true,\"healthy\":true"));
  EXPECT_THAT(deep, HasSubstr("\"counts\":{\"ok\":3,\"corrupt\":0,\"gone\":0,\"unreadable\":0"));
}

TEST_F(VerifyCliTest, CorruptBatchExitsThreeAndIsNamedInJson) {
  Corrupt(batches_[1]);
  auto [code, out] = Run({"verify", "--json"});
  EXPECT_EQ(code, 3) << out;
  EXPECT_THAT(out,
              HasSubstr(fmt::format(R"({{"id":"{}","day":"{}","status":"corrupt","check":"files",)"
                                    R"("file":"spans.parquet","message":")",
                                    BatchIdOfDir(batches_[1]), DayOfDir(batches_[1]))));
  EXPECT_THAT(out, HasSubstr(fmt::format(R"({{"id":"{}","day":"{}","status":"ok","check":null)",
                                         BatchIdOfDir(batches_[0]), DayOfDir(batches_[0]))));
  EXPECT_THAT(out, HasSubstr("\"healthy\":false"));
  EXPECT_THAT(out, HasSubstr("\"corrupt\":1"));

  auto [text_code, text] = Run({"verify", "--deep"});
  EXPECT_EQ(text_code, 3) << text;
  EXPECT_THAT(text, ContainsRegex(fmt::format("corrupt +{} +{} +check \"files\" on spans.parquet",
                                              DayOfDir(batches_[1]), BatchIdOfDir(batches_[1]))));
  EXPECT_THAT(text, HasSubstr("CORRUPTION FOUND"));
}

TEST_F(VerifyCliTest, VerifyRunsBesideARunningServer) {
  std::unique_ptr<Subprocess> server = StartServer();
  ASSERT_NE(server, nullptr);
  auto [code, out] = Run({"verify", "--deep"});
  EXPECT_EQ(code, 0) << out;
  EXPECT_THAT(out, HasSubstr("3 ok, 0 corrupt"));
  StopServer(*server);
}

TEST_F(VerifyCliTest, VerifyRefusesWhatIsNotADataDirectory) {
  const std::string plain = dir_ + "-plain";
  std::filesystem::create_directories(plain);
  auto [code, out] = RunToCompletion({kBinary, "verify", "--data-dir", plain}, kBaseEnv);
  EXPECT_EQ(code, 1) << out;
  EXPECT_THAT(out, HasSubstr("no FORMAT"));
  EXPECT_FALSE(std::filesystem::exists(plain + "/LOCK"));
  std::filesystem::remove_all(plain);
}

TEST_F(VerifyCliTest, QuarantineRefusesAHealthyBatch) {
  auto [code, out] = Run({"quarantine", BatchIdOfDir(batches_[0])});
  EXPECT_EQ(code, 1) << out;
  EXPECT_THAT(out, HasSubstr("passed every check"));
  EXPECT_TRUE(std::filesystem::exists(batches_[0]));
}

TEST_F(VerifyCliTest, QuarantineOfSomethingNotABatchIdIsAUsageError) {
  auto [code, out] = Run({"quarantine", "../../etc"});
  EXPECT_EQ(code, 2) << out;
  EXPECT_THAT(out, HasSubstr("\"../../etc\""));
}

TEST_F(VerifyCliTest, QuarantineMovesACorruptBatchAndServeThenBoots) {
  Corrupt(batches_[2]);
  const std::string id = BatchIdOfDir(batches_[2]);
  auto [refused, boot] = RunToCompletion({kBinary, "serve", "--data-dir", dir_}, kServeEnv);
  EXPECT_EQ(refused, 1) << boot;
  EXPECT_THAT(boot, HasSubstr(fmt::format("`strata quarantine {}`", id)));
  EXPECT_THAT(boot, HasSubstr("docs/operations.md#corrupt-batch"));

  auto [code, out] = Run({"quarantine", id});
  EXPECT_EQ(code, 0) << out;
  EXPECT_THAT(out, HasSubstr(fmt::format("Quarantined batch {}", id)));
  const std::string moved =
      fmt::format("{}/telemetry/quarantine/{}/{}.batch", dir_, DayOfDir(batches_[2]), id);
  EXPECT_TRUE(std::filesystem::exists(moved + "/meta.json"));
  EXPECT_FALSE(std::filesystem::exists(batches_[2]));

  std::unique_ptr<Subprocess> server = StartServer();
  ASSERT_NE(server, nullptr);
  EXPECT_THAT(server->output(), HasSubstr("storage ready: 2 batches"));
  StopServer(*server);
  auto [verify_code, verify] = Run({"verify"});
  EXPECT_EQ(verify_code, 0) << verify;
  EXPECT_THAT(verify, Not(HasSubstr(id)));
}

TEST_F(VerifyCliTest, QuarantineRefusesWhileAServerHoldsTheLock) {
  std::unique_ptr<Subprocess> server = StartServer();
  ASSERT_NE(server, nullptr);
  Corrupt(batches_[0]);  // the server validated it at boot; now it is damaged
  auto [code, out] = Run({"quarantine", BatchIdOfDir(batches_[0])});
  EXPECT_EQ(code, 1) << out;
  EXPECT_THAT(out, HasSubstr("is in use"));
  EXPECT_THAT(out, HasSubstr("docs/operations.md#data-directory-in-use"));
  EXPECT_TRUE(std::filesystem::exists(batches_[0]));
  // Verify, beside the same server, sees the damage.
  auto [verify_code, verify] = Run({"verify"});
  EXPECT_EQ(verify_code, 3) << verify;
  StopServer(*server);
}

}  // namespace
}  // namespace strata
