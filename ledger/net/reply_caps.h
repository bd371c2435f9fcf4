// How large a reply a citizen takes from a politician, per reply kind.
//
// A politician is untrusted, and a gRPC channel takes replies up to its receive limit (ours
// was 256 MiB for every call): a lying politician could make a citizen receive and parse
// 256 MiB per call. gRPC C++ sets one receive limit per channel, but a channel's service config
// can lower it per method (maxResponseMessageBytes), so one channel per politician still
// carries every call and each reply kind gets its own cap. A reply over its cap fails that call
// with RESOURCE_EXHAUSTED ("Received message larger than max") before it is parsed; the
// citizen treats that politician as failing that call (hedged_fetch.h asks the next one).
//
// Each cap is the largest reply an honest politician can send under the protocol's own bounds
// (the decoders' limits in messages.h, the politician's reply limits in politician.h), plus
// framing slack; ReplyCaps::Citizen() says which bound each one comes from, and
// docs/ledger-network.md ("Reply caps at citizens") lists the figures. GetPools, Execute and
// ReadState keep the channel's limit: their honest size is bounded only by the body asked for
// (pools of up to max_pool_txs transactions of up to kMaxAppPayload each), which exceeds it.
#pragma once

#include <cstddef>
#include <string>

namespace tessera::ledger::net {

struct ReplyCaps {
  // Bytes of one reply, by RPC. Zero: the channel's limit.
  size_t listing = 0;  // GetRound: a hash listing (citizens only ever read hashes)
  size_t items = 0;    // GetItems
  size_t block = 0;    // GetBlock: header, certificate and identities (header_only)
  size_t status = 0;   // GetStatus: the latest certified block, header only
  size_t heads = 0;    // GetHeads
  size_t post = 0;     // Post and PostPool replies
  size_t tx = 0;       // SubmitTransaction reply

  // The caps a citizen's channel uses (every field set; see the bounds in reply_caps.cc).
  static ReplyCaps Citizen();
  // The gRPC service config that applies them (method names of blockene.proto).
  std::string ServiceConfigJson() const;
};

// The largest encodings the decoders accept (messages.h bounds), used by the caps.
size_t MaxHeaderBytes();
size_t MaxCertifiedBlockBytes();  // header, certificate and identities
size_t MaxRoundItemBytes();

}  // namespace tessera::ledger::net
