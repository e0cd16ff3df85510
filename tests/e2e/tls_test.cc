// `strata serve --tls-cert --tls-key` against real TLS clients, with a CA
// made at test time (server/testing/test_ca.h): curl --cacert to the API
// (health, the web UI, first-boot setup and its __Host- cookie) and to
// OTLP/HTTP; plain HTTP and an untrusted CA failing on every listener; the
// OpenTelemetry JS SDK's exporters over gRPC and HTTP trusting that CA, with
// their rows read back from the Parquet files; SIGHUP switching every
// listener to a new certificate, and a bad pair on SIGHUP keeping it; and
// the startup refusals of docs/operations.md, "TLS certificate or key
// unusable".

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "e2e/server_process.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/testing/test_ca.h"

namespace strata::testing {
namespace {

using ::strata::server::testing::MakeTestPair;
using ::strata::server::testing::TestPair;
using ::testing::HasSubstr;

constexpr char kSpanJson[] =
    R"({"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"tls-curl"}}]},"scopeSpans":[{"spans":[{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":"hello","kind":2,"startTimeUnixNano":"1700000000000000000","endTimeUnixNano":"1700000000100000000"}]}]}]})";

// "127.0.0.1:port" as the certificate's other name, localhost.
std::string Localhost(const std::string& address) {
  return "localhost" + address.substr(address.rfind(':'));
}

// The OpenTelemetry JS SDK sending traces, logs and metrics, trusting `ca`.
std::pair<int, std::string> RunSdk(const std::string& protocol, const std::string& target,
                                   const std::string& token, const std::string& run_id,
                                   const std::string& ca) {
  std::vector<std::string> env = ChildEnvironment();
  env.push_back("STRATA_E2E_CA=" + ca);
  return RunToCompletion({STRATA_NODE, std::string(STRATA_E2E_DIR) + "/otel_send.mjs", protocol,
                          target, token, run_id},
                         env);
}

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string log;
    ASSERT_TRUE(MakeTestPair(dir_.path() + "/a", "strata e2e CA A", &a_, &log)) << log;
    ASSERT_TRUE(MakeTestPair(dir_.path() + "/b", "strata e2e CA B", &b_, &log)) << log;
    Install(a_.cert_pem, a_.key_pem);
  }

  void Install(const std::string& cert, const std::string& key) {
    std::filesystem::copy_file(cert, cert_path(),
                               std::filesystem::copy_options::overwrite_existing);
    std::filesystem::copy_file(key, key_path(), std::filesystem::copy_options::overwrite_existing);
  }
  std::string cert_path() const { return dir_.path() + "/cert.pem"; }
  std::string key_path() const { return dir_.path() + "/key.pem"; }
  std::string data() const { return dir_.path() + "/data"; }
  std::vector<std::string> TlsFlags() const {
    return {"--tls-cert", cert_path(), "--tls-key", key_path()};
  }

  TempDir dir_{"e2e-tls"};
  TestPair a_, b_;
};

TEST_F(TlsTest, EveryListenerServesTlsToCurlAndTheSdkAndReloadsOnSighup) {
  ServerProcess server(data(), TlsFlags());
  ASSERT_TRUE(server.ready()) << server.output();
  ASSERT_FALSE(server.first_token().empty()) << server.output();
  EXPECT_THAT(server.output(), HasSubstr("API listening on " + server.api_address() + " (TLS)"));
  EXPECT_THAT(server.output(), HasSubstr("https://127.0.0.1:"));  // the setup link
  const std::string api = "https://" + Localhost(server.api_address());
  const std::string otlp = "https://" + Localhost(server.http_address());
  const std::string token = server.first_token();

  // The API and the web UI over HTTPS.
  EXPECT_EQ(Curl({"--cacert", a_.ca_pem, api + "/healthz"}),
            std::make_pair(200, std::string("ok\n")));
  EXPECT_EQ(Curl({"--cacert", a_.ca_pem, api + "/"}).first, 200);
  // First-boot setup over TLS signs in with the __Host- cookie, Secure.
  const std::string headers = dir_.path() + "/setup-headers";
  auto [setup_status, setup_body] = Curl(
      {"--cacert", a_.ca_pem, "-D", headers, "-H", "Content-Type: application/json", "-H",
       "X-Strata-Request: 1", "-d",
       fmt::format(
           R"({{"token":"{}","email":"ada@example.com","name":"Ada","password":"correct horse battery"}})",
           server.setup_token()),
       api + "/api/v1/auth/setup"});
  EXPECT_EQ(setup_status, 201) << setup_body;
  std::ifstream header_file(headers);
  const std::string setup_headers(std::istreambuf_iterator<char>(header_file), {});
  EXPECT_THAT(setup_headers, HasSubstr("Set-Cookie: __Host-strata_session="));
  EXPECT_THAT(setup_headers, HasSubstr("; Secure"));

  // OTLP/HTTP over HTTPS.
  EXPECT_EQ(Curl({"--cacert", a_.ca_pem, "-H", "Authorization: Bearer " + token, "-H",
                  "Content-Type: application/json", "-d", kSpanJson, otlp + "/v1/traces"})
                .first,
            200);
  // Plain HTTP gets no HTTP answer, and a client without the CA refuses
  // the certificate, on both listeners.
  for (const std::string& address : {server.api_address(), server.http_address()}) {
    SCOPED_TRACE(address);
    EXPECT_EQ(Curl({"http://" + address + "/healthz"}).first, 0);
    EXPECT_EQ(Curl({"--cacert", b_.ca_pem, "https://" + Localhost(address) + "/healthz"}).first, 0);
  }

  // The OpenTelemetry JS SDK over gRPC and HTTP, trusting the CA.
  for (const std::string protocol : {"grpc", "http/protobuf"}) {
    const std::string target =
        Localhost(protocol == "grpc" ? server.grpc_address() : server.http_address());
    auto [code, output] = RunSdk(protocol, target, token, "before", a_.ca_pem);
    EXPECT_EQ(code, 0) << protocol << ":\n" << output;
  }
  auto [untrusted, untrusted_output] =
      RunSdk("grpc", Localhost(server.grpc_address()), token, "untrusted", b_.ca_pem);
  EXPECT_NE(untrusted, 0) << untrusted_output;

  // SIGHUP with a pair that does not match: logged, the old pair stays.
  Install(b_.cert_pem, a_.key_pem);
  server.Signal(SIGHUP);
  ASSERT_TRUE(server.WaitForOutput("kept the TLS certificate in use", std::chrono::seconds(10)))
      << server.output();
  EXPECT_THAT(server.output(), HasSubstr("#tls-certificate-or-key-unusable"));
  EXPECT_EQ(Curl({"--cacert", a_.ca_pem, api + "/healthz"}).first, 200);

  // SIGHUP with pair B: every listener presents it to new connections.
  Install(b_.cert_pem, b_.key_pem);
  server.Signal(SIGHUP);
  ASSERT_TRUE(server.WaitForOutput("reloaded the TLS certificate", std::chrono::seconds(10)))
      << server.output();
  EXPECT_EQ(Curl({"--cacert", b_.ca_pem, api + "/healthz"}).first, 200);
  EXPECT_EQ(Curl({"--cacert", a_.ca_pem, api + "/healthz"}).first, 0);
  EXPECT_EQ(Curl({"--cacert", b_.ca_pem, "-H", "Authorization: Bearer " + token, "-H",
                  "Content-Type: application/json", "-d", kSpanJson, otlp + "/v1/traces"})
                .first,
            200);
  // gRPC reads the new pair within GrpcServer::kTlsRefreshSeconds (1 s):
  // wait until a handshake that trusts only B's CA succeeds there (curl
  // gets an HTTP status from the gRPC server; 0 while the old pair is
  // served), then send with the SDK.
  const std::string grpc_url = "https://" + Localhost(server.grpc_address()) + "/";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (Curl({"--cacert", b_.ca_pem, "--http2", grpc_url}).first == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_NE(Curl({"--cacert", b_.ca_pem, "--http2", grpc_url}).first, 0)
      << "the gRPC listener did not present the reloaded pair within 10 s";
  auto [after, after_output] =
      RunSdk("grpc", Localhost(server.grpc_address()), token, "after", b_.ca_pem);
  EXPECT_EQ(after, 0) << after_output;
  ASSERT_EQ(server.Stop(), 0) << server.output();

  // What the SDK was told was stored is in the Parquet files.
  auto engine = query::DuckDbEngine::Open({});
  ASSERT_TRUE(engine.ok()) << engine.status();
  ASSERT_TRUE(CreateTableView(**engine, data(), "spans"));
  auto count = (*engine)->Query(
      "SELECT resource_attr_str[list_position(resource_attr_keys, 'strata.run_id')] AS run, "
      "service_name, count(*) FROM spans WHERE row_kind = 0 GROUP BY ALL ORDER BY ALL");
  ASSERT_TRUE(count.ok()) << count.status();
  std::vector<std::string> rows;
  for (const auto& row : count->rows) {
    rows.push_back(
        fmt::format("{} {} {}", row[0].value_or("-"), row[1].value_or("-"), row[2].value_or("-")));
  }
  EXPECT_THAT(rows, ::testing::ElementsAre("after e2e-grpc 9", "before e2e-grpc 9",
                                           "before e2e-http/protobuf 9", "- tls-curl 2"));
}

TEST_F(TlsTest, UnusableTlsFlagsStopServeBeforeItStarts) {
  struct Case {
    std::vector<std::string> flags;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--tls-cert", cert_path()}, "--tls-cert is given without --tls-key"},
      {{"--tls-key", key_path()}, "--tls-key is given without --tls-cert"},
      {{"--tls-cert", dir_.path() + "/nope.pem", "--tls-key", key_path()}, "cannot read it"},
      {{"--tls-cert", b_.cert_pem, "--tls-key", a_.key_pem}, "does not match the certificate"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    std::vector<std::string> args = {"serve",         "--data-dir",          data(),
                                     "--api-address", "127.0.0.1:0",         "--otlp-grpc-address",
                                     "127.0.0.1:0",   "--otlp-http-address", "127.0.0.1:0"};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    auto [code, output] = RunStrata(args);
    EXPECT_EQ(code, 2) << output;
    EXPECT_THAT(output, HasSubstr(c.message));
    EXPECT_THAT(output, HasSubstr("see docs/operations.md#tls-certificate-or-key-unusable"));
    EXPECT_THAT(output, ::testing::Not(HasSubstr("listening")));
  }
  EXPECT_FALSE(std::filesystem::exists(data())) << "nothing was started";
}

}  // namespace
}  // namespace strata::testing
