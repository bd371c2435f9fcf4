// A deterministic, seeded simulation of the agreement protocol: honest players (player.h)
// and a coordinated adversary in one process, on virtual time, with every message delay,
// drop, duplicate and delivery order chosen by the seed. Same seed, same run, bit for bit.
//
// Network: before the global stabilisation time GST (drawn from the seed) each delivery is
// dropped with probability `pre_gst_drop` or delayed by up to `pre_gst_delay_ms`; after GST
// every message arrives within `delta_ms` (partial synchrony, as BA*'s liveness proof
// assumes). Players re-send their votes and bundles (player.h), so dropped messages are
// recovered after GST.
//
// Adversary (`malicious` of the players, acting together; each schedule draws a mix of):
//   equivocating proposer (value A to one half, B to the other), late low-VRF proposal
//   (released just before the soft deadline to a random subset), invalid block proposals,
//   replayed proposer tickets of an earlier period, split votes in every step (different
//   values to different honest players), withheld votes, bottom votes.
// One honest player may crash and restart from its vote journal.
//
// Committees (`committee`): drawn per (height, period, step) as the network draws them
// (vote_sortition.h: VoteSortitionInput and IsSelected with expected size `committee` of the
// honest + malicious players), with a SHA-256 of the player's key and that input standing in
// for its VRF output (the simulation checks the protocol, not the VRF; a VRF per draw would
// cost ~0.4 ms). Every player runs the protocol for every step and its vote is sent only where
// it was drawn (Params::member); receivers drop votes of non-members, as the daemons drop
// votes whose credential does not win; next steps repeat with fresh draws
// (Params::next_repeat_ms). `per_height_draw` draws one committee per height instead (the
// old behaviour, for the test that shows what per-step draws fix). 0 or at least the number
// of players: everyone votes every step.
//
// Safety with drawn committees: the bound is checked over all players (honest + 2 malicious
// < 2T, the default 6 + 4 < 12), so it holds for every draw; a drawn step committee may hold
// fewer than T honest members, which stalls that step only. With 7 of 8 expected and H = T a
// step can reach T only when all six honest players are drawn (0.45), so a period commits
// with probability ~0.2 and heights take many periods (up to 44 in 10,000 seeds): hence the
// 60 s liveness bound.
//
// Checks: safety (no two honest players decide different values at a height; no invalid value
// decided; no honest player casts two different votes for one (height, period, step), across
// restarts) and liveness (every honest player decides every height by GST + liveness_ms).
//
//   SimResult r = Simulate(SimOptions{.seed = 42});
//   if (!r.safe || !r.live) std::cerr << r.failure;
#pragma once

#include <cstdint>
#include <string>

#include "ledger/agreement/player.h"

namespace tessera::ledger::agreement {

struct SimOptions {
  uint64_t seed = 1;
  int honest = 6;
  int malicious = 2;  // 25%: H = 6 >= T = 6 and H + 2M = 10 < 2T = 12
  size_t threshold = 6;
  int heights = 2;
  uint64_t filter_ms = 200;
  uint64_t next_ms = 400;
  uint64_t resend_ms = 300;
  uint64_t tick_ms = 25;
  uint64_t gst_max_ms = 2500;  // GST uniform in [0, gst_max_ms]
  uint64_t pre_gst_delay_ms = 900;
  double pre_gst_drop = 0.25;
  double duplicate = 0.05;
  uint64_t delta_ms = 40;
  double proposer_probability = 0.35;  // per player and period
  double crash_probability = 0.3;      // per schedule: one honest player crashes and restarts
  uint64_t liveness_ms = 60000;        // every height decided by GST + this (see Committees)
  bool recovery = true;                // Params::recovery (false: the test shows stalls)
  bool restore_journal = true;         // false: a restarted player forgets its votes
  bool adversary = true;
  uint64_t committee = 7;  // expected members per step, of honest + malicious (see above)
  bool per_height_draw = false;
  uint64_t next_repeat_ms = 200;  // Params::next_repeat_ms while committees are drawn
  // Params::cert_on_soft_quorum while committees are drawn, as the citizen daemons set it (a
  // cert member votes on the soft quorum without its own verdict).
  bool cert_on_soft_quorum = true;
};

struct SimResult {
  bool safe = true;
  bool live = true;
  std::string failure;  // the first violation, with the seed
  uint64_t deliveries = 0;
  uint32_t max_period = 0;  // highest period any honest player reached
  uint64_t decided_ms = 0;  // virtual time when the last honest player decided
  uint64_t gst_ms = 0;
  uint64_t replayed_tickets_rejected = 0;
  bool crashed = false;
  uint32_t adversary_mix = 0;  // bit set of the behaviours drawn (simulation.cc)
  // (height, period, step) committees with fewer than T honest members drawn, among the steps
  // any honest player reached (0 when everyone votes every step).
  uint64_t short_committees = 0;
  bool short_first_draw = false;  // some height's period-0 cert committee has < T honest
};

SimResult Simulate(const SimOptions& options);

}  // namespace tessera::ledger::agreement

namespace tessera::ledger::agreement {

struct SimSummary {
  uint64_t schedules = 0;
  uint64_t unsafe = 0;  // forks, invalid decisions or double votes
  uint64_t stalled = 0;
  uint64_t recovered = 0;  // schedules where some player needed period > 0
  uint64_t crashed = 0;
  uint32_t max_period = 0;
  uint64_t deliveries = 0;
  uint64_t replayed_tickets_rejected = 0;
  uint64_t short_committees = 0;
  uint64_t short_first_draw = 0;  // schedules where a height's period-0 cert draw was short
  std::string first_failure;
};

// Runs seeds first_seed .. first_seed + count - 1 with `base` otherwise.
SimSummary SimulateMany(SimOptions base, uint64_t first_seed, uint64_t count);

}  // namespace tessera::ledger::agreement
