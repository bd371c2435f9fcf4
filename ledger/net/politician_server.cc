#include "ledger/net/politician_server.h"

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include <thread>

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
                                                            : grpc::INTERNAL;
  return grpc::Status(code, s.ToString());
}

class Service final : public Politician::Service {
 public:
  explicit Service(PoliticianNode* node) : node_(node) {}
  grpc::Status SubmitTransaction(grpc::ServerContext*, const TxRequest* q, TxReply* r) override {
    node_->SubmitTransaction(*q, r);
    return grpc::Status::OK;
  }
  grpc::Status GetStatus(grpc::ServerContext*, const StatusRequest*, StatusReply* r) override {
    node_->GetStatus(r);
    return grpc::Status::OK;
  }
  grpc::Status GetBlock(grpc::ServerContext*, const BlockRequest* q, BlockReply* r) override {
    node_->GetBlock(*q, r);
    return grpc::Status::OK;
  }
  grpc::Status ReadState(grpc::ServerContext*, const StateRequest* q, StateReply* r) override {
    return ToGrpc(node_->ReadState(*q, r));
  }
  grpc::Status GetHeads(grpc::ServerContext* c, const HeadsRequest* q, HeadsReply* r) override {
    node_->GetHeads(*q, r, [c] { return c->IsCancelled(); });
    return grpc::Status::OK;
  }
  grpc::Status Execute(grpc::ServerContext*, const ExecuteRequest* q, ExecuteReply* r) override {
    return ToGrpc(node_->Execute(*q, r));
  }
  grpc::Status GetRound(grpc::ServerContext* c, const RoundRequest* q, RoundReply* r) override {
    node_->GetRound(*q, r, c->peer(), [c] { return c->IsCancelled(); });
    return grpc::Status::OK;
  }
  grpc::Status GetItems(grpc::ServerContext*, const ItemsRequest* q, RoundReply* r) override {
    node_->GetItems(*q, r);
    return grpc::Status::OK;
  }
  grpc::Status Post(grpc::ServerContext* c, const PostRequest* q, PostReply* r) override {
    if (Status s = node_->AdmitPush(c->peer(), &q->item()); !s.ok()) return ToGrpc(s);
    node_->Post(*q, r);
    return grpc::Status::OK;
  }
  grpc::Status GetPools(grpc::ServerContext*, const PoolsRequest* q, PoolsReply* r) override {
    return ToGrpc(node_->GetPools(*q, r));
  }
  grpc::Status PostPool(grpc::ServerContext* c, const Pool* q, PostReply* r) override {
    if (Status s = node_->AdmitPush(c->peer(), nullptr); !s.ok()) return ToGrpc(s);
    node_->PostPool(*q, r);
    return grpc::Status::OK;
  }

 private:
  PoliticianNode* node_;
};

}  // namespace

Result<std::unique_ptr<PoliticianServer>> PoliticianServer::Start(PoliticianNode* node,
                                                                  const std::string& address,
                                                                  const ServerLimits& limits) {
  std::unique_ptr<PoliticianServer> s(new PoliticianServer());
  s->service_ = std::make_unique<Service>(node);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &s->port_);
  // The largest request an honest caller sends (a PostPool of a kMaxPoolBytes pool,
  // reply_caps.h): a larger one fails RESOURCE_EXHAUSTED before it is parsed.
  builder.SetMaxReceiveMessageSize(static_cast<int>(MaxRequestBytes()));
  // What N connections may cost (ServerLimits, politician_server.h).
  grpc::ResourceQuota quota("politician");
  quota.SetMaxThreads(limits.max_threads);
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
