#include "ledger/net/client.h"

namespace tessera::ledger::net {

namespace {

grpc::ChannelArguments ChannelArgs(int max_receive_bytes) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(max_receive_bytes);
  // Politicians restart (kill -9 test): reconnect quickly instead of backing off for seconds.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 500);
  return args;
}

}  // namespace

PoliticianClient::PoliticianClient(const std::string& address, int deadline_ms,
                                   int max_receive_bytes)
    : address_(address), deadline_ms_(deadline_ms) {
  stub_ = Politician::NewStub(grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(),
                                                        ChannelArgs(max_receive_bytes)));
}

PoliticianClient::PoliticianClient(const std::string& address, int deadline_ms,
                                   const ReplyCaps& caps)
    : address_(address), deadline_ms_(deadline_ms) {
  grpc::ChannelArguments args = ChannelArgs(static_cast<int>(kChannelMaxReceive));
  // The per-method caps (the lower of them and the channel's limit applies); no resolver may
  // replace this service config.
  args.SetServiceConfigJSON(caps.ServiceConfigJson());
  args.SetInt(GRPC_ARG_SERVICE_CONFIG_DISABLE_RESOLUTION, 1);
  stub_ = Politician::NewStub(
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
}

template <typename Req, typename Rep, typename Fn>
Status PoliticianClient::Call(const Req& req, Rep* rep, Traffic* t, Fn fn, int extra_deadline_ms) {
  grpc::ClientContext ctx;
  // Executing a large block (every signature checked) takes far longer than a relay call.
  int deadline = std::is_same_v<Req, ExecuteRequest> ? std::max(deadline_ms_, 20000) : deadline_ms_;
  deadline += extra_deadline_ms;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(deadline));
  if (t) t->up += req.ByteSizeLong();
  grpc::Status s = fn(&ctx, req, rep);
  if (!s.ok()) {
    std::string message = "politician " + address_ + ": " + s.error_message() + " (grpc code " +
                          std::to_string(static_cast<int>(s.error_code())) + ")";
    // The one refusal a caller acts on: "that height is already committed" (Execute).
    if (s.error_code() == grpc::StatusCode::OUT_OF_RANGE) return OutOfRangeError(message);
    return UnavailableError(message);
  }
  if (t) t->down += rep->ByteSizeLong();
  return Status::Ok();
}

std::unique_ptr<PoliticianClient> PoliticianClient::ForSubmitting(const std::string& address,
                                                                  int deadline_ms) {
  return std::make_unique<PoliticianClient>(address, deadline_ms, ReplyCaps::Citizen());
}

Status PoliticianClient::SubmitTransaction(const LedgerTx& tx, Traffic* t,
                                           uint32_t* retry_after_ms) {
  TxRequest req;
  req.set_tx(EncodeLedgerTx(tx));
  TxReply rep;
  TESSERA_RETURN_IF_ERROR(Call(
      req, &rep, t, [&](auto* c, auto& q, auto* r) { return stub_->SubmitTransaction(c, q, r); }));
  if (retry_after_ms != nullptr) *retry_after_ms = rep.retry_after_ms();
  if (!rep.accepted() && rep.retry_after_ms() > 0) {
    return ResourceExhaustedError("busy: " + rep.error() + "; retry after " +
                                  std::to_string(rep.retry_after_ms()) + " ms");
  }
  if (!rep.accepted()) return FailedPreconditionError("rejected: " + rep.error());
  return Status::Ok();
}

Result<StatusReply> PoliticianClient::GetStatus(Traffic* t) {
  StatusRequest req;
  StatusReply rep;
  TESSERA_RETURN_IF_ERROR(
      Call(req, &rep, t, [&](auto* c, auto& q, auto* r) { return stub_->GetStatus(c, q, r); }));
  return rep;
}

Result<BlockReply> PoliticianClient::GetBlock(uint64_t height, Traffic* t, bool header_only) {
  BlockRequest req;
  req.set_height(height);
  req.set_header_only(header_only);
  BlockReply rep;
  TESSERA_RETURN_IF_ERROR(
      Call(req, &rep, t, [&](auto* c, auto& q, auto* r) { return stub_->GetBlock(c, q, r); }));
  if (!rep.found()) return NotFoundError(address_ + " has no block " + std::to_string(height));
  return rep;
}

Result<HeadsReply> PoliticianClient::GetHeads(uint64_t after_height, uint32_t max_headers,
                                              uint32_t wait_ms, Traffic* t) {
  HeadsRequest req;
  req.set_after_height(after_height);
  req.set_max_headers(max_headers);
  req.set_wait_ms(wait_ms);
  HeadsReply rep;
  TESSERA_RETURN_IF_ERROR(Call(
      req, &rep, t, [&](auto* c, auto& q, auto* r) { return stub_->GetHeads(c, q, r); },
      static_cast<int>(wait_ms)));
  return rep;
}

Result<StateReply> PoliticianClient::ReadState(uint64_t height, const std::vector<Hash256>& keys,
                                               Traffic* t, const RequestSigner* signer) {
  StateRequest req;
  req.set_height(height);
  for (const Hash256& k : keys) req.add_keys(std::string(AsChars(k)));
  if (signer != nullptr) SignStateRequest(req, *signer);
  StateReply rep;
  TESSERA_RETURN_IF_ERROR(
      Call(req, &rep, t, [&](auto* c, auto& q, auto* r) { return stub_->ReadState(c, q, r); }));
  return rep;
}

