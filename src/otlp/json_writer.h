#pragma once

// JsonWriter appends one JSON text to a std::string: objects, arrays, keys,
// escaped strings, numbers, lowercase hex and base64 strings.
//
// Commas are placed automatically: every value or key written after another
// one at the same level is preceded by ','. The writer does not check that
// calls nest correctly; the encoders that drive it are the only callers.
//
// Strings are escaped per RFC 8259: '"' and '\' by a backslash, control
// characters below U+0020 as \b \f \n \r \t or \u00XX, everything else
// verbatim. Input must be UTF-8; a byte that does not start a well-formed
// UTF-8 sequence (RFC 3629: no overlongs, surrogates or code points above
// U+10FFFF) is replaced by U+FFFD, so the output is always valid JSON.
//
// Doubles are written in the shortest form that parses back to the same bits
// (std::to_chars); integral values get a ".0" so every double reads as a JSON
// floating-point number. NaN and the infinities, which JSON lacks, are written
// as the strings "NaN", "Infinity" and "-Infinity" (protobuf JSON mapping).
//
// Thread-safety: single owner. Errors: none.

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

namespace strata::otlp {

class JsonWriter {
 public:
  explicit JsonWriter(std::string* out) : out_(out) {}

  void BeginObject() {
    Separate();
    out_->push_back('{');
    need_comma_ = false;
  }
  void EndObject() {
    out_->push_back('}');
    need_comma_ = true;
  }
  void BeginArray() {
    Separate();
    out_->push_back('[');
    need_comma_ = false;
  }
  void EndArray() {
    out_->push_back(']');
    need_comma_ = true;
  }

  // Writes `"name":`. `name` is a field name from the OTLP schema: plain
  // ASCII that needs no escaping.
  void Key(std::string_view name) {
    Separate();
    out_->push_back('"');
    out_->append(name);
    out_->append("\":", 2);
    need_comma_ = false;
  }

