#include "query/view_files.h"

#include <string>

namespace strata::query {

ViewFiles ViewFilesOf(const storage::Snapshot& snapshot) {
  ViewFiles files;
  files.sequence = snapshot.sequence();
  for (const auto& batch : snapshot.batches()) {
    const storage::BatchMeta& meta = batch->meta();
    if (meta.spans_parquet.has_value()) files.spans.push_back(batch->dir() + "/spans.parquet");
    if (meta.logs_parquet.has_value()) files.logs.push_back(batch->dir() + "/logs.parquet");
    if (meta.metrics_parquet.has_value()) {
      files.metrics.push_back(batch->dir() + "/metrics.parquet");
    }
  }
  return files;
}

}  // namespace strata::query
