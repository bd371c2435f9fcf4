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

// What many connections may cost a politician (issue #12, bad input: a flooder that opens
// N connections, idle or slow). gRPC 1.51 has no limit on incoming connections, so each kind
// of cost is bounded on its own:
//   * threads: the synchronous server starts a thread per call in progress; at most
//     max_threads (a ResourceQuota), and a call beyond it fails RESOURCE_EXHAUSTED at once.
//     The default leaves room for every call the node holds on purpose -- kMaxHeadWaiters
//     GetHeads and round_waiters GetRound long-polls, 512 each by default -- and 1,024 more
//     calls in progress at once (a 2-core politician answers far fewer than that);
//   * streams: at most max_streams per connection (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS;
//     more wait in the client). A citizen daemon's citizens share one connection per
//     politician: 64 citizens with a listening long-poll, a heads long-poll and a hedged call
//     each hold about 192;
//   * idle connections: closed (GOAWAY) after idle_ms with no call in progress; an honest
//     client reconnects on its next call (client.cc backs off 100-500 ms at most);
//   * slow connections: the HTTP/2 handshake must end within handshake_ms.
//   * memory of requests, in two parts:
//     - being received (transport buffers, a message not yet parsed): gRPC's memory quota,
//       max_memory_bytes for all connections together. Near it gRPC stops accepting
//       connections and cancels calls (RESOURCE_EXHAUSTED, or RST_STREAM ENHANCE_YOUR_CALM);
//     - parsed and held by handlers (a long-poll holds its request while it waits):
//       max_held_request_bytes for all calls together, counted with ByteSizeLong; a call
//       over it fails RESOURCE_EXHAUSTED at once. It is at least MaxRequestBytes() (Start
//       refuses less), so any one honest request fits.
//     A message being parsed exists twice (its received bytes, counted by the quota, and
//     the parsed copy, counted by neither), so what requests cost the process is about
//     2 x max_memory_bytes + max_held_request_bytes. That is an estimate, not a bound the
//     code enforces: gRPC acts on its quota asynchronously, and a call refused by the held
//     limit was parsed first. PoliticianServerCapTest's flood tests measure it in a child
//     process set up as the daemon is (UseMallocForLargeRequests) against the estimate +
//     128 MiB (politician_flood_test.cc has the figures).
//     Replies are not counted: each is bounded by its own cap (reply_caps.h).
//     The defaults leave room for honest peaks: every peer posting a full pool at once is
//     N x 16 MiB (80 MiB at 5 politicians); above the quota, posts fail and pools are pulled.
struct ServerLimits {
  int max_threads = 2048;
  int max_streams = 1024;
  int idle_ms = 60000;
  int handshake_ms = 10000;
  size_t max_memory_bytes = size_t{512} << 20;
  size_t max_held_request_bytes = size_t{256} << 20;
};

// The node's gRPC service, listening on `address` ("127.0.0.1:0": any free port, see port())
// until destroyed (it then shuts down within 500 ms). The node must outlive it.
class PoliticianServer {
 public:
  static Result<std::unique_ptr<PoliticianServer>> Start(PoliticianNode* node,
                                                         const std::string& address,
                                                         const ServerLimits& limits = {});
  ~PoliticianServer();
  int port() const { return port_; }

 private:
  PoliticianServer() = default;
  std::unique_ptr<grpc::Service> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

// Sets this process's malloc so that a block of 1 MiB or more (a large request once it is
// parsed and dropped) goes back to the system when freed, instead of staying in one of malloc's
// per-thread arenas (core/heap.h, MapLargeBlocksAlone, has the measurements). Process-wide:
// ledger-politician calls it before serving, and so does PoliticianServerCapTest's flood server.
Status UseMallocForLargeRequests();

// Opens the node, serves it on its genesis address until `stop` becomes true (polled), then
// shuts down cleanly.
Status RunPolitician(PoliticianOptions options, const std::atomic<bool>& stop);

}  // namespace tessera::ledger::net
