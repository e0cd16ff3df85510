#include "compat/logql/literals.h"

#include <cmath>
#include <cstdlib>
#include <string>

#include "absl/strings/ascii.h"

namespace strata::compat::logql {
namespace {

bool IsDigit(char c) { return absl::ascii_isdigit(static_cast<unsigned char>(c)); }

size_t Digits(std::string_view text, size_t i) {
  while (i < text.size() && IsDigit(text[i])) ++i;
  return i;
}

// The length of a float's prefix of `text` (digits, optionally `.` and
// digits), 0 when there is none.
size_t FloatPrefix(std::string_view text, bool whole_only) {
  size_t i = Digits(text, 0);
  if (i == 0) return 0;
  if (!whole_only && i + 1 < text.size() && text[i] == '.' && IsDigit(text[i + 1])) {
    i = Digits(text, i + 1);
  }
  return i;
}

double ToDouble(std::string_view text) {
  const std::string copy(text);
  return std::strtod(copy.c_str(), nullptr);
}

}  // namespace

std::optional<double> ParseLogQLNumber(std::string_view text) {
  if (text.size() > 2 && text[0] == '0' && text[1] == 'x') {
    double value = 0;
    for (size_t i = 2; i < text.size(); ++i) {
      const char c = text[i];
      if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
      value = value * 16 + (IsDigit(c) ? c - '0' : absl::ascii_tolower(c) - 'a' + 10);
    }
    return value;
  }
  size_t i = Digits(text, 0);
  if (i < text.size() && text[i] == '.') {
    const size_t after = Digits(text, i + 1);
    if (i == 0 && after == i + 1) return std::nullopt;  // "."
    i = after;
  } else if (i == 0) {
    return std::nullopt;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    size_t j = i + 1;
    if (j < text.size() && (text[j] == '+' || text[j] == '-')) ++j;
    const size_t end = Digits(text, j);
    if (end == j) return std::nullopt;
    i = end;
  }
  if (i != text.size()) return std::nullopt;
  return ToDouble(text);
}

std::optional<int64_t> ParseLogQLDuration(std::string_view text) {
  struct Unit {
    std::string_view suffix;
    double nanos;
    int order;
    bool whole_only;
  };
  // Longest suffix first where one is a prefix of another (ms before m).
  static constexpr Unit kUnits[] = {
      {"ms", 1e6, 6, false},   {"us", 1e3, 7, false},         {"\xC2\xB5s", 1e3, 7, false},
      {"ns", 1, 8, false},     {"y", 365 * 86400e9, 0, true}, {"w", 7 * 86400e9, 1, true},
      {"d", 86400e9, 2, true}, {"h", 3600e9, 3, false},       {"m", 60e9, 4, false},
      {"s", 1e9, 5, false},
  };
  if (text.empty()) return std::nullopt;
  double total = 0;
  int last_order = -1;
  while (!text.empty()) {
    const size_t whole = FloatPrefix(text, true);
    const size_t number = FloatPrefix(text, false);
    if (number == 0) return std::nullopt;
    const Unit* found = nullptr;
    for (const Unit& unit : kUnits) {
      const size_t length = unit.whole_only ? whole : number;
      if (text.substr(length, unit.suffix.size()) == unit.suffix) {
        found = &unit;
        break;
      }
    }
    if (found == nullptr || found->order <= last_order) return std::nullopt;
    const size_t length = found->whole_only ? whole : number;
    if (found->whole_only && whole != number) return std::nullopt;
    total += ToDouble(text.substr(0, length)) * found->nanos;
    last_order = found->order;
    text.remove_prefix(length + found->suffix.size());
  }
  if (!(total < 9.2e18)) return std::nullopt;
  return static_cast<int64_t>(std::llround(total));
}

std::optional<double> ParseLogQLBytes(std::string_view text) {
  static constexpr std::pair<std::string_view, double> kUnits[] = {
      {"KiB", 1024.0},
      {"MiB", 1024.0 * 1024},
      {"GiB", 1024.0 * 1024 * 1024},
      {"TiB", 1024.0 * 1024 * 1024 * 1024},
      {"PiB", 1024.0 * 1024 * 1024 * 1024 * 1024},
      {"kB", 1e3},
      {"KB", 1e3},
      {"MB", 1e6},
      {"GB", 1e9},
      {"TB", 1e12},
      {"PB", 1e15},
      {"B", 1},
  };
  const size_t number = FloatPrefix(text, false);
  if (number == 0) return std::nullopt;
  for (const auto& [suffix, factor] : kUnits) {
    if (text.substr(number) == suffix) return ToDouble(text.substr(0, number)) * factor;
  }
  return std::nullopt;
}

}  // namespace strata::compat::logql
