#include "api/span_text_search.h"

#include <string>

#include "absl/strings/ascii.h"
#include "fmt/format.h"

namespace strata::api {
namespace {

// Deeper than any value the decoders accept.
constexpr int kMaxValueDepth = 64;

class SpanTextMatcher {
 public:
  SpanTextMatcher(const otlp::TraceBatch& batch, std::string_view text)
      : batch_(batch), needle_(absl::AsciiStrToLower(std::string(text))) {}

  bool Holds(size_t span) {
    const otlp::SpanColumns& spans = batch_.spans;
    if (Contains(spans.name[span]) || Contains(spans.status_message[span]) ||
        AttributesHold(batch_.span_attributes, spans.attributes[span])) {
      return true;
    }
    const otlp::Range events = spans.events[span];
    for (uint32_t e = events.begin; e < events.end(); ++e) {
      if (Contains(batch_.events.name[e]) ||
          AttributesHold(batch_.event_attributes, batch_.events.attributes[e])) {
        return true;
      }
    }
    const otlp::Range links = spans.links[span];
    for (uint32_t l = links.begin; l < links.end(); ++l) {
      if (AttributesHold(batch_.link_attributes, batch_.links.attributes[l])) return true;
    }
    return false;
  }

 private:
  bool Contains(std::string_view text) {
    if (text.size() < needle_.size()) return false;
    lowered_.assign(text.data(), text.size());
    absl::AsciiStrToLower(&lowered_);
    return lowered_.find(needle_) != std::string::npos;
  }

  bool AttributesHold(const otlp::AttributeColumns& attributes, otlp::Range range) {
    for (uint32_t a = range.begin; a < range.end(); ++a) {
      if (Contains(attributes.key[a]) || ValueHolds(attributes.value, a, 0)) return true;
    }
    return false;
  }

  bool ValueHolds(const otlp::ValueColumns& values, size_t row, int depth) {
    if (depth >= kMaxValueDepth) return false;
    switch (values.type[row]) {
      case otlp::ValueType::kString:
        return Contains(values.str[row]);
      case otlp::ValueType::kInt:
        return Contains(fmt::format("{}", values.int_at(row)));
      case otlp::ValueType::kDouble:
        return Contains(fmt::format("{}", values.double_at(row)));
      case otlp::ValueType::kBool:
        return Contains(values.bool_at(row) ? "true" : "false");
      case otlp::ValueType::kArray: {
        const otlp::Range children = values.children_at(row);
        for (uint32_t c = children.begin; c < children.end(); ++c) {
          if (ValueHolds(batch_.nested_values, c, depth + 1)) return true;
        }
        return false;
      }
      case otlp::ValueType::kKvList: {
        const otlp::Range children = values.children_at(row);
        for (uint32_t c = children.begin; c < children.end(); ++c) {
          if (Contains(batch_.nested_attributes.key[c]) ||
              ValueHolds(batch_.nested_attributes.value, c, depth + 1)) {
            return true;
          }
        }
        return false;
      }
      default:  // empty, bytes
        return false;
    }
  }

  const otlp::TraceBatch& batch_;
  const std::string needle_;
  std::string lowered_;  // reused
};

}  // namespace

std::vector<size_t> SpansHoldingText(const otlp::TraceBatch& batch, std::string_view text) {
  SpanTextMatcher matcher(batch, text);
  std::vector<size_t> rows;
  for (size_t span = 0; span < batch.spans.size(); ++span) {
    if (matcher.Holds(span)) rows.push_back(span);
  }
  return rows;
}

}  // namespace strata::api
