#pragma once

// The web UI's files, embedded in the binary: ui/build.mjs bundles ui/src
// and writes embedded_assets.cc (into the build tree) with each file's
// bytes as they are and compressed with gzip and brotli, and its ETag.
//
// Thread-safety: constant data.

#include <span>
#include <string_view>

namespace strata::web {

struct EmbeddedAsset {
  std::string_view path;          // "/index.html" or "/assets/<name>-<hash>.<ext>"
  std::string_view content_type;  // with charset for text
  std::string_view etag;          // quoted: a hash of the bytes
  std::string_view identity;
  std::string_view gzip;
  std::string_view brotli;
};

// Every embedded file, by path.
std::span<const EmbeddedAsset> EmbeddedAssets();

}  // namespace strata::web
