#include "storage/check/deep_checks.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "common/path.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "storage/index/trace_index.h"
#include "storage/table/file_source.h"
#include "storage/table/logs_table.h"
#include "storage/table/spans_table.h"

namespace strata::storage {
namespace {

// Index entries read at once.
constexpr uint64_t kEntryWindow = 4096;

std::string HexId(const otlp::TraceId& id) {
  std::string hex;
  for (uint8_t b : id) hex += fmt::format("{:02x}", b);
  return hex;
}

std::string FormatRange(const std::optional<NanosRange>& range) {
  if (!range.has_value()) return "null";
  return fmt::format("[{}, {}]", range->min, range->max);
}

// Resource and scope indexes over the ranges of one file: a scope index
// never under two resource indexes, and both dense (0..max all present),
// as the whole-file reader requires (RebuildResourcesAndScopes).
class OwnerIndexCheck {
 public:
  explicit OwnerIndexCheck(std::string_view file_name) : file_name_(file_name) {}

  absl::Status Add(const otlp::BatchBase& batch, const FileOwnerIndexes& owners) {
    for (uint32_t resource : owners.resource) resources_.insert(resource);
    for (size_t j = 0; j < batch.scopes.size(); ++j) {
      const uint32_t scope = owners.scope.at(j);
      const uint32_t resource = owners.resource.at(batch.scopes.resource[j]);
      const auto [it, inserted] = scope_resource_.emplace(scope, resource);
      if (!inserted && it->second != resource) {
        return DeepMismatch(
            file_name_, fmt::format("scope_index {} appears with resource_index {} and {}", scope,
                                    it->second, resource));
      }
    }
    return absl::OkStatus();
  }

  absl::Status Finish() const {
    if (!resources_.empty() && *resources_.rbegin() + 1 != resources_.size()) {
      return DeepMismatch(file_name_, fmt::format("resource_index is not dense: {} values up to {}",
                                                  resources_.size(), *resources_.rbegin()));
    }
    if (!scope_resource_.empty() && scope_resource_.rbegin()->first + 1 != scope_resource_.size()) {
      return DeepMismatch(file_name_,
                          fmt::format("scope_index is not dense: {} values up to {}",
                                      scope_resource_.size(), scope_resource_.rbegin()->first));
    }
    return absl::OkStatus();
  }

 private:
  const std::string_view file_name_;
  std::set<uint32_t> resources_;
  std::map<uint32_t, uint32_t> scope_resource_;
};

// spans.tidx against the span rows, fed in row order (trace-index.md,
// "Validation": what verify checks beyond boot).
class IndexAgreement {
 public:
  IndexAgreement(const TraceFilter& filter, const RandomAccessFile& file)
      : filter_(filter), file_(file) {}

  absl::Status Row(uint64_t row, const otlp::TraceId& trace_id) {
    while (!current_.has_value() || row >= location_.end_row) {
      STRATA_RETURN_IF_ERROR(Next());
    }
    if (trace_id != current_->trace_id) {
      return DeepMismatch(kTraceIndexFileName,
                          fmt::format("entry {} (trace {}) covers row {}, which holds trace {}",
                                      k_ - 1, HexId(current_->trace_id), row, HexId(trace_id)));
    }
    return absl::OkStatus();
  }

  // After the last span row.
  absl::Status Finish() const {
    if (k_ != filter_.trace_count()) {  // cannot happen once the header agreed with the rows
      return DeepMismatch(kTraceIndexFileName, fmt::format("{} of {} entries cover span rows", k_,
                                                           filter_.trace_count()));
    }
    return absl::OkStatus();
  }

 private:
  // Closes the current entry and moves to the next.
  absl::Status Next() {
    if (next_ == entries_.size()) {
      if (k_ >= filter_.trace_count()) {
        return DeepMismatch(kTraceIndexFileName, "span rows continue past the last entry");
      }
      entries_.clear();
      ends_.clear();
      STRATA_RETURN_IF_ERROR(filter_.ReadEntries(
          file_, k_, std::min(kEntryWindow, filter_.trace_count() - k_), &entries_, &ends_));
      next_ = 0;
    }
    current_ = entries_[next_];
    location_ = LocationOfEntry(entries_[next_], ends_[next_]);
    ++next_;
    ++k_;
    return absl::OkStatus();
  }

