// The cap on a citizen's Execute replies (issue #12, docs/ledger-network.md "Execute's reply
// bound"). reply_caps.h caps every other reply a citizen takes; ReplyCaps::Citizen() leaves
// Execute at the channel's limit because an application's read set is bounded by no protocol
// constant. On a network that runs no application the honest maximum is bounded, and
// CitizenReplyCaps applies it.
#pragma once

#include <cstddef>

#include "ledger/net/reply_caps.h"

namespace tessera::ledger::net {

// The largest Execute reply an honest politician sends on a network without applications, for
// a body of at most `pools` pools (a body a citizen executes holds only eligible pools, at most
// one per politician: pool_availability.h) of at most `txs_per_pool` transactions each (an
// honest politician admits no larger pool: AddPool): the pools (kMaxPoolBytes each, framed), a
// multi-proof of at most two leaves per transaction (a transfer reads its sender and receiver;
// a transaction of an unknown application reads nothing) at MaxProofBytesPerKey each, one
// crypto_rejected index per transaction, the new root and the signature. The proof term
// dominates: the tree's depth is bounded only by the key length (256 levels), so each key is
// charged 8,769 bytes where a tree of n random keys has about log2(n) levels.
size_t MaxExecuteReplyBytes(size_t pools, size_t txs_per_pool);

// ReplyCaps::Citizen()'s caps, and Execute capped at MaxExecuteReplyBytes(politicians,
// max_pool_txs) plus 64 KiB when the network runs no application (`applications` false) and
// that is below kChannelMaxReceive; otherwise Execute keeps the channel's limit (execute == 0).
// From the genesis file: its politician count, max_pool_txs and whether it names any [apps.*].
ReplyCaps CitizenReplyCaps(size_t politicians, size_t max_pool_txs, bool applications);

}  // namespace tessera::ledger::net
