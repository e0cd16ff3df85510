#include "api/loki_tail.h"

#include <algorithm>
#include <deque>
#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/api_server.h"
#include "api/loki_http.h"
#include "api/loki_logs.h"
#include "api/loki_query.h"
#include "api/params.h"
#include "common/status_macros.h"
#include "otlp/json_writer.h"
#include "server/websocket_frame.h"

namespace strata::api {
namespace {

using compat::logql::Expr;
using compat::logql::Labels;
using compat::logql::LogLine;

// The largest client frame: clients only send close, ping and pong (125
// bytes at most); a little more leaves room for a stray small message.
constexpr uint64_t kLokiTailClientFrameMax = 1024;

server::HttpResponse TooMany(const absl::Status& status) {
  server::HttpResponse response =
      server::HttpResponse::Text(429, absl::StrCat(status.message(), "\n"));
  response.headers.emplace_back("Retry-After", "5");
  return response;
}

}  // namespace

absl::StatusOr<std::unique_ptr<LokiTailFormat>> LokiTailFormat::Make(
    std::unique_ptr<compat::logql::Expr> query, std::optional<LokiTailHistory> history) {
  if (query == nullptr || query->kind != Expr::Kind::kLog) {
    return absl::InvalidArgumentError(
        "tail: only log queries can be tailed (a stream selector and line filters or other "
        "pipeline stages), not metric queries");
  }
  std::unique_ptr<LokiTailFormat> format(new LokiTailFormat(std::move(query)));
  format->history_ = history;
  STRATA_ASSIGN_OR_RETURN(format->filter_, LokiRowFilter::Compile(format->query_->log.matchers,
                                                                  format->query_->log.stages));
  return format;
}

LokiTailFormat::LokiTailFormat(std::unique_ptr<compat::logql::Expr> query)
    : query_(std::move(query)) {}

std::string LokiTailFormat::ColumnsSql() const { return std::string(LokiRowFilter::ColumnsSql()); }

std::string LokiTailFormat::ConditionSql(std::vector<query::QueryParam>* params) const {
  return filter_->ConditionSql(params);
}

absl::StatusOr<bool> LokiTailFormat::Add(const std::vector<std::optional<std::string>>& row,
                                         bool dropped) {
  STRATA_ASSIGN_OR_RETURN(std::optional<LogLine> line, filter_->Read(row));
  if (!line.has_value()) return false;
  if (dropped) {
    Drop(*line);
    return true;
  }
  Take(*std::move(line));
  return true;
}

void LokiTailFormat::Take(LogLine line) {
  // The line and about what its labels add to the message.
  pending_bytes_ += line.line.size() + 64;
  for (const auto& [k, v] : line.stream) pending_bytes_ += k.size() + v.size();
  pending_.push_back(std::move(line));
}

absl::Status LokiTailFormat::ReadHistory(query::QueryPool& pool, const storage::Snapshot& snapshot,
                                         const std::string& data_dir, const CallOptions& call) {
  if (!history_.has_value() || history_->limit <= 0 || history_->start >= history_->end) {
    return absl::OkStatus();
  }
  const size_t limit = static_cast<size_t>(history_->limit);
  // The newest `limit`, read newest first.
  std::vector<LogLine> lines;
  size_t bytes = 0;
  LokiScanStats stats;
  const absl::Status scanned = ScanLoki(
      pool, snapshot, data_dir,
      {.matchers = &query_->log.matchers,
       .stages = &query_->log.stages,
       .start = history_->start,
       .end = history_->end,
       .forward = false,
       .wanted = history_->limit},
      call,
      [&](LogLine&& line) {
        bytes += line.line.size();
        lines.push_back(std::move(line));
        return lines.size() < limit && bytes < kLokiTailHistoryBytesMax;
      },
      &stats);
  // Past the scan budget, the lines read are still the newest that match
  // (the scan goes newest first): the replay is those. Any other error
  // (a busy pool is retried) keeps nothing.
  if (!scanned.ok() &&
      !(absl::IsResourceExhausted(scanned) && stats.rows_read > kLokiScanRowsMax)) {
    return scanned;
  }
  // Oldest first; records of one timestamp stay in the scan's order (the
  // order they were stored in), as the live tail sends them.
  std::stable_sort(lines.begin(), lines.end(),
                   [](const LogLine& a, const LogLine& b) { return a.time < b.time; });
  history_lines_ = std::deque<LogLine>(std::make_move_iterator(lines.begin()),
                                       std::make_move_iterator(lines.end()));
  return absl::OkStatus();
}

bool LokiTailFormat::TakeHistory(size_t bytes) {
  while (!history_lines_.empty() && (pending_.empty() || pending_bytes_ < bytes)) {
    Take(std::move(history_lines_.front()));
    history_lines_.pop_front();
  }
  return !history_lines_.empty();
}

void LokiTailFormat::Drop(const LogLine& line) {
  if (dropped_.size() < kLokiTailDroppedMax) dropped_.emplace_back(LokiAllLabels(line), line.time);
}

std::string LokiTailFormat::Message() const {
  if (pending_.empty() && dropped_.empty()) return "";
  std::string out;
  otlp::JsonWriter json(&out);
  json.BeginObject();
  json.Key("streams");
  WriteLokiStreams(pending_, /*categorized=*/false, &json);
  if (!dropped_.empty()) {
    json.Key("dropped_entries");
    json.BeginArray();
    for (const auto& [labels, time] : dropped_) {
      json.BeginObject();
      json.Key("labels");
      WriteLokiLabels(labels, &json);
      json.Key("timestamp");
      json.String(absl::StrCat(time));
      json.EndObject();
    }
    json.EndArray();
  }
  json.EndObject();
  return out;
}

void LokiTailFormat::Sent() {
  pending_.clear();
  pending_bytes_ = 0;
  dropped_.clear();
}

void LokiTailFormat::Refused() {
  for (const LogLine& line : pending_) Drop(line);
  pending_.clear();
  pending_bytes_ = 0;
}

void Api::LokiTail(server::HttpRequest request, server::HttpResponder responder) {
  const absl::StatusOr<Caller> caller = Admit(request);
  if (!caller.ok()) {
    responder.Respond(ApiErrorResponse(caller.status()));
    return;
  }
  if (absl::Status own = CheckOwnOrigin(request); !own.ok()) {
    responder.Respond(server::HttpResponse::Text(403, absl::StrCat(own.message(), "\n")));
    return;
  }
  auto refuse = [&](const absl::Status& status) { responder.Respond(LokiError(status)); };
  absl::StatusOr<QueryParams> params = QueryParams::Parse(request.query());
  if (!params.ok()) return refuse(params.status());
  absl::StatusOr<std::unique_ptr<Expr>> query = TakeLokiQuery(*params);
  if (!query.ok()) return refuse(query.status());
  // Loki's replay of the past: up to `limit` records timed at or after
  // `start` (default an hour ago), then the live ones.
  const absl::StatusOr<int64_t> limit =
      TakeLokiCount(*params, "limit", kLokiLimitDefault, kLokiLimitMax);
  if (!limit.ok()) return refuse(limit.status());
  const int64_t now = options_.now();
  LokiTailHistory history{.start = now - kLokiTailHistoryDefault,
                          .end = now + kLokiTailHistoryDefault,
                          .limit = *limit};
  if (absl::StatusOr<std::optional<std::string>> start = params->Take("start"); !start.ok()) {
    return refuse(start.status());
  } else if (start->has_value() && !(*start)->empty()) {
    absl::StatusOr<int64_t> time = ParseLokiTime("start", **start);
    if (!time.ok()) return refuse(time.status());
    history.start = *time;
  }
  // delay_for lets Loki wait for late entries; strata sends records once
  // they are published, in order, so no delay is needed.
  if (absl::StatusOr<int64_t> delay = TakeLokiCount(*params, "delay_for", 0, kLokiTailDelayMax);
      !delay.ok()) {
    return refuse(delay.status());
  }
  absl::StatusOr<std::unique_ptr<LokiTailFormat>> format =
      LokiTailFormat::Make(*std::move(query), history);
  if (!format.ok()) return refuse(format.status());
  absl::StatusOr<server::HttpResponse> head = server::WebSocketUpgradeHead(request);
  if (!head.ok()) return refuse(head.status());
  // Per-token limit: a token counts by its text, a signed-in user by the
  // account, and callers without credentials (authentication off) together.
  std::string owner = "anonymous";
  if (caller->kind == Caller::Kind::kToken) {
    owner = absl::StrCat("token:", std::hash<std::string>{}(PresentedToken(request)));
  } else if (caller->kind == Caller::Kind::kSession) {
    owner = caller->Actor();
  }
  const absl::Status started =
      tail_->StartFormatted(options_.storage ? options_.storage() : nullptr, *std::move(format),
                            std::move(owner), *std::move(head),
                            {.max_queued_bytes = options_.log_tail.max_queued_bytes,
                             .websocket = true,
                             .max_client_frame_bytes = kLokiTailClientFrameMax},
                            responder);
  if (started.ok()) return;
  if (absl::IsResourceExhausted(started)) {
    responder.Respond(TooMany(started));
    return;
  }
  refuse(started);
}

}  // namespace strata::api
