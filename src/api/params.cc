#include "api/params.h"

#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace strata::api {
namespace {

absl::Status Bad(std::string_view name, std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(std::string(name), ": ", std::string(why)));
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Parses exactly `digits` decimal digits at s[*pos].
bool TakeDigits(std::string_view s, size_t* pos, int digits, int* out) {
  if (*pos + static_cast<size_t>(digits) > s.size()) return false;
  int value = 0;
  for (int i = 0; i < digits; ++i) {
    const char c = s[*pos + static_cast<size_t>(i)];
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  *pos += static_cast<size_t>(digits);
  *out = value;
  return true;
}

// Days from 1970-01-01 to y-m-d (proleptic Gregorian).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int DaysInMonth(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month == 2) {
    const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return leap ? 29 : 28;
  }
  return kDays[month - 1];
}

// RFC 3339 date-time; nullopt when `s` is not one.
std::optional<__int128> ParseRfc3339(std::string_view s) {
  size_t pos = 0;
  int year, month, day, hour, minute, second;
  auto expect = [&](char c) {
    if (pos < s.size() && s[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  };
  if (!TakeDigits(s, &pos, 4, &year) || !expect('-') || !TakeDigits(s, &pos, 2, &month) ||
      !expect('-') || !TakeDigits(s, &pos, 2, &day)) {
    return std::nullopt;
  }
  if (pos >= s.size() || (s[pos] != 'T' && s[pos] != 't' && s[pos] != ' ')) return std::nullopt;
  ++pos;
  if (!TakeDigits(s, &pos, 2, &hour) || !expect(':') || !TakeDigits(s, &pos, 2, &minute) ||
      !expect(':') || !TakeDigits(s, &pos, 2, &second)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > DaysInMonth(year, month) || hour > 23 ||
      minute > 59 || second > 60) {
    return std::nullopt;
  }
  int64_t fraction_nanos = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int digits = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (digits < 9) fraction_nanos = fraction_nanos * 10 + (s[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0) return std::nullopt;
    for (int i = digits; i < 9; ++i) fraction_nanos *= 10;
  }
  int64_t offset_seconds = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    const int sign = s[pos] == '-' ? -1 : 1;
    ++pos;
    int offset_hours, offset_minutes;
    if (!TakeDigits(s, &pos, 2, &offset_hours) || !expect(':') ||
        !TakeDigits(s, &pos, 2, &offset_minutes) || offset_hours > 23 || offset_minutes > 59) {
      return std::nullopt;
    }
    offset_seconds = sign * (offset_hours * 3600 + offset_minutes * 60);
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  const int64_t seconds =
      DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset_seconds;
  return static_cast<__int128>(seconds) * kNanosPerSecond + fraction_nanos;
}

}  // namespace

int64_t SystemNowUnixNano() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string QuoteForError(std::string_view value) {
  constexpr size_t kMax = 64;
  std::string out = "\"";
  out.append(value.substr(0, kMax));
  if (value.size() > kMax) out.append("...");
  out.push_back('"');
  return out;
}

void PercentEncode(std::string_view text, std::string* out) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (unsigned char c : text) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out->push_back(static_cast<char>(c));
    } else {
      out->push_back('%');
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 0xf]);
    }
  }
}

absl::StatusOr<std::string> PercentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '+') {
      out.push_back(' ');
    } else if (c == '%') {
      if (i + 2 >= text.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("query: truncated percent escape in ", QuoteForError(text)));
      }
      const int hi = HexValue(text[i + 1]);
      const int lo = HexValue(text[i + 2]);
      if (hi < 0 || lo < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("query: bad percent escape in ", QuoteForError(text)));
      }
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

absl::StatusOr<QueryParams> QueryParams::Parse(std::string_view query) {
  QueryParams params;
  size_t begin = 0;
  while (begin <= query.size()) {
    size_t end = query.find('&', begin);
    if (end == std::string_view::npos) end = query.size();
    const std::string_view part = query.substr(begin, end - begin);
    begin = end + 1;
    if (part.empty()) continue;
    const size_t equals = part.find('=');
    absl::StatusOr<std::string> name = PercentDecode(part.substr(0, equals));
    if (!name.ok()) return name.status();
    absl::StatusOr<std::string> value =
        equals == std::string_view::npos ? std::string() : PercentDecode(part.substr(equals + 1));
    if (!value.ok()) return value.status();
    if (name->empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("query: parameter with an empty name: ", QuoteForError(part)));
    }
    params.entries_.push_back(Entry{*std::move(name), *std::move(value), false});
  }
  return params;
}

