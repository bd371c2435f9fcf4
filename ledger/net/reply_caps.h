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
// docs/ledger-network.md ("Reply caps at citizens") lists the figures. GetPools and ReadState
// are capped by the pool byte bound and the read key bound (client.h: kMaxPoolBytes,
// kMaxPoolsReplyBytes, kMaxReadKeys). Execute keeps the channel's limit: its multi-proof covers
// every leaf the body's transactions read, and an application's read set is bounded by no
// protocol constant (ReplyCaps::Citizen says what bound it would take).
//
// Politicians' own clients of their peers (PoliticianNode's gossip and catch-up) use
// ReplyCaps::Peer: the same caps, with full blocks (pools included) for catch-up. The server
// takes requests up to MaxRequestBytes(), the largest an honest caller sends.
#pragma once

#include <cstddef>
#include <string>

namespace tessera::ledger::net {

// The receive limit of every channel (and of the server before session 14): what any call
// not capped tighter may receive.
inline constexpr size_t kChannelMaxReceive = 256 << 20;

struct ReplyCaps {
  // Bytes of one reply, by RPC. Zero: the channel's limit.
  size_t listing = 0;  // GetRound: a hash listing (citizens only ever read hashes)
  size_t items = 0;    // GetItems
  size_t block = 0;    // GetBlock: header, certificate and identities (header_only), or Peer:
                       // the whole block with its pools
  size_t status = 0;   // GetStatus: the latest certified block, header only
  size_t heads = 0;    // GetHeads
  size_t post = 0;     // Post and PostPool replies
  size_t tx = 0;       // SubmitTransaction reply
  size_t pools = 0;    // GetPools
  size_t state = 0;    // ReadState
  size_t execute = 0;  // Execute

  // The caps a citizen's channel uses (every field but execute set; see reply_caps.cc).
  static ReplyCaps Citizen();
  // The caps of a politician's channel to a peer, in a network of `politicians` (the
  // genesis count): Citizen()'s, and GetBlock carrying a block's pools (at most one per
  // politician), clamped at kChannelMaxReceive.
  static ReplyCaps Peer(size_t politicians);
  // The gRPC service config that applies them (method names of blockene.proto).
  std::string ServiceConfigJson() const;
};

// The largest encodings the decoders accept (messages.h bounds), used by the caps.
size_t MaxHeaderBytes();
size_t MaxCertifiedBlockBytes();  // header, certificate and identities
size_t MaxRoundItemBytes();
// The most bytes one key adds to a state multi-proof (state_proof.h): a path of 256
// interiors, each with an opaque sibling (1 + 1 + 32 bytes), ending in a leaf (1 + 32 + 32).
size_t MaxProofBytesPerKey();
// The largest request an honest caller sends a politician (PostPool of a kMaxPoolBytes pool;
// every other request is smaller): the server's receive limit (politician_server.cc).
size_t MaxRequestBytes();

}  // namespace tessera::ledger::net
