// HTTPS on strata's HTTP listener (HttpServerOptions::tls, http_transport.h)
// and the certificate behind it (TlsServerContext, tls_context.h), against
// OpenSSL's own client: handshakes with a CA made at test time
// (testing/test_ca.h), keep-alive, large bodies both ways, plain HTTP on
// the TLS port, the connection cap's 503, and reloads: an open connection
// carries on with its certificate while a new one gets the new certificate,
// and a pair that cannot be used leaves the old one in place.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/numbers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/http_adapter.h"
#include "server/testing/raw_connection.h"
#include "server/testing/test_ca.h"
#include "server/tls_context.h"

namespace strata::server {
namespace {

using ::strata::server::testing::HttpAnswer;
using ::strata::server::testing::MakeTestPair;
using ::strata::server::testing::ParseHead;
using ::strata::server::testing::RawConnection;
using ::strata::server::testing::TestPair;
using ::testing::HasSubstr;

constexpr auto kWait = std::chrono::seconds(10);

// A blocking TLS client over one TCP connection to 127.0.0.1, trusting only
// `ca_pem` and checking the name "localhost", as curl and the SDKs do.
// Every wait is bounded by a 10 s socket timeout.
class TlsClient {
 public:
  TlsClient(uint16_t port, const std::string& ca_pem) {
    ctx_ = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
    if (SSL_CTX_load_verify_locations(ctx_, ca_pem.c_str(), nullptr) != 1) {
      error_ = "cannot load the CA";
      return;
    }
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    timeval timeout{.tv_sec = 10, .tv_usec = 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
      error_ = "connect failed";
      return;
    }
    ssl_ = SSL_new(ctx_);
    SSL_set_fd(ssl_, fd_);
    SSL_set_tlsext_host_name(ssl_, "localhost");
    SSL_set1_host(ssl_, "localhost");
    ERR_clear_error();
    if (SSL_connect(ssl_) != 1) {
      char text[256];
      ERR_error_string_n(ERR_get_error(), text, sizeof(text));
      error_ = text;
      return;
    }
    handshake_done_ = true;
  }
  ~TlsClient() {
    if (ssl_ != nullptr) SSL_free(ssl_);
    if (fd_ >= 0) close(fd_);
    SSL_CTX_free(ctx_);
  }
  TlsClient(const TlsClient&) = delete;
  TlsClient& operator=(const TlsClient&) = delete;

  bool handshake_done() const { return handshake_done_; }
  const std::string& error() const { return error_; }

  // The issuer of the certificate the server presented ("/CN=...").
  std::string Issuer() const {
    X509* cert = SSL_get1_peer_certificate(ssl_);
    if (cert == nullptr) return "";
    char name[256];
    X509_NAME_oneline(X509_get_issuer_name(cert), name, sizeof(name));
    X509_free(cert);
    return name;
  }

  // Sends `request` and reads one answer (with Content-Length).
  std::optional<HttpAnswer> Exchange(const std::string& request) {
    if (!handshake_done_) return std::nullopt;
    size_t sent = 0;
    while (sent < request.size()) {
      const int n = SSL_write(ssl_, request.data() + sent, static_cast<int>(request.size() - sent));
      if (n <= 0) return std::nullopt;
      sent += static_cast<size_t>(n);
    }
    for (;;) {
      const size_t end = buffer_.find("\r\n\r\n");
      if (end != std::string::npos) {
        HttpAnswer answer;
        if (!ParseHead(std::string_view(buffer_).substr(0, end), &answer)) return std::nullopt;
        size_t length = 0;
        if (!absl::SimpleAtoi(answer.Header("content-length"), &length)) return std::nullopt;
        if (buffer_.size() >= end + 4 + length) {
          answer.body = buffer_.substr(end + 4, length);
          buffer_.erase(0, end + 4 + length);
          return answer;
        }
      }
      char chunk[16384];
      const int n = SSL_read(ssl_, chunk, sizeof(chunk));
      if (n <= 0) return std::nullopt;
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

 private:
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  int fd_ = -1;
  bool handshake_done_ = false;
  std::string error_;
  std::string buffer_;
};

std::string Get(const std::string& path) {
  return "GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n";
}

class HttpTlsTest : public ::testing::Test {
 protected:
  // Two unrelated pairs, A and B, made once for the suite.
  static void SetUpTestSuite() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr ? tmp : "/tmp") + "/strata-tls-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = new std::string(pattern);
    std::string log;
    a_ = new TestPair();
    b_ = new TestPair();
    ASSERT_TRUE(MakeTestPair(*dir_ + "/a", "strata test CA A", a_, &log)) << log;
    ASSERT_TRUE(MakeTestPair(*dir_ + "/b", "strata test CA B", b_, &log)) << log;
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    std::filesystem::remove_all(*dir_, ec);
    delete dir_;
    delete a_;
    delete b_;
  }

