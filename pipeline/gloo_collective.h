// The replicas of one stage sum their gradients through c10d's ProcessGroupGloo (libtorch's
// collective engine, the one torch.distributed uses on CPU) instead of our own ring.
//
// Rendezvous is torchrun's: one c10d TCPStore at MASTER_ADDR:MASTER_PORT, served by rank 0 (or
// by torchrun's agent when TORCHELASTIC_USE_AGENT_STORE=True), and one gloo group per stage
// under the store prefix "stage-<s>/". pipeline-launch sets the same variables for the workers
// it starts; a worker started by torchrun reads RANK, WORLD_SIZE and LOCAL_RANK as well.
//
// Failure semantics are the transport's (pipeline/transport.h): every wait has a deadline, and
// a replica whose process died is reported by its rank. Gloo itself only says "connection
// closed by peer <address>"; the worker keeps a transport connection to each replica of its
// stage, so while a collective is pending the connection's state names the rank that is gone.
// A collective that failed or timed out leaves the gloo group unusable (its worker thread may
// still be blocked), so the worker reports the error and exits.
//
// Started collectives run on gloo's thread while the caller continues (the runtime starts each
// gradient bucket as soon as the backward has produced it); every member must start the same
// collectives in the same order. This header is torch-free.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "pipeline/allreduce.h"
#include "pipeline/transport.h"

namespace tessera::pipeline {

// torchrun's environment. Every field is optional except that MASTER_ADDR and MASTER_PORT come
// together.
struct TorchrunEnvironment {
  std::string master_addr;
  int master_port = 0;
  int rank = -1;             // RANK
  int world_size = -1;       // WORLD_SIZE
  int local_rank = -1;       // LOCAL_RANK
  bool agent_store = false;  // TORCHELASTIC_USE_AGENT_STORE=True: the agent serves the store
  bool has_store() const { return !master_addr.empty(); }
};
// Reads the variables through `get` (default: the process environment). INVALID_ARGUMENT for a
// malformed number or a MASTER_ADDR without MASTER_PORT (or the reverse).
Result<TorchrunEnvironment> ReadTorchrunEnvironment(
    const std::function<const char*(const char*)>& get = nullptr);

struct GlooGroupOptions {
  Endpoint store;            // the TCPStore (MASTER_ADDR:MASTER_PORT)
  bool serve_store = false;  // this process runs the store's server (rank 0 without an agent)
  std::string prefix;        // store prefix of this group ("stage-1")
  std::vector<int> members;  // global ranks, in group order; `rank` is among them
  int rank = 0;              // this worker's global rank
  std::string bind_host;     // the address gloo listens on (this worker's endpoint host)
  Transport::Duration timeout{120000};
};

class GlooGroup {
 public:
  // Connects to the store and joins the group (blocks until every member has joined, at most
  // options.timeout). `transport` must hold a connection to every other member; it is used only
  // to name a dead member. UNAVAILABLE / DEADLINE_EXCEEDED with gloo's reason on failure.
  static Result<std::unique_ptr<GlooGroup>> Join(const GlooGroupOptions& options,
                                                 Transport& transport);
  ~GlooGroup();
  GlooGroup(const GlooGroup&) = delete;
  GlooGroup& operator=(const GlooGroup&) = delete;

  // Starts summing `data` over the members, in place; returns at once. `data` must stay alive
  // and untouched until Wait returns.
  Status Start(std::span<float> data);
  // Waits for every started sum. DEADLINE_EXCEEDED when `timeout` passes, UNAVAILABLE naming
  // the member's rank when one's connection is gone; either leaves the group unusable.
  Status Wait(Transport::Duration timeout);
  int pending() const;

  // Point-to-point within the group through c10d's send/recv (gloo's unbound buffers): what a
  // pipeline stage's activations and gradients would travel as. `member` is a global rank of
  // the group. Both block until the message is through (gloo has no cheap arrival probe for a
  // receive: Work::isCompleted() stays false until wait() is called), at most `timeout`;
  // RecvFrom needs the message's exact size up front. DEADLINE_EXCEEDED at the deadline,
  // UNAVAILABLE naming the peer's rank when its process is gone; either leaves the group
  // unusable, as for Wait. Measured against our transport by pipeline-collective-bench --p2p.
  Status SendTo(int member, int tag, std::span<const float> data, Transport::Duration timeout);
  Status RecvFrom(int member, int tag, std::span<float> data, Transport::Duration timeout);

 private:
  struct Impl;
  Status PointToPoint(bool send, int member, int tag, std::span<float> data,
                      Transport::Duration timeout);
  explicit GlooGroup(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Median seconds of `runs` gloo all-reduces of `floats` floats among `members` threads of this
// process over 127.0.0.1 (one warm-up round first), each thread with its own transport and gloo
// pairs as separate workers would have, and the process's CPU per all-reduce and member over
// the timed rounds: the auto-configuration's measurement of this engine (pipeline/link_probe.h).
Result<AllreduceTiming> TimeGlooAllreduce(size_t floats, int members, int runs);

}  // namespace tessera::pipeline
