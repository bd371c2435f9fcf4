#include "ledger/net/vote_relay.h"

#include <string>

namespace tessera::ledger::net {

Status VoteRelay::Admit(const Vote& vote, size_t threshold) {
  if (vote.period > uint64_t{floor_period_} + kMaxPeriodsAhead) {
    return ResourceExhaustedError("vote for period " + std::to_string(vote.period) +
                                  " is more than " + std::to_string(kMaxPeriodsAhead) +
                                  " periods past period " + std::to_string(floor_period_));
  }
  StepVotes& step = steps_[{vote.period, static_cast<uint8_t>(vote.step)}];
  std::vector<std::pair<bool, Hash256>>& values = step.by_voter[vote.citizen];
  const std::pair<bool, Hash256> value{vote.bottom, vote.value};
  for (const auto& v : values) {
    if (v == value) return AlreadyExistsError("vote already relayed");
  }
  if (values.size() >= 2) {
    return ResourceExhaustedError("citizen already voted two values in period " +
                                  std::to_string(vote.period) + " step " +
                                  std::to_string(static_cast<int>(vote.step)));
  }
  values.push_back(value);
  ++stored_;
  // A next quorum moves the window: the network is past that period.
  if (IsNextVoteStep(vote.step)) {
    if (++step.count[value] >= threshold && vote.period + 1 > floor_period_) {
      floor_period_ = vote.period + 1;
    }
  }
  return Status::Ok();
}

void VoteRelay::AddCertSigner(const Vote& vote, const CertificateSigner& signer,
                              const Identity& identity) {
  cert_signers_[{vote.period, vote.value}].try_emplace(vote.citizen, signer, identity);
}

std::vector<VoteRelay::Certifiable> VoteRelay::CertifiableValues(size_t threshold) const {
  std::vector<Certifiable> out;
  for (const auto& [key, signers] : cert_signers_) {
    if (signers.size() < threshold) continue;
    Certifiable c{.period = key.first, .value = key.second, .signers = {}};
    for (const auto& [pk, s] : signers) c.signers.push_back(s);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace tessera::ledger::net
