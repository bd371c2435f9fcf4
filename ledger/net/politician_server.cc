#include "ledger/net/politician_server.h"

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <thread>

#include "core/heap.h"
#include "ledger/net/reply_caps.h"

namespace tessera::ledger::net {
namespace {

grpc::Status ToGrpc(const Status& s) {
  if (s.ok()) return grpc::Status::OK;
  auto code = s.code() == StatusCode::kInvalidArgument      ? grpc::INVALID_ARGUMENT
              : s.code() == StatusCode::kNotFound           ? grpc::NOT_FOUND
              : s.code() == StatusCode::kFailedPrecondition ? grpc::FAILED_PRECONDITION
              : s.code() == StatusCode::kPermissionDenied   ? grpc::PERMISSION_DENIED
              : s.code() == StatusCode::kResourceExhausted  ? grpc::RESOURCE_EXHAUSTED
              : s.code() == StatusCode::kOutOfRange         ? grpc::OUT_OF_RANGE
                                                            : grpc::INTERNAL;
  return grpc::Status(code, s.ToString());
}

// The bytes of parsed requests that handlers hold at once, up to a limit (ServerLimits::
// max_held_request_bytes): Hold runs a handler only if its request fits, and frees the bytes
// when the handler returns.
class HeldRequests {
 public:
  explicit HeldRequests(size_t limit) : limit_(limit) {}

  template <typename Request, typename Handler>
  grpc::Status Hold(const Request& request, Handler&& handler) {
    const size_t bytes = request.ByteSizeLong();
    if (held_.fetch_add(bytes) + bytes > limit_) {
      held_.fetch_sub(bytes);
      return grpc::Status(grpc::RESOURCE_EXHAUSTED,
                          "politician busy: requests in progress hold too many bytes");
    }
    grpc::Status status = handler();
    held_.fetch_sub(bytes);
    return status;
  }

 private:
  const size_t limit_;
  std::atomic<size_t> held_{0};
};

class Service final : public Politician::Service {
 public:
  Service(PoliticianNode* node, size_t max_held_request_bytes)
      : node_(node), held_(max_held_request_bytes) {}
  grpc::Status SubmitTransaction(grpc::ServerContext*, const TxRequest* q, TxReply* r) override {
    return held_.Hold(*q, [&] {
      node_->SubmitTransaction(*q, r);
      return grpc::Status::OK;
    });
  }
  grpc::Status GetStatus(grpc::ServerContext*, const StatusRequest* q, StatusReply* r) override {
    return held_.Hold(*q, [&] {
      node_->GetStatus(r);
      return grpc::Status::OK;
    });
  }
  grpc::Status GetBlock(grpc::ServerContext*, const BlockRequest* q, BlockReply* r) override {
    return held_.Hold(*q, [&] {
      node_->GetBlock(*q, r);
      return grpc::Status::OK;
    });
  }
  grpc::Status ReadState(grpc::ServerContext*, const StateRequest* q, StateReply* r) override {
    return held_.Hold(*q, [&] { return ToGrpc(node_->ReadState(*q, r)); });
  }
  grpc::Status GetHeads(grpc::ServerContext* c, const HeadsRequest* q, HeadsReply* r) override {
    return held_.Hold(*q, [&] {
      node_->GetHeads(*q, r, [c] { return c->IsCancelled(); });
      return grpc::Status::OK;
    });
  }
  grpc::Status Execute(grpc::ServerContext*, const ExecuteRequest* q, ExecuteReply* r) override {
    return held_.Hold(*q, [&] { return ToGrpc(node_->Execute(*q, r)); });
  }
  grpc::Status GetRound(grpc::ServerContext* c, const RoundRequest* q, RoundReply* r) override {
    if (q->listener().size() > PoliticianNode::kMaxListenerBytes) {
      return grpc::Status(grpc::INVALID_ARGUMENT, "round listener longer than a public key");
    }
    return held_.Hold(*q, [&] {
      node_->GetRound(*q, r, c->peer(), [c] { return c->IsCancelled(); });
      return grpc::Status::OK;
    });
  }
  grpc::Status GetItems(grpc::ServerContext*, const ItemsRequest* q, RoundReply* r) override {
    return held_.Hold(*q, [&] {
      node_->GetItems(*q, r);
      return grpc::Status::OK;
    });
  }
  grpc::Status Post(grpc::ServerContext* c, const PostRequest* q, PostReply* r) override {
    return held_.Hold(*q, [&] {
      if (Status s = node_->AdmitPush(c->peer(), &q->item()); !s.ok()) return ToGrpc(s);
      node_->Post(*q, r);
      return grpc::Status::OK;
    });
  }
  grpc::Status GetPools(grpc::ServerContext*, const PoolsRequest* q, PoolsReply* r) override {
    return held_.Hold(*q, [&] { return ToGrpc(node_->GetPools(*q, r)); });
  }
  grpc::Status PostPool(grpc::ServerContext* c, const Pool* q, PostReply* r) override {
    return held_.Hold(*q, [&] {
      if (Status s = node_->AdmitPush(c->peer(), nullptr); !s.ok()) return ToGrpc(s);
      node_->PostPool(*q, r);
      return grpc::Status::OK;
    });
  }

 private:
  PoliticianNode* node_;
  HeldRequests held_;
};

}  // namespace

Result<std::unique_ptr<PoliticianServer>> PoliticianServer::Start(PoliticianNode* node,
                                                                  const std::string& address,
                                                                  const ServerLimits& limits) {
  std::unique_ptr<PoliticianServer> s(new PoliticianServer());
  if (limits.max_held_request_bytes < MaxRequestBytes()) {
    return InvalidArgumentError("max_held_request_bytes is below the largest honest request");
  }
  s->service_ = std::make_unique<Service>(node, limits.max_held_request_bytes);
  grpc::ServerBuilder builder;
  // gRPC sets SO_REUSEPORT by default: a second server on a served port would start and take
  // part of its connections (two loopback networks that drew one port each reached the other's
  // politician). Without it the second fails to bind.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &s->port_);
  // The largest request an honest caller sends (a PostPool of a kMaxPoolBytes pool,
  // reply_caps.h): a larger one fails RESOURCE_EXHAUSTED before it is parsed.
  builder.SetMaxReceiveMessageSize(static_cast<int>(MaxRequestBytes()));
  // What N connections may cost (ServerLimits, politician_server.h).
  grpc::ResourceQuota quota("politician");
  quota.SetMaxThreads(limits.max_threads);
  quota.Resize(limits.max_memory_bytes);
  builder.SetResourceQuota(quota);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, limits.max_streams);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS, limits.idle_ms);
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, limits.handshake_ms);
  builder.RegisterService(s->service_.get());
  s->server_ = builder.BuildAndStart();
  if (!s->server_ || s->port_ == 0) return UnavailableError("cannot listen on " + address);
  return s;
}

PoliticianServer::~PoliticianServer() {
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
}

Status UseMallocForLargeRequests() { return MapLargeBlocksAlone(size_t{1} << 20); }

Status RunPolitician(PoliticianOptions options, const std::atomic<bool>& stop) {
  const PoliticianInfo* me = options.genesis.Politician(options.id);
  if (me == nullptr) return InvalidArgumentError("unknown politician id");
  std::string address = me->address;
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<PoliticianNode> node,
                           PoliticianNode::Open(std::move(options)));
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<PoliticianServer> server,
                           PoliticianServer::Start(node.get(), address));
  spdlog::info("politician listening on {}", address);
  node->Start();
  while (!stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  server.reset();
  node->Stop();
  return Status::Ok();
}

}  // namespace tessera::ledger::net
