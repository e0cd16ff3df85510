#include "api/mcp_output.h"

#include <cmath>

#include "absl/time/time.h"

namespace strata::api {

std::string Rfc3339Utc(int64_t unix_ns) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::FromUnixNanos(unix_ns),
                          absl::UTCTimeZone());
}

double Milliseconds(int64_t ns) { return std::round(static_cast<double>(ns) / 1e3) / 1e3; }

std::string BoundedArray(const std::vector<std::string>& items, size_t budget, size_t* shown) {
  std::string out = "[";
  size_t count = 0;
  for (const std::string& item : items) {
    if (out.size() + item.size() + 2 > budget) break;
    if (count > 0) out.push_back(',');
    out.append(item);
    ++count;
  }
  out.push_back(']');
  *shown = count;
  return out;
}

void AppendJsonValue(otlp::JsonWriter& w, std::string* out, std::string_view json) {
  // Null() writes the separator the writer owes and marks a value written;
  // its "null" is then replaced by `json`.
  w.Null();
  out->resize(out->size() - 4);
  out->append(json);
}

}  // namespace strata::api
