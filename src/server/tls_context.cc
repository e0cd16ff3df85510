// OpenSSL behind tls_context.h. The only file of strata that includes
// OpenSSL headers.
//
// Reload without dropping connections: every connection's SSL object holds
// a reference to the SSL_CTX it was made from (SSL_new takes one), so
// replacing the context in use only changes what new connections get; an
// old context is freed when its last connection is.

#include "server/tls_context.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <vector>

#include "common/runbook.h"
#include "fmt/format.h"

namespace strata::server {
namespace {

// A certificate chain or key file is small; anything larger is not one.
constexpr size_t kMaxPemFileBytes = 1 << 20;
// Offered to clients that send ALPN (curl does): the listeners speak
// HTTP/1.1 only.
constexpr unsigned char kAlpnHttp11[] = "\x08http/1.1";

// OpenSSL's queued errors as one line, oldest first; clears the queue.
std::string TakeOpenSslErrors() {
  std::string out;
  for (unsigned long code = ERR_get_error(); code != 0; code = ERR_get_error()) {
    char text[256];
    ERR_error_string_n(code, text, sizeof(text));
    if (!out.empty()) out += "; ";
    out += text;
  }
  return out.empty() ? "no detail from OpenSSL" : out;
}

// Encrypted keys would make OpenSSL prompt on the terminal; strata refuses
// them instead.
int NoPassword(char*, int, int, void*) { return 0; }

int SelectAlpn(SSL*, const unsigned char** out, unsigned char* out_size, const unsigned char* in,
               unsigned int in_size, void*) {
  unsigned char* chosen = nullptr;
  if (SSL_select_next_proto(&chosen, out_size, kAlpnHttp11, sizeof(kAlpnHttp11) - 1, in, in_size) !=
      OPENSSL_NPN_NEGOTIATED) {
    return SSL_TLSEXT_ERR_NOACK;
  }
  *out = chosen;
  return SSL_TLSEXT_ERR_OK;
}

absl::Status LoadError(std::string message) {
  return absl::FailedPreconditionError(
      fmt::format("{}; {}", message, RunbookRef("tls-certificate-or-key-unusable")));
}

absl::StatusOr<std::string> ReadPemFile(const char* flag, const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    return LoadError(fmt::format("{} {}: cannot read it: {}", flag, path, std::strerror(errno)));
  }
  std::string text;
  char buffer[8192];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0 && text.size() <= kMaxPemFileBytes) {
    text.append(buffer, n);
  }
  const bool failed = std::ferror(file) != 0;
  const int error = errno;
  std::fclose(file);
  if (failed) {
    return LoadError(fmt::format("{} {}: cannot read it: {}", flag, path, std::strerror(error)));
  }
  if (text.size() > kMaxPemFileBytes) {
    return LoadError(fmt::format("{} {}: larger than {} bytes, so not a PEM file", flag, path,
                                 kMaxPemFileBytes));
  }
  return text;
}

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct X509Free {
  void operator()(X509* cert) const { X509_free(cert); }
};
struct KeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct CtxFree {
  void operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;
using KeyPtr = std::unique_ptr<EVP_PKEY, KeyFree>;
using CtxPtr = std::unique_ptr<SSL_CTX, CtxFree>;

BioPtr MemoryBio(const std::string& text) {
  return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

std::string BioText(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  return size > 0 ? std::string(data, static_cast<size_t>(size)) : std::string();
}

// "CN=api.example.com, names DNS:api.example.com IP:10.0.0.5, valid until
// Jun 14 09:30:15 2027 GMT".
std::string Describe(X509* cert) {
  BioPtr out(BIO_new(BIO_s_mem()));
  X509_NAME_print_ex(out.get(), X509_get_subject_name(cert), 0, XN_FLAG_RFC2253);
  std::string text = BioText(out.get());
  std::string names;
  if (auto* sans = static_cast<GENERAL_NAMES*>(
          X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr))) {
    for (int i = 0; i < sk_GENERAL_NAME_num(sans); ++i) {
      const GENERAL_NAME* name = sk_GENERAL_NAME_value(sans, i);
      if (name->type == GEN_DNS) {
        const ASN1_STRING* dns = name->d.dNSName;
        names += fmt::format(
            " DNS:{}", std::string_view(reinterpret_cast<const char*>(ASN1_STRING_get0_data(dns)),
                                        ASN1_STRING_length(dns)));
      } else if (name->type == GEN_IPADD) {
        const ASN1_OCTET_STRING* ip = name->d.iPAddress;
        const unsigned char* bytes = ASN1_STRING_get0_data(ip);
        if (ASN1_STRING_length(ip) == 4) {
          names += fmt::format(" IP:{}.{}.{}.{}", bytes[0], bytes[1], bytes[2], bytes[3]);
        } else {
          names += " IP:(IPv6)";
        }
      }
    }
    GENERAL_NAMES_free(sans);
  }
  BioPtr expiry(BIO_new(BIO_s_mem()));
  ASN1_TIME_print(expiry.get(), X509_get0_notAfter(cert));
  const bool expired = X509_cmp_current_time(X509_get0_notAfter(cert)) < 0;
  return fmt::format("{}{}{}, valid until {}{}", text.empty() ? "(no subject)" : text,
                     names.empty() ? "" : ", names", names, BioText(expiry.get()),
                     expired ? " (EXPIRED: clients will refuse it)" : "");
}

}  // namespace

