#pragma once

// Log records as Loki presents them (docs/loki.md), and the scan that the
// Loki endpoints (loki_endpoints.cc) run over them.
//
// The mapping is Loki's own OTLP ingestion's: the resource attributes of
// kLokiStreamAttributes become stream labels (dots and other bytes outside
// [A-Za-z0-9_] turned into '_': service.name -> service_name, with
// "unknown_service" when a record has none); every other resource
// attribute, the scope's name, version and attributes, the record's
// attributes, trace_id, span_id, severity_text, severity_number, flags and
// observed_timestamp become structured metadata, with detected_level from
// the severity; the body is the line (a string as it is, any other body as
// its JSON text, the logs view's body_text).
//
// ScanLoki reads the records of a window whose stream labels match a
// selector, newest or oldest first, through the query pool over the
// snapshot it is given: the stream matchers and the line filters that come
// before anything that changes the line run in SQL; each row is then
// mapped and the rest of the pipeline runs in C++. It reads the window in
// slices that grow from one minute eightfold (a page of recent lines
// touches only recent files), each slice in chunks of at most
// kLokiScanChunkRows, and stops when the visitor says so, at the end of the
// window, or with ResourceExhausted past kLokiScanRowsMax rows.
//
// Thread-safety: reentrant. Errors: the pool's (DeadlineExceeded, ...);
// ResourceExhausted past the scan budget; FailedPrecondition when more than
// a chunk of records share one timestamp.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/search.h"
#include "compat/logql/ast.h"
#include "compat/logql/pipeline.h"
#include "otlp/json_writer.h"
#include "query/query_pool.h"

namespace simdjson::dom {
class parser;
}

namespace strata::api {

inline constexpr int64_t kLokiScanChunkRows = 20'000;
inline constexpr int64_t kLokiScanRowsMax = 2'000'000;

// (resource attribute, stream label) pairs: Loki's default index labels.
struct LokiStreamAttribute {
  std::string_view attribute;
  std::string_view label;
};
extern const LokiStreamAttribute kLokiStreamAttributes[18];

struct LokiScan {
  const std::vector<compat::logql::Matcher>* matchers = nullptr;
  const std::vector<compat::logql::Stage>* stages = nullptr;
  int64_t start = 0;  // unix ns, time_unix_nano >= start
  int64_t end = 0;    // and < end
  bool forward = false;
  // A bound on the lines the visitor will take when every stage runs in
  // SQL (0: none); lets a slice ask DuckDB for no more rows than that.
  int64_t wanted = 0;
};

struct LokiScanStats {
  int64_t rows_read = 0;
  int64_t queries = 0;
};

// Called with each line that passes the pipeline, in the scan's order;
// returns false to stop.
using LokiVisitor = std::function<bool(compat::logql::LogLine&&)>;

[[nodiscard]] absl::Status ScanLoki(query::QueryPool& pool, const storage::Snapshot& snapshot,
                                    const std::string& data_dir, const LokiScan& scan,
                                    const CallOptions& call, const LokiVisitor& visit,
                                    LokiScanStats* stats);

// The SQL condition of stream matchers over the logs view, binding values
// in `params`; "true" for none.
std::string LokiMatchersSql(const std::vector<compat::logql::Matcher>& matchers,
                            std::vector<query::QueryParam>* params);

// " AND ..." for each line filter of `stages` that runs in SQL (those
// before the first stage that changes the line), binding values in
// `params`.
std::string LokiLineFiltersSql(const std::vector<compat::logql::Stage>& stages,
                               std::vector<query::QueryParam>* params);

// The SQL (VARCHAR, '' when absent) of stream label `label` of a logs row.
std::string LokiStreamLabelSql(std::string_view label);

// The SQL (VARCHAR) of a logs row's line: the body as ScanLoki shows it.
std::string_view LokiLineSql();

// Whether `label` is one of the stream labels.
bool IsLokiStreamLabel(std::string_view label);

// The stream matchers and pipeline of a log query, for rows read one query
// at a time outside ScanLoki (the live tail, loki_tail.h): the columns and
// condition to select rows of the logs view with (the matchers and the line
// filters that run in SQL), and the rest in C++. Single owner.
class LokiRowFilter {
 public:
  // `matchers` and `stages` must outlive the filter.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<LokiRowFilter>> Compile(
      const std::vector<compat::logql::Matcher>& matchers,
      const std::vector<compat::logql::Stage>& stages);
  ~LokiRowFilter();
  LokiRowFilter(const LokiRowFilter&) = delete;
  LokiRowFilter& operator=(const LokiRowFilter&) = delete;

  // The columns Read() needs first in a row, comma-separated.
  static std::string_view ColumnsSql();
  // The condition over the logs view's columns, binding its values in
  // `params` after those already there.
  std::string ConditionSql(std::vector<query::QueryParam>* params) const;
  // The line of a row that starts with ColumnsSql()'s cells, or nullopt
  // when the matchers or the pipeline drop it.
  [[nodiscard]] absl::StatusOr<std::optional<compat::logql::LogLine>> Read(
      const std::vector<std::optional<std::string>>& row);

 private:
  LokiRowFilter(const std::vector<compat::logql::Matcher>& matchers,
                const std::vector<compat::logql::Stage>& stages,
                compat::logql::LogPipeline pipeline);

  // The query's, which the caller keeps alive (the pipeline refers to its
  // stages too).
  const std::vector<compat::logql::Matcher>& matchers_;
  const std::vector<compat::logql::Stage>& stages_;
  const compat::logql::LogPipeline pipeline_;
  std::unique_ptr<simdjson::dom::parser> parser_;
};

// The labels a record shows under in the plain streams answer and in
// metric grouping: stream labels, structured metadata and parsed labels
// together (a later kind wins a name).
compat::logql::Labels LokiAllLabels(const compat::logql::LogLine& line);

// The "result" array of a streams answer: `lines` in the order given,
// grouped by stream (all labels, or with categorize-labels the stream
// labels alone and the others beside each entry).
void WriteLokiStreams(const std::vector<compat::logql::LogLine>& lines, bool categorized,
                      otlp::JsonWriter* json);

// detected_level of a record.
std::string LokiDetectedLevel(int64_t severity_number, std::string_view severity_text);

}  // namespace strata::api
