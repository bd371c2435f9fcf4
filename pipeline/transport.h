// Point-to-point messaging between the workers of a pipeline job over TCP.
//
// Every worker (rank) listens on its own endpoint and holds one connection to each peer it
// talks to: its neighbouring stages and the other replicas of its stage. A message is a tagged
// byte string; Send queues it for a per-connection sender thread (so computing and sending
// overlap, like Varuna's background isend) and a per-connection reader thread files arriving
// messages by (peer, tag) so the runtime can ask "has the gradient of micro-batch 3 arrived?"
// without blocking. Every wait has a deadline, and a peer that disconnects turns every wait on
// it into UNAVAILABLE, so a dead worker makes the others fail instead of hang.
//
// Why not c10d's ProcessGroupGloo: its send/recv need the receive buffer's shape up front and
// offer no cheap "has it arrived" probe besides polling work handles, and a torch-free transport
// can be unit-tested without libtorch. Frames: tag (u64 LE), length (u64 LE), payload.
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
