// A politician's store of one height's BA* votes (ledger/agreement/player.h): what it relays
// to citizens and the other politicians, and the cert votes it assembles certificates from.
//
// A politician is untrusted and holds no vote state of its own; the relay only keeps the
// votes worth relaying and bounds what a flooding citizen can make it store:
//   * dedupe: a (voter, period, step, value) is stored once;
//   * equivocation: a voter's second value for one (period, step) is kept (the citizens'
//     players count an equivocator for every value, so it must reach them), a third is
//     refused (RESOURCE_EXHAUSTED);
//   * period window: a vote more than kMaxPeriodsAhead periods past the highest period that
//     holds a next quorum (T next votes of one next step for one value; the repeated next
//     rounds of per-step committees, step bytes 6..69, count as next steps) is refused, so a
//     voter cannot fill the store with far-future periods. Per (height, period, step) the
//     store therefore holds at most 2 votes per member of that step's committee (the caller
//     checks each vote's ticket for its own (period, step) with per-step committees).
// Certificates are per period: T cert votes of ONE period for one value (block signatures
// sign the period, messages.h), never a mix of periods.
//
// The caller checks signatures, identities and committee tickets before Add; VoteRelay is not
// thread-safe (the politician holds its round lock).
//
//   VoteRelay relay;
//   Status s = relay.Admit(vote, threshold);           // bounds and dedupe
//   if (s.ok() && vote.step == VoteStep::kCert) relay.AddCertSigner(vote, signer, identity);
//   for (auto& c : relay.Certifiable(threshold)) ...    // (period, value, signers)
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "core/status.h"
#include "ledger/codec/messages.h"
#include "ledger/net/identity.h"

namespace tessera::ledger::net {

class VoteRelay {
 public:
  static constexpr uint32_t kMaxPeriodsAhead = 8;  // as agreement::Params::max_periods_ahead

  // OK if `vote` is new and within bounds (store and gossip it); ALREADY_EXISTS if stored
  // before; RESOURCE_EXHAUSTED for a third value of one voter in one (period, step) or a
  // period past the window.
  Status Admit(const Vote& vote, size_t threshold);

  // Records a cert vote's certificate signature (after Admit accepted the vote).
  void AddCertSigner(const Vote& vote, const CertificateSigner& signer, const Identity& identity);

  struct Certifiable {
    uint32_t period = 0;
    Hash256 value{};
    std::vector<std::pair<CertificateSigner, Identity>> signers;  // in key order
  };
  // Every (period, value) with at least `threshold` cert signers.
  std::vector<Certifiable> CertifiableValues(size_t threshold) const;

  // The highest period with a next quorum, +1 (0 if none): the period the network is in at
  // least.
  uint32_t floor_period() const { return floor_period_; }
  size_t votes() const { return stored_; }

 private:
  using StepKey = std::tuple<uint32_t, uint8_t>;  // (period, step)
  struct StepVotes {
    std::map<PublicKey, std::vector<std::pair<bool, Hash256>>> by_voter;  // at most 2 values
    std::map<std::pair<bool, Hash256>, size_t> count;
  };
  std::map<StepKey, StepVotes> steps_;
  std::map<std::pair<uint32_t, Hash256>,
           std::map<PublicKey, std::pair<CertificateSigner, Identity>>>
      cert_signers_;
  uint32_t floor_period_ = 0;
  size_t stored_ = 0;
};

}  // namespace tessera::ledger::net
