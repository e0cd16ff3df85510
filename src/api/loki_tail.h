#pragma once

// GET /loki/api/v1/tail (docs/loki.md): Loki's live tail, a WebSocket that
// sends each new log record matching a log query, as Grafana's Loki data
// source uses it (Explore's "Live" mode).
//
// The handshake is checked before the upgrade, so every refusal is a plain
// HTTP answer: 401 without a valid token (as the other Loki endpoints), 403
// for an Origin that is not this server's, 400 for a bad or metric query
// or a request that is not a WebSocket upgrade, 429 over a tail limit, 503
// while recovering or stopping. Then LogTail's thread (log_tail.h) serves
// it as a formatted tail with LokiTailFormat: each message is Loki's
//   {"streams":[{"stream":{labels},"values":[["<ns>","<line>"],...]}],
//    "dropped_entries":[{"labels":{labels},"timestamp":"<ns>"},...]}
// with the labels of the plain (not categorized) query_range answer.
// Records the client was too slow to take are listed in dropped_entries
// (at most kLokiTailDroppedMax per message; the rest only counted, in
// LogTailStats::records_missed).
//
// The first messages replay the past as Loki does: the newest `limit`
// (default 100) matching records timed at or after `start` (default an
// hour ago), oldest first, read from the snapshot pinned when the tail
// subscribed to the log feed, so the live records that follow neither
// repeat nor skip any (LogTail::StartFormatted). The replay is read by
// the tail thread with ScanLoki (as query_range reads), at most
// kLokiTailHistoryBytesMax of lines.
//
// Thread-safety: a LokiTailFormat has a single owner (the tail thread).

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/log_tail.h"
#include "api/loki_logs.h"
#include "compat/logql/ast.h"

namespace strata::api {

inline constexpr size_t kLokiTailDroppedMax = 100;
// Loki's own bound on delay_for, in seconds.
inline constexpr int64_t kLokiTailDelayMax = 5;
// The replay's default reach into the past (Loki's: an hour), in ns; the
// replay also takes records timed up to this far ahead of the server's
// clock (stored before the tail opened; later ones come live).
inline constexpr int64_t kLokiTailHistoryDefault = 3'600'000'000'000;
// The replay also stops once its lines add up to this many bytes (the
// newest are kept), so `limit` long lines cannot fill the memory.
inline constexpr size_t kLokiTailHistoryBytesMax = 16 << 20;

// The past a tail replays first: up to `limit` of the newest matching
// records timed in [start, end), sent oldest first (as Loki replays them).
struct LokiTailHistory {
  int64_t start = 0;  // unix ns
  int64_t end = 0;
  int64_t limit = 0;
};

class LokiTailFormat final : public TailFormat {
 public:
  // `query` must be a log query (Expr::Kind::kLog); InvalidArgument
  // otherwise. Without `history` the tail starts at the live edge.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<LokiTailFormat>> Make(
      std::unique_ptr<compat::logql::Expr> query,
      std::optional<LokiTailHistory> history = std::nullopt);

  std::string ColumnsSql() const override;
  std::string ConditionSql(std::vector<query::QueryParam>* params) const override;
  absl::StatusOr<bool> Add(const std::vector<std::optional<std::string>>& row,
                           bool dropped) override;
  size_t pending_bytes() const override { return pending_bytes_; }
  size_t pending_records() const override { return pending_.size(); }
  std::string Message() const override;
  void Sent() override;
  void Refused() override;
  bool wants_history() const override { return history_.has_value(); }
  [[nodiscard]] absl::Status ReadHistory(query::QueryPool& pool, const storage::Snapshot& snapshot,
                                         const std::string& data_dir,
                                         const CallOptions& call) override;
  bool TakeHistory(size_t bytes) override;
  bool history_left() const override { return !history_lines_.empty(); }

 private:
  explicit LokiTailFormat(std::unique_ptr<compat::logql::Expr> query);
  void Drop(const compat::logql::LogLine& line);
  void Take(compat::logql::LogLine line);

  // The query owns the matchers and stages filter_ refers to.
  const std::unique_ptr<compat::logql::Expr> query_;
  std::unique_ptr<LokiRowFilter> filter_;
  std::optional<LokiTailHistory> history_;
  // The past records read and not yet taken, oldest first.
  std::deque<compat::logql::LogLine> history_lines_;
  std::vector<compat::logql::LogLine> pending_;
  size_t pending_bytes_ = 0;
  // Dropped records not yet reported: labels (as the stream's) and time.
  std::vector<std::pair<compat::logql::Labels, int64_t>> dropped_;
};

}  // namespace strata::api
