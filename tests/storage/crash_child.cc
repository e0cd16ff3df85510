// The child process of sigkill_test.cc: opens a data directory with the real
// storage engine (POSIX files), then commits generated trace requests from
// four client threads and prints "ack <index>" for each one acknowledged,
// until it is killed (or, bounded, after 60 s). Request <index> is
// TrafficGenerator(seed = index).Traces(RequestSpans(index)), so the test
// can rebuild exactly what each acknowledged request carried.
//
// Usage: storage_crash_child <data-dir> <first-index>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "fmt/format.h"
#include "io/posix_file_system.h"
#include "storage/storage.h"
#include "crash_child_requests.h"

namespace {

// One write(2) per line, so lines from several threads never interleave.
void PrintLine(const std::string& line) {
  const std::string text = line + "\n";
  (void)!::write(STDOUT_FILENO, text.data(), text.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    PrintLine("usage: storage_crash_child <data-dir> <first-index>");
    return 2;
  }
  const std::string data_dir = argv[1];
  const uint64_t first = std::strtoull(argv[2], nullptr, 10);
  strata::PosixFileSystem fs;
  auto storage = strata::storage::Storage::Open(fs, data_dir);
  if (!storage.ok()) {
    PrintLine("open failed: " + storage.status().ToString());
    return 1;
  }
  PrintLine(fmt::format("ready batches={}", (*storage)->Pin()->size()));
  std::atomic<uint64_t> next{first};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::vector<std::thread> clients;
  for (int c = 0; c < 4; ++c) {
    clients.emplace_back([&] {
      while (std::chrono::steady_clock::now() < deadline) {
        const uint64_t index = next++;
        absl::Status s = (*storage)->Write(strata::storage::testing::CrashChildRequest(index));
        if (s.ok()) {
          PrintLine(fmt::format("ack {}", index));
        } else {
          PrintLine(fmt::format("fail {} {}", index, s.ToString()));
        }
      }
    });
  }
  for (std::thread& t : clients) t.join();
  PrintLine("done");
  return 0;
}
