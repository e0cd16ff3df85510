#include "server/loki_push_http.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "otlp/loki_push.h"
#include "otlp/loki_push_otlp.h"
#include "otlp/snappy_block.h"
#include "server/gzip.h"
#include "server/ingest.h"
#include "server/ingest_metrics.h"
#include "server/ingest_service.h"
#include "server/otlp_http_codec.h"

namespace strata::server {
namespace {

using Clock = std::chrono::steady_clock;

HttpResponse ErrorText(const absl::Status& status, std::chrono::seconds retry_after) {
  HttpResponse response =
      HttpResponse::Text(HttpStatusFor(status.code()), std::string(status.message()) + "\n");
  if (response.status == 429 || response.status == 503) {
    response.headers.emplace_back("Retry-After",
                                  std::to_string(std::max<int64_t>(1, retry_after.count())));
  }
  if (response.status == 401) response.headers.emplace_back("WWW-Authenticate", "Bearer");
  return response;
}

// The 400 text of a push with dropped entries.
std::string RejectedEntriesText(const otlp::LokiPush& push) {
  return fmt::format(
      "{} of {} entries of the Loki push were dropped and {} stored; the first dropped: {}",
      push.rejected.rows, push.rejected.rows + push.entries, push.entries,
      push.rejected.first_message);
}

}  // namespace

void HandleLokiPush(IngestService& ingest, uint64_t max_decompressed_body_bytes,
                    HttpRequest request, HttpResponder responder) {
  IngestMetrics& metrics = ingest.metrics();
  const Clock::time_point arrival = request.arrival;
  auto answer = [&](HttpResponse response) {
    metrics.ObserveExportLatency(Transport::kHttp, Clock::now() - arrival);
    responder.Respond(std::move(response));
  };
  auto refuse = [&](RejectReason reason, const absl::Status& status) {
    metrics.CountRejected(Signal::kLogs, Transport::kHttp, reason);
    answer(ErrorText(status, std::chrono::seconds(0)));
  };
  if (request.method != "POST") {
    HttpResponse response = HttpResponse::Text(
        405, fmt::format("method {} is not allowed on {}; Loki pushes are POSTed\n", request.method,
                         kLokiPushPath));
    response.headers.emplace_back("Allow", "POST");
    metrics.CountRejected(Signal::kLogs, Transport::kHttp, RejectReason::kInvalidArgument);
    answer(std::move(response));
    return;
  }
  const std::optional<Encoding> encoding = EncodingForContentType(request.Header("Content-Type"));
  if (!encoding.has_value()) {
    refuse(RejectReason::kUnsupportedMediaType,
           absl::FailedPreconditionError(
               fmt::format("unsupported Content-Type \"{}\": a Loki push is application/x-protobuf "
                           "(Snappy-compressed) or application/json",
                           request.Header("Content-Type"))));
    return;
  }
  // Before any decompression, as for /v1/logs.
  if (absl::Status auth =
          ingest.Authorize(request.Header("Authorization"), Signal::kLogs, Transport::kHttp);
      !auth.ok()) {
    answer(ErrorText(auth, std::chrono::seconds(0)));
    return;
  }
  const uint64_t wire_bytes = request.body->size();
  std::string body;
  const std::string_view content_encoding = TrimHttpWhitespace(request.Header("Content-Encoding"));
  const bool identity =
      content_encoding.empty() || AsciiEqualsIgnoreCase(content_encoding, "identity");
  if (*encoding == Encoding::kProtobuf &&
      (identity || AsciiEqualsIgnoreCase(content_encoding, "snappy"))) {
    absl::StatusOr<std::string> inflated =
        otlp::SnappyUncompress(*request.body, max_decompressed_body_bytes);
    if (!inflated.ok() && absl::IsOutOfRange(inflated.status())) {
      // A block that says it decompresses past the limit (413), refused
      // before anything is allocated.
      refuse(RejectReason::kBodyTooLarge,
             absl::OutOfRangeError(fmt::format("the protobuf push is too large: {}",
                                               std::string(inflated.status().message()))));
      return;
    }
    if (!inflated.ok()) {
      refuse(RejectReason::kInvalidArgument,
             absl::InvalidArgumentError(fmt::format("the protobuf push is not a Snappy block: {}",
                                                    std::string(inflated.status().message()))));
      return;
    }
    body = std::move(*inflated);
  } else if (*encoding == Encoding::kJson && (AsciiEqualsIgnoreCase(content_encoding, "gzip") ||
                                              AsciiEqualsIgnoreCase(content_encoding, "x-gzip"))) {
    absl::StatusOr<std::string> inflated =
        GunzipLimited(*request.body, max_decompressed_body_bytes);
    if (!inflated.ok()) {
      refuse(inflated.status().code() == absl::StatusCode::kOutOfRange
                 ? RejectReason::kBodyTooLarge
                 : RejectReason::kInvalidArgument,
             inflated.status());
      return;
    }
    body = std::move(*inflated);
  } else if (*encoding == Encoding::kJson && identity) {
    if (request.body->size() > max_decompressed_body_bytes) {
      refuse(RejectReason::kBodyTooLarge,
             absl::OutOfRangeError(fmt::format("request body of {} bytes is over the limit of {}",
                                               request.body->size(), max_decompressed_body_bytes)));
      return;
    }
    body = *request.body;
  } else {
    refuse(RejectReason::kUnsupportedMediaType,
           absl::FailedPreconditionError(fmt::format(
               "unsupported Content-Encoding \"{}\" for {}: a protobuf push is Snappy-compressed, "
               "a JSON push gzip or identity",
               content_encoding, request.Header("Content-Type"))));
    return;
  }
  request.body.reset();
  const otlp::LokiPushLimits limits;
  absl::StatusOr<otlp::LokiPush> push = *encoding == Encoding::kProtobuf
                                            ? otlp::DecodeLokiPushProto(body, limits)
                                            : otlp::DecodeLokiPushJson(body, limits);
  if (push.ok() && push->entries == 0 && !push->rejected.empty()) {
    // Nothing of it can be stored.
    metrics.CountRejectedRows(Signal::kLogs, Transport::kHttp, push->rejected);
    refuse(RejectReason::kInvalidArgument, absl::InvalidArgumentError(RejectedEntriesText(*push)));
    return;
  }
  absl::StatusOr<std::string> otlp_json =
      push.ok() ? otlp::LokiPushToOtlpLogsJson(*push) : push.status();
  if (!otlp_json.ok()) {
    const bool too_many = otlp_json.status().code() == absl::StatusCode::kResourceExhausted;
    refuse(RejectReason::kInvalidArgument,
           absl::InvalidArgumentError(fmt::format("{} Loki push: {}",
                                                  too_many ? "over the limits of a" : "malformed",
                                                  std::string(otlp_json.status().message()))));
    return;
  }
  // As Loki does, what can be stored is stored, and the answer is then 400
  // naming what was dropped (the client must not retry the push whole).
  std::optional<std::string> partial;
  if (!push->rejected.empty()) partial = RejectedEntriesText(*push);
  const otlp::RowRejections rejected = std::move(push->rejected);
  ingest.Export(Signal::kLogs, Encoding::kJson, Transport::kHttp,
                std::make_shared<const std::string>(std::move(*otlp_json)), wire_bytes,
                [&metrics, responder = std::move(responder), arrival, partial = std::move(partial),
                 rejected](ExportOutcome outcome) mutable {
                  HttpResponse response;
                  if (!outcome.status.ok()) {
                    response = ErrorText(outcome.status, outcome.retry_after);
                  } else if (partial.has_value()) {
                    metrics.CountRejectedRows(Signal::kLogs, Transport::kHttp, rejected);
                    response = HttpResponse::Text(400, *partial + "\n");
                  } else {
                    response.status = 204;
                  }
                  metrics.ObserveExportLatency(Transport::kHttp, Clock::now() - arrival);
                  responder.Respond(std::move(response));
                });
}

}  // namespace strata::server
