#include "storage/offload/data_file_resolver.h"

#include <atomic>
#include <optional>

#include "common/path.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "storage/format/layout.h"
#include "storage/format/object_layout.h"

namespace strata::storage {
namespace {

std::atomic<DataFileResolver*> installed{nullptr};

// meta.json's entry for `file`, or null when it declares none.
const std::optional<FileMeta>* DeclaredFile(const BatchMeta& meta, std::string_view file) {
  if (file == kSpansFileName) return &meta.spans_parquet;
  if (file == kTraceIndexFileName) return &meta.spans_tidx;
  if (file == kLogsFileName) return &meta.logs_parquet;
  if (file == kMetricsFileName) return &meta.metrics_parquet;
  if (file == kRollupsFileName) return &meta.rollups_parquet;
  return nullptr;
}

// A file source that keeps a ResolvedFile's hold while it is read.
class HeldFileSource final : public parquet::RandomAccessSource {
 public:
  HeldFileSource(std::unique_ptr<FileSource> source, std::shared_ptr<const void> hold)
      : source_(std::move(source)), hold_(std::move(hold)) {}
  uint64_t size() const override { return source_->size(); }
  absl::Status ReadAt(uint64_t offset, size_t length, std::string* out) override {
    return source_->ReadAt(offset, length, out);
  }

 private:
  std::unique_ptr<FileSource> source_;
  std::shared_ptr<const void> hold_;
};

}  // namespace

void DataFileResolver::MarkEvicted(const BatchId& id) {
  MutexLock lock(&mu_);
  evicted_.insert(id);
}

bool DataFileResolver::IsEvicted(const BatchId& id) const {
  MutexLock lock(&mu_);
  return evicted_.contains(id);
}

absl::StatusOr<ResolvedFile> DataFileResolver::Resolve(const LiveBatch& batch,
                                                       std::string_view file) const {
  // spans.tidx is never evicted.
  if (file == kTraceIndexFileName || !IsEvicted(batch.id())) {
    return ResolvedFile{.path = JoinPath(batch.dir(), file), .hold = nullptr};
  }
  const std::optional<FileMeta>* declared = DeclaredFile(batch.meta(), file);
  if (declared == nullptr || !declared->has_value()) {
    return absl::NotFoundError(
        fmt::format("batch {} has no {}", batch.id().ToString(), std::string(file)));
  }
  absl::StatusOr<std::unique_ptr<CachedFile>> cached =
      cache_->Fetch(BatchObjectKey(batch.day(), batch.id(), file), (*declared)->bytes);
  if (!cached.ok()) {
    return absl::Status(cached.status().code(),
                        fmt::format("evicted batch {}: {}: {}", batch.id().ToString(),
                                    std::string(file), std::string(cached.status().message())));
  }
  std::string path = (*cached)->path();
  return ResolvedFile{.path = std::move(path),
                      .hold = std::shared_ptr<const void>(std::move(*cached))};
}

std::string DataFileResolver::PathOf(const LiveBatch& batch, std::string_view file) const {
  if (file == kTraceIndexFileName || !IsEvicted(batch.id())) return JoinPath(batch.dir(), file);
  return cache_->PathOf(ReadCache::NameOf(BatchObjectKey(batch.day(), batch.id(), file)));
}

std::string DataFilePathOf(const LiveBatch& batch, std::string_view file) {
  const DataFileResolver* resolver = installed.load();
  return resolver == nullptr ? JoinPath(batch.dir(), file) : resolver->PathOf(batch, file);
}

void InstallDataFileResolver(DataFileResolver* resolver) { installed.store(resolver); }

DataFileResolver* InstalledDataFileResolver() { return installed.load(); }

absl::StatusOr<ResolvedFile> ResolveDataFile(const LiveBatch& batch, std::string_view file) {
  const DataFileResolver* resolver = installed.load();
  if (resolver == nullptr)
    return ResolvedFile{.path = JoinPath(batch.dir(), file), .hold = nullptr};
  return resolver->Resolve(batch, file);
}

DataFileOpener DataFilesOf(FileSystem& fs, const LiveBatch& batch) {
  return [&fs, &batch](std::string_view file)
             -> absl::StatusOr<std::unique_ptr<parquet::RandomAccessSource>> {
    STRATA_ASSIGN_OR_RETURN(ResolvedFile resolved, ResolveDataFile(batch, file));
    STRATA_ASSIGN_OR_RETURN(std::unique_ptr<FileSource> source, OpenFileSource(fs, resolved.path));
    return std::make_unique<HeldFileSource>(std::move(source), std::move(resolved.hold));
  };
}

}  // namespace strata::storage
