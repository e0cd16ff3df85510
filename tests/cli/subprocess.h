#pragma once

// Test helper: runs a program with a chosen argv and environment, its stdout
// and stderr merged into one pipe, with a deadline on every wait. Used by the
// whole-binary suites. A thread reads the pipe for as long as the program
// writes, so a long-running child never blocks on a full pipe and
// output() holds everything it printed so far. Single owner; output() may
// be called from any thread.

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace strata::testing {

class Subprocess {
 public:
  // Starts `argv[0]` with exactly `env` as its environment.
  Subprocess(const std::vector<std::string>& argv, const std::vector<std::string>& env);
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  // Reads output until it contains `needle` or `timeout` passes; true if found.
  bool WaitForOutput(const std::string& needle, std::chrono::milliseconds timeout);
  // Sends `signal` to the child.
  void Signal(int signal);
  // Waits for exit (reading remaining output); returns the exit code, or -1
  // on timeout (the child is then killed), or 128+signal if killed by one.
  int Wait(std::chrono::milliseconds timeout);

  // What the child printed so far.
  std::string output() const;

 private:
  // The reader thread: appends what the pipe gives until end of file.
  void Read();
  // Waits until output beyond `seen` bytes arrives or `timeout` passes;
  // false once the pipe reached end of file with nothing beyond.
  bool WaitForMore(size_t seen, std::chrono::milliseconds timeout);

  pid_t pid_ = -1;
  int fd_ = -1;
  bool exited_ = false;
  mutable std::mutex mu_;
  std::condition_variable more_;
  std::string output_;  // guarded by mu_
  bool eof_ = false;    // guarded by mu_
  bool stop_ = false;   // guarded by mu_
  std::thread reader_;
};

// Runs to completion with a 30 s deadline; returns {exit code, output}.
std::pair<int, std::string> RunToCompletion(const std::vector<std::string>& argv,
                                            const std::vector<std::string>& env);

}  // namespace strata::testing
