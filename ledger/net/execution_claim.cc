#include "ledger/net/execution_claim.h"

#include <algorithm>

namespace tessera::ledger::net {
namespace {

void WriteBody(CanonicalWriter& w, const ExecutionClaim& c) {
  w.U32(c.politician_id).U64(c.height).Array(c.prev_root).Array(c.prev_seed);
  w.U32(static_cast<uint32_t>(c.pool_hashes.size()));
  for (const Hash256& h : c.pool_hashes) w.Array(h);
  w.Array(c.new_root).U32(static_cast<uint32_t>(c.crypto_rejected.size()));
  for (uint32_t i : c.crypto_rejected) w.U32(i);
}

std::string Body(const ExecutionClaim& c) {
  CanonicalWriter w;
  WriteBody(w, c);
  return w.Take();
}

}  // namespace

ExecutionClaim ClaimOfReply(uint32_t politician_id, uint64_t height, const Hash256& prev_root,
                            const Hash256& prev_seed, const std::vector<Hash256>& pool_hashes,
                            const ExecuteReply& reply) {
  ExecutionClaim c;
  c.politician_id = politician_id;
  c.height = height;
  c.prev_root = prev_root;
  c.prev_seed = prev_seed;
  c.pool_hashes = pool_hashes;
  if (reply.new_root().size() == c.new_root.size()) {
    std::copy(reply.new_root().begin(), reply.new_root().end(), c.new_root.begin());
  }
  c.crypto_rejected.assign(reply.crypto_rejected().begin(), reply.crypto_rejected().end());
  if (reply.signature().size() == c.signature.size()) {
    std::copy(reply.signature().begin(), reply.signature().end(), c.signature.begin());
  }
  return c;
}

void SignExecutionClaim(ExecutionClaim& c, const KeyPair& politician) {
  c.signature = Sign(politician, "execute", AsBytes(Body(c)));
}

bool VerifyExecutionClaim(const ExecutionClaim& c, const PublicKey& politician) {
  return Verify(politician, "execute", AsBytes(Body(c)), c.signature);
}

void WriteExecutionClaim(CanonicalWriter& w, const ExecutionClaim& c) {
  WriteBody(w, c);
  w.Array(c.signature);
}

Status ReadExecutionClaim(CanonicalReader& r, ExecutionClaim* c) {
  TESSERA_RETURN_IF_ERROR(r.U32(&c->politician_id, "politician_id"));
  TESSERA_RETURN_IF_ERROR(r.U64(&c->height, "height"));
  TESSERA_RETURN_IF_ERROR(r.Array(&c->prev_root, "prev_root"));
  TESSERA_RETURN_IF_ERROR(r.Array(&c->prev_seed, "prev_seed"));
  uint32_t n = 0;
  TESSERA_RETURN_IF_ERROR(r.Count(&n, kMaxPoolHashes, 32, "pool_hashes"));
  c->pool_hashes.resize(n);
  for (Hash256& h : c->pool_hashes) TESSERA_RETURN_IF_ERROR(r.Array(&h, "pool_hash"));
  TESSERA_RETURN_IF_ERROR(r.Array(&c->new_root, "new_root"));
  TESSERA_RETURN_IF_ERROR(r.Count(&n, kMaxClaimedFailures, 4, "crypto_rejected"));
  c->crypto_rejected.resize(n);
  for (size_t i = 0; i < n; ++i) {
    TESSERA_RETURN_IF_ERROR(r.U32(&c->crypto_rejected[i], "crypto_rejected"));
    if (i > 0 && c->crypto_rejected[i] <= c->crypto_rejected[i - 1]) {
      return r.Error("crypto_rejected not strictly ascending");
    }
  }
  return r.Array(&c->signature, "signature");
}

}  // namespace tessera::ledger::net
