#include "subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace strata::testing {

Subprocess::Subprocess(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) std::abort();
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  // posix_spawn, not fork: it does not copy the test process's page
  // tables, which under ASan made every start cost tens of milliseconds. A
  // program that cannot start exits 127, as a shell reports it.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  const int spawned = posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    // As a child that could not exec: output nothing, exit 127.
    pid_ = fork();
    if (pid_ < 0) std::abort();
    if (pid_ == 0) _exit(127);
  }
  close(fds[1]);
  fd_ = fds[0];
}

Subprocess::~Subprocess() {
  if (!exited_ && pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (fd_ >= 0) close(fd_);
}

bool Subprocess::ReadSome(std::chrono::milliseconds timeout) {
  pollfd p{fd_, POLLIN, 0};
  if (poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return true;
  char buf[4096];
  ssize_t n = read(fd_, buf, sizeof(buf));
  if (n <= 0) return false;
  output_.append(buf, static_cast<size_t>(n));
  return true;
}

bool Subprocess::WaitForOutput(const std::string& needle, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (output_.find(needle) == std::string::npos) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    if (!ReadSome(left)) return output_.find(needle) != std::string::npos;
  }
  return true;
}

void Subprocess::Signal(int signal) { kill(pid_, signal); }

int Subprocess::Wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exited_ = true;
      while (ReadSome(std::chrono::milliseconds(50))) {
        pollfd p{fd_, POLLIN, 0};
        if (poll(&p, 1, 0) <= 0) break;
      }
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
      return -1;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      exited_ = true;
      return -1;
    }
    // Drain output while waiting so a chatty child cannot block on a full pipe.
    if (!ReadSome(std::min(left, std::chrono::milliseconds(20)))) {
      int s = 0;
      if (waitpid(pid_, &s, 0) == pid_) {
        exited_ = true;
        if (WIFEXITED(s)) return WEXITSTATUS(s);
        if (WIFSIGNALED(s)) return 128 + WTERMSIG(s);
      }
      return -1;
    }
  }
}

std::pair<int, std::string> RunToCompletion(const std::vector<std::string>& argv,
                                            const std::vector<std::string>& env) {
  Subprocess p(argv, env);
  int code = p.Wait(std::chrono::seconds(30));
  return {code, p.output()};
}

}  // namespace strata::testing
