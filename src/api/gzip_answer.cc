#include "api/gzip_answer.h"

#include "api/accept_encoding.h"
#include "server/gzip.h"

namespace strata::api {

void GzipIfAccepted(const server::HttpRequest& request, server::HttpResponse* response) {
  if (response->body.size() < kMinGzipAnswerBytes) return;
  response->headers.emplace_back("Vary", "Accept-Encoding");
  if (!AcceptsGzip(request.Header("Accept-Encoding"))) return;
  response->body = server::Gzip(response->body, 1);
  response->headers.emplace_back("Content-Encoding", "gzip");
}

}  // namespace strata::api