  void SetUp() override {
    live_ = *dir_ + "/live-" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::create_directories(live_);
    Install(*a_);
  }

  // Copies a pair to where the server reads it.
  void Install(const TestPair& pair) { InstallFiles(pair.cert_pem, pair.key_pem); }
  void InstallFiles(const std::string& cert, const std::string& key) {
    std::filesystem::copy_file(cert, cert_path(),
                               std::filesystem::copy_options::overwrite_existing);
    std::filesystem::copy_file(key, key_path(), std::filesystem::copy_options::overwrite_existing);
  }
  std::string cert_path() const { return live_ + "/cert.pem"; }
  std::string key_path() const { return live_ + "/key.pem"; }

  // /hello answers "hello"; /size answers the request body's size; /big
  // answers 2 MiB.
  void StartServer(HttpServerOptions options = {}) {
    absl::StatusOr<std::shared_ptr<TlsServerContext>> tls =
        TlsServerContext::Load(cert_path(), key_path());
    ASSERT_TRUE(tls.ok()) << tls.status();
    tls_ = *tls;
    options.address = "127.0.0.1:0";
    options.tls = tls_;
    absl::StatusOr<std::unique_ptr<HttpServer>> server =
        HttpServer::Start(std::move(options), [](HttpRequest request, HttpResponder responder) {
          if (request.path() == "/size") {
            responder.Respond(HttpResponse::Text(200, std::to_string(request.body->size())));
          } else if (request.path() == "/big") {
            responder.Respond(HttpResponse::Text(200, std::string(2 << 20, 'x')));
          } else {
            responder.Respond(HttpResponse::Text(200, "hello"));
          }
        });
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }

  static std::string* dir_;
  static TestPair* a_;
  static TestPair* b_;
  std::string live_;
  std::shared_ptr<TlsServerContext> tls_;
  std::unique_ptr<HttpServer> server_;
};

std::string* HttpTlsTest::dir_ = nullptr;
TestPair* HttpTlsTest::a_ = nullptr;
TestPair* HttpTlsTest::b_ = nullptr;

TEST_F(HttpTlsTest, ServesHttpsWithTheCertificateOnAKeptAliveConnection) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  TlsClient client(server_->port(), a_->ca_pem);
  ASSERT_TRUE(client.handshake_done()) << client.error();
  EXPECT_EQ(client.Issuer(), "/CN=strata test CA A");
  for (int i = 0; i < 3; ++i) {
    std::optional<HttpAnswer> answer = client.Exchange(Get("/hello"));
    ASSERT_TRUE(answer.has_value()) << "request " << i;
    EXPECT_EQ(answer->status, 200);
    EXPECT_EQ(answer->body, "hello");
  }
  EXPECT_EQ(server_->GetStats().connections_accepted, 1u);
}

TEST_F(HttpTlsTest, AClientThatDoesNotTrustTheCaFailsTheHandshake) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  TlsClient client(server_->port(), b_->ca_pem);
  EXPECT_FALSE(client.handshake_done());
  EXPECT_THAT(client.error(), HasSubstr("certificate verify failed"));
}

TEST_F(HttpTlsTest, PlainHttpOnTheTlsPortGetsNoAnswer) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  RawConnection plain(server_->port());
  ASSERT_TRUE(plain.connected());
  ASSERT_TRUE(plain.Send(Get("/hello")));
  EXPECT_FALSE(plain.ReadAnswer(kWait).has_value());
  EXPECT_TRUE(plain.WaitClosed(kWait));
  // The listener is still fine.
  TlsClient client(server_->port(), a_->ca_pem);
  ASSERT_TRUE(client.handshake_done()) << client.error();
  EXPECT_TRUE(client.Exchange(Get("/hello")).has_value());
}

TEST_F(HttpTlsTest, LargeBodiesCrossTlsBothWays) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  TlsClient client(server_->port(), a_->ca_pem);
  ASSERT_TRUE(client.handshake_done()) << client.error();
  const std::string body(3 << 20, 'b');
  std::optional<HttpAnswer> upload = client.Exchange(
      "POST /size HTTP/1.1\r\nHost: localhost\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\n\r\n" + body);
  ASSERT_TRUE(upload.has_value());
  EXPECT_EQ(upload->body, std::to_string(body.size()));
  std::optional<HttpAnswer> download = client.Exchange(Get("/big"));
  ASSERT_TRUE(download.has_value());
  EXPECT_EQ(download->body, std::string(2 << 20, 'x'));
}