  const TraceFilter& filter_;
  const RandomAccessFile& file_;
  std::vector<TraceIndexEntry> entries_;
  std::vector<uint64_t> ends_;
  size_t next_ = 0;  // in entries_
  uint64_t k_ = 0;   // entries started
  std::optional<TraceIndexEntry> current_;
  TraceLocation location_;
};

// The spans check proper: rows in order, range by range.
class SpansCheck {
 public:
  SpansCheck(FileSystem& fs, const std::string& dir, const BatchMeta& meta, uint64_t chunk_rows)
      : fs_(fs), dir_(dir), meta_(meta), chunk_rows_(std::max<uint64_t>(1, chunk_rows)) {}

  DeepOutcome Run() {
    absl::StatusOr<std::unique_ptr<FileSource>> source =
        OpenFileSource(fs_, JoinPath(dir_, kSpansFileName));
    if (!source.ok()) return Decode(source.status());
    absl::StatusOr<std::unique_ptr<SpansRangeReader>> reader =
        SpansRangeReader::Open(source->get(), meta_.id, kSpansFileName);
    if (!reader.ok()) return Decode(reader.status());
    (*reader)->ReadEveryColumn();
    if (DeepOutcome index = OpenIndex()) return index;

    const uint64_t file_rows = (*reader)->file_rows();
    const uint64_t first_span_row = file_rows - std::min(file_rows, meta_.spans.rows);
    if (first_span_row > 0) {
      otlp::TraceBatch placeholders;
      FileOwnerIndexes owners;
      if (absl::Status s = (*reader)->ReadPlaceholders(first_span_row, &placeholders, &owners);
          !s.ok()) {
        return Decode(s);
      }
      if (absl::Status s = owner_indexes_.Add(placeholders, owners); !s.ok()) return Decode(s);
    }
    for (uint64_t begin = first_span_row; begin < file_rows; begin += chunk_rows_) {
      const uint64_t end = std::min(file_rows, begin + chunk_rows_);
      otlp::TraceBatch batch;
      FileOwnerIndexes owners;
      if (absl::Status s = (*reader)->ReadSpans(begin, end, &batch, &owners); !s.ok()) {
        return Decode(s);
      }
      if (absl::Status s = owner_indexes_.Add(batch, owners); !s.ok()) return Decode(s);
      if (DeepOutcome rows = AddRows(batch.spans, begin)) return rows;
    }
    if (absl::Status s = owner_indexes_.Finish(); !s.ok()) return Decode(s);
    if (DeepOutcome counts = CheckCounts(file_rows - first_span_row)) return counts;
    if (index_.has_value()) {
      if (absl::Status s = index_->Finish(); !s.ok()) {
        return DeepFailure{"index", kTraceIndexFileName, s};
      }
    }
    return std::nullopt;
  }

 private:
  static DeepFailure Decode(const absl::Status& status) {
    return DeepFailure{"decode", kSpansFileName, status};
  }

  // Opens spans.tidx when meta.json lists it and checks its covered rows.
  DeepOutcome OpenIndex() {
    if (!meta_.spans_tidx.has_value()) return std::nullopt;
    absl::StatusOr<std::unique_ptr<RandomAccessFile>> file =
        fs_.NewRandomAccessFile(JoinPath(dir_, kTraceIndexFileName));
    if (!file.ok()) return DeepFailure{"index", kTraceIndexFileName, file.status()};
    tidx_ = *std::move(file);
    absl::StatusOr<TraceFilter> filter = TraceFilter::Open(*tidx_);
    if (!filter.ok()) return DeepFailure{"index", kTraceIndexFileName, filter.status()};
    filter_ = *std::move(filter);
    const uint64_t first_span_row = meta_.spans.file_rows - meta_.spans.rows;
    if (filter_->first_covered_row() != first_span_row ||
        filter_->span_rows() != meta_.spans.rows) {
      return DeepFailure{
          "index", kTraceIndexFileName,
          DeepMismatch(kTraceIndexFileName,
                       fmt::format("covers rows [{}, {}), the span rows are [{}, {})",
                                   filter_->first_covered_row(),
                                   filter_->first_covered_row() + filter_->span_rows(),
                                   first_span_row, meta_.spans.file_rows))};
    }
    index_.emplace(*filter_, *tidx_);
    return std::nullopt;
  }

