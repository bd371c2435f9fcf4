// A child process with its lifetime tied to its owner: agents run jobs with it, tests run
// daemons with it. Linux only.
//
//   ProcessOptions options{.argv = {"/bin/sleep", "10"}, .log_file = "sleep.log"};
//   TESSERA_ASSIGN_OR_RETURN(Process p, Process::Spawn(options));
//   p.Signal(SIGTERM);
//   int status = p.Wait();   // exit code, or 128 + signal number
//
// Destroying a Process that still runs kills it (SIGKILL) and reaps it, so no test or agent
// leaves strays behind, even on an early return. With `die_with_parent` the kernel also kills
// the child when the spawning thread's process dies (PR_SET_PDEATHSIG): a node agent killed
// with -9 takes its jobs with it, like a machine that loses power.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace tessera::cluster {

struct ProcessOptions {
  std::vector<std::string> argv;  // argv[0] is the program path (no PATH search)
  std::vector<std::pair<std::string, std::string>> env;  // added to the inherited environment
  std::filesystem::path log_file;  // stdout and stderr, appended; empty = inherit
  bool die_with_parent = true;
  // The child leads a process group of its own (SignalGroup reaches it and its children);
  // false keeps it in the owner's group, so that whoever signals the owner's group reaches it.
  bool new_process_group = true;
};

class Process {
 public:
  static Result<Process> Spawn(const ProcessOptions& options);

  Process(Process&& other) noexcept;
  Process& operator=(Process&& other) noexcept;
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process();

  pid_t pid() const { return pid_; }
  // The exit status if the process has exited (reaping it), else nullopt. Never blocks.
  std::optional<int> Poll();
  // Blocks until exit. Exit code, or 128 + signal number.
  int Wait();
  // Waits at most `timeout`; nullopt if it is still running then.
  std::optional<int> WaitFor(std::chrono::milliseconds timeout);
  void Signal(int signal);
  // Signals the process's whole process group (it leads one, see Spawn): a shell's children
  // too. No-op once the process has been reaped.
  void SignalGroup(int signal);

 private:
  explicit Process(pid_t pid) : pid_(pid) {}
  void KillAndReap();

  pid_t pid_ = -1;
  std::optional<int> status_;
};

}  // namespace tessera::cluster
