#pragma once

// The bytes of OTLP/HTTP that are not HTTP framing, shared by the server
// (http_routes.cc) and the client (http_adapter.cc): media types, the
// google.rpc.Status body of an error answer, and how a client reads an
// answer back into an ExportReply. No Boost here.
//
// Thread-safety: reentrant. Errors: none; malformed answers are read as well
// as they can be (a client never fails on the server's error text).

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "server/ingest.h"
#include "server/otlp_client.h"

namespace strata::server {

// HTTP field values: ASCII case-insensitive comparison, and trimming of
// spaces and tabs.
bool AsciiEqualsIgnoreCase(std::string_view a, std::string_view b);
std::string_view TrimHttpWhitespace(std::string_view s);
// The media type of a Content-Type value, without parameters:
// "application/json; charset=utf-8" -> "application/json".
std::string_view MediaTypeOf(std::string_view content_type);

// "application/x-protobuf" or "application/json".
std::string_view ContentTypeFor(Encoding encoding);
// The encoding a Content-Type names (parameters and letter case ignored),
// or nullopt for anything else.
std::optional<Encoding> EncodingForContentType(std::string_view content_type);

// google.rpc.Status { int32 code = 1; string message = 2; } in `encoding`:
// protobuf bytes, or {"code":3,"message":"..."}.
std::string EncodeStatusBody(Encoding encoding, const absl::Status& status);

// The inverse of HttpStatusFor for the statuses OTLP/HTTP answers with; 502
// and 503 are Unavailable; statuses it does not know are Unknown.
absl::StatusCode CodeForHttpStatus(int status);

// Reads an OTLP/HTTP answer: 200 is OK, with rejected_rows from a
// partial_success (protobuf field 1.1, or JSON partialSuccess.rejected*);
// anything else is CodeForHttpStatus's code with the Status body's message
// (or the body's text when it is no Status). `retry_after` is the
// Retry-After value in seconds (an HTTP date is ignored).
ExportReply ParseExportReply(Signal signal, int status, std::string_view content_type,
                             std::string_view retry_after, std::string_view body);

}  // namespace strata::server
