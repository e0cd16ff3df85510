#pragma once

// Test helper: runs a program with a chosen argv and environment, its stdout
// and stderr merged into one pipe, with a deadline on every wait. Used by the
// whole-binary suites. Single owner.

#include <sys/types.h>

#include <chrono>
#include <string>
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

  const std::string& output() const { return output_; }

 private:
  // Reads what is available within `timeout`; false on EOF.
  bool ReadSome(std::chrono::milliseconds timeout);

  pid_t pid_ = -1;
  int fd_ = -1;
  bool exited_ = false;
  std::string output_;
};

// Runs to completion with a 30 s deadline; returns {exit code, output}.
std::pair<int, std::string> RunToCompletion(const std::vector<std::string>& argv,
                                            const std::vector<std::string>& env);

}  // namespace strata::testing
