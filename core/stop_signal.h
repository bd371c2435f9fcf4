// Graceful shutdown for daemons: a flag that SIGINT and SIGTERM set.
//
//   int main(...) { ... return RunServer(options, tessera::StopOnSignals()); }
//
// The server polls the flag and drains (flushes state, stops its children) before returning.
#pragma once

#include <atomic>

namespace tessera {

// Installs SIGINT and SIGTERM handlers on the first call (later calls return the same flag)
// and returns the flag they set. Signal-safe: the handler only stores to a lock-free atomic.
const std::atomic<bool>& StopOnSignals();

}  // namespace tessera
