// The gRPC face of a PoliticianNode, and the politician daemon's run loop.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>

#include "core/status.h"
#include "ledger/net/politician.h"

namespace tessera::ledger::net {

// The node's gRPC service, listening on `address` ("127.0.0.1:0": any free port, see port())
// until destroyed (it then shuts down within 500 ms). The node must outlive it.
class PoliticianServer {
 public:
  static Result<std::unique_ptr<PoliticianServer>> Start(PoliticianNode* node,
                                                         const std::string& address);
  ~PoliticianServer();
  int port() const { return port_; }

 private:
  PoliticianServer() = default;
  std::unique_ptr<grpc::Service> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

// Opens the node, serves it on its genesis address until `stop` becomes true (polled), then
// shuts down cleanly.
Status RunPolitician(PoliticianOptions options, const std::atomic<bool>& stop);

}  // namespace tessera::ledger::net
