// PromMetricName and PromLabelName (prometheus_names.h).

#include "api/prometheus_names.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_join.h"

namespace strata::api {
namespace {

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

std::vector<std::string> Words(std::string_view text, bool keep_colon) {
  std::vector<std::string> out;
  std::string word;
  for (char c : text) {
    if (IsAlnum(c) || (keep_colon && c == ':')) {
      word.push_back(c);
    } else if (!word.empty()) {
      out.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) out.push_back(std::move(word));
  return out;
}

// UCUM units as Prometheus names them (the specification's table).
std::string_view MainUnit(std::string_view unit) {
  static constexpr std::pair<std::string_view, std::string_view> kUnits[] = {
      {"d", "days"},          {"h", "hours"},
      {"min", "minutes"},     {"s", "seconds"},
      {"ms", "milliseconds"}, {"us", "microseconds"},
      {"ns", "nanoseconds"},  {"By", "bytes"},
      {"KiBy", "kibibytes"},  {"MiBy", "mebibytes"},
      {"GiBy", "gibibytes"},  {"TiBy", "tibibytes"},
      {"KBy", "kilobytes"},   {"MBy", "megabytes"},
      {"GBy", "gigabytes"},   {"TBy", "terabytes"},
      {"m", "meters"},        {"V", "volts"},
      {"A", "amperes"},       {"J", "joules"},
      {"W", "watts"},         {"g", "grams"},
      {"Cel", "celsius"},     {"Hz", "hertz"},
      {"%", "percent"},       {"1", ""}};
  for (const auto& [ucum, name] : kUnits) {
    if (unit == ucum) return name;
  }
  return unit;
}

std::string_view PerUnit(std::string_view unit) {
  static constexpr std::pair<std::string_view, std::string_view> kUnits[] = {
      {"s", "second"}, {"m", "minute"}, {"h", "hour"}, {"d", "day"},
      {"w", "week"},   {"mo", "month"}, {"y", "year"}};
  for (const auto& [ucum, name] : kUnits) {
    if (unit == ucum) return name;
  }
  return unit;
}

void AppendIfAbsent(std::vector<std::string>& words, std::string_view text) {
  for (std::string& word : Words(text, false)) {
    if (std::find(words.begin(), words.end(), word) == words.end()) {
      words.push_back(std::move(word));
    }
  }
}

}  // namespace

std::string PromMetricName(std::string_view otlp_name, std::string_view unit, PromKind kind) {
  std::vector<std::string> words = Words(otlp_name, true);
  // Annotations in braces carry no unit: "{requests}" and "s{cpu}" lose them.
  std::string plain;
  int depth = 0;
  for (char c : unit) {
    if (c == '{') {
      ++depth;
    } else if (c == '}') {
      depth = std::max(0, depth - 1);
    } else if (depth == 0) {
      plain.push_back(c);
    }
  }
  const size_t slash = plain.find('/');
  const std::string_view main =
      MainUnit(std::string_view(plain).substr(0, std::min(slash, plain.size())));
  if (!main.empty()) AppendIfAbsent(words, main);
  if (slash != std::string::npos) {
    const std::string_view per = PerUnit(std::string_view(plain).substr(slash + 1));
    if (!per.empty()) {
      if (std::find(words.begin(), words.end(), "per") == words.end()) words.emplace_back("per");
      AppendIfAbsent(words, per);
    }
  }
  if (kind == PromKind::kCounter) {
    words.erase(std::remove(words.begin(), words.end(), "total"), words.end());
    words.emplace_back("total");
  }
  if (kind == PromKind::kGauge && unit == "1") AppendIfAbsent(words, "ratio");
  std::string name = absl::StrJoin(words, "_");
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) name.insert(0, "_");
  return name;
}

std::string PromLabelName(std::string_view key) {
  std::string out(key);
  for (char& c : out) {
    if (!IsAlnum(c) && c != '_') c = '_';
  }
  if (out.empty()) return "key_";
  if (out[0] >= '0' && out[0] <= '9') return "key_" + out;
  if (out[0] == '_' && (out.size() == 1 || out[1] != '_')) return "key" + out;
  return out;
}

bool IsPromLabelName(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return IsAlnum(c) || c == '_'; });
}

}  // namespace strata::api