TEST_F(HttpTlsTest, ConnectionsOverTheCapGetTheir503OverTls) {
  HttpServerOptions options;
  options.max_connections = 1;
  ASSERT_NO_FATAL_FAILURE(StartServer(std::move(options)));
  TlsClient first(server_->port(), a_->ca_pem);
  ASSERT_TRUE(first.handshake_done()) << first.error();
  ASSERT_TRUE(first.Exchange(Get("/hello")).has_value());
  TlsClient second(server_->port(), a_->ca_pem);
  ASSERT_TRUE(second.handshake_done()) << second.error();
  // The refusal is written without waiting for a request; Exchange() reads it.
  std::optional<HttpAnswer> refused = second.Exchange(Get("/hello"));
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 503);
  EXPECT_THAT(refused->body, HasSubstr("too many open connections"));
}

TEST_F(HttpTlsTest, ReloadKeepsOpenConnectionsWhileNewOnesGetTheNewCertificate) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  TlsClient before(server_->port(), a_->ca_pem);
  ASSERT_TRUE(before.handshake_done()) << before.error();
  ASSERT_TRUE(before.Exchange(Get("/hello")).has_value());

  Install(*b_);
  ASSERT_TRUE(tls_->Reload().ok());

  // The open connection carries on with the certificate it began with.
  std::optional<HttpAnswer> again = before.Exchange(Get("/hello"));
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->body, "hello");
  EXPECT_EQ(before.Issuer(), "/CN=strata test CA A");
  // A new one gets B's, and A's CA no longer verifies it.
  TlsClient after(server_->port(), b_->ca_pem);
  ASSERT_TRUE(after.handshake_done()) << after.error();
  EXPECT_EQ(after.Issuer(), "/CN=strata test CA B");
  std::optional<HttpAnswer> answer = after.Exchange(Get("/hello"));
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->body, "hello");
  TlsClient stale(server_->port(), a_->ca_pem);
  EXPECT_FALSE(stale.handshake_done());
  EXPECT_TRUE(before.Exchange(Get("/hello")).has_value());
}

TEST_F(HttpTlsTest, AReloadThatCannotBeUsedKeepsThePairInUse) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  // B's certificate with A's key: a mismatched pair.
  InstallFiles(b_->cert_pem, a_->key_pem);
  absl::Status mismatched = tls_->Reload();
  EXPECT_EQ(mismatched.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(mismatched.message(), HasSubstr("does not match the certificate"));
  EXPECT_THAT(mismatched.message(), HasSubstr("#tls-certificate-or-key-unusable"));
  // A key file that is gone.
  std::filesystem::remove(key_path());
  EXPECT_THAT(tls_->Reload().message(), HasSubstr("cannot read it: No such file or directory"));
  // A certificate file that holds no certificate.
  InstallFiles(a_->key_pem, a_->key_pem);
  EXPECT_THAT(tls_->Reload().message(), HasSubstr("no PEM certificate"));

  TlsClient client(server_->port(), a_->ca_pem);
  ASSERT_TRUE(client.handshake_done()) << client.error();
  EXPECT_EQ(client.Issuer(), "/CN=strata test CA A");
  EXPECT_TRUE(client.Exchange(Get("/hello")).has_value());
}

TEST_F(HttpTlsTest, LoadRefusesWhatCannotBeServed) {
  EXPECT_THAT(TlsServerContext::Load(live_ + "/missing.pem", key_path()).status().message(),
              HasSubstr("--tls-cert " + live_ + "/missing.pem: cannot read it"));
  EXPECT_THAT(TlsServerContext::Load(b_->cert_pem, a_->key_pem).status().message(),
              HasSubstr("does not match the certificate"));
  // An encrypted key would need a passphrase; strata says so instead of
  // prompting.
  const std::string encrypted = live_ + "/encrypted.key";
  ASSERT_EQ(std::system(("openssl pkey -in '" + a_->key_pem +
                         "' -aes256 -passout pass:secret -out '" + encrypted + "' 2>/dev/null")
                            .c_str()),
            0);
  EXPECT_THAT(TlsServerContext::Load(a_->cert_pem, encrypted).status().message(),
              HasSubstr("an encrypted key is not supported"));
  absl::StatusOr<std::shared_ptr<TlsServerContext>> good =
      TlsServerContext::Load(a_->cert_pem, a_->key_pem);
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_THAT((*good)->description(), HasSubstr("CN=localhost"));
  EXPECT_THAT((*good)->description(), HasSubstr("DNS:localhost IP:127.0.0.1"));
  // The pair for gRPC: the chain, then the key.
  const std::string pem = (*good)->key_and_chain_pem();
  EXPECT_LT(pem.find("BEGIN CERTIFICATE"), pem.find("BEGIN PRIVATE KEY"));
}

}  // namespace
}  // namespace strata::server