  DeepOutcome AddRows(const otlp::SpanColumns& s, uint64_t first_row) {
    for (size_t i = 0; i < s.size(); ++i) {
      const uint64_t row = first_row + i;
      const otlp::TraceId& id = s.trace_id[i];
      const uint64_t start = s.start_time_unix_nano[i], end = s.end_time_unix_nano[i];
      if (spans_ > 0) {
        if (std::tie(id, start) < std::tie(last_id_, last_start_)) {
          return DeepFailure{
              "sort order", kSpansFileName,
              DeepMismatch(
                  kSpansFileName,
                  fmt::format("row {} (trace {}, start {}) sorts before row "
                              "{} (trace {}, start {})",
                              row, HexId(id), start, row - 1, HexId(last_id_), last_start_))};
        }
        if (id != last_id_) ++traces_;
      } else {
        traces_ = 1;
      }
      if (index_.has_value()) {
        if (absl::Status st = index_->Row(row, id); !st.ok()) {
          return DeepFailure{"index", kTraceIndexFileName, st};
        }
      }
      min_ = std::min({min_, start, end});
      max_ = std::max({max_, start, end});
      last_id_ = id;
      last_start_ = start;
      ++spans_;
    }
    return std::nullopt;
  }

  DeepOutcome CheckCounts(uint64_t span_rows) const {
    absl::Status s = CheckRowCount(kSpansFileName, "spans", span_rows, meta_.spans.rows);
    if (s.ok())
      s = CheckRowCount(kSpansFileName, "traces", traces_, meta_.spans.traces.value_or(0));
    if (s.ok()) s = CheckEventTime(kSpansFileName, meta_.spans, spans_, min_, max_);
    if (!s.ok()) return DeepFailure{"rows", kSpansFileName, s};
    return std::nullopt;
  }

