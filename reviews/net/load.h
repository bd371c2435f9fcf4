// A review load generator for a running local network (bench/reviews/run.sh): gets review keys
// for many identities at once, creates items, then posts every (key, item) review the DRAC
// lottery allows as fast as it can and measures how many commit per second.
//
// The clock runs from the first review submission to the poll that sees the last review's
// tag leaf committed (proved against a certified root, like any client), so the figure
// includes admission checks (each politician verifies every ring signature), pooling and
// coalescing into batches, consensus, execution and the citizens' sampled verification.
// Signing happens before the clock starts and is reported separately.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "reviews/client/client.h"
#include "reviews/net/poll_failures.h"
#include "reviews/net/transfer_phase.h"

namespace tessera::reviews::net {

struct LoadOptions {
  client::ClientOptions client;
  std::filesystem::path key_dir;   // ledger-localnet's keys/ (citizen-<i>.key, citizen-<i>.id)
  std::filesystem::path work_dir;  // review key files are written here
  uint32_t identities = 4;         // citizens 0 .. identities-1
  uint32_t items = 20;
  uint64_t margin_blocks = 8;  // key requests are sent for an epoch open this much longer
  uint32_t submitters = 4;     // threads submitting reviews, each with its own connections
  // Politicians each review is submitted to, as the ledger's transfer load generator's
  // `fanout` (bench/reviews/net_run.sh sends transfers to 1): a review sent to every
  // politician sits in every pool, so a block carries it once per pool (the copies are
  // skipped) and each submission waits for every politician's admission in turn. A busy
  // politician is passed over for another at once (as the transfer load generator does);
  // the retry hint is slept only when every politician tried was busy.
  uint32_t fanout = 1;
  // Transfers sent in a phase right before the reviews (once keys and items are committed,
  // before the review epoch opens) and one right after them, on this same network
  // (transfer_phase.h); 0: no transfer phase.
  uint32_t transfers = 0;
};

struct LoadReport {
  uint64_t epoch = 0;
  uint64_t identities = 0;
  uint64_t items = 0;
  uint64_t ring_size_mean = 0;
  uint64_t reviews_submitted = 0;
  uint64_t reviews_committed = 0;
  uint64_t submit_rejected = 0;
  std::vector<std::pair<std::string, uint64_t>> submit_errors;  // each distinct error, counted
  uint64_t submit_busy_retries = 0;  // submissions retried after a "busy" answer
  double submit_busy_wait_s = 0;     // summed over the submitting threads: time slept on hints
  double sign_seconds = 0;           // CPU time signing every review (before the clock)
  double submit_seconds = 0;         // wall time to hand every review to the politicians
  double seconds = 0;                // first submission to the last commit seen
  double reviews_per_s = 0;
  uint64_t first_height = 0, last_height = 0;  // blocks spanned by the run
  // Polls for the keys, items and reviews committed that failed and were retried
  // (poll_failures.h), each distinct error counted; `poll_gave_up` is the error that ended the
  // wait for the reviews (more than kMaxConsecutivePollFailures in a row), empty if none did:
  // the figures above then count what committed by then.
  uint64_t poll_failures = 0;
  std::vector<std::pair<std::string, uint64_t>> poll_errors;
  std::string poll_gave_up;
  // The same network's transfers right before and right after the reviews (transfers > 0).
  std::optional<TransferPhaseReport> transfers_before, transfers_after;

  std::string ToJson() const;
};

// When a submission's error says every politician tried was busy (or timed out) rather than
// refusing the transaction, how long to wait before retrying it: the shortest "retry after"
// hint, else 500 ms. nullopt for a refusal that retrying cannot change.
std::optional<std::chrono::milliseconds> BusyRetryAfter(std::string_view message);

Result<LoadReport> RunReviewLoad(const LoadOptions& options, std::ostream& progress);

}  // namespace tessera::reviews::net
