#include "ledger/net/request_auth.h"

#include "ledger/codec/canonical.h"

namespace tessera::ledger::net {
namespace {

ByteSpan Span(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

}  // namespace

std::string ExecuteSigningBytes(const ExecuteRequest& req) {
  CanonicalWriter w;
  w.U64(req.height()).U32(static_cast<uint32_t>(req.pool_hashes_size()));
  for (const std::string& h : req.pool_hashes()) w.Bytes(Span(h));
  w.Bytes(Span(req.identity())).Bytes(Span(req.credential()));
  w.U32(req.vote_period()).U32(req.vote_step());
  w.U32(static_cast<uint32_t>(req.held_pools_size()));
  for (uint32_t i : req.held_pools()) w.U32(i);
  return w.Take();
}

std::string StateSigningBytes(const StateRequest& req) {
  CanonicalWriter w;
  w.U64(req.height()).U32(static_cast<uint32_t>(req.keys_size()));
  for (const std::string& k : req.keys()) w.Bytes(Span(k));
  w.Bytes(Span(req.identity()));
  return w.Take();
}

void SignExecuteRequest(ExecuteRequest& req, const RequestSigner& signer) {
  req.set_identity(signer.identity);
  req.set_credential(std::string(reinterpret_cast<const char*>(signer.credential.data()),
                                 signer.credential.size()));
  req.set_vote_period(signer.vote_period);
  req.set_vote_step(signer.vote_step);
  const std::string bytes = ExecuteSigningBytes(req);
  Signature s = Sign(signer.keys, kExecuteDomain, Span(bytes));
  req.set_signature(std::string(reinterpret_cast<const char*>(s.data()), s.size()));
}

void SignStateRequest(StateRequest& req, const RequestSigner& signer) {
  req.set_identity(signer.identity);
  const std::string bytes = StateSigningBytes(req);
  Signature s = Sign(signer.keys, kStateDomain, Span(bytes));
  req.set_signature(std::string(reinterpret_cast<const char*>(s.data()), s.size()));
}

}  // namespace tessera::ledger::net
