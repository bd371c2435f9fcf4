// Committee sizes and vote thresholds for VRF-drawn committees, computed exactly from the
// binomial (or, for an unbounded population, Poisson) tails -- no normal approximation.
//
// Model (sortition.h): each of N registered citizens, a fraction f of them malicious, sits on
// a step's committee independently with probability C / N. So the committee's honest and
// malicious members are H ~ Binomial((1-f)N, C/N) and M ~ Binomial(fN, C/N), independent; as
// N grows they tend to Poisson((1-f)C) and Poisson(fC). Per step, with threshold T:
//   stall  = P(H < T)           honest votes alone cannot make a quorum (the adversary
//                                withholds its votes);
//   fork   = P(H + 2M >= 2T)    two quorums for different values are possible (honest members
//                                split between them, every malicious member votes for both).
// A period has kStepsPerPeriod voting steps (soft, cert, next, late, down), each with its own
// committee; per block (one period, the honest case) the union bound gives
//   fork_block <= 5 * fork + kNextStepsPerPeriod * cross, stall_block <= 5 * stall.
// Across steps (committees drawn per step, vote_sortition.h; not for a fixed committee, where
// every step has the same members and the per-step event above is the whole story): v is
// certified in period p by p's cert committee while a fresh next-type committee of p (next,
// down, or a repeated next round: kNextStepsPerPeriod of them) gathers T votes for bottom or
// another value. Let S be the honest players bound to v -- every honest player that saw v's
// soft quorum before its next vote (player.h: off the cert committee too, unsent). Honest
// players in S next-vote only v, so the certificate needs X + M_c >= T and the other quorum
// Y + M_n >= T, with X the cert committee's honest members in S and Y the next committee's
// honest members outside S. The adversary shapes S by delivery, one player at a time, knowing
// only the tickets already revealed by votes; each honest player then counts in X (if in S)
// or in Y (if not) by a ticket not revealed when that choice was made, so W = X + Y is a sum
// of (1-f)N independent draws with probability C/N: W ~ H. Hence
//   cross = P(H + M_c + M_n >= 2T),  M_c, M_n independent copies of M (two committees),
// whatever S is. It assumes a player's cert and next tickets stay secret until it votes in
// those steps (docs/ledger-network.md says where the daemons reveal a cert ticket earlier).
// Sampled validation: an invalid block (one bad signature among its transactions) is certified
// only if the honest members that did not sample that transaction plus the malicious members
// reach T. Each honest member samples each transaction independently with probability q, so
// the uncaught honest members are H thinned by (1 - q):
//   invalid = P(H_uncaught + M >= T),  H_uncaught ~ Binomial((1-f)N, C(1-q)/N).
// The same bound covers a claim that a valid signature failed (the block would then not be
// applicable by honest politicians), since a sampled claim is checked either way.
//
//   TESSERA_ASSIGN_OR_RETURN(CommitteeChoice c, ChooseCommittee({.malicious_fraction = 0.25},
//   1e-9)); double q = *SoundSampleFraction({.expected = c.expected, .malicious_fraction = 0.25},
//   c.threshold, 1e-9);
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "ledger/agreement/vote.h"

namespace tessera::ledger::agreement {

inline constexpr int kStepsPerPeriod = 5;
// Next-type steps of one period that can end it on another value: next, down and the
// repeated next rounds (late votes only a soft quorum's value).
inline constexpr int kNextStepsPerPeriod = 2 + static_cast<int>(kMaxNextRounds);

struct CommitteeModel {
  double expected = 0;            // C, the expected committee size (sortition parameter)
  double malicious_fraction = 0;  // f
  uint64_t population = 0;        // N; 0 = unbounded (Poisson limit)
  // A committee of exactly `expected` members, of which exactly round(f * expected) are
  // malicious (the localnets' "committee = all citizens"); population is ignored.
  bool fixed = false;
};

// Probability mass functions of H and M under `model` (index = count), cut where the
// remaining mass is below 1e-30.
std::vector<double> HonestPmf(const CommitteeModel& model, double keep = 1.0);
std::vector<double> MaliciousPmf(const CommitteeModel& model);

double StallProbability(const CommitteeModel& model, uint64_t threshold);
double ForkProbability(const CommitteeModel& model, uint64_t threshold);
// Across a cert and a next committee (above): P(H + M_c + M_n >= 2T). For a fixed committee,
// ForkProbability (one committee serves every step).
double CrossStepForkProbability(const CommitteeModel& model, uint64_t threshold);
// 5 * ForkProbability + kNextStepsPerPeriod * CrossStepForkProbability (the latter only for
// drawn committees).
double ForkPerBlock(const CommitteeModel& model, uint64_t threshold);
// P(invalid block certified) when each honest member samples each signature with
// probability `sample`.
double InvalidCertificateProbability(const CommitteeModel& model, uint64_t threshold,
                                     double sample);

struct CommitteeChoice {
  uint64_t expected = 0;   // C
  uint64_t threshold = 0;  // T
  double fork_per_step = 0, stall_per_step = 0;
  double cross_per_step = 0;  // CrossStepForkProbability (0 for a fixed committee)
  // ForkPerBlock; kStepsPerPeriod * stall_per_step
  double fork_per_block = 0, stall_per_block = 0;
};

// The smallest expected committee C (with ChooseThreshold's T) such that fork and stall per
// block are both below `epsilon`. `model.expected` is
// ignored. NOT_FOUND if none up to `max_expected`.
Result<CommitteeChoice> ChooseCommittee(const CommitteeModel& model, double epsilon,
                                        uint64_t max_expected = 20000);
// The T for a given C: the smallest T with ForkPerBlock < epsilon, or NOT_FOUND if its stall
// risk per block is not below epsilon too.
Result<CommitteeChoice> ChooseThreshold(const CommitteeModel& model, double epsilon);
// The smallest sample fraction q (to 1e-4) with P(invalid certified) < epsilon; NOT_FOUND if
// even q = 1 does not reach it (then malicious members alone reach T).
Result<double> SoundSampleFraction(const CommitteeModel& model, uint64_t threshold, double epsilon);

}  // namespace tessera::ledger::agreement
