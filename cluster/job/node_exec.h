// Running a program on another node of a job's placement, the way `ssh node command` does:
// the pipeline job's launcher (pipeline-launch --hosts) starts its workers on other nodes
// through it (docs/cluster.md, "Varuna jobs across nodes").
//
// A node's part of a multi-node pipeline run is a NodeExecServer, started by that node's agent
// (so its workers are that agent's processes, in the run's process group, dying with it). The
// leader's hosts file names, for each of those nodes, the prefix
//
//   cluster-pipeline-job --node-exec HOST:PORT  <the worker's command line>
//
// whose client (RunNodeExec) sends the command line and the torchrun variables the launcher
// gave it to the server, relays the program's output to its own stdout and exits with the
// program's exit code, or 255 when the program died by a signal or the connection broke
// (OpenSSH's status for a remote death, which pipeline-launch counts as a lost worker). A
// SIGTERM or SIGINT to the client is passed on to the program; a client that dies (or whose
// connection drops) takes the program with it (SIGKILL), as a dropped ssh session does.
//
// Wire format (one TCP connection per program): the client sends
//   u32 argc, argc x (u32 length, bytes), u32 envc, envc x (u32 length, "NAME=value")
// then, any time, single bytes: a signal number to deliver. The server sends frames
//   u8 kind (1: output, 2: exit), u32 length, payload (output bytes; exit: i32 exit code).
// All integers little-endian. Requests larger than 1 MiB are refused (connection closed).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace tessera::cluster {

class NodeExecServer {
 public:
  // Listens on `address`:0 (a port of the kernel's choosing).
  static Result<NodeExecServer> Listen(const std::string& address);

  NodeExecServer(NodeExecServer&& other) noexcept;
  NodeExecServer& operator=(NodeExecServer&&) = delete;
  NodeExecServer(const NodeExecServer&) = delete;
  ~NodeExecServer();

  // "HOST:PORT", what a client connects to.
  std::string endpoint() const;

  // Accepts connections for up to `wait_ms`, each served by a thread of its own until its
  // program has exited and its exit code is sent. Programs started: started().
  void AcceptFor(int wait_ms);
  int started() const { return started_->load(); }
  // Programs running or connections being served now.
  int active() const { return active_->load(); }
  // Waits until no connection is being served.
  void WaitIdle() const;

 private:
  NodeExecServer(int fd, std::string endpoint);
  int fd_ = -1;
  std::string endpoint_;
  std::unique_ptr<std::atomic<int>> started_ = std::make_unique<std::atomic<int>>(0);
  std::unique_ptr<std::atomic<int>> active_ = std::make_unique<std::atomic<int>>(0);
};

// The client: runs `argv` on the server at `endpoint` ("HOST:PORT") with `env` ("NAME=value")
// added to the server's environment; relays output to stdout. Returns the exit code to exit
// with (255: signal death or a broken connection).
int RunNodeExec(const std::string& endpoint, const std::vector<std::string>& argv,
                const std::vector<std::string>& env);

// The torchrun variables pipeline-launch sets for a worker, taken from this process's
// environment: what the client forwards.
std::vector<std::string> ForwardedEnvironment();

}  // namespace tessera::cluster
