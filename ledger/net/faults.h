// Adversary switches, set per node from the local-network config (localnet.h).
//
// A malicious politician may do any mix of these; it can never forge a citizen's signature or
// a committee certificate, which is why none of them may break safety (the 50/10 and 80/25
// integration tests check that).
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace tessera::ledger::net {

struct PoliticianFaults {
  double drop = 0;           // fraction of posts, submissions and gossip silently discarded
  int delay_ms = 0;          // added before every reply
  bool withhold = false;     // gossips nothing and serves no round items or blocks
  bool stale_state = false;  // state reads and executions use the state one block back
  bool wrong_state = false;  // executions report a wrong new state root
  bool equivocate = false;   // signs two different pools per block, handed out alternately
  // Puts a transfer with a forged signature (from a genesis account to itself) into each of
  // its pools, and claims in executions that every signature checks out, hoping that
  // citizens verify only a sample of signatures (genesis validation_sample).
  bool forge = false;
  // Data availability attacks (docs/ledger-network.md, "Data availability"):
  // signs and serves (and gossips) its pool commitment but never the pool's data, and refuses
  // every Execute, saying (falsely) that the height is already committed -- witnesses cannot
  // download the pool, so it never becomes eligible;
  bool withhold_data = false;
  // answers Execute only after this long (a politician that stalls the proposal's execution);
  int slow_execute_ms = 0;
  // once block 1 is committed, answers no request within any caller's deadline and
  // gossips nothing, like a SIGSTOP'd process that still holds its port.
  bool unresponsive = false;
  // Floods: with each pool it freezes it signs kFloodCommitments more commitments for the
  // same height (relayed to citizens and gossiped) and pools for heights far ahead.
  bool flood = false;
  static constexpr int kFloodCommitments = 2000;
  // Frames an honest politician: serves, in every round, forged equivocation evidence
  // (evidence.h) against the last genesis politician -- two pool commitments in its name,
  // signed with the framer's own key (politician_evidence.cc).
  bool frame = false;

  bool any() const {
    return drop > 0 || delay_ms > 0 || withhold || stale_state || wrong_state || equivocate ||
           forge || withhold_data || slow_execute_ms > 0 || unresponsive || flood || frame;
  }
  // "drop", "delay", "withhold", "stale", "wrong", "equivocate", "forge", "withhold_data",
  // "slow_execute", "unresponsive", "flood", "frame"; INVALID_ARGUMENT otherwise.
  Status Add(const std::string& behaviour);
};

// Malicious citizens (a localnet's `bad_citizens` act together, with the same behaviour):
//   silent        withholds every vote, witness list and proposal;
//   inconsistent  equivocates in every BA* step (votes every proposal it saw, the adversary's
//                 value, and bottom) and, as proposer, proposes a block with a wrong root;
//   collude       every member votes only the adversary's common value in every step;
//   empty         votes honestly, but as proposer always proposes the empty block;
//   equivocate    votes honestly; as proposer posts two different valid blocks (full and
//                 empty) under one ticket, to different politicians;
//   late          votes honestly; as proposer holds its proposal back until just before the
//                 period's next-vote deadline (a late, possibly lower-VRF proposal);
//   replay        votes honestly; proposes with its winning ticket of ANY proposer period at
//                 once, in every period (a ticket replayed outside its period).
enum class CitizenFault {
  kNone,
  kSilent,
  kInconsistent,
  kCollude,
  kProposeEmpty,
  kEquivocateProposal,
  kLateProposal,
  kReplayTicket
};
// "none", "silent", "inconsistent", "collude", "empty", "equivocate", "late", "replay".
Result<CitizenFault> ParseCitizenFault(const std::string& name);

}  // namespace tessera::ledger::net
