#include "ledger/net/faults.h"

namespace tessera::ledger::net {

Status PoliticianFaults::Add(const std::string& b) {
  if (b == "drop") {
    drop = 0.5;
  } else if (b == "delay") {
    delay_ms = 150;
  } else if (b == "withhold") {
    withhold = true;
  } else if (b == "stale") {
    stale_state = true;
  } else if (b == "wrong") {
    wrong_state = true;
  } else if (b == "equivocate") {
    equivocate = true;
  } else if (b == "forge") {
    forge = true;
  } else if (b == "withhold_data") {
    withhold_data = true;
  } else if (b == "slow_execute") {
    slow_execute_ms = 15000;
  } else if (b == "unresponsive") {
    unresponsive = true;
  } else if (b == "flood") {
    flood = true;
  } else if (b == "frame") {
    frame = true;
  } else {
    return InvalidArgumentError(
        "unknown politician behaviour '" + b +
        "' (drop, delay, withhold, stale, wrong, equivocate, forge, withhold_data, slow_execute, "
        "unresponsive, flood, frame)");
  }
  return Status::Ok();
}

Result<CitizenFault> ParseCitizenFault(const std::string& name) {
  if (name == "none") return CitizenFault::kNone;
  if (name == "silent") return CitizenFault::kSilent;
  if (name == "inconsistent") return CitizenFault::kInconsistent;
  if (name == "collude") return CitizenFault::kCollude;
  if (name == "empty") return CitizenFault::kProposeEmpty;
  if (name == "equivocate") return CitizenFault::kEquivocateProposal;
  if (name == "late") return CitizenFault::kLateProposal;
  if (name == "replay") return CitizenFault::kReplayTicket;
  return InvalidArgumentError(
      "unknown citizen behaviour '" + name +
      "' (none, silent, inconsistent, collude, empty, equivocate, late, replay)");
}

}  // namespace tessera::ledger::net
