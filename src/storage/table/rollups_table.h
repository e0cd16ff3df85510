#pragma once

// rollups.parquet (docs/format/rollups-parquet.md): the per-minute RED rows
// of one batch (rollups/rollup_rows.h) as a Parquet file with the footer
// every table file carries, and back.
//
// WriteRollupsTable writes sorted rows as one row group; ReadRollupsTable
// checks the footer and every rule of the page's "Rows" section (kinds,
// which columns are set, minutes, sort order, histograms that count the
// row's spans) and returns the rows. CheckRollupsTableFooter is boot's
// check without reading pages.
//
// Errors: Internal for rows that are not sorted (a caller's bug); the
// Parquet writer's errors; DataLoss naming the file and the check for
// anything wrong with the bytes; the source's own error when reading
// fails. Thread-safety: reentrant.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "io/file_system.h"
#include "parquet/column_vector.h"
#include "parquet/file_reader.h"
#include "rollups/rollup_rows.h"
#include "storage/format/batch_meta.h"
#include "storage/table/file_source.h"
#include "storage/table/table_file.h"

namespace strata::storage {

// strata.schema of rollups.parquet.
inline constexpr char kRollupsSchema[] = "rollups";

// The schema of rollups.parquet as this binary writes it (meta.json format
// kBatchMetaFormat), in file order.
const std::vector<parquet::ColumnSpec>& RollupsTableColumns();

// `meta_format` below is the batch's meta.json format, which says the
// file's layout (rollups-parquet.md): 3 bitmaps and endpoint rows that
// point at an equal operation row, 2 bucket index lists.

// The file's bytes for `rows` (sorted by key, as BuildRollups and
// MergeRollups return them; at least one). Production writes
// kBatchMetaFormat; tests write format 2 to check it still reads.
[[nodiscard]] absl::StatusOr<std::string> WriteRollupsTable(
    const rollups::RollupRows& rows, std::string_view batch_id, const TableOptions& options = {},
    uint64_t meta_format = kBatchMetaFormat);

// Reads and checks a whole rollups.parquet. `file_name` names it in errors.
[[nodiscard]] absl::StatusOr<rollups::RollupRows> ReadRollupsTable(
    parquet::RandomAccessSource* source, std::string_view batch_id, std::string_view file_name,
    uint64_t meta_format = kBatchMetaFormat);

// Boot's check: the footer parses, schema (the layout of `meta_format`)
// and key-value metadata are rollups.parquet's for `batch_id`
// (FileReader::Open reads only the footer).
[[nodiscard]] absl::Status CheckRollupsTableFooter(parquet::RandomAccessSource* source,
                                                   std::string_view batch_id,
                                                   std::string_view file_name,
                                                   uint64_t meta_format = kBatchMetaFormat);

// The rollups of the batch at `batch_dir`: its rollups.parquet, read and
// checked; for a format 1 batch (which has none) and a batch without data
// rows (none either), ComputeBatchRollups. Errors as ReadRollupsTable, or
// ComputeBatchRollups's. The DataFileOpener form reads the batch's files
// through `open` (file_source.h), the other in `batch_dir`.
[[nodiscard]] absl::StatusOr<rollups::RollupRows> ReadBatchRollups(const DataFileOpener& open,
                                                                   const BatchMeta& meta);
[[nodiscard]] absl::StatusOr<rollups::RollupRows> ReadBatchRollups(FileSystem& fs,
                                                                   const std::string& batch_dir,
                                                                   const BatchMeta& meta);

// Calls `fn` with the batch's spans (placeholder rows left out), 65,536
// rows at a time, in file order. Errors: the spans reader's.
[[nodiscard]] absl::Status ForEachSpansChunk(
    const DataFileOpener& open, const BatchMeta& meta,
    const std::function<void(const otlp::TraceBatch&)>& fn);
[[nodiscard]] absl::Status ForEachSpansChunk(
    FileSystem& fs, const std::string& batch_dir, const BatchMeta& meta,
    const std::function<void(const otlp::TraceBatch&)>& fn);

// The rollups the format page defines for the batch's table files, read
// whole (spans, logs, metrics) and rolled up: what rollups.parquet must
// hold (`strata verify` and `strata rollups rebuild` compare the two).
// Errors: the table readers'.
[[nodiscard]] absl::StatusOr<rollups::RollupRows> ComputeBatchRollups(const DataFileOpener& open,
                                                                      const BatchMeta& meta);
[[nodiscard]] absl::StatusOr<rollups::RollupRows> ComputeBatchRollups(FileSystem& fs,
                                                                      const std::string& batch_dir,
                                                                      const BatchMeta& meta);

}  // namespace strata::storage