// ---------------------------------------------------------------------------
// TlsConnection

struct TlsConnection::State {
  SSL* ssl = nullptr;
  BIO* input = nullptr;   // owned by ssl
  BIO* output = nullptr;  // owned by ssl
  ~State() { SSL_free(ssl); }
};

TlsConnection::TlsConnection(std::unique_ptr<State> state) : state_(std::move(state)) {}
TlsConnection::~TlsConnection() = default;

void TlsConnection::Feed(const char* data, size_t size) {
  while (size > 0) {
    const int chunk = static_cast<int>(std::min<size_t>(size, INT_MAX));
    const int written = BIO_write(state_->input, data, chunk);
    if (written <= 0) return;  // out of memory: the next Read() fails
    data += written;
    size -= static_cast<size_t>(written);
  }
}

TlsConnection::Result TlsConnection::Outcome(int ret, size_t* done) {
  if (ret > 0) {
    if (done != nullptr) *done = static_cast<size_t>(ret);
    return Result::kDone;
  }
  switch (SSL_get_error(state_->ssl, ret)) {
    case SSL_ERROR_WANT_READ:
      return Result::kWantRead;
    case SSL_ERROR_ZERO_RETURN:
      return Result::kClosed;
    default:
      error_ = TakeOpenSslErrors();
      return Result::kFailed;
  }
}

TlsConnection::Result TlsConnection::Read(char* out, size_t capacity, size_t* read) {
  *read = 0;
  if (capacity == 0) return Result::kDone;
  ERR_clear_error();
  return Outcome(SSL_read(state_->ssl, out, static_cast<int>(std::min<size_t>(capacity, INT_MAX))),
                 read);
}

TlsConnection::Result TlsConnection::Write(const char* data, size_t size) {
  // The output is a memory buffer, so a write takes everything at once
  // (no partial writes) unless the handshake still needs the peer.
  while (size > 0) {
    const int chunk = static_cast<int>(std::min<size_t>(size, 1 << 30));
    ERR_clear_error();
    size_t written = 0;
    const Result result = Outcome(SSL_write(state_->ssl, data, chunk), &written);
    if (result != Result::kDone) return result;
    data += written;
    size -= written;
  }
  return Result::kDone;
}

void TlsConnection::Close() {
  if (!SSL_is_init_finished(state_->ssl)) return;
  ERR_clear_error();
  SSL_shutdown(state_->ssl);
  ERR_clear_error();
}

bool TlsConnection::HasOutput() const { return BIO_ctrl_pending(state_->output) > 0; }

void TlsConnection::TakeOutput(std::string* out) {
  const size_t pending = BIO_ctrl_pending(state_->output);
  if (pending == 0) return;
  const size_t start = out->size();
  out->resize(start + pending);
  const int got = BIO_read(state_->output, out->data() + start, static_cast<int>(pending));
  out->resize(start + static_cast<size_t>(std::max(got, 0)));
}

bool TlsConnection::handshake_done() const { return SSL_is_init_finished(state_->ssl) == 1; }

// ---------------------------------------------------------------------------
// TlsServerContext

struct TlsServerContext::Pair {
  CtxPtr ctx;
  std::string key_and_chain_pem;
  std::string description;
};

TlsServerContext::TlsServerContext(std::string cert_path, std::string key_path)
    : cert_path_(std::move(cert_path)), key_path_(std::move(key_path)) {}

TlsServerContext::~TlsServerContext() = default;

absl::StatusOr<std::shared_ptr<TlsServerContext>> TlsServerContext::Load(std::string cert_path,
                                                                         std::string key_path) {
  absl::StatusOr<std::shared_ptr<const Pair>> pair = ReadPair(cert_path, key_path);
  if (!pair.ok()) return pair.status();
  std::shared_ptr<TlsServerContext> context(
      new TlsServerContext(std::move(cert_path), std::move(key_path)));
  MutexLock lock(&context->mu_);
  context->pair_ = std::move(*pair);
  return context;
}

absl::Status TlsServerContext::Reload() {
  absl::StatusOr<std::shared_ptr<const Pair>> pair = ReadPair(cert_path_, key_path_);
  if (!pair.ok()) return pair.status();
  MutexLock lock(&mu_);
  pair_ = std::move(*pair);
  return absl::OkStatus();
}

std::shared_ptr<const TlsServerContext::Pair> TlsServerContext::current() const {
  MutexLock lock(&mu_);
  return pair_;
}