absl::StatusOr<std::optional<std::string>> QueryParams::Take(std::string_view name) {
  std::optional<std::string> found;
  for (Entry& entry : entries_) {
    if (entry.name != name) continue;
    if (found.has_value()) return Bad(name, "given more than once");
    entry.used = true;
    found = entry.value;
  }
  return found;
}

std::vector<std::string> QueryParams::TakeAll(std::string_view name) {
  std::vector<std::string> out;
  for (Entry& entry : entries_) {
    if (entry.name != name) continue;
    entry.used = true;
    out.push_back(entry.value);
  }
  return out;
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> QueryParams::TakeAttributes() {
  return TakePrefixed("attr.");
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> QueryParams::TakePrefixed(
    std::string_view prefix) {
  std::vector<std::pair<std::string, std::string>> out;
  for (Entry& entry : entries_) {
    if (!entry.name.starts_with(prefix)) continue;
    entry.used = true;
    if (entry.name.size() == prefix.size()) {
      return Bad(entry.name, prefix == "attr." ? "empty attribute key" : "empty path");
    }
    out.emplace_back(entry.name.substr(prefix.size()), entry.value);
  }
  return out;
}

absl::Status QueryParams::Finish() const {
  for (const Entry& entry : entries_) {
    if (!entry.used) return Bad(entry.name, "unknown parameter");
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> ParseTime(std::string_view name, std::string_view value) {
  if (AllDigits(value)) {
    int64_t nanos = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), nanos);
    if (ec != std::errc() || end != value.data() + value.size()) {
      return Bad(name, absl::StrCat("unix nanoseconds out of range: ", QuoteForError(value)));
    }
    return nanos;
  }
  std::optional<__int128> nanos = ParseRfc3339(value);
  if (!nanos.has_value()) {
    return Bad(name, absl::StrCat("not RFC 3339 or unix nanoseconds: ", QuoteForError(value)));
  }
  if (*nanos < 0 || *nanos > std::numeric_limits<int64_t>::max()) {
    return Bad(name, absl::StrCat("outside 1970..2262: ", QuoteForError(value)));
  }
  return static_cast<int64_t>(*nanos);
}

absl::StatusOr<int64_t> ParseDuration(std::string_view name, std::string_view value) {
  auto bad = [&] {
    return Bad(name, absl::StrCat("not a duration (like 250ms, 1.5s, 2m, 1h, or integer "
                                  "nanoseconds): ",
                                  QuoteForError(value)));
  };
  size_t pos = 0;
  while (pos < value.size() && value[pos] >= '0' && value[pos] <= '9') ++pos;
  const std::string_view whole = value.substr(0, pos);
  std::string_view fraction;
  if (pos < value.size() && value[pos] == '.') {
    const size_t fraction_begin = ++pos;
    while (pos < value.size() && value[pos] >= '0' && value[pos] <= '9') ++pos;
    fraction = value.substr(fraction_begin, pos - fraction_begin);
    if (fraction.empty()) return bad();
  }
  if (whole.empty() && fraction.empty()) return bad();
  const std::string_view unit = value.substr(pos);
  int64_t unit_nanos;
  if (unit.empty() || unit == "ns") {
    unit_nanos = 1;
  } else if (unit == "us" || unit == "\xC2\xB5s") {
    unit_nanos = 1'000;
  } else if (unit == "ms") {
    unit_nanos = 1'000'000;
  } else if (unit == "s") {
    unit_nanos = kNanosPerSecond;
  } else if (unit == "m") {
    unit_nanos = 60 * kNanosPerSecond;
  } else if (unit == "h") {
    unit_nanos = 3600 * kNanosPerSecond;
  } else {
    return bad();
  }
  if (unit_nanos == 1 && !fraction.empty()) return bad();
  __int128 total = 0;
  for (char c : whole) {
    total = total * 10 + (c - '0');
    if (total > std::numeric_limits<int64_t>::max()) {
      return Bad(name, absl::StrCat("duration out of range: ", QuoteForError(value)));
    }
  }
  total *= unit_nanos;
  __int128 fraction_value = 0;
  __int128 scale = 1;
  for (size_t i = 0; i < fraction.size() && i < 18; ++i) {
    fraction_value = fraction_value * 10 + (fraction[i] - '0');
    scale *= 10;
  }
  total += fraction_value * unit_nanos / scale;
  if (total > std::numeric_limits<int64_t>::max()) {
    return Bad(name, absl::StrCat("duration out of range: ", QuoteForError(value)));
  }
  return static_cast<int64_t>(total);
}

absl::StatusOr<int64_t> ParseInteger(std::string_view name, std::string_view value, int64_t min,
                                     int64_t max) {
  int64_t parsed = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size() || parsed < min ||
      parsed > max) {
    return Bad(name,
               absl::StrCat("not an integer in ", min, "..", max, ": ", QuoteForError(value)));
  }
  return parsed;
}

absl::StatusOr<otlp::TraceId> ParseTraceId(std::string_view name, std::string_view value) {
  otlp::TraceId id{};
  if (value.size() != 32) {
    return Bad(name, absl::StrCat("not 32 hex digits: ", QuoteForError(value)));
  }
  bool all_zero = true;
  for (size_t i = 0; i < 16; ++i) {
    const int hi = HexValue(value[2 * i]);
    const int lo = HexValue(value[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      return Bad(name, absl::StrCat("not 32 hex digits: ", QuoteForError(value)));
    }
    id[i] = static_cast<uint8_t>(hi * 16 + lo);
    if (id[i] != 0) all_zero = false;
  }
  if (all_zero) return Bad(name, "the all-zero trace id is invalid");
  return id;
}

absl::StatusOr<otlp::TraceId> ParseTrimmedTraceId(std::string_view name, std::string_view value) {
  if (value.empty() || value.size() > 32) {
    return Bad(name, absl::StrCat("not 1 to 32 hex digits: ", QuoteForError(value)));
  }
  std::string padded(32 - value.size(), '0');
  padded.append(value);
  return ParseTraceId(name, padded);
}

std::string TraceIdHex(const otlp::TraceId& id) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(32);
  for (uint8_t b : id) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 0xf]);
  }
  return out;
}

