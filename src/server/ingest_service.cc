#include "server/ingest_service.h"

#include <utility>

#include "fmt/format.h"
#include "otlp/json_writer.h"
#include "otlp/proto_writer.h"
#include "storage/storage.h"

namespace strata::server {
namespace {

constexpr std::string_view kBearer = "bearer ";

// Whether `text` starts with `prefix` (lowercase ASCII) in any letter case:
// the Authorization scheme is case-insensitive (RFC 9110, 11.1).
bool StartsWithIgnoreCase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    char c = text[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != prefix[i]) return false;
  }
  return true;
}

// The budget a decoded request costs: the heap its batch holds until the
// commit releases it. That is the decoded columns and arena plus, for
// protobuf, the body, which the batch retains because its strings are views
// into it. A JSON body is not retained (the decoder copies what it keeps),
// so it is freed when Export() returns and is not charged.
uint64_t RequestCost(const storage::WriteRequest& request) {
  uint64_t bytes = 0;
  if (request.traces != nullptr) bytes += request.traces->RetainedBytes();
  if (request.logs != nullptr) bytes += request.logs->RetainedBytes();
  if (request.metrics != nullptr) bytes += request.metrics->RetainedBytes();
  return bytes;
}

// Decodes `body` into `request`, and hands back the rows the decoder
// rejected and the log record ids it cleared (row_checks.h in otlp/).
absl::Status Decode(Signal signal, Encoding encoding,
                    const std::shared_ptr<const std::string>& body,
                    const otlp::DecodeLimits& limits, storage::WriteRequest* request,
                    otlp::RowRejections* rejected, otlp::ClearedIds* cleared_ids) {
  const std::string_view bytes = *body;
  const bool proto = encoding == Encoding::kProtobuf;
  switch (signal) {
    case Signal::kTraces: {
      request->traces = std::make_unique<otlp::TraceBatch>();
      if (proto) request->traces->Retain(body);
      absl::Status s = proto ? otlp::DecodeTracesProto(bytes, request->traces.get(), limits)
                             : otlp::DecodeTracesJson(bytes, request->traces.get(), limits);
      *rejected = std::move(request->traces->rejected);
      request->rows = request->traces->spans.size();
      return s;
    }
    case Signal::kLogs: {
      request->logs = std::make_unique<otlp::LogBatch>();
      if (proto) request->logs->Retain(body);
      absl::Status s = proto ? otlp::DecodeLogsProto(bytes, request->logs.get(), limits)
                             : otlp::DecodeLogsJson(bytes, request->logs.get(), limits);
      *rejected = std::move(request->logs->rejected);
      *cleared_ids = request->logs->cleared_ids;
      request->rows = request->logs->logs.size();
      return s;
    }
    case Signal::kMetrics: {
      request->metrics = std::make_unique<otlp::MetricBatch>();
      if (proto) request->metrics->Retain(body);
      absl::Status s = proto ? otlp::DecodeMetricsProto(bytes, request->metrics.get(), limits)
                             : otlp::DecodeMetricsJson(bytes, request->metrics.get(), limits);
      *rejected = std::move(request->metrics->rejected);
      request->rows = request->metrics->point_count();
      return s;
    }
  }
  return absl::InternalError("unknown signal");
}

std::string_view RejectedFieldJson(Signal signal) {
  switch (signal) {
    case Signal::kTraces: return "rejectedSpans";
    case Signal::kLogs: return "rejectedLogRecords";
    case Signal::kMetrics: return "rejectedDataPoints";
  }
  return "rejected";
}

std::string_view RowNoun(Signal signal) {
  switch (signal) {
    case Signal::kTraces:
      return "spans";
    case Signal::kLogs:
      return "log records";
    case Signal::kMetrics:
      return "data points";
  }
  return "rows";
}

// partial_success.error_message (or, when nothing was left, the whole
// request's error): how many rows went and the first reason.
std::string RejectionMessage(Signal signal, const otlp::RowRejections& rejected) {
  return fmt::format("rejected {} {} that OTLP does not allow; the first: {}", rejected.rows,
                     RowNoun(signal), rejected.first_message);
}

}  // namespace

IngestService::IngestService(storage::Storage& storage, TokenCheck token_check,
                             IngestMetrics& metrics, Options options)
    : storage_(storage),
      token_check_(std::move(token_check)),
      metrics_(metrics),
      options_(std::move(options)) {}

absl::Status IngestService::Authorize(std::string_view authorization, Signal signal,
                                      Transport transport) const {
  absl::Status status;
  if (authorization.empty()) {
    status = absl::UnauthenticatedError(
        "missing credentials: send \"Authorization: Bearer <token>\" with an ingest token");
  } else if (authorization.size() <= kBearer.size() ||
             !StartsWithIgnoreCase(authorization, kBearer)) {
    status = absl::UnauthenticatedError(
        "the Authorization header must use the Bearer scheme: \"Bearer <token>\"");
  } else {
    std::string_view token = authorization.substr(kBearer.size());
    while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
    while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
    status = token_check_(token);
  }
  if (!status.ok()) metrics_.CountRejected(signal, transport, RejectReasonFor(status.code()));
  return status;
}