  void String(std::string_view utf8) {
    Separate();
    out_->push_back('"');
    AppendEscaped(utf8, out_);
    out_->push_back('"');
  }
  void HexString(const uint8_t* bytes, size_t size) {
    static constexpr char kDigits[] = "0123456789abcdef";
    Separate();
    out_->push_back('"');
    for (size_t i = 0; i < size; ++i) {
      out_->push_back(kDigits[bytes[i] >> 4]);
      out_->push_back(kDigits[bytes[i] & 0xf]);
    }
    out_->push_back('"');
  }
  void Base64String(std::string_view bytes) {
    Separate();
    out_->push_back('"');
    AppendBase64(bytes, out_);
    out_->push_back('"');
  }
  void Bool(bool v) {
    Separate();
    out_->append(v ? "true" : "false");
  }
  void Null() {
    Separate();
    out_->append("null");
  }
  void Int(int64_t v) {
    Separate();
    AppendInteger(v);
  }
  void Uint(uint64_t v) {
    Separate();
    AppendInteger(v);
  }
  // 64-bit integers as decimal strings, as the protobuf JSON mapping wants.
  void IntString(int64_t v) {
    Separate();
    out_->push_back('"');
    AppendInteger(v);
    out_->push_back('"');
  }
  void UintString(uint64_t v) {
    Separate();
    out_->push_back('"');
    AppendInteger(v);
    out_->push_back('"');
  }
  void Double(double v) {
    Separate();
    if (std::isnan(v)) {
      out_->append("\"NaN\"");
    } else if (std::isinf(v)) {
      out_->append(v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    } else {
      AppendFiniteDouble(v);
    }
  }

  // Appends `utf8` escaped for use inside a JSON string literal.
  static void AppendEscaped(std::string_view utf8, std::string* out);
  // Appends standard base64 (RFC 4648 section 4) with '=' padding.
  static void AppendBase64(std::string_view bytes, std::string* out);
  // Length of the well-formed UTF-8 sequence at s[i], or 0 if it is not one.
  static size_t Utf8SequenceLength(std::string_view s, size_t i);

 private:
  void Separate() {
    if (need_comma_) out_->push_back(',');
    need_comma_ = true;
  }

  template <typename T>
  void AppendInteger(T v) {
    char buf[24];
    auto result = std::to_chars(buf, buf + sizeof(buf), v);
    out_->append(buf, result.ptr);
  }

  void AppendFiniteDouble(double v) {
    char buf[40];
    char* end = std::to_chars(buf, buf + sizeof(buf), v).ptr;
    bool has_fraction_or_exponent = false;
    for (const char* p = buf; p < end; ++p) {
      if (*p == '.' || *p == 'e') has_fraction_or_exponent = true;
    }
    out_->append(buf, end);
    if (!has_fraction_or_exponent) out_->append(".0", 2);
  }

  std::string* out_;
  bool need_comma_ = false;
};

inline size_t JsonWriter::Utf8SequenceLength(std::string_view s, size_t i) {
  auto byte = [&](size_t k) -> unsigned { return static_cast<unsigned char>(s[k]); };
  auto continuation = [&](size_t k, unsigned lo, unsigned hi) {
    return k < s.size() && byte(k) >= lo && byte(k) <= hi;
  };
  unsigned lead = byte(i);
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return continuation(i + 1, 0x80, 0xBF) ? 2 : 0;
  if (lead >= 0xE0 && lead <= 0xEF) {
    unsigned lo = lead == 0xE0 ? 0xA0 : 0x80;  // no overlong forms
    unsigned hi = lead == 0xED ? 0x9F : 0xBF;  // no UTF-16 surrogates
    return continuation(i + 1, lo, hi) && continuation(i + 2, 0x80, 0xBF) ? 3 : 0;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    unsigned lo = lead == 0xF0 ? 0x90 : 0x80;  // no overlong forms
    unsigned hi = lead == 0xF4 ? 0x8F : 0xBF;  // nothing above U+10FFFF
    return continuation(i + 1, lo, hi) && continuation(i + 2, 0x80, 0xBF) &&
                   continuation(i + 3, 0x80, 0xBF)
               ? 4
               : 0;
  }
  return 0;
}

inline void JsonWriter::AppendEscaped(std::string_view utf8, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  size_t run_begin = 0;  // start of bytes that are copied verbatim
  size_t i = 0;
  while (i < utf8.size()) {
    unsigned char c = static_cast<unsigned char>(utf8[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      size_t length = Utf8SequenceLength(utf8, i);
      if (length != 0) {
        i += length;
        continue;
      }
    }
    out->append(utf8.data() + run_begin, i - run_begin);
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (c < 0x20) {
          const char escape[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xf]};
          out->append(escape, sizeof(escape));
        } else {
          out->append("\xEF\xBF\xBD");  // U+FFFD for a malformed byte
        }
    }
    ++i;
    run_begin = i;
  }
  out->append(utf8.data() + run_begin, utf8.size() - run_begin);
}

inline void JsonWriter::AppendBase64(std::string_view bytes, std::string* out) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  auto at = [&](size_t k) -> uint32_t { return static_cast<unsigned char>(bytes[k]); };
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t v = (at(i) << 16) | (at(i + 1) << 8) | at(i + 2);
    const char quad[] = {kAlphabet[v >> 18], kAlphabet[(v >> 12) & 63], kAlphabet[(v >> 6) & 63],
                         kAlphabet[v & 63]};
    out->append(quad, 4);
  }
  size_t rest = bytes.size() - i;
  if (rest == 0) return;
  uint32_t v = at(i) << 16;
  if (rest == 2) v |= at(i + 1) << 8;
  const char quad[] = {kAlphabet[v >> 18], kAlphabet[(v >> 12) & 63],
                       rest == 2 ? kAlphabet[(v >> 6) & 63] : '=', '='};
  out->append(quad, 4);
}

}  // namespace strata::otlp
