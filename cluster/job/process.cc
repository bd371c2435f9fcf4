#include "cluster/job/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace tessera::cluster {

namespace {

int DecodeWaitStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 255;
}

}  // namespace

Result<Process> Process::Spawn(const ProcessOptions& options) {
  if (options.argv.empty()) return InvalidArgumentError("no program to run");
  if (::access(options.argv[0].c_str(), X_OK) != 0) {
    return NotFoundError("cannot execute " + options.argv[0] + ": " + std::strerror(errno));
  }
  // Everything the child needs is prepared before fork: after fork only async-signal-safe calls.
  std::vector<char*> argv;
  for (const auto& arg : options.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    bool overridden = false;
    for (const auto& [key, value] : options.env) {
      if (entry.starts_with(key + "=")) overridden = true;
    }
    if (!overridden) env_strings.push_back(std::move(entry));
  }
  for (const auto& [key, value] : options.env) env_strings.push_back(key + "=" + value);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  int log_fd = -1;
  if (!options.log_file.empty()) {
    log_fd = ::open(options.log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) {
      return InternalError("opening " + options.log_file.string() + ": " + std::strerror(errno));
    }
  }
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    if (log_fd >= 0) ::close(log_fd);
    return InternalError(std::string("fork: ") + std::strerror(err));
  }
  if (pid == 0) {
    if (options.die_with_parent) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);  // the parent died before prctl took effect
    }
    if (options.new_process_group)
      ::setpgid(0, 0);  // own process group: a terminal's Ctrl-C goes to the owner, not to jobs
    if (log_fd >= 0) {
      ::dup2(log_fd, STDOUT_FILENO);
      ::dup2(log_fd, STDERR_FILENO);
    }
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  if (log_fd >= 0) ::close(log_fd);
  return Process(pid);
}

Process::Process(Process&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), status_(other.status_) {}

Process& Process::operator=(Process&& other) noexcept {
  if (this != &other) {
    KillAndReap();
    pid_ = std::exchange(other.pid_, -1);
    status_ = other.status_;
  }
  return *this;
}

Process::~Process() { KillAndReap(); }

void Process::KillAndReap() {
  if (pid_ > 0 && !status_) {
    ::kill(pid_, SIGKILL);
    Wait();
  }
  pid_ = -1;
}

std::optional<int> Process::Poll() {
  if (status_ || pid_ <= 0) return status_;
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) status_ = DecodeWaitStatus(status);
  if (r < 0 && errno == ECHILD) status_ = 255;  // reaped elsewhere: treat as gone
  return status_;
}

int Process::Wait() {
  if (status_ || pid_ <= 0) return status_.value_or(255);
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, 0);
  } while (r < 0 && errno == EINTR);
  status_ = r == pid_ ? DecodeWaitStatus(status) : 255;
  return *status_;
}

std::optional<int> Process::WaitFor(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (auto status = Poll()) return status;
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void Process::Signal(int signal) {
  if (pid_ > 0 && !status_) ::kill(pid_, signal);
}

void Process::SignalGroup(int signal) {
  // Before the child has called setpgid there is no group yet: signal the process itself.
  if (pid_ > 0 && !status_ && ::kill(-pid_, signal) != 0) ::kill(pid_, signal);
}

}  // namespace tessera::cluster