absl::StatusOr<int32_t> ParseSeverity(std::string_view name, std::string_view value) {
  const std::string upper = absl::AsciiStrToUpper(std::string(value));
  static constexpr std::pair<const char*, int32_t> kNames[] = {
      {"TRACE", 1}, {"DEBUG", 5}, {"INFO", 9}, {"WARN", 13}, {"ERROR", 17}, {"FATAL", 21}};
  for (const auto& [text, number] : kNames) {
    if (upper == text) return number;
  }
  int32_t number = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size() || number < 1 ||
      number > 24) {
    return Bad(name, absl::StrCat("not a severity (1..24 or TRACE, DEBUG, INFO, WARN, ERROR, "
                                  "FATAL): ",
                                  QuoteForError(value)));
  }
  return number;
}

absl::StatusOr<int32_t> ParseStatus(std::string_view name, std::string_view value) {
  if (value == "unset") return 0;
  if (value == "ok") return 1;
  if (value == "error") return 2;
  return Bad(name, absl::StrCat("not one of unset, ok, error: ", QuoteForError(value)));
}

absl::StatusOr<int64_t> TakeLimit(QueryParams& params, Limit limit) {
  absl::StatusOr<std::optional<std::string>> text = params.Take("limit");
  if (!text.ok()) return text.status();
  if (!text->has_value()) return limit.default_value;
  return ParseInteger("limit", **text, 1, limit.max_value);
}

absl::StatusOr<TimeWindow> TakeWindow(QueryParams& params, const NowFunction& now) {
  absl::StatusOr<std::optional<std::string>> start_text = params.Take("start");
  if (!start_text.ok()) return start_text.status();
  absl::StatusOr<std::optional<std::string>> end_text = params.Take("end");
  if (!end_text.ok()) return end_text.status();
  TimeWindow window;
  if (end_text->has_value()) {
    absl::StatusOr<int64_t> end = ParseTime("end", **end_text);
    if (!end.ok()) return end.status();
    window.end = *end;
  } else {
    window.end = now();
  }
  if (start_text->has_value()) {
    absl::StatusOr<int64_t> start = ParseTime("start", **start_text);
    if (!start.ok()) return start.status();
    window.start = *start;
  } else {
    window.start = window.end > kDefaultWindowNanos ? window.end - kDefaultWindowNanos : 0;
  }
  if (window.start >= window.end) return Bad("start", "must be before end");
  return window;
}

