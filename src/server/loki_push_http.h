#pragma once

// POST /loki/api/v1/push on the OTLP/HTTP listener: a Loki push
// (application/x-protobuf, Snappy block-compressed, or application/json,
// gzip or identity) decoded by otlp/loki_push.h, turned into an OTLP logs
// request by otlp/loki_push_otlp.h and handed to IngestService::Export, so
// it is authorized (ingest token), limited and durably committed exactly as
// POST /v1/logs is. Answers 204 once the records are durable; errors as
// plain text (Loki's form) with HttpStatusFor's status: 400 malformed, 401
// and 403 for the token, 405 not POST, 413 over the body limit, 415 other
// media types or encodings, 429 and 503 with Retry-After.
//
// Thread-safety: as the OTLP/HTTP handler; `ingest` must outlive it.

#include <cstdint>
#include <string_view>

#include "server/http_adapter.h"

namespace strata::server {

class IngestService;

inline constexpr std::string_view kLokiPushPath = "/loki/api/v1/push";

void HandleLokiPush(IngestService& ingest, uint64_t max_decompressed_body_bytes,
                    HttpRequest request, HttpResponder responder);

}  // namespace strata::server
