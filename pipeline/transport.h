// Point-to-point messaging between the workers of a pipeline job over TCP: what carries the
// activations and gradients between stages (pipeline/runtime.h), our ring all-reduce
// (pipeline/allreduce.h, `--collective tcp`) and the small exchanges around a step (the
// clipping norm, evaluation losses). The replicas' gradient all-reduce goes through c10d/gloo
// instead (pipeline/gloo_collective.h).
//
// Model. A job has ranks 0 .. N-1, each with an Endpoint (host:port) it listens on. A rank's
// Transport connects to the peers it names (its neighbouring stages and the other replicas of
// its stage), one TCP connection per pair: the lower rank accepts, the higher one dials and
// opens with its rank (8 bytes, little-endian); a connection that names no expected peer is
// dropped. A message is (tag, payload): a 64-bit tag the caller chooses (the runtime packs
// step, kind and micro-batch into it) and a byte string of at most 1 GiB. Messages with the
// same (peer, tag) arrive in the order they were sent; a received message is removed.
//
// Threads. Send only queues: a sender thread per connection writes the queue (computing and
// sending overlap, like Varuna's background isend), and a reader thread per connection files
// arriving messages by (peer, tag), so the runtime can ask "has the gradient of micro-batch 3
// arrived?" (Has, never blocking) and sleep until anything new arrives (arrivals() then
// WaitForArrival). Every method may be called from any thread.
//
// Failures. Every wait has a deadline (DEADLINE_EXCEEDED naming the rank and the tag it
// waited for). A peer whose connection closes or breaks (its process died, its host went
// away) is marked broken: every later Send to it and every wait on it returns UNAVAILABLE
// naming that rank, and WaitForArrival wakes, so a dead worker makes its neighbours fail at
// once instead of hanging; messages that arrived before the break can still be received.
// A frame longer than 1 GiB (a corrupt or hostile length) breaks the connection instead of
// allocating it. Frames on the wire: tag (u64 LE), length (u64 LE), payload.
//
// Why our own and not c10d's ProcessGroupGloo send/recv (measured, docs/pipeline.md
// "Transport and collectives"): at the message sizes a pipeline sends (32 KiB - 1.5 MiB) a
// round trip through gloo took 1.8-94x as long as through this transport on this machine
// (a fixed 3-15 ms per gloo round trip against 0.1-0.7 ms); gloo's send/recv need the
// receive buffer's exact size up front and have no arrival probe (a receive's
// Work::isCompleted() stays false until wait()); and a torch-free transport is unit-tested
// without libtorch (pipeline/transport_test.cc).
//
// This header is torch-free.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

namespace tessera::pipeline {

struct Endpoint {
  std::string host;  // IPv4 address or name
  int port = 0;
};

// "host:port" -> Endpoint; INVALID_ARGUMENT on anything else.
Result<Endpoint> ParseEndpoint(const std::string& text);

// `count` TCP ports on 127.0.0.1 that were free a moment ago (bound to port 0, then released).
Result<std::vector<int>> FreeLocalPorts(int count);

class Transport {
 public:
  using Duration = std::chrono::milliseconds;

  // Listens on endpoints[rank] and connects to every rank in `peers` (each pair of ranks must
  // list each other). Lower ranks accept, higher ranks dial (retrying until `timeout`, since
  // peers start in any order). DEADLINE_EXCEEDED when a peer does not show up in time.
  static Result<std::unique_ptr<Transport>> Connect(int rank,
                                                    const std::vector<Endpoint>& endpoints,
                                                    const std::vector<int>& peers,
                                                    Duration timeout);
  virtual ~Transport() = default;

  virtual int rank() const = 0;
  // Queues `payload` for `peer`. Fails only if the peer is unknown or its connection broke.
  virtual Status Send(int peer, uint64_t tag, std::string payload) = 0;
  // Waits for the message (peer, tag) and removes it. Messages with the same (peer, tag) are
  // delivered in the order they were sent.
  virtual Result<std::string> Recv(int peer, uint64_t tag, Duration timeout) = 0;
  // True when (peer, tag) has arrived; never blocks.
  virtual bool Has(int peer, uint64_t tag) = 0;
  // Number of messages that arrived so far. Read it before checking Has(), then pass it to
  // WaitForArrival so an arrival in between is not missed.
  virtual uint64_t arrivals() = 0;
  // Blocks until more than `seen` messages have arrived, `timeout` passes, or a connection
  // broke (the next Recv from that peer reports it).
  virtual void WaitForArrival(uint64_t seen, Duration timeout) = 0;
  // OK while the connection to `peer` is up; UNAVAILABLE (with the reason) once it broke.
  // Messages that arrived before the break can still be received.
  virtual Status PeerStatus(int peer) = 0;
  // Waits until every queued message has been written to its socket.
  virtual Status Flush(Duration timeout) = 0;
  // Bytes written and read so far (payloads only).
  virtual uint64_t bytes_sent() const = 0;
  virtual uint64_t bytes_received() const = 0;
};

}  // namespace tessera::pipeline
