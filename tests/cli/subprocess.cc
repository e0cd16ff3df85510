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
  reader_ = std::thread([this] { Read(); });
}

Subprocess::~Subprocess() {
  if (!exited_ && pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  reader_.join();
  if (fd_ >= 0) close(fd_);
}

void Subprocess::Read() {
  char buf[4096];
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) return;
    }
    // A bounded poll, so the destructor's stop is seen even when a
    // grandchild keeps the pipe open.
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    const ssize_t n = read(fd_, buf, sizeof(buf));
    std::lock_guard<std::mutex> lock(mu_);
    if (n <= 0) {
      eof_ = true;
      more_.notify_all();
      return;
    }
    output_.append(buf, static_cast<size_t>(n));
    more_.notify_all();
  }
}

std::string Subprocess::output() const {
  std::lock_guard<std::mutex> lock(mu_);
  return output_;
}

bool Subprocess::WaitForMore(size_t seen, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  more_.wait_for(lock, timeout, [&] { return output_.size() > seen || eof_; });
  return output_.size() > seen || !eof_;
}

bool Subprocess::WaitForOutput(const std::string& needle, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock<std::mutex> lock(mu_);
  return more_.wait_until(lock, deadline, [&] {
    return eof_ || output_.find(needle) != std::string::npos;
  }) && output_.find(needle) != std::string::npos;
}

void Subprocess::Signal(int signal) { kill(pid_, signal); }

int Subprocess::Wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exited_ = true;
      // The rest of its output: until end of file, or a quiet 2 s (a
      // grandchild may hold the pipe open). The reader thread may not have
      // run since the child wrote (a loaded machine): end of file, not a
      // short quiet spell, is what normally ends this.
      for (;;) {
        const size_t seen = output().size();
        if (!WaitForMore(seen, std::chrono::seconds(2)) || output().size() == seen) break;
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
    // At end of file the child is gone or going: reap it.
    if (!WaitForMore(output().size(), std::min(left, std::chrono::milliseconds(20)))) {
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