namespace prom_params {

// The largest time in milliseconds whose nanoseconds fit an int64.
constexpr int64_t kMaxMs = std::numeric_limits<int64_t>::max() / 1'000'000;

absl::Status BadValue(std::string_view name, std::string_view what, std::string_view value) {
  return absl::InvalidArgumentError(
      absl::StrCat(std::string(name), ": ", std::string(what), ": ", QuoteForError(value)));
}

// A plain decimal number ("12", "12.5", ".5"); nullopt for anything else.
std::optional<double> PlainNumber(std::string_view text) {
  if (text.empty()) return std::nullopt;
  bool digit = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c >= '0' && c <= '9') {
      digit = true;
    } else if (!(c == '.' || (i == 0 && (c == '-' || c == '+')))) {
      return std::nullopt;
    }
  }
  if (!digit) return std::nullopt;
  double value = 0;
  const char* begin = text.data() + (text[0] == '+' ? 1 : 0);
  auto [end, ec] = std::from_chars(begin, text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace prom_params

absl::StatusOr<int64_t> ParsePromTime(std::string_view name, std::string_view value) {
  if (std::optional<double> seconds = prom_params::PlainNumber(value); seconds.has_value()) {
    const double ms = std::round(*seconds * 1000);
    if (!(ms >= 0 && ms <= static_cast<double>(prom_params::kMaxMs))) {
      return prom_params::BadValue(name, "outside 1970..2262", value);
    }
    return static_cast<int64_t>(ms);
  }
  if (!value.empty() && value.find_first_not_of("0123456789") != std::string_view::npos) {
    absl::StatusOr<int64_t> nanos = ParseTime(name, value);
    if (nanos.ok()) return *nanos / 1'000'000;
  }
  return prom_params::BadValue(name, "not unix seconds or RFC 3339", value);
}

absl::StatusOr<int64_t> ParsePromDuration(std::string_view name, std::string_view value) {
  if (std::optional<double> seconds = prom_params::PlainNumber(value); seconds.has_value()) {
    const double ms = std::round(*seconds * 1000);
    if (!(ms > 0 && ms <= static_cast<double>(prom_params::kMaxMs))) {
      return prom_params::BadValue(name, "not a positive duration", value);
    }
    return static_cast<int64_t>(ms);
  }
  // Units in Prometheus's order, each at most once.
  static constexpr std::pair<std::string_view, int64_t> kUnits[] = {{"y", 365LL * 24 * 3600 * 1000},
                                                                    {"w", 7LL * 24 * 3600 * 1000},
                                                                    {"d", 24LL * 3600 * 1000},
                                                                    {"h", 3600LL * 1000},
                                                                    {"m", 60LL * 1000},
                                                                    {"s", 1000},
                                                                    {"ms", 1}};
  size_t pos = 0, next_unit = 0;
  __int128 total = 0;
  if (value.empty()) return prom_params::BadValue(name, "not a duration", value);
  while (pos < value.size()) {
    const size_t digits_begin = pos;
    while (pos < value.size() && value[pos] >= '0' && value[pos] <= '9') ++pos;
    if (pos == digits_begin || pos - digits_begin > 12)
      return prom_params::BadValue(name, "not a duration", value);
    int64_t amount = 0;
    std::from_chars(value.data() + digits_begin, value.data() + pos, amount);
    size_t unit_end = pos;
    while (unit_end < value.size() && (value[unit_end] < '0' || value[unit_end] > '9')) ++unit_end;
    const std::string_view unit = value.substr(pos, unit_end - pos);
    bool found = false;
    for (size_t u = next_unit; u < std::size(kUnits); ++u) {
      if (kUnits[u].first == unit) {
        total += static_cast<__int128>(amount) * kUnits[u].second;
        next_unit = u + 1;
        found = true;
        break;
      }
    }
    if (!found)
      return prom_params::BadValue(name, "not a duration (like 15s, 5m, 1h30m, or seconds)", value);
    pos = unit_end;
  }
  if (total <= 0 || total > prom_params::kMaxMs)
    return prom_params::BadValue(name, "not a positive duration", value);
  return static_cast<int64_t>(total);
}

}  // namespace strata::api
