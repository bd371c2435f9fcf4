// Child processes for the local network: spawned with stdout/stderr to a log file, in their
// own process group, and marked to receive SIGKILL if the launcher dies (PR_SET_PDEATHSIG), so
// that no politician or citizen outlives a crashed or killed test.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/status.h"

namespace tessera::ledger::net {

class ChildProcess {
 public:
  ChildProcess() = default;
  ~ChildProcess();  // SIGKILLs the process group if still running
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  Status Start(const std::filesystem::path& binary, const std::vector<std::string>& args,
               const std::filesystem::path& log);
  bool running();
  // SIGTERM, then SIGKILL after `grace_ms`; reaps the child.
  void Stop(int grace_ms = 3000);
  void Kill9();  // SIGKILL now, and reap
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

// User + system CPU seconds a running process has used (all its threads), from
// /proc/<pid>/stat; 0 if it cannot be read.
double ProcessCpuSeconds(pid_t pid);

// A TCP port on 127.0.0.1 that was free a moment ago.
Result<int> FreeLoopbackPort();

}  // namespace tessera::ledger::net
