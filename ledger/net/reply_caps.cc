#include "ledger/net/reply_caps.h"

#include <fmt/format.h>

#include <algorithm>

#include "ledger/codec/messages.h"
#include "ledger/net/client.h"
#include "ledger/net/evidence.h"
#include "ledger/net/execute_reply_cap.h"
#include "ledger/net/identity.h"
#include "ledger/net/politician.h"

namespace tessera::ledger::net {
namespace {

// A protobuf field's tag and length prefix (lengths below 256 MiB take at most 4 bytes).
constexpr size_t kFraming = 5;
// What a reply carries besides its main field(s): heights, offsets, flags, a short error.
constexpr size_t kSlack = 64 << 10;

size_t IdentityBytes() { return EncodeIdentity(Identity{}).size(); }

}  // namespace

size_t MaxHeaderBytes() {
  // The empty header's encoding holds its fixed fields and every count; each element adds its
  // own bytes (DecodeBlockHeader's element sizes and counts).
  return EncodeBlockHeader(BlockHeader{}).size() + kMaxPoolHashes * 32 +
         kMaxRegistrationsPerBlock * (32 + 64) + kMaxRegistrationDelay * 8;
}

size_t MaxCertifiedBlockBytes() {
  // Certificate: at most kMaxCertificateSigners signers of (key, VRF proof, signature); one
  // identity per signer and the proposer's.
  const size_t certificate = EncodeCommitteeCertificate(CommitteeCertificate{}).size() +
                             static_cast<size_t>(kMaxCertificateSigners) * (32 + 80 + 64);
  const size_t identities =
      (static_cast<size_t>(kMaxCertificateSigners) + 1) * (IdentityBytes() + kFraming);
  return MaxHeaderBytes() + kFraming + certificate + kFraming + identities;
}

size_t MaxRoundItemBytes() {
  // The largest payload is evidence (kMaxEvidenceBytes, refused above it); witness lists
  // (kMaxWitnessEntries x 36 bytes) and proposals (MaxHeaderBytes) are smaller. Plus the
  // sender's identity and a block signature.
  const size_t payload = std::max(
      {kMaxEvidenceBytes, MaxHeaderBytes(), static_cast<size_t>(kMaxWitnessEntries) * 36 + 256});
  return payload + kFraming + IdentityBytes() + kFraming + 64 + kFraming;
}

size_t MaxProofBytesPerKey() { return 256 * (1 + 1 + 32) + (1 + 32 + 32); }

size_t MaxRequestBytes() {
  // PostPool carries a whole pool; the next largest are a Post of the largest round item, an
  // Execute naming kMaxPoolHashes pools, a ReadState naming kMaxReadKeys keys and a
  // SubmitTransaction of the largest application payload (each with its identity and
  // signatures, within kSlack).
  return std::max({kMaxPoolBytes, MaxRoundItemBytes(), size_t{kMaxPoolHashes} * (32 + kFraming),
                   kMaxReadKeys * (32 + kFraming), size_t{kMaxAppPayload} + 64}) +
         kSlack;
}

ReplyCaps ReplyCaps::Citizen() {
  ReplyCaps c;
  // An honest listing holds at most kMaxRoundListing hashes of 32 bytes (34 on the wire).
  c.listing = kMaxRoundListing * 40;
  // An honest GetItems reply stops after the item that crosses kMaxItemsReplyBytes, and holds
  // at most kMaxItemsPerRequest items (each framed).
  c.items = PoliticianNode::kMaxItemsReplyBytes + MaxRoundItemBytes() +
            PoliticianNode::kMaxItemsPerRequest * kFraming + kSlack;
  c.block = MaxCertifiedBlockBytes() + kSlack;
  c.status = MaxCertifiedBlockBytes() + kSlack;
  c.heads =
      PoliticianNode::kMaxHeadsPerReply * (MaxHeaderBytes() + IdentityBytes() + 2 * kFraming) +
      kSlack;
  // missing_pools: at most one hash per pool of a proposal (kMaxPoolHashes).
  c.post = kMaxPoolHashes * (32 + kFraming) + kSlack;
  c.tx = kSlack;
  // An honest GetPools reply stops after the pool crossing kMaxPoolsReplyBytes, and a pool is
  // at most kMaxPoolBytes (client.h); at most kMaxPoolsPerRequest pools, each framed.
  c.pools = kMaxPoolsReplyBytes + kMaxPoolBytes + kMaxPoolsPerRequest * kFraming + kSlack;
  // At most kMaxReadKeys keys a request (the politician refuses more), each adding at most
  // MaxProofBytesPerKey to the multi-proof.
  c.state = kMaxReadKeys * MaxProofBytesPerKey() + kSlack;
  // Execute: the body's pools plus a multi-proof of every leaf the body reads. Transfers read
  // two leaves each, but an application's ReadSet may name any number of leaves per payload,
  // so without knowing the network no protocol bound caps the proof below the channel's
  // limit: Execute keeps it (zero). CitizenReplyCaps (execute_reply_cap.h) caps it for networks
  // without applications.
  c.execute = 0;
  return c;
}

size_t MaxExecuteReplyBytes(size_t pools, size_t txs_per_pool) {
  const size_t txs = pools * txs_per_pool;
  const size_t pool_bytes = pools * (kMaxPoolBytes + kFraming);
  // The proof of no key is the opaque (or empty) root: 33 bytes.
  const size_t proof = 2 * txs * MaxProofBytesPerKey() + 33 + kFraming;
  // crypto_rejected is packed: one varint (at most 5 bytes) per index.
  const size_t rejected = txs * 5 + kFraming;
  const size_t root_and_signature = (32 + 2) + (64 + 2);
  return pool_bytes + proof + rejected + root_and_signature;
}

ReplyCaps CitizenReplyCaps(size_t politicians, size_t max_pool_txs, bool applications) {
  ReplyCaps c = ReplyCaps::Citizen();
  if (applications) return c;  // an application's read set has no protocol bound
  const size_t bound = MaxExecuteReplyBytes(politicians, max_pool_txs) + kSlack;
  // Above the channel's limit the channel refuses first (an honest reply that large is
  // refused too: the bound charges every key the tree's full depth, see execute_reply_cap.h).
  c.execute = bound < kChannelMaxReceive ? bound : 0;
  return c;
}

ReplyCaps ReplyCaps::Peer(size_t politicians) {
  ReplyCaps c = Citizen();
  // Catch-up fetches whole blocks: header, certificate and identities, plus the pools of the
  // body. A certified body holds only eligible pools (pool_availability.h), each witnessed by
  // an honest member, and an honest member witnesses one pool per politician -- two members
  // may each have seen a different one of an equivocator's two, hence two per politician.
  c.block = std::min(kChannelMaxReceive, MaxCertifiedBlockBytes() +
                                             2 * politicians * (kMaxPoolBytes + kFraming) + kSlack);
  return c;
}

std::string ReplyCaps::ServiceConfigJson() const {
  std::string methods;
  auto add = [&](const char* method, size_t cap) {
    if (cap == 0) return;
    if (!methods.empty()) methods += ",";
    methods +=
        fmt::format(R"({{"name":[{{"service":"tessera.ledger.net.Politician","method":"{}"}}],)"
                    R"("maxResponseMessageBytes":"{}"}})",
                    method, cap);
  };
  add("GetRound", listing);
  add("GetItems", items);
  add("GetBlock", block);
  add("GetStatus", status);
  add("GetHeads", heads);
  add("Post", post);
  add("PostPool", post);
  add("SubmitTransaction", tx);
  add("GetPools", pools);
  add("ReadState", state);
  add("Execute", execute);
  return R"({"methodConfig":[)" + methods + "]}";
}

}  // namespace tessera::ledger::net