  FileSystem& fs_;
  const std::string& dir_;
  const BatchMeta& meta_;
  const uint64_t chunk_rows_;
  std::unique_ptr<RandomAccessFile> tidx_;
  std::optional<TraceFilter> filter_;
  std::optional<IndexAgreement> index_;
  OwnerIndexCheck owner_indexes_{kSpansFileName};
  uint64_t spans_ = 0, traces_ = 0;
  uint64_t min_ = std::numeric_limits<uint64_t>::max(), max_ = 0;
  otlp::TraceId last_id_{};
  uint64_t last_start_ = 0;
};

// logs.parquet, range by range: the reader's validation inside each
// range; placeholder rows before every record, the declared event-time
// order and the resource and scope indexes across ranges; record count and
// event-time bounds against meta.json.
DeepOutcome CheckLogs(FileSystem& fs, const std::string& dir, const BatchMeta& meta,
                      uint64_t chunk_rows) {
  const auto decode = [](const absl::Status& status) {
    return DeepFailure{"decode", kLogsFileName, status};
  };
  absl::StatusOr<std::unique_ptr<FileSource>> source =
      OpenFileSource(fs, JoinPath(dir, kLogsFileName));
  if (!source.ok()) return decode(source.status());
  absl::StatusOr<std::unique_ptr<parquet::FileReader>> reader =
      OpenTable(source->get(), LogsTableColumns(), kLogsSchema, meta.id, kLogsFileName);
  if (!reader.ok()) return decode(reader.status());
  absl::StatusOr<LogsRowOrder> order = LogsTableRowOrder((*reader)->metadata(), kLogsFileName);
  if (!order.ok()) return decode(order.status());
  const uint64_t file_rows = static_cast<uint64_t>(std::max<int64_t>((*reader)->num_rows(), 0));
  OwnerIndexCheck owner_indexes(kLogsFileName);
  uint64_t records = 0;
  uint64_t min = std::numeric_limits<uint64_t>::max(), max = 0, last = 0;
  for (uint64_t begin = 0; begin < file_rows; begin += std::max<uint64_t>(1, chunk_rows)) {
    const uint64_t end = std::min(file_rows, begin + std::max<uint64_t>(1, chunk_rows));
    absl::StatusOr<LogRows> rows = ReadLogsRows(**reader, kLogsFileName, begin, end);
    if (!rows.ok()) return decode(rows.status());
    if (records > 0 && !rows->placeholders.empty()) {
      return decode(DeepMismatch(kLogsFileName,
                                 fmt::format("row {}: placeholder row after a record row", begin)));
    }
    absl::Status owners =
        owner_indexes.Add(rows->batch, FileOwnerIndexes{rows->resource_index, rows->scope_index});
    if (!owners.ok()) return decode(owners);
    const otlp::LogRecordColumns& logs = rows->batch.logs;
    for (size_t i = 0; i < logs.size(); ++i) {
      const uint64_t t = LogEventTime(logs.time_unix_nano[i], logs.observed_time_unix_nano[i]);
      if (*order == LogsRowOrder::kEventTime && records > 0 && i == 0 && t < last) {
        const uint64_t row = end - logs.size();
        return decode(
            DeepMismatch(kLogsFileName,
                         fmt::format("row {} has event time {}, earlier than the record before it "
                                     "({}), against the declared event_time order",
                                     row, t, last)));
      }
      min = std::min(min, t);
      max = std::max(max, t);
      last = t;
    }
    records += logs.size();
  }
  if (absl::Status s = owner_indexes.Finish(); !s.ok()) return decode(s);
  absl::Status s = CheckRowCount(kLogsFileName, "log records", records, meta.logs.rows);
  if (s.ok()) s = CheckEventTime(kLogsFileName, meta.logs, records, min, max);
  if (!s.ok()) return DeepFailure{"rows", kLogsFileName, s};
  return std::nullopt;
}

}  // namespace

absl::Status DeepMismatch(std::string_view file, std::string_view what) {
  return absl::DataLossError(fmt::format("{}: {}", file, what));
}

absl::Status CheckEventTime(std::string_view file, const SignalMeta& meta, uint64_t rows,
                            uint64_t min, uint64_t max) {
  const NanosRange expected = rows == 0 ? NanosRange{0, 0} : NanosRange{min, max};
  if (meta.event_time != std::optional<NanosRange>(expected)) {
    return DeepMismatch(file, fmt::format("the rows' event times span {}, meta.json says {}",
                                          FormatRange(expected), FormatRange(meta.event_time)));
  }
  return absl::OkStatus();
}

absl::Status CheckRowCount(std::string_view file, std::string_view what, uint64_t decoded,
                           uint64_t declared) {
  if (decoded != declared) {
    return DeepMismatch(file,
                        fmt::format("{} {} decoded, meta.json says {}", decoded, what, declared));
  }
  return absl::OkStatus();
}

DeepOutcome DeepCheckSpans(FileSystem& fs, const std::string& batch_dir, const BatchMeta& meta,
                           uint64_t chunk_rows) {
  if (!meta.spans_parquet.has_value()) return std::nullopt;
  return SpansCheck(fs, batch_dir, meta, chunk_rows).Run();
}

DeepOutcome DeepCheckLogs(FileSystem& fs, const std::string& batch_dir, const BatchMeta& meta,
                          uint64_t chunk_rows) {
  if (!meta.logs_parquet.has_value()) return std::nullopt;
  return CheckLogs(fs, batch_dir, meta, chunk_rows);
}

}  // namespace strata::storage
