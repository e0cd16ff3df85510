// Fuzzes the row-range readers compaction's logs and metrics merges read
// their inputs with (ReadLogsRows, ReadMetricsRows; the whole-file readers
// ReadLogsTable and ReadMetricsTable share their code): index renumbering,
// row kinds, declared orders and batch rebuilding on arbitrary bytes.
//
// Input: one byte choosing the table (bit 0: logs or metrics) and the row
// range (the other bits), then the file. The file is opened with the batch
// id its own footer names, so mutations reach past the footer checks. Any
// crash, sanitizer report or unbounded allocation is a bug; errors are
// expected.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "parquet/file_reader.h"
#include "storage/table/logs_table.h"
#include "storage/table/metrics_table.h"
#include "storage/table/table_file.h"

namespace {

using strata::storage::kBatchIdKey;

std::string FooterBatchId(strata::parquet::RandomAccessSource* source) {
  auto reader = strata::parquet::FileReader::Open(source);
  if (!reader.ok()) return {};
  for (const auto& kv : (*reader)->metadata().key_value_metadata) {
    if (kv.key == kBatchIdKey && kv.value.has_value()) return *kv.value;
  }
  return {};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t selector = data[0];
  strata::parquet::StringSource source(
      std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  const std::string batch_id = FooterBatchId(&source);
  const bool logs = (selector & 1) == 0;
  const auto& columns =
      logs ? strata::storage::LogsTableColumns() : strata::storage::MetricsTableColumns();
  auto reader = strata::storage::OpenTable(
      &source, columns, logs ? strata::storage::kLogsSchema : strata::storage::kMetricsSchema,
      batch_id, "fuzz.parquet");
  if (!reader.ok()) return 0;
  // Bounded ranges: a footer may claim any number of rows.
  const auto rows = static_cast<uint64_t>((*reader)->num_rows() < 0 ? 0 : (*reader)->num_rows());
  if (rows == 0 || rows > (1 << 16)) return 0;
  const uint64_t begin = (selector >> 1) % rows;
  const uint64_t end = begin + 1 + (selector >> 4) % (rows - begin);
  if (logs) {
    (void)strata::storage::ReadLogsRows(**reader, "fuzz.parquet", begin, end);
    (void)strata::storage::ReadLogsRows(**reader, "fuzz.parquet", 0, rows);
    (void)strata::storage::ReadLogsTable(&source, batch_id, "fuzz.parquet");
  } else {
    (void)strata::storage::ReadMetricsRows(**reader, "fuzz.parquet", begin, end);
    (void)strata::storage::ReadMetricsRows(**reader, "fuzz.parquet", 0, rows);
    (void)strata::storage::ReadMetricsTable(&source, batch_id, "fuzz.parquet");
  }
  return 0;
}
