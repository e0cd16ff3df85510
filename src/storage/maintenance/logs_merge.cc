// MergeLogsTables (table_merge.h): log records by event time, through the
// external merge sort of external_merge.h and LogsTableWriter.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "storage/maintenance/external_merge.h"
#include "storage/maintenance/table_merge.h"
#include "storage/table/logs_table.h"

namespace strata::storage {
namespace {

using merge_internal::IndexBase;
using merge_internal::Shifted;

// The table side of the merge (external_merge.h lists what it supplies).
// Merge order: LogEventTime; a chunk's rows are its placeholders, then its
// records in row order.
struct LogsMergeTable {
  using Rows = LogRows;
  using Writer = LogsTableWriter;
  using Key = uint64_t;

  static constexpr const char* kSchema = kLogsSchema;
  static constexpr int kKindColumn = kLogsRowKind;
  static constexpr std::array<int, 2> kIndexColumns = {kLogsResourceScope + kResourceIndexOffset,
                                                       kLogsResourceScope + kScopeIndexOffset};
  static constexpr const char* kOrderColumns = "time_unix_nano, observed_time_unix_nano";

  static const std::vector<parquet::ColumnSpec>& Columns() { return LogsTableColumns(); }
  static bool IsDataKind(int32_t kind) { return kind == 0; }

  static bool InMergeOrder(const parquet::FileMetaData& metadata) {
    // A file with an unknown order value fails when its rows are read.
    absl::StatusOr<LogsRowOrder> order = LogsTableRowOrder(metadata, "");
    return order.ok() && *order == LogsRowOrder::kEventTime;
  }

  static absl::StatusOr<Rows> Read(parquet::FileReader& reader, std::string_view file,
                                   uint64_t begin, uint64_t end) {
    return ReadLogsRows(reader, file, begin, end);
  }

  static size_t DataBegin(const Rows& rows) { return rows.placeholders.size(); }
  static size_t RowCount(const Rows& rows) {
    return rows.placeholders.size() + rows.batch.logs.size();
  }
  // `row` counts data rows (records) in merge calls.
  static Key KeyOf(const Rows& rows, size_t row) {
    return LogEventTime(rows.batch.logs.time_unix_nano[row],
                        rows.batch.logs.observed_time_unix_nano[row]);
  }

  // Ingest files are in arrival order: nothing to check across chunks.
  static std::string InputOrderKey(const Rows&, size_t) { return {}; }

  static absl::StatusOr<std::unique_ptr<Writer>> Open(std::string_view batch_id,
                                                      const TableOptions& options,
                                                      parquet::ByteSink* sink) {
    return LogsTableWriter::Open(batch_id, options, LogsRowOrder::kEventTime, sink);
  }

  static uint32_t Register(Writer& writer, const Rows& rows, const IndexBase& base) {
    return writer.AddBatch(rows.batch, Shifted(rows.resource_index, base.offsets[0]),
                           Shifted(rows.scope_index, base.offsets[1]));
  }

  static void AppendPlaceholder(Writer& writer, uint32_t batch, const Rows& rows, size_t row) {
    const LogRows::Placeholder& p = rows.placeholders[row];
    writer.AppendPlaceholder(
        batch, p.resource,
        p.scope == RowOwners::kNoScope ? std::nullopt : std::optional<uint32_t>(p.scope));
  }

  static void AppendData(Writer& writer, uint32_t batch, const Rows& rows, size_t row) {
    writer.AppendRecord(batch, static_cast<uint32_t>(row));
  }
};

}  // namespace

absl::StatusOr<SignalMeta> MergeLogsTables(FileSystem& fs, std::span<const MergeInput> inputs,
                                           std::string_view output_batch_id,
                                           const MergeOptions& options, parquet::ByteSink* out) {
  merge_internal::ExternalMerge<LogsMergeTable> merge(fs, output_batch_id, options);
  return merge.Run(inputs, out);
}

}  // namespace strata::storage
