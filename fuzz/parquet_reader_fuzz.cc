// Fuzzes strata's Parquet reader with arbitrary file bytes: Open (magic,
// footer, metadata validation) and a bounded Read of every column, then the
// same through a shared layout (ReadLayout: every OffsetIndex parsed and
// validated up front, as trace lookups cache it) and a dictionary page
// cache, read twice so the second read decodes the cached pages; and
// ChunkMayHold on the byte-array chunks. Any crash,
// sanitizer report or unbounded allocation is a bug; errors are expected.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "parquet/file_reader.h"

namespace {

// Keeps every dictionary page offered (a fuzz input is small).
class MapDictionaryCache final : public strata::parquet::DictionaryPageCache {
 public:
  std::shared_ptr<const strata::parquet::DictionaryPage> FindDictionary(
      size_t chunk) const override {
    auto it = pages_.find(chunk);
    return it == pages_.end() ? nullptr : it->second;
  }
  void OfferDictionary(size_t chunk,
                       std::shared_ptr<const strata::parquet::DictionaryPage> page) const override {
    pages_.emplace(chunk, std::move(page));
  }

 private:
  mutable std::map<size_t, std::shared_ptr<const strata::parquet::DictionaryPage>> pages_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  strata::parquet::StringSource source(std::string_view(reinterpret_cast<const char*>(data), size));
  strata::parquet::ReaderOptions options;
  options.file_name = "fuzz.parquet";
  options.max_page_bytes = 1 << 20;
  options.max_values_per_page = 1 << 16;
  auto reader = strata::parquet::FileReader::Open(&source, options);
  if (!reader.ok()) return 0;
  std::vector<int> columns;
  for (size_t c = 0; c < (*reader)->columns().size(); ++c) columns.push_back(static_cast<int>(c));
  // Bounded row ranges: a footer may claim any number of rows.
  const int64_t rows = (*reader)->num_rows();
  const int64_t end = rows < 4096 ? rows : 4096;
  (void)(*reader)->Read(columns, 0, end);
  if (rows > 2) (void)(*reader)->Read(columns, rows / 2, rows / 2 + 1);
  // ChunkMayHold on every BYTE_ARRAY chunk (page headers and dictionary,
  // and a whole small chunk), for the first few row groups.
  const size_t groups = (*reader)->metadata().row_groups.size();
  for (size_t g = 0; g < groups && g < 4; ++g) {
    for (size_t c = 0; c < (*reader)->columns().size(); ++c) {
      if ((*reader)->columns()[c].type != strata::parquet::PhysicalType::kByteArray) continue;
      (void)(*reader)->ChunkMayHold(static_cast<int>(g), static_cast<int>(c), "level", 1 << 16);
    }
  }

  auto layout = strata::parquet::FileReader::ReadLayout(&source, options);
  if (!layout.ok()) return 0;
  MapDictionaryCache cache;
  options.dictionary_cache = &cache;
  for (int pass = 0; pass < 2; ++pass) {
    auto shared = strata::parquet::FileReader::Open(&source, *layout, options);
    if (!shared.ok()) return 0;
    (void)(*shared)->Read(columns, 0, end);
    if (rows > 2) (void)(*shared)->Read(columns, rows / 2, rows / 2 + 1);
  }
  return 0;
}