Result<ExecuteReply> PoliticianClient::Execute(uint64_t height,
                                               const std::vector<Hash256>& pool_hashes, Traffic* t,
                                               const RequestSigner* signer,
                                               const std::vector<uint32_t>& held_pools) {
  ExecuteRequest req;
  req.set_height(height);
  for (const Hash256& h : pool_hashes) req.add_pool_hashes(std::string(AsChars(h)));
  for (uint32_t i : held_pools) req.add_held_pools(i);
  if (signer != nullptr) SignExecuteRequest(req, *signer);
  ExecuteReply rep;
  TESSERA_RETURN_IF_ERROR(
      Call(req, &rep, t, [&](auto* c, auto& q, auto* r) { return stub_->Execute(c, q, r); }));
  return rep;
}

Result<RoundReply> PoliticianClient::GetRound(uint64_t height, uint64_t offset, Traffic* t,
                                              bool hashes_only) {
  RoundRequest req;
  req.set_height(height);
  req.set_offset(offset);
  req.set_hashes_only(hashes_only);
  RoundReply rep;
  TESSERA_RETURN_IF_ERROR(
      Call(req, &rep, t, [&](auto* c, auto& q, auto* r) { return stub_->GetRound(c, q, r); }));
  return rep;
}

void CallCanceller::Cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  ++epoch_;
  if (ctx_ != nullptr) ctx_->TryCancel();
}

uint64_t CallCanceller::epoch() const {
  std::lock_guard<std::mutex> lock(mu_);
  return epoch_;
}

bool CallCanceller::Attach(grpc::ClientContext* ctx, uint64_t epoch) {
  std::lock_guard<std::mutex> lock(mu_);
  if (epoch != epoch_) return false;
  ctx_ = ctx;
  return true;
}

void CallCanceller::Detach() {
  std::lock_guard<std::mutex> lock(mu_);
  ctx_ = nullptr;
}

Result<RoundReply> PoliticianClient::ListenRound(uint64_t height, uint64_t offset,
                                                 const RoundWait& wait, Traffic* t) {
  RoundRequest req;
  req.set_height(height);
  req.set_offset(offset);
  req.set_hashes_only(true);
  req.set_wait_ms(wait.wait_ms);
  req.set_listener(wait.listener);
  req.set_relay(wait.relay);
  RoundReply rep;
  TESSERA_RETURN_IF_ERROR(Call(
      req, &rep, t,
      [&](auto* c, auto& q, auto* r) {
        if (wait.canceller != nullptr && !wait.canceller->Attach(c, wait.epoch)) {
          return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled before the call");
        }
        grpc::Status s = stub_->GetRound(c, q, r);
        if (wait.canceller != nullptr) wait.canceller->Detach();
        return s;
      },
      static_cast<int>(wait.wait_ms)));
  return rep;
}

Result<RoundReply> PoliticianClient::GetItems(uint64_t height, const std::vector<Hash256>& hashes,
                                              Traffic* t) {
  ItemsRequest req;
  req.set_height(height);
  for (const Hash256& h : hashes) req.add_hashes(std::string(AsChars(h)));
  RoundReply rep;
  TESSERA_RETURN_IF_ERROR(
      Call(req, &rep, t, [&](auto* c, auto& q, auto* r) { return stub_->GetItems(c, q, r); }));
  return rep;
}

Status PoliticianClient::Post(uint64_t height, const RoundItem& item, Traffic* t,
                              std::vector<Hash256>* missing_pools) {
  PostRequest req;
  req.set_height(height);
  *req.mutable_item() = item;
  PostReply rep;
  TESSERA_RETURN_IF_ERROR(
      Call(req, &rep, t, [&](auto* c, auto& q, auto* r) { return stub_->Post(c, q, r); }));
  if (!rep.accepted()) return FailedPreconditionError("post rejected: " + rep.error());
  if (missing_pools) {
    for (const std::string& b : rep.missing_pools()) {
      Hash256 h{};
      if (b.size() != h.size()) continue;
      std::copy(b.begin(), b.end(), h.begin());
      missing_pools->push_back(h);
    }
  }
  return Status::Ok();
}

Status PoliticianClient::PostPool(const Pool& pool, Traffic* t) {
  PostReply rep;
  TESSERA_RETURN_IF_ERROR(
      Call(pool, &rep, t, [&](auto* c, auto& q, auto* r) { return stub_->PostPool(c, q, r); }));
  if (!rep.accepted()) return FailedPreconditionError("pool rejected: " + rep.error());
  return Status::Ok();
}

Result<PoolsReply> PoliticianClient::GetPools(const std::vector<Hash256>& pool_hashes, Traffic* t) {
  PoolsRequest req;
  for (const Hash256& h : pool_hashes) req.add_pool_hashes(std::string(AsChars(h)));
  PoolsReply rep;
  TESSERA_RETURN_IF_ERROR(
      Call(req, &rep, t, [&](auto* c, auto& q, auto* r) { return stub_->GetPools(c, q, r); }));
  return rep;
}

}  // namespace tessera::ledger::net
