#include "cli/bench_common.h"

#include <atomic>
#include <thread>
#include <vector>

#include "spdlog/spdlog.h"

namespace strata::cli {

double Drive(storage::Storage& storage, int clients, size_t count,
             const std::function<storage::WriteRequest(size_t)>& make) {
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  const BenchClock::time_point start = BenchClock::now();
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&] {
      for (size_t i = next++; i < count; i = next++) {
        absl::Status s = storage.Write(make(i));
        while (s.code() == absl::StatusCode::kResourceExhausted) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));  // a client backing off
          s = storage.Write(make(i));
        }
        if (!s.ok()) {
          spdlog::error("bench: request {} failed: {}", i, s.ToString());
          failed = true;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return failed ? -1 : SecondsSince(start);
}

}  // namespace strata::cli
