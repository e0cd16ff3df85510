#include "objectstore/sigv4.h"

#include <algorithm>
#include <ctime>

#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"
#include "fmt/format.h"
#include "objectstore/digests.h"

namespace strata::objectstore {
namespace {

// Header values are trimmed and runs of spaces inside become one space.
std::string CanonicalHeaderValue(std::string_view value) {
  std::string trimmed(value);
  absl::StripAsciiWhitespace(&trimmed);
  std::string out;
  bool space = false;
  for (char c : trimmed) {
    if (c == ' ' || c == '\t') {
      space = true;
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

}  // namespace

std::string UriEncode(std::string_view text, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved || (keep_slash && c == '/')) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string CanonicalQueryString(std::vector<std::pair<std::string, std::string>> query) {
  std::vector<std::pair<std::string, std::string>> encoded;
  encoded.reserve(query.size());
  for (auto& [name, value] : query) {
    encoded.emplace_back(UriEncode(name, false), UriEncode(value, false));
  }
  std::sort(encoded.begin(), encoded.end());
  std::vector<std::string> parts;
  parts.reserve(encoded.size());
  for (auto& [name, value] : encoded) parts.push_back(name + "=" + value);
  return absl::StrJoin(parts, "&");
}

std::string AmzDate(int64_t unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}{:02}{:02}T{:02}{:02}{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

SigV4Signature SignV4(const SigV4Credentials& credentials, std::string_view region,
                      std::string_view service, std::string_view amz_date,
                      const SigV4Request& request) {
  std::vector<std::pair<std::string, std::string>> headers;
  headers.reserve(request.headers.size());
  for (const auto& [name, value] : request.headers) {
    headers.emplace_back(absl::AsciiStrToLower(std::string(name)), CanonicalHeaderValue(value));
  }
  std::sort(headers.begin(), headers.end());
  std::string canonical_headers;
  std::vector<std::string> names;
  for (const auto& [name, value] : headers) {
    canonical_headers += name + ":" + value + "\n";
    names.push_back(name);
  }
  std::string signed_headers = absl::StrJoin(names, ";");

  SigV4Signature out;
  out.canonical_request =
      fmt::format("{}\n{}\n{}\n{}\n{}\n{}", request.method, UriEncode(request.path, true),
                  CanonicalQueryString(request.query), canonical_headers, signed_headers,
                  request.payload_sha256_hex);
  std::string_view date = amz_date.substr(0, 8);
  std::string scope = fmt::format("{}/{}/{}/aws4_request", date, region, service);
  out.string_to_sign = fmt::format("AWS4-HMAC-SHA256\n{}\n{}\n{}", amz_date, scope,
                                   HexLower(Sha256(out.canonical_request)));
  std::string key = HmacSha256("AWS4" + credentials.secret_access_key, date);
  key = HmacSha256(key, region);
  key = HmacSha256(key, service);
  key = HmacSha256(key, "aws4_request");
  out.signature_hex = HexLower(HmacSha256(key, out.string_to_sign));
  out.authorization =
      fmt::format("AWS4-HMAC-SHA256 Credential={}/{},SignedHeaders={},Signature={}",
                  credentials.access_key_id, scope, signed_headers, out.signature_hex);
  return out;
}

}  // namespace strata::objectstore
