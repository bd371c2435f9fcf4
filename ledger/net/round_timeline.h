// A politician's round timeline and the localnet's latency breakdown built from it.
//
// The timeline file (one per politician, written by its block budget when
// BlockBudgetOptions::timeline is set; the localnet sets it): a line per event, tab-separated,
//   freeze <height> <txs> <unix_us>   this politician froze its pool for <height>
//   commit <height> <txs> <unix_us>   this politician committed block <height> of <txs>
// with wall-clock (system_clock) microseconds, so that another process on the same machine
// can place the events on its own clock. Two short lines per block; appended, so a restarted
// politician continues it.
//
// The breakdown splits each committed transfer's latency -- from the load generator's FIRST
// submission of it (not a resend) to the block that carries it being seen by the auditor --
// into four consecutive stages that add up to the whole:
//   admission         first submission -> a politician accepted it (the RPC, and the refused
//                     calls before it: a transfer refused by every politician tried is dropped,
//                     not retried, and never commits, so it has no latency)
//   mempool           accepted -> the freeze of the pool that carried it into its block: the
//                     earliest freeze at that height among the politicians that accepted it
//   pool_to_block     that freeze -> the first commit of the block by any politician (the
//                     committee's round: proposals, validation, agreement)
//   block_to_visible  that commit -> the auditor saw the block (its poll and replay)
// A transfer whose politicians left no freeze at its height (a killed politician's lost file)
// is counted as unattributed and left out of the stages, not out of the totals.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tessera::ledger::net {

// Appends one event to `path` (best effort: a timeline that cannot be written is not an error
// for the politician).
void AppendRoundTimeline(const std::filesystem::path& path, std::string_view event, uint64_t height,
                         size_t txs);

struct RoundTimeline {
  using Time = std::chrono::system_clock::time_point;
  std::map<uint64_t, Time> frozen;     // height -> when this politician froze its pool (last)
  std::map<uint64_t, Time> committed;  // height -> when it committed the block (first)
};
// INVALID_ARGUMENT on a malformed line (its number in the message).
Result<RoundTimeline> ParseRoundTimeline(std::string_view text);

// One committed transfer as the load generator and the auditor saw it (their steady clock).
struct CommittedTransfer {
  using Time = std::chrono::steady_clock::time_point;
  uint64_t height = 0;
  Time first_submit, accepted, visible;
  std::vector<uint32_t> politicians;  // the ones that accepted it (indices into the timelines)
};

struct LatencyStage {
  double p50_s = 0, p99_s = 0;
  double tail_mean_s = 0;  // mean over the transfers whose total latency is >= the p99 total
};
struct LatencyBreakdown {
  LatencyStage admission, mempool, pool_to_block, block_to_visible, total;
  size_t attributed = 0, unattributed = 0;
};

// `system_minus_steady`: system_clock now minus steady_clock now, read once by the caller
// (steady + offset = system time on this machine).
LatencyBreakdown BreakDownLatency(const std::vector<CommittedTransfer>& txs,
                                  const std::vector<RoundTimeline>& timelines,
                                  std::chrono::nanoseconds system_minus_steady);

}  // namespace tessera::ledger::net