std::string TlsServerContext::key_and_chain_pem() const { return current()->key_and_chain_pem; }

std::string TlsServerContext::description() const { return current()->description; }

std::unique_ptr<TlsConnection> TlsServerContext::NewConnection() const {
  const std::shared_ptr<const Pair> pair = current();
  auto state = std::make_unique<TlsConnection::State>();
  state->ssl = SSL_new(pair->ctx.get());
  state->input = BIO_new(BIO_s_mem());
  state->output = BIO_new(BIO_s_mem());
  if (state->ssl == nullptr || state->input == nullptr || state->output == nullptr) {
    BIO_free(state->input);
    BIO_free(state->output);
    ERR_clear_error();
    return nullptr;
  }
  // An empty input buffer means "wait for more", not end of file.
  BIO_set_mem_eof_return(state->input, -1);
  SSL_set_bio(state->ssl, state->input, state->output);
  SSL_set_accept_state(state->ssl);
  return std::unique_ptr<TlsConnection>(new TlsConnection(std::move(state)));
}

absl::StatusOr<std::shared_ptr<const TlsServerContext::Pair>> TlsServerContext::ReadPair(
    const std::string& cert_path, const std::string& key_path) {
  absl::StatusOr<std::string> cert_text = ReadPemFile("--tls-cert", cert_path);
  if (!cert_text.ok()) return cert_text.status();
  absl::StatusOr<std::string> key_text = ReadPemFile("--tls-key", key_path);
  if (!key_text.ok()) return key_text.status();
  ERR_clear_error();

  BioPtr cert_bio = MemoryBio(*cert_text);
  X509Ptr leaf(PEM_read_bio_X509_AUX(cert_bio.get(), nullptr, NoPassword, nullptr));
  if (leaf == nullptr) {
    ERR_clear_error();
    return LoadError(fmt::format("--tls-cert {}: no PEM certificate in it", cert_path));
  }
  std::vector<X509Ptr> chain;
  while (X509* next = PEM_read_bio_X509(cert_bio.get(), nullptr, NoPassword, nullptr)) {
    chain.emplace_back(next);
  }
  ERR_clear_error();  // the end of the file reads as "no start line"
  BioPtr key_bio = MemoryBio(*key_text);
  KeyPtr key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, NoPassword, nullptr));
  if (key == nullptr) {
    ERR_clear_error();
    return LoadError(fmt::format(
        "--tls-key {}: no PEM private key in it (an encrypted key is not supported)", key_path));
  }

  CtxPtr ctx(SSL_CTX_new(TLS_server_method()));
  if (ctx == nullptr) {
    return absl::InternalError(fmt::format("cannot create a TLS context: {}", TakeOpenSslErrors()));
  }
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  SSL_CTX_set_options(
      ctx.get(), SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_COMPRESSION);
  // An idle keep-alive connection gives its read and write buffers back.
  SSL_CTX_set_mode(ctx.get(), SSL_MODE_RELEASE_BUFFERS);
  SSL_CTX_set_alpn_select_cb(ctx.get(), SelectAlpn, nullptr);
  if (SSL_CTX_use_certificate(ctx.get(), leaf.get()) != 1) {
    return LoadError(fmt::format("--tls-cert {}: the certificate cannot be used: {}", cert_path,
                                 TakeOpenSslErrors()));
  }
  for (const X509Ptr& cert : chain) {
    if (SSL_CTX_add1_chain_cert(ctx.get(), cert.get()) != 1) {
      return LoadError(fmt::format("--tls-cert {}: a chain certificate cannot be used: {}",
                                   cert_path, TakeOpenSslErrors()));
    }
  }
  if (SSL_CTX_use_PrivateKey(ctx.get(), key.get()) != 1 ||
      SSL_CTX_check_private_key(ctx.get()) != 1) {
    ERR_clear_error();
    return LoadError(
        fmt::format("--tls-key {} does not match the certificate in --tls-cert {} (a key and a "
                    "certificate from different pairs)",
                    key_path, cert_path));
  }

  // The same pair in canonical PEM, for gRPC: the chain, then the key.
  BioPtr pem(BIO_new(BIO_s_mem()));
  bool written = PEM_write_bio_X509(pem.get(), leaf.get()) == 1;
  for (const X509Ptr& cert : chain) written = written && PEM_write_bio_X509(pem.get(), cert.get());
  written = written && PEM_write_bio_PrivateKey(pem.get(), key.get(), nullptr, nullptr, 0, nullptr,
                                                nullptr) == 1;
  if (!written) {
    return absl::InternalError(
        fmt::format("cannot encode the TLS pair as PEM: {}", TakeOpenSslErrors()));
  }
  auto pair = std::make_shared<Pair>();
  pair->ctx = std::move(ctx);
  pair->key_and_chain_pem = BioText(pem.get());
  pair->description = Describe(leaf.get());
  return std::shared_ptr<const Pair>(std::move(pair));
}

}  // namespace strata::server
