#pragma once

// Test-only helpers for the HTTP listener and client tests
// (http_adapter_test.cc, http_client_test.cc): the real curl binary as a
// subprocess, a raw TCP client that speaks just enough HTTP/1.1 to hold
// connections open, stall, and read answers, a FileSystem that can hold a
// commit at its publish step so the writer's in-flight budget fills
// deterministically, OTLP payloads, and a fixture that runs the OTLP/HTTP
// listener in front of a real storage engine.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "common/mutex.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "io/file_system.h"
#include "io/posix_file_system.h"
#include "otlp/decode.h"
#include "otlp/encode.h"
#include "server/http_adapter.h"
#include "server/ingest.h"
#include "server/ingest_metrics.h"
#include "server/ingest_service.h"
#include "server/testing/raw_connection.h"
#include "storage/storage.h"
#include "storage/testing/commit_testing.h"

namespace strata::server::testing {

// Runs `curl -sS -i <args>` and parses what it printed: interim 1xx answers
// are skipped. status 0 when curl failed (the body then holds its output).
inline HttpAnswer Curl(const std::vector<std::string>& args) {
  std::vector<std::string> argv_strings = {"curl", "-sS", "-i", "--max-time", "60"};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return HttpAnswer{.body = "pipe failed"};
  // posix_spawn, not fork: glibc starts the child without copying the
  // parent's page tables, which for a test process under ASan (terabytes
  // of reserved shadow, gigabytes mapped) made each fork cost tens of
  // milliseconds.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  pid_t pid = -1;
  const int spawned = posix_spawnp(&pid, "curl", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (spawned != 0) {
    close(pipe_fds[0]);
    return HttpAnswer{.body = "curl: could not start: " + std::string(strerror(spawned))};
  }
  std::string output;
  char buffer[65536];
  for (;;) {
    const ssize_t n = read(pipe_fds[0], buffer, sizeof(buffer));
    if (n > 0) {
      output.append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(pipe_fds[0]);
  int wait_status = 0;
  waitpid(pid, &wait_status, 0);
  HttpAnswer answer;
  std::string_view rest = output;
  for (;;) {
    const size_t end = rest.find("\r\n\r\n");
    if (end == std::string_view::npos || !ParseHead(rest.substr(0, end), &answer)) {
      return HttpAnswer{.body = "curl: " + output};
    }
    rest.remove_prefix(end + 4);
    if (answer.status >= 200) break;
  }
  answer.body = std::string(rest);
  return answer;
}

// ---- OTLP payloads ----

inline constexpr char kToken[] = "s3cret-ingest-token";
inline constexpr uint64_t kStartNanos = 1'750'000'000'000'000'000ULL;

inline std::string ResourceJson(std::string_view service) {
  return fmt::format(
      R"({{"attributes":[{{"key":"service.name","value":{{"stringValue":"{}"}}}}]}})", service);
}

// OTLP/JSON export requests with `count` rows (spans, log records or data
// points); `seed` makes ids and names distinct between requests.
inline std::string TracesJson(int count, uint64_t seed) {
  std::string spans;
  for (int i = 0; i < count; ++i) {
    if (i > 0) spans += ",";
    spans += fmt::format(
        R"({{"traceId":"{:016x}{:016x}","spanId":"{:016x}","name":"GET /item/{}","kind":2,)"
        R"("startTimeUnixNano":"{}","endTimeUnixNano":"{}",)"
        R"("attributes":[{{"key":"http.route","value":{{"stringValue":"/item"}}}}]}})",
        seed + 1, i / 4 + 1, seed * 100'000 + i + 1, i, kStartNanos + i, kStartNanos + i + 5000);
  }
  return fmt::format(
      R"({{"resourceSpans":[{{"resource":{},"scopeSpans":[{{"scope":{{"name":"http-test"}},)"
      R"("spans":[{}]}}]}}]}})",
      ResourceJson("checkout"), spans);
}

inline std::string LogsJson(int count, uint64_t seed) {
  std::string records;
  for (int i = 0; i < count; ++i) {
    if (i > 0) records += ",";
    records += fmt::format(R"({{"timeUnixNano":"{}","severityNumber":9,"severityText":"INFO",)"
                           R"("body":{{"stringValue":"request {} of batch {} served"}}}})",
                           kStartNanos + i, i, seed);
  }
  return fmt::format(
      R"({{"resourceLogs":[{{"resource":{},"scopeLogs":[{{"scope":{{"name":"http-test"}},)"
      R"("logRecords":[{}]}}]}}]}})",
      ResourceJson("checkout"), records);
}

inline std::string MetricsJson(int count, uint64_t seed) {
  std::string metrics;
  for (int i = 0; i < count; ++i) {
    if (i > 0) metrics += ",";
    metrics += fmt::format(
        R"({{"name":"requests_{}_{}","sum":{{"aggregationTemporality":2,"isMonotonic":true,)"
        R"("dataPoints":[{{"timeUnixNano":"{}","asInt":"{}"}}]}}}})",
        seed, i, kStartNanos + i, i + 1);
  }
  return fmt::format(
      R"({{"resourceMetrics":[{{"resource":{},"scopeMetrics":[{{"scope":{{"name":"http-test"}},)"
      R"("metrics":[{}]}}]}}]}})",
      ResourceJson("checkout"), metrics);
}

inline std::string PayloadJson(Signal signal, int count, uint64_t seed) {
  switch (signal) {
    case Signal::kTraces:
      return TracesJson(count, seed);
    case Signal::kLogs:
      return LogsJson(count, seed);
    case Signal::kMetrics:
      return MetricsJson(count, seed);
  }
  return "";
}

// The same request in the protobuf wire format, through strata's decoder
// and encoder.
inline std::string JsonToProto(Signal signal, const std::string& json) {
  switch (signal) {
    case Signal::kTraces: {
      otlp::TraceBatch batch;
      EXPECT_TRUE(otlp::DecodeTracesJson(json, &batch).ok());
      return otlp::EncodeTracesProto(batch);
    }
    case Signal::kLogs: {
      otlp::LogBatch batch;
      EXPECT_TRUE(otlp::DecodeLogsJson(json, &batch).ok());
      return otlp::EncodeLogsProto(batch);
    }
    case Signal::kMetrics: {
      otlp::MetricBatch batch;
      EXPECT_TRUE(otlp::DecodeMetricsJson(json, &batch).ok());
      return otlp::EncodeMetricsProto(batch);
    }
  }
  return "";
}

// ---- fixture ----

// The OTLP/HTTP listener on 127.0.0.1:0 in front of a real storage engine
// (on PublishGateFileSystem) and an IngestService that accepts kToken only.
class OtlpHttpServerTest : public ::testing::Test {
 protected:
  static OtlpHttpOptions SmallOptions() {
    OtlpHttpOptions options;
    options.http.max_body_bytes = 1 << 20;
    options.max_decompressed_body_bytes = 4 << 20;
    return options;
  }

  void StartServer(OtlpHttpOptions options = SmallOptions(),
                   storage::StorageOptions storage_options = {}) {
    ASSERT_FALSE(tmp_.path().empty());
    auto storage = storage::Storage::Open(fs_, tmp_.path() + "/data", std::move(storage_options));
    ASSERT_TRUE(storage.ok()) << storage.status();
    storage_ = *std::move(storage);
    ingest_ = std::make_unique<IngestService>(
        *storage_,
        [](std::string_view token) {
          return token == kToken ? absl::OkStatus()
                                 : absl::UnauthenticatedError("unknown or revoked ingest token");
        },
        metrics_, IngestService::Options{});
    options.http.address = "127.0.0.1:0";
    auto server = StartOtlpHttpServer(std::move(options), *ingest_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown(std::chrono::seconds(5));
    fs_.Open();
    if (storage_ != nullptr) storage_->Shutdown(std::chrono::seconds(5));
    server_.reset();
    ingest_.reset();
    storage_.reset();
  }

  std::string Url(std::string_view path) const {
    return fmt::format("http://127.0.0.1:{}{}", server_->port(), path);
  }
  std::string Target() const { return fmt::format("127.0.0.1:{}", server_->port()); }

  // Writes `bytes` to a new file under the temp dir, for curl's
  // --data-binary @file.
  std::string WriteTemp(std::string_view bytes) {
    const std::string path = fmt::format("{}/body-{}", tmp_.path(), ++temp_files_);
    EXPECT_TRUE(WriteFile(fs_, path, bytes).ok());
    return path;
  }

  // POSTs `body` to `path` with curl; `headers` as "Name: value".
  HttpAnswer Post(std::string_view path, std::string_view body, std::vector<std::string> headers) {
    std::vector<std::string> args = {"-X", "POST", "--data-binary", "@" + WriteTemp(body)};
    for (std::string& header : headers) {
      args.push_back("-H");
      args.push_back(std::move(header));
    }
    args.push_back(Url(path));
    return Curl(args);
  }

  // Rows of `signal` in the current snapshot.
  uint64_t StoredRows(Signal signal) const {
    uint64_t rows = 0;
    // Pinned for the whole loop (a temporary in the range expression would
    // die before the loop body runs).
    const std::shared_ptr<const storage::Snapshot> snapshot = storage_->Pin();
    for (const auto& batch : snapshot->batches()) {
      switch (signal) {
        case Signal::kTraces:
          rows += batch->meta().spans.rows;
          break;
        case Signal::kLogs:
          rows += batch->meta().logs.rows;
          break;
        case Signal::kMetrics:
          rows += batch->meta().metrics.rows;
          break;
      }
    }
    return rows;
  }

  storage::testing::PublishGateFileSystem fs_;
  storage::testing::ScopedTempDir tmp_{"http"};
  IngestMetrics metrics_;
  std::unique_ptr<storage::Storage> storage_;
  std::unique_ptr<IngestService> ingest_;
  std::unique_ptr<HttpServer> server_;
  std::atomic<int> temp_files_{0};  // Post() runs on helper threads too
};

}  // namespace strata::server::testing
