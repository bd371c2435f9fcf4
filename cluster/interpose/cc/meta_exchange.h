// The barrier's meta-allreduce for the C++ library, the same protocol as the Python layer's
// between hosts (cluster/interpose/python/tessera_interpose/barrier.py, which exchanges the
// needs of ranks on one host as 64-bit words in /dev/shm instead): at every step each
// rank sends one byte, its need (1 once it has seen the stop order), to every other rank and
// reads the bytes every rank sent at the previous step. Every rank gets the same sum at the
// same step, so all decide alike.
//
// One TCP connection per pair of ranks (TCP_NODELAY), used from the rank's own thread: per
// step W - 1 one-byte sends and W - 1 one-byte reads. The read does not wait in a
// data-parallel job: a rank at step j + 1 has finished step j + 1's gradient allreduce, which
// every other rank entered only after sending its byte of step j. (A gloo allreduce of the
// same byte costs ~0.1 ms of CPU here: ProcessGroupGloo hands each collective to its worker
// thread and gloo's I/O thread.)
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/status.h"

namespace tessera::cluster::interpose {

class MetaExchange {
 public:
  // `publish(key, value)` and `lookup(key)` reach a key-value store every rank shares (the
  // job's c10d TCPStore; lookup waits until the key is set). `host` is this rank's address
  // as the others reach it.
  static Result<MetaExchange> Connect(
      int rank, int world_size, const std::string& host,
      const std::function<void(const std::string&, const std::string&)>& publish,
      const std::function<std::string(const std::string&)>& lookup);

  MetaExchange(MetaExchange&& other) noexcept;
  MetaExchange& operator=(MetaExchange&& other) noexcept;
  MetaExchange(const MetaExchange&) = delete;
  MetaExchange& operator=(const MetaExchange&) = delete;
  ~MetaExchange();

  // Sends this step's need; returns the sum of every rank's need of the previous step (0 at
  // the first step). An error if a peer closed its connection.
  Result<int> Exchange(bool need);

 private:
  MetaExchange() = default;
  std::vector<int> peers_;  // sockets, by rank, without this rank
  int previous_ = -1;       // this rank's byte of the previous step; -1: first step
};

// This host's address on the route to `remote` (an IPv4 address or name): where the other
// ranks reach this one. No packet is sent.
Result<std::string> LocalAddressTowards(const std::string& remote);

}  // namespace tessera::cluster::interpose
