#include "ledger/net/politician_server.h"

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include <thread>

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
  grpc::Status Post(grpc::ServerContext*, const PostRequest* q, PostReply* r) override {
    node_->Post(*q, r);
    return grpc::Status::OK;
  }
  grpc::Status GetPools(grpc::ServerContext*, const PoolsRequest* q, PoolsReply* r) override {
    return ToGrpc(node_->GetPools(*q, r));
  }
  grpc::Status PostPool(grpc::ServerContext*, const Pool* q, PostReply* r) override {
    node_->PostPool(*q, r);
    return grpc::Status::OK;
  }

 private:
  PoliticianNode* node_;
};

}  // namespace

Status RunPolitician(PoliticianOptions options, const std::atomic<bool>& stop) {
  const PoliticianInfo* me = options.genesis.Politician(options.id);
  if (me == nullptr) return InvalidArgumentError("unknown politician id");
  std::string address = me->address;
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<PoliticianNode> node,
                           PoliticianNode::Open(std::move(options)));
  Service service(node.get());
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &port);
  builder.SetMaxReceiveMessageSize(256 << 20);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) return UnavailableError("cannot listen on " + address);
  spdlog::info("politician listening on {}", address);
  node->Start();
  while (!stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
  node->Stop();
  return Status::Ok();
}

}  // namespace tessera::ledger::net
