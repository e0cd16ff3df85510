#include "bench/log_tail_latency.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include "api/api_server.h"
#include "fmt/format.h"
#include "otlp/decode.h"
#include "server/http_adapter.h"

namespace strata::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr char kTailToken[] = "bench-tail";
constexpr auto kEventWait = std::chrono::seconds(10);

// A loopback socket reading the stream; closes on destruction.
class TailReader {
 public:
  ~TailReader() {
    if (fd_ >= 0) close(fd_);
  }
  absl::Status Open(uint16_t port) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ < 0 || connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
      return absl::UnavailableError("bench log tail: cannot connect to the API listener");
    }
    const std::string request = fmt::format(
        "GET /api/v1/logs/tail?service=bench-tail HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Authorization: Bearer {}\r\n\r\n",
        kTailToken);
    if (send(fd_, request.data(), request.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(request.size())) {
      return absl::UnavailableError("bench log tail: cannot send the request");
    }
    // The stream is open (and subscribed) once its opening comment arrived.
    if (!WaitFor(": strata log tail")) {
      return absl::UnavailableError(
          fmt::format("bench log tail: no stream: {}", received_.substr(0, 200)));
    }
    return absl::OkStatus();
  }
  // Reads until `text` has arrived (within kEventWait); false otherwise.
  bool WaitFor(std::string_view text) {
    const Clock::time_point deadline = Clock::now() + kEventWait;
    for (;;) {
      if (const size_t at = received_.find(text); at != std::string::npos) {
        received_.erase(0, at + text.size());
        return true;
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char buffer[16384];
      const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) return false;
      received_.append(buffer, static_cast<size_t>(n));
    }
  }

 private:
  int fd_ = -1;
  std::string received_;
};

storage::WriteRequest OneRecord(int index) {
  const std::string json = fmt::format(
      R"({{"resourceLogs":[{{"resource":{{"attributes":[{{"key":"service.name","value":)"
      R"({{"stringValue":"bench-tail"}}}}]}},"scopeLogs":[{{"logRecords":[{{"timeUnixNano":"{}",)"
      R"("severityNumber":9,"body":{{"stringValue":"tail-record-{}."}}}}]}}]}}]}})",
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count(),
      index);
  storage::WriteRequest request;
  request.logs = std::make_unique<otlp::LogBatch>();
  (void)otlp::DecodeLogsJson(json, request.logs.get());
  request.rows = 1;
  request.bytes = json.size();
  return request;
}

}  // namespace

absl::StatusOr<LogTailLatency> MeasureLogTailLatency(storage::Storage& storage,
                                                     query::QueryPool& pool,
                                                     const std::string& data_dir, int records) {
  api::ApiOptions options;
  options.storage = [&storage] { return &storage; };
  options.pool = &pool;
  options.data_dir = data_dir;
  options.authenticate = api::AcceptOnlyToken(kTailToken);
  auto api = std::make_unique<api::Api>(std::move(options));
  server::HttpRouter router;
  api->AddRoutes(&router);
  auto listener = server::HttpServer::Start(server::HttpServerOptions{.address = "127.0.0.1:0"},
                                            std::move(router).ToHandler());
  if (!listener.ok()) return listener.status();
  std::vector<double> latencies_ms;
  absl::Status status;
  {
    TailReader reader;
    status = reader.Open((*listener)->port());
    for (int i = 0; status.ok() && i < std::max(1, records); ++i) {
      status = storage.Write(OneRecord(i));
      const Clock::time_point acknowledged = Clock::now();
      if (!status.ok()) break;
      if (!reader.WaitFor(fmt::format("tail-record-{}.", i))) {
        status = absl::DeadlineExceededError(
            fmt::format("bench log tail: record {} did not arrive within 10 s", i));
        break;
      }
      latencies_ms.push_back(
          std::chrono::duration<double, std::milli>(Clock::now() - acknowledged).count());
    }
  }
  (*listener)->Shutdown(std::chrono::seconds(5));
  api.reset();
  if (!status.ok()) return status;
  std::sort(latencies_ms.begin(), latencies_ms.end());
  return LogTailLatency{.records = static_cast<int>(latencies_ms.size()),
                        .p50_ms = latencies_ms[latencies_ms.size() / 2],
                        .max_ms = latencies_ms.back()};
}

}  // namespace strata::bench
