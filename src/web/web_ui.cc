#include "web/web_ui.h"

#include <string>

#include "api/accept_encoding.h"
#include "api/header_values.h"

namespace strata::web {
namespace {

constexpr std::string_view kAssetsPrefix = "/assets/";
constexpr std::string_view kIndex = "/index.html";

const EmbeddedAsset* Find(std::span<const EmbeddedAsset> assets, std::string_view path) {
  for (const EmbeddedAsset& asset : assets) {
    if (asset.path == path) return &asset;
  }
  return nullptr;
}

// True when an If-None-Match value ("*", or a list of possibly weak ETags)
// names `etag`.
bool Matches(std::string_view if_none_match, std::string_view etag) {
  while (!if_none_match.empty()) {
    const size_t comma = if_none_match.find(',');
    std::string_view tag = api::TrimSpaces(if_none_match.substr(0, comma));
    if_none_match =
        comma == std::string_view::npos ? std::string_view() : if_none_match.substr(comma + 1);
    if (tag == "*") return true;
    if (tag.substr(0, 2) == "W/") tag.remove_prefix(2);
    if (tag == etag) return true;
  }
  return false;
}

void AddSecurityHeaders(server::HttpResponse& response) {
  response.headers.emplace_back("Content-Security-Policy", kContentSecurityPolicy);
  response.headers.emplace_back("X-Content-Type-Options", "nosniff");
  response.headers.emplace_back("Referrer-Policy", "no-referrer");
}

server::HttpResponse Plain(int status, std::string body) {
  server::HttpResponse response = server::HttpResponse::Text(status, std::move(body));
  AddSecurityHeaders(response);
  return response;
}

}  // namespace

server::HttpResponse AnswerWebRequest(const server::HttpRequest& request,
                                      std::span<const EmbeddedAsset> assets) {
  if (request.method != "GET") {
    server::HttpResponse response = Plain(405, "method not allowed\n");
    response.headers.emplace_back("Allow", "GET");
    return response;
  }
  const std::string_view path = request.path();
  const bool is_asset = path.substr(0, kAssetsPrefix.size()) == kAssetsPrefix;
  const EmbeddedAsset* asset = Find(assets, is_asset ? path : kIndex);
  if (asset == nullptr) {
    return Plain(404, is_asset ? "no such asset\n" : "the web UI is not built into this binary\n");
  }
  server::HttpResponse response;
  response.status = 200;
  response.content_type = std::string(asset->content_type);
  AddSecurityHeaders(response);
  response.headers.emplace_back("ETag", std::string(asset->etag));
  response.headers.emplace_back("Cache-Control",
                                is_asset ? "public, max-age=31536000, immutable" : "no-cache");
  response.headers.emplace_back("Vary", "Accept-Encoding");
  if (Matches(request.Header("If-None-Match"), asset->etag)) {
    response.status = 304;
    response.content_type.clear();
    return response;
  }
  const std::string_view accept = request.Header("Accept-Encoding");
  std::string_view body = asset->identity;
  if (!asset->brotli.empty() && api::AcceptsCoding(accept, "br")) {
    body = asset->brotli;
    response.headers.emplace_back("Content-Encoding", "br");
  } else if (!asset->gzip.empty() && api::AcceptsCoding(accept, "gzip")) {
    body = asset->gzip;
    response.headers.emplace_back("Content-Encoding", "gzip");
  }
  response.body = std::string(body);
  return response;
}

void AddWebUiRoutes(server::HttpRouter* router) {
  router->Mount("/", [](server::HttpRequest request, server::HttpResponder responder) {
    responder.Respond(AnswerWebRequest(request, EmbeddedAssets()));
  });
}

}  // namespace strata::web
