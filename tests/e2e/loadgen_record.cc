#include "e2e/loadgen_record.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "otlp/decode.h"

namespace strata::testing {

void ReadLoadgenRecord(const std::string& path, AckedRows* acked) {
  // Closed on every return, including a failed assertion's.
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                       &std::fclose);
  ASSERT_NE(file, nullptr) << path;
  std::FILE* f = file.get();
  char signal[16];
  unsigned long long rows = 0;
  size_t bytes = 0;
  while (std::fscanf(f, "%15s %llu %zu", signal, &rows, &bytes) == 3) {
    // A short read ends the file: a truncated last entry, which is absent.
    int c = std::fgetc(f);
    if (c == EOF) break;
    ASSERT_EQ(c, '\n') << path << ": malformed entry header";
    std::string payload(bytes, '\0');
    if (std::fread(payload.data(), 1, bytes, f) != bytes) break;
    c = std::fgetc(f);
    if (c == EOF) break;
    ASSERT_EQ(c, '\n') << path << ": malformed entry";
    ++acked->requests;
    const std::string name = signal;
    if (name == "traces") {
      otlp::TraceBatch batch;
      ASSERT_TRUE(otlp::DecodeTracesProto(payload, &batch).ok()) << path;
      ASSERT_EQ(batch.spans.size(), rows) << path;
      for (size_t i = 0; i < batch.spans.size(); ++i) {
        const std::string trace = Hex(batch.spans.trace_id[i]);
        ++acked->spans[trace + "/" + Hex(batch.spans.span_id[i])];
        ++acked->traces[trace];
      }
    } else if (name == "logs") {
      otlp::LogBatch batch;
      ASSERT_TRUE(otlp::DecodeLogsProto(payload, &batch).ok()) << path;
      ASSERT_EQ(batch.logs.size(), rows) << path;
      for (size_t i = 0; i < batch.logs.size(); ++i) {
        ++acked->logs[fmt::format("{}/{}/{}", batch.logs.time_unix_nano[i],
                                  Hex(batch.logs.trace_id[i]), Hex(batch.logs.span_id[i]))];
      }
    } else if (name == "metrics") {
      otlp::MetricBatch batch;
      ASSERT_TRUE(otlp::DecodeMetricsProto(payload, &batch).ok()) << path;
      ASSERT_EQ(batch.point_count(), rows) << path;
      acked->metric_points += rows;
    } else {
      FAIL() << path << ": unknown signal " << name;
    }
  }
}

bool WaitForRecordBytes(const std::string& path, uintmax_t min_bytes) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    std::error_code ec;
    if (std::filesystem::file_size(path, ec) >= min_bytes && !ec) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

void ExpectAckedStored(query::DuckDbEngine& engine, const std::string& stored_keys_sql,
                       const std::map<std::string, int>& acked, std::string_view what,
                       size_t* stored_keys) {
  absl::StatusOr<query::QueryResult> result = engine.Query(stored_keys_sql);
  ASSERT_TRUE(result.ok()) << result.status();
  std::map<std::string, int64_t> stored;
  for (const auto& row : result->rows) stored[*row[0]] = std::stoll(*row[1]);
  if (stored_keys != nullptr) *stored_keys = stored.size();
  size_t missing = 0;
  for (const auto& [key, count] : acked) {
    const auto it = stored.find(key);
    if (it == stored.end() || it->second < count) ++missing;
  }
  EXPECT_EQ(missing, 0u) << "of " << acked.size() << " acknowledged " << what;
}

}  // namespace strata::testing
