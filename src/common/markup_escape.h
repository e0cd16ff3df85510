#pragma once

// Text escaped for XML and HTML: the five characters with a meaning in
// markup (& < > " ') as character references, everything else as it is.
// For S3 request bodies (objectstore/s3_xml) and the pages the binary
// writes itself (the OAuth consent page).

#include <string>
#include <string_view>

namespace strata {

inline std::string EscapeMarkup(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

}  // namespace strata
