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
  // SIGTERM now, without waiting (StopAll waits for many at once).
  void Terminate();
  void Kill9();  // SIGKILL now, and reap
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

// User + system CPU seconds a running process has used (all its threads), from
// /proc/<pid>/stat; 0 if it cannot be read.
double ProcessCpuSeconds(pid_t pid);

// Stops every process as Stop does, but all at once: SIGTERM to each, then SIGKILL to those
// still running `grace_ms` later. A politician takes up to ~3 s to exit on SIGTERM, so
// stopping five one after another cost a localnet run ~15 s of teardown.
void StopAll(const std::vector<ChildProcess*>& processes, int grace_ms = 3000);

// A TCP port on 127.0.0.1 that was free a moment ago.
Result<int> FreeLoopbackPort();

// Whether a TCP connection to 127.0.0.1:<port> is accepted now (connected, then closed).
bool LoopbackPortAccepts(int port);

// The processes holding a TCP socket that listens on `port` (any local address), from
// /proc/net/tcp, /proc/net/tcp6 and /proc/<pid>/fd; empty when none does or /proc cannot be
// read. For error messages that say who answers on a port a daemon was given.
std::vector<pid_t> PidsListeningOn(int port);

}  // namespace tessera::ledger::net
