// PromParams, ParsePromTime and ParsePromDuration (prometheus_params.h).

#include "api/prometheus_params.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace strata::api {
namespace {

// The largest time in milliseconds whose nanoseconds fit an int64.
constexpr int64_t kMaxMs = std::numeric_limits<int64_t>::max() / 1'000'000;

absl::Status Bad(std::string_view name, std::string_view what, std::string_view value) {
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

}  // namespace

absl::StatusOr<QueryParams> PromParams(const server::HttpRequest& request) {
  std::string all(request.query());
  const std::string_view type = request.Header("Content-Type");
  if (request.method == "POST" && request.body != nullptr &&
      absl::AsciiStrToLower(std::string(type.substr(0, type.find(';')))) ==
          "application/x-www-form-urlencoded") {
    if (!all.empty() && !request.body->empty()) all.push_back('&');
    all += *request.body;
  }
  return QueryParams::Parse(all);
}

absl::StatusOr<int64_t> ParsePromTime(std::string_view name, std::string_view value) {
  if (std::optional<double> seconds = PlainNumber(value); seconds.has_value()) {
    const double ms = std::round(*seconds * 1000);
    if (!(ms >= 0 && ms <= static_cast<double>(kMaxMs))) {
      return Bad(name, "outside 1970..2262", value);
    }
    return static_cast<int64_t>(ms);
  }
  if (!value.empty() && value.find_first_not_of("0123456789") != std::string_view::npos) {
    absl::StatusOr<int64_t> nanos = ParseTime(name, value);
    if (nanos.ok()) return *nanos / 1'000'000;
  }
  return Bad(name, "not unix seconds or RFC 3339", value);
}

absl::StatusOr<int64_t> ParsePromDuration(std::string_view name, std::string_view value) {
  if (std::optional<double> seconds = PlainNumber(value); seconds.has_value()) {
    const double ms = std::round(*seconds * 1000);
    if (!(ms > 0 && ms <= static_cast<double>(kMaxMs))) {
      return Bad(name, "not a positive duration", value);
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
  if (value.empty()) return Bad(name, "not a duration", value);
  while (pos < value.size()) {
    const size_t digits_begin = pos;
    while (pos < value.size() && value[pos] >= '0' && value[pos] <= '9') ++pos;
    if (pos == digits_begin || pos - digits_begin > 12) return Bad(name, "not a duration", value);
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
    if (!found) return Bad(name, "not a duration (like 15s, 5m, 1h30m, or seconds)", value);
    pos = unit_end;
  }
  if (total <= 0 || total > kMaxMs) return Bad(name, "not a positive duration", value);
  return static_cast<int64_t>(total);
}

}  // namespace strata::api