void IngestService::Export(Signal signal, Encoding encoding, Transport transport,
                           std::shared_ptr<const std::string> body, uint64_t wire_bytes,
                           Done done) {
  storage::WriteRequest request;
  otlp::RowRejections rejected;
  otlp::ClearedIds cleared_ids;
  if (absl::Status s =
          Decode(signal, encoding, body, options_.decode_limits, &request, &rejected, &cleared_ids);
      !s.ok()) {
    metrics_.CountRejected(signal, transport, RejectReason::kInvalidArgument);
    done(ExportOutcome{.status = std::move(s)});
    return;
  }
  const uint64_t rows = request.rows;
  if (rows > options_.max_rows_per_request) {
    metrics_.CountRejected(signal, transport, RejectReason::kInvalidArgument);
    done(ExportOutcome{.status = absl::InvalidArgumentError(fmt::format(
                           "the request carries {} rows; at most {} are accepted per request: "
                           "send smaller batches",
                           rows, options_.max_rows_per_request))});
    return;
  }
  std::string partial_message;
  if (!rejected.empty()) {
    partial_message = RejectionMessage(signal, rejected);
    if (rows == 0) {
      // Nothing was accepted: OTLP's partial success is for a request that
      // kept some rows, so this is a failure the client must not retry.
      metrics_.CountRejected(signal, transport, RejectReason::kInvalidArgument);
      done(ExportOutcome{.status = absl::InvalidArgumentError(partial_message)});
      return;
    }
    metrics_.CountRejectedRows(signal, transport, rejected);
  }
  if (rows == 0) {
    // Nothing to store: an empty export is acknowledged without a commit.
    metrics_.CountIngested(signal, transport, 0, wire_bytes);
    done(ExportOutcome{.status = absl::OkStatus()});
    return;
  }
  body.reset();  // the batch retains what it needs
  request.bytes = RequestCost(request);
  const int64_t rejected_rows = static_cast<int64_t>(rejected.rows);
  // Cleared ids are not in partial_success: the records are stored, and the
  // specification defines an invalid log id as "no trace" (docs/otlp.md,
  // "Cleared log record ids"); the operator sees them in /metrics.
  storage_.Submit(std::move(request), [this, signal, transport, rows, wire_bytes, rejected_rows,
                                       cleared_ids, partial_message = std::move(partial_message),
                                       done = std::move(done)](absl::Status status) mutable {
    ExportOutcome outcome{.status = std::move(status), .rows = rows};
    if (outcome.status.ok()) {
      outcome.rejected_rows = rejected_rows;
      outcome.partial_message = std::move(partial_message);
      metrics_.CountIngested(signal, transport, rows, wire_bytes);
      metrics_.CountClearedLogIds(transport, cleared_ids);
    } else {
      metrics_.CountRejected(signal, transport, RejectReasonFor(outcome.status.code()));
      if (outcome.status.code() == absl::StatusCode::kResourceExhausted) {
        outcome.retry_after = options_.retry_after_overloaded;
      } else if (outcome.status.code() == absl::StatusCode::kUnavailable) {
        outcome.retry_after = options_.retry_after_unavailable;
      }
    }
    done(std::move(outcome));
  });
}

std::string IngestService::EncodeResponse(Signal signal, Encoding encoding,
                                          const ExportOutcome& outcome) {
  std::string out;
  const bool partial = outcome.rejected_rows > 0 || !outcome.partial_message.empty();
  if (encoding == Encoding::kProtobuf) {
    if (!partial) return out;
    // Export<Signal>ServiceResponse { 1: partial_success { 1: rejected, 2: error_message } }
    otlp::ProtoWriter writer(&out);
    const otlp::ProtoWriter::Mark mark = writer.Open(1);
    writer.AppendTag(1, otlp::WireType::kVarint);
    writer.AppendVarint(static_cast<uint64_t>(outcome.rejected_rows));
    writer.String(2, outcome.partial_message);
    writer.Close(mark);
    return out;
  }
  otlp::JsonWriter json(&out);
  json.BeginObject();
  if (partial) {
    json.Key("partialSuccess");
    json.BeginObject();
    json.Key(RejectedFieldJson(signal));
    json.IntString(outcome.rejected_rows);
    if (!outcome.partial_message.empty()) {
      json.Key("errorMessage");
      json.String(outcome.partial_message);
    }
    json.EndObject();
  }
  json.EndObject();
  return out;
}

}  // namespace strata::server
