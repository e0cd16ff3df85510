#include "objectstore/digests.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "common/check.h"

namespace strata::objectstore {
namespace {

std::string Digest(const EVP_MD* md, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  int ok = EVP_Digest(data.data(), data.size(), out, &n, md, nullptr);
  STRATA_CHECK(ok == 1, "EVP_Digest failed");
  return std::string(reinterpret_cast<const char*>(out), n);
}

}  // namespace

std::string Sha256(std::string_view data) { return Digest(EVP_sha256(), data); }

std::string Md5(std::string_view data) { return Digest(EVP_md5(), data); }

std::string HmacSha256(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  unsigned char* result =
      HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &n);
  STRATA_CHECK(result != nullptr, "HMAC-SHA-256 failed");
  return std::string(reinterpret_cast<const char*>(out), n);
}

std::string HexLower(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

std::string Base64(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<int>(bytes.size()));
  out.resize(n);
  return out;
}

}  // namespace strata::objectstore
