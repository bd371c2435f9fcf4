// The gRPC face of a PoliticianNode, and the politician daemon's run loop.
#pragma once

#include <atomic>
#include <filesystem>
#include <string>

#include "core/status.h"
#include "ledger/net/politician.h"

namespace tessera::ledger::net {

// Opens the node, serves it on its genesis address until `stop` becomes true (polled), then
// shuts down cleanly.
Status RunPolitician(PoliticianOptions options, const std::atomic<bool>& stop);

}  // namespace tessera::ledger::net
