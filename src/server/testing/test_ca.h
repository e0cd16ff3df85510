#pragma once

// Test-only: a throwaway certificate authority and a server certificate it
// signed, made at test time with the openssl command (scripts/setup.sh
// --tests installs it), so no key is ever committed. The server certificate
// names localhost and 127.0.0.1 and is valid for a day. Used by the TLS unit
// tests (src/server) and the end-to-end TLS tests (tests/e2e). Header-only,
// no gtest.

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace strata::server::testing {

struct TestPair {
  std::string ca_pem;      // the CA's certificate, for clients to trust
  std::string cert_pem;    // the server's certificate (--tls-cert)
  std::string key_pem;     // its private key (--tls-key)
  std::string ca_key_pem;  // the CA's key; tests never serve it
};

// Makes a CA called `name` and a server pair under `dir` (created if
// needed). False when openssl failed; `log` then holds its output.
inline bool MakeTestPair(const std::string& dir, const std::string& name, TestPair* pair,
                         std::string* log) {
  std::filesystem::create_directories(dir);
  pair->ca_pem = dir + "/ca.pem";
  pair->ca_key_pem = dir + "/ca.key";
  pair->cert_pem = dir + "/server.pem";
  pair->key_pem = dir + "/server.key";
  const std::string csr = dir + "/server.csr";
  const std::string ext = dir + "/server.ext";
  const std::string out = dir + "/openssl.log";
  {
    std::ofstream file(ext);
    file << "subjectAltName=DNS:localhost,IP:127.0.0.1\n";
  }
  const std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";
  const std::string script =
      "openssl req -x509 " + ec + " -keyout '" + pair->ca_key_pem + "' -out '" + pair->ca_pem +
      "' -days 1 -subj '/CN=" + name + "' && openssl req " + ec + " -keyout '" + pair->key_pem +
      "' -out '" + csr + "' -subj /CN=localhost && openssl x509 -req -in '" + csr + "' -CA '" +
      pair->ca_pem + "' -CAkey '" + pair->ca_key_pem + "' -CAcreateserial -out '" + pair->cert_pem +
      "' -days 1 -extfile '" + ext + "'";
  const int rc = std::system(("(" + script + ") >'" + out + "' 2>&1").c_str());
  if (rc != 0 && log != nullptr) {
    std::ifstream file(out);
    *log = std::string(std::istreambuf_iterator<char>(file), {});
  }
  return rc == 0;
}

}  // namespace strata::server::testing
