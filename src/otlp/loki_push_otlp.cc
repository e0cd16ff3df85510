#include "otlp/loki_push_otlp.h"

#include <array>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace strata::otlp {
namespace {

// docs/loki.md, "How log records look to Loki": the stream labels.
constexpr std::array<std::string_view, 18> kDefaultResourceAttributes = {
    "service.name",
    "service.namespace",
    "service.instance.id",
    "deployment.environment",
    "deployment.environment.name",
    "cloud.region",
    "cloud.availability_zone",
    "k8s.cluster.name",
    "k8s.namespace.name",
    "k8s.pod.name",
    "k8s.container.name",
    "container.name",
    "k8s.replicaset.name",
    "k8s.deployment.name",
    "k8s.statefulset.name",
    "k8s.daemonset.name",
    "k8s.cronjob.name",
    "k8s.job.name",
};

// True when `label` is `dotted` with every byte outside [A-Za-z0-9_] as `_`.
bool IsSanitized(std::string_view label, std::string_view dotted) {
  if (label.size() != dotted.size()) return false;
  for (size_t i = 0; i < label.size(); ++i) {
    const char c = dotted[i];
    const char want = (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
    if (label[i] != want) return false;
  }
  return true;
}

void AppendJsonString(std::string* out, std::string_view text) {
  out->push_back('"');
  for (const char c : text) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", static_cast<unsigned>(c));
          out->append(escaped);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

void AppendStringAttribute(std::string* out, bool* first, std::string_view key,
                           std::string_view value) {
  if (!*first) out->push_back(',');
  *first = false;
  out->append("{\"key\":");
  AppendJsonString(out, key);
  out->append(",\"value\":{\"stringValue\":");
  AppendJsonString(out, value);
  out->append("}}");
}

bool IsHexId(std::string_view text, size_t digits) {
  if (text.size() != digits) return false;
  bool nonzero = false;
  for (const char c : text) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return false;
    nonzero = nonzero || c != '0';
  }
  return nonzero;
}

// The severity number of a level word (the inverse of detected_level's
// ranges); 0 when the word is not one.
int32_t SeverityNumberForLevel(std::string_view level) {
  const std::string lower = absl::AsciiStrToLower(std::string(level));
  if (lower == "trace") return 1;
  if (lower == "debug") return 5;
  if (lower == "info" || lower == "information") return 9;
  if (lower == "warn" || lower == "warning") return 13;
  if (lower == "error" || lower == "err") return 17;
  if (lower == "fatal" || lower == "critical") return 21;
  return 0;
}

}  // namespace

std::string_view ResourceAttributeForLokiLabel(std::string_view label) {
  for (const std::string_view dotted : kDefaultResourceAttributes) {
    if (IsSanitized(label, dotted)) return dotted;
  }
  return label;
}

absl::StatusOr<std::string> LokiPushToOtlpLogsJson(const LokiPush& push) {
  std::string out = "{\"resourceLogs\":[";
  bool first_stream = true;
  for (const LokiPushStream& stream : push.streams) {
    if (stream.entries.empty()) continue;
    if (!first_stream) out.push_back(',');
    first_stream = false;
    out.append("{\"resource\":{\"attributes\":[");
    bool first = true;
    for (const auto& [name, value] : stream.labels) {
      AppendStringAttribute(&out, &first, ResourceAttributeForLokiLabel(name), value);
    }
    out.append("]},\"scopeLogs\":[{\"scope\":{},\"logRecords\":[");
    bool first_entry = true;
    for (const LokiPushEntry& entry : stream.entries) {
      if (entry.time_unix_nano < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("an entry's timestamp is negative (", entry.time_unix_nano, ")"));
      }
      if (!first_entry) out.push_back(',');
      first_entry = false;
      std::optional<std::string_view> trace_id, span_id, severity_text, detected_level;
      std::optional<int32_t> severity_number;
      std::string attributes;
      bool first_attribute = true;
      for (const auto& [name, value] : entry.metadata) {
        int32_t number = 0;
        if (name == "trace_id" && !trace_id && IsHexId(value, 32)) {
          trace_id = value;
        } else if (name == "span_id" && !span_id && IsHexId(value, 16)) {
          span_id = value;
        } else if ((name == "severity_text" || name == "severity" || name == "level") &&
                   !severity_text) {
          severity_text = value;
        } else if (name == "detected_level" && !detected_level) {
          detected_level = value;
        } else if (name == "severity_number" && !severity_number &&
                   absl::SimpleAtoi(value, &number) && number >= 1 && number <= 24) {
          severity_number = number;
        } else {
          AppendStringAttribute(&attributes, &first_attribute, name, value);
        }
      }
      if (!severity_text) severity_text = detected_level;
      if (!severity_number && severity_text) {
        const int32_t number = SeverityNumberForLevel(*severity_text);
        if (number != 0) severity_number = number;
      }
      absl::StrAppend(&out, "{\"timeUnixNano\":\"", entry.time_unix_nano, "\"");
      if (severity_number) absl::StrAppend(&out, ",\"severityNumber\":", *severity_number);
      if (severity_text) {
        out.append(",\"severityText\":");
        AppendJsonString(&out, *severity_text);
      }
      out.append(",\"body\":{\"stringValue\":");
      AppendJsonString(&out, entry.line);
      out.append("},\"attributes\":[");
      out.append(attributes);
      out.push_back(']');
      if (trace_id)
        absl::StrAppend(&out, ",\"traceId\":\"", absl::AsciiStrToLower(std::string(*trace_id)),
                        "\"");
      if (span_id)
        absl::StrAppend(&out, ",\"spanId\":\"", absl::AsciiStrToLower(std::string(*span_id)), "\"");
      out.push_back('}');
    }
    out.append("]}]}");
  }
  out.append("]}");
  return out;
}

}  // namespace strata::otlp
