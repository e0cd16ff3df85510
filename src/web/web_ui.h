#pragma once

// WebUi serves the embedded web UI on the API listener (docs/web-ui.md):
//
// - /assets/<name>-<hash>.<ext>: the bundled files. Their names change
//   with their content, so they are cached for a year as immutable. An
//   unknown asset is 404 (never the app, which would hide a broken build).
// - every other path (the API's /api/ and /jaeger/, /healthz, /readyz and
//   /metrics are routed before this): index.html, the app, which reads the
//   path itself; `no-cache`, so a browser revalidates it with its ETag (304
//   when unchanged) and picks up a new build at once.
//
// Each answer is sent brotli-compressed when the client accepts br, else
// gzip, else as is, with `Vary: Accept-Encoding`; with If-None-Match
// naming its ETag, 304 without a body. Every answer carries a strict
// Content-Security-Policy (only this origin's scripts, styles, images and
// connections; no inline script; no framing), X-Content-Type-Options:
// nosniff and Referrer-Policy: no-referrer. GET only (405 otherwise).
//
// Thread-safety: stateless over constant data; any io thread.

#include <span>

#include "server/http_adapter.h"
#include "web/embedded_assets.h"

namespace strata::web {

inline constexpr char kContentSecurityPolicy[] =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'";

// The answer to one request, from `assets` (EmbeddedAssets() in the
// server; tests give their own).
server::HttpResponse AnswerWebRequest(const server::HttpRequest& request,
                                      std::span<const EmbeddedAsset> assets);

// Serves EmbeddedAssets() for every path under "/" that no other route of
// `router` takes.
void AddWebUiRoutes(server::HttpRouter* router);

}  // namespace strata::web
