// Compact chain following: how a citizen that is not on the committee keeps up with the chain
// in O(1) bytes per block (issue #13; our design, not Blockene's wire protocol).
//
// Following used to mean GetStatus on every politician of the safe sample -- each answer
// carries the latest certificate with every signer's identity, O(committee) bytes -- and one
// certified header per block. The follower instead:
//   * long-polls one politician of the sample (the sample is reshuffled on every call) for
//     the canonical headers after its tip (GetHeads: a header is 250 B + 32 B per pool, plus
//     the proposer's identity); an empty long-poll costs ~15 bytes;
//   * accepts a header only if it extends the tip (height + 1, prev_hash = hash of the tip)
//     and its proposer part checks (chain.h VerifyProposal: a registered, eligible proposer
//     with a selected VRF proposer ticket on the previous seed, and the seed derived from it);
//     so every seed of the unchecked suffix is a VRF output of a registered proposer, not a
//     value a politician can pick;
//   * checks the certificate of the tip (the full certified block, chain.h) only when needed:
//     every `certify_every` headers, and before the citizen acts on its head (CertifyTip: a
//     committee round, the head file). A valid certificate on the tip certifies the whole
//     unchecked suffix below it by the hash chain: its honest signers validated it on top of
//     their own certified head, whose hash is the tip's prev_hash. If no politician of the
//     sample can certify the tip, the unchecked headers are dropped and the tip goes back to
//     the last checked one.
//
// Security (stated, not proved here): a non-member's unchecked tip can be a forgery only if
// the forger holds a certificate with T_cert valid signers on a fake suffix. Because every
// seed of that suffix is a registered proposer's VRF output, the forger's only freedom is
// which of its own citizens' winning proposer tickets to use at each fake height (at most
// certify_every heights), and it still needs a committee draw on one of those seeds in which
// T_cert members are its own -- the event whose probability per seed the thresholds of the
// agreement issue bound. A citizen never votes on, nor persists, an unchecked head.
//
// Bytes per block followed = header + proposer identity + empty long-polls (block interval /
// wait_ms of them) + certificate bytes / certify_every (docs/ledger-engine.md has the
// measured figures).
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "core/status.h"
#include "ledger/net/chain.h"
#include "ledger/net/client.h"
#include "ledger/net/genesis.h"
#include "ledger/net/hedged_fetch.h"

namespace tessera::ledger::net {

struct FollowOptions {
  int wait_ms = 1000;           // long-poll wait of one GetHeads call
  uint32_t certify_every = 32;  // unchecked headers before the tip's certificate is checked
  uint32_t max_headers = 64;    // per GetHeads reply
};

class ChainFollower {
 public:
  // `verified`: a head whose certificate was checked (or the genesis header).
  ChainFollower(const Genesis& genesis, FollowOptions options, BlockHeader verified);

  // The newest header (its certificate possibly not checked yet) and the newest checked one.
  const BlockHeader& tip() const { return unchecked_.empty() ? verified_ : unchecked_.back(); }
  const BlockHeader& verified() const { return verified_; }
  bool tip_verified() const { return unchecked_.empty(); }

  // Asks the politicians of `sample` for headers after the tip. With `wait`, only the first is
  // asked, long-polling up to wait_ms (the next call reaches another one, the sample being
  // reshuffled); if it fails, claims more than it hands out, or hands out a header that does
  // not extend the tip, every politician is asked at once with no wait (what a citizen about
  // to draw its committee ticket needs: the newest head any of them has). Certifies the tip
  // once certify_every headers are unchecked. Returns how many headers the tip advanced (it
  // may also go back: see CertifyTip).
  //
  // The politicians asked without waiting are asked all at once through `calls`
  // (hedged_fetch.h), and what has arrived after a short wait is used: a stopped or slow
  // politician costs that wait, not its client deadline. Asked one after another (as this
  // class once did), four unresponsive politicians of five cost 4 x 1.5 s on every call, and
  // a committee member spent 6 s of every 8 s round here instead of voting: the 80/25 runs
  // stalled (docs/ledger-network.md).
  uint64_t Advance(const std::vector<PoliticianClient*>& sample, bool wait, Traffic* traffic,
                   TicketCache* tickets, PoliticianCalls& calls);

  // Checks the certificate of the tip against the header below it, asking the sample's
  // politicians for the certified block all at once through `calls`. On failure the
  // unchecked headers are dropped (tip() = verified()) and the error says why.
  Status CertifyTip(const std::vector<PoliticianClient*>& sample, Traffic* traffic,
                    TicketCache* tickets, PoliticianCalls& calls);

  // The citizen verified `head` by other means (a committee round's certified block): follow
  // from it.
  void Reset(const BlockHeader& head);

  uint64_t bad_answers() const { return bad_answers_; }
  uint64_t certificates_checked() const { return certificates_checked_; }

 private:
  friend struct ChainFollowerFuzz;  // heads_fuzzer.cc drives Extend with arbitrary replies
  // Appends the reply's headers that extend the tip; false if one did not (a lying answer).
  bool Extend(const HeadsReply& reply);
  // Follows one politician for as long as it has headers beyond what it handed out; false if
  // it failed, lied, or withheld what it claims.
  bool FollowOne(PoliticianClient& p, uint32_t wait_ms, Traffic* traffic);
  // Every politician of the sample at once, until none of the answers extends the tip.
  void FollowAll(const std::vector<PoliticianClient*>& sample, Traffic* traffic,
                 PoliticianCalls& calls);
  // Checks one politician's certified block at the tip's height; OK makes the tip verified.
  Status CheckCertified(const Result<BlockReply>& reply, PoliticianClient& p, TicketCache* tickets);

  const Genesis& genesis_;
  FollowOptions options_;
  BlockHeader verified_;
  std::deque<BlockHeader> unchecked_;  // extend verified_, oldest first
  uint64_t bad_answers_ = 0;
  uint64_t certificates_checked_ = 0;
};

}  // namespace tessera::ledger::net
