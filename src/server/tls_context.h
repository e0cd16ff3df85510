#pragma once

// TLS for strata's listeners (`strata serve --tls-cert --tls-key`), on
// OpenSSL. tls_context.cc is strata's TLS adapter, the only file that
// includes OpenSSL's TLS headers (objectstore/digests.cc, a layer below,
// takes only libcrypto's hashes for S3 signing); nothing here exposes an
// OpenSSL type.
//
//  * TlsServerContext: the certificate chain and private key the listeners
//    present, read from two PEM files and checked to belong together.
//    Reload() reads the files again: handshakes that start afterwards use
//    the new pair, while connections already open keep the one they began
//    with (each holds a reference to it), so none is dropped. A pair that
//    cannot be used (a file unreadable, no certificate or key in it, a key
//    that does not match the certificate) is refused, and the pair in use
//    stays. The HTTP listeners take their connections from it; OTLP/gRPC,
//    which has its own TLS stack, takes the same pair as PEM text
//    (key_and_chain_pem()).
//  * TlsConnection: one server connection's TLS over memory buffers. Bytes
//    from the socket go in with Feed(); Read() and Write() move plaintext
//    (the handshake runs inside them); whatever must go to the socket
//    (handshake messages, records, alerts) comes out of TakeOutput(). The
//    caller owns the socket and the waiting (http_transport.h drives it from
//    Asio).
//
// TLS 1.2 and 1.3 only; renegotiation refused; no client certificates.
//
// Thread-safety: TlsServerContext is safe for concurrent use. A
// TlsConnection has a single owner (one connection's strand).
//
// Errors: Load() and Reload() return FailedPrecondition naming the flag, the
// file and what is wrong with it, and the runbook section.

#include <cstddef>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"

namespace strata::server {

class TlsConnection {
 public:
  enum class Result {
    kDone,      // the bytes were read or written
    kWantRead,  // Feed() more bytes from the socket (after sending TakeOutput())
    kClosed,    // the peer ended TLS (close_notify)
    kFailed,    // a protocol error or a failed handshake: close the connection
  };

  ~TlsConnection();
  TlsConnection(const TlsConnection&) = delete;
  TlsConnection& operator=(const TlsConnection&) = delete;

  // Bytes received from the socket.
  void Feed(const char* data, size_t size);
  // Up to `capacity` bytes of plaintext into `out`; *read says how many
  // (kDone only with at least one).
  Result Read(char* out, size_t capacity, size_t* read);
  // All of `size` bytes of plaintext (kDone), as records waiting in
  // TakeOutput().
  Result Write(const char* data, size_t size);
  // Queues TLS's close_notify alert (once the handshake is done).
  void Close();

  bool HasOutput() const;
  // Appends the bytes waiting for the socket to *out and forgets them.
  void TakeOutput(std::string* out);

  bool handshake_done() const;
  // What the last kFailed was about (OpenSSL's reason).
  const std::string& error() const { return error_; }

 private:
  friend class TlsServerContext;
  struct State;
  explicit TlsConnection(std::unique_ptr<State> state);

  Result Outcome(int ret, size_t* done);

  std::unique_ptr<State> state_;
  std::string error_;
};

class TlsServerContext {
 public:
  // Reads and checks the pair; `cert_path` holds the certificate and then
  // any intermediates, `key_path` an unencrypted private key.
  [[nodiscard]] static absl::StatusOr<std::shared_ptr<TlsServerContext>> Load(std::string cert_path,
                                                                              std::string key_path);
  ~TlsServerContext();
  TlsServerContext(const TlsServerContext&) = delete;
  TlsServerContext& operator=(const TlsServerContext&) = delete;

  // Reads the files again. OK: new connections use the new pair. An error:
  // nothing changed.
  [[nodiscard]] absl::Status Reload() ABSL_LOCKS_EXCLUDED(mu_);

  // A server connection with the pair in use now.
  std::unique_ptr<TlsConnection> NewConnection() const ABSL_LOCKS_EXCLUDED(mu_);

  // The pair in use, as one PEM text: the certificate chain, then the key.
  std::string key_and_chain_pem() const ABSL_LOCKS_EXCLUDED(mu_);
  // For the log: the certificate's subject, names and expiry.
  std::string description() const ABSL_LOCKS_EXCLUDED(mu_);

  const std::string& cert_path() const { return cert_path_; }
  const std::string& key_path() const { return key_path_; }

 private:
  struct Pair;
  TlsServerContext(std::string cert_path, std::string key_path);
  static absl::StatusOr<std::shared_ptr<const Pair>> ReadPair(const std::string& cert_path,
                                                              const std::string& key_path);
  std::shared_ptr<const Pair> current() const ABSL_LOCKS_EXCLUDED(mu_);

  // Constant after construction.
  const std::string cert_path_;
  const std::string key_path_;

  mutable Mutex mu_;
  std::shared_ptr<const Pair> pair_ ABSL_GUARDED_BY(mu_);
};

}  // namespace strata::server
