// The transfer baseline measured on the reviews network itself (issue 16's bench: reviews
// committed per second against transfers per second "on the same network").
//
// Why here and not on a fresh network: the politicians' pool budget (ledger/net/block_budget.h)
// adapts to the measured round time, so a fresh network's first seconds (budget 500 per pool)
// and the same network forty blocks later under load (budget at its floor of 50) are not the
// same network. A transfer phase run by the review load right before the reviews (once keys and
// items are committed, before the review epoch opens) and right after them measures transfers
// with the same processes, chain, budget state and rules, the same submitting threads and the
// same clock as the reviews: from the first submission to the poll that proves the last
// transfer committed.
//
// The transfers: `count` transfers of 1 unit, each from its own genesis account of ledger-localnet
// (accounts first_account .. first_account + count - 1, each sending its first transfer, nonce
// 0, to the next account), signed before the clock, sent to one politician each (as the
// reviews, fanout 1; a busy politician is passed over for another, and the hint is slept only
// when every politician was busy). A transfer counts as committed when its sender's account
// leaf, proved against a certified root, shows nonce >= 1.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>

#include "core/status.h"
#include "ledger/crypto/ed25519.h"
#include "reviews/client/client.h"

namespace tessera::reviews::net {

struct TransferPhaseOptions {
  uint32_t first_account = 4;  // ledger-localnet's accounts 0..3 have wallet key files
  uint32_t count = 1000;
  uint32_t submitters = 4;
  // Stop waiting for commits at this height (the review epoch's first block for the phase
  // before the reviews; 0: no limit). What committed by then is reported.
  uint64_t stop_height = 0;
};

struct TransferPhaseReport {
  uint64_t submitted = 0, committed = 0, rejected = 0;
  uint64_t busy_retries = 0;
  double busy_wait_s = 0;
  double submit_seconds = 0;  // wall time to hand every transfer to the politicians
  double seconds = 0;         // first submission to the last commit seen
  double transfers_per_s = 0;
  uint64_t first_height = 0, last_height = 0;
  bool cut_short = false;  // stop_height reached (or the timeout) before every commit
  // Polls for commits that failed and were retried (poll_failures.h); `poll_gave_up`: the
  // error that ended the wait (cut_short is then set), empty if none did.
  uint64_t poll_failures = 0;
  std::string poll_gave_up;
};

// ledger-localnet's genesis account i (ledger/net/localnet.cc derives it the same way; the
// phase checks the derivation against keys/account-0.pub before it sends anything).
ledger::KeyPair LocalnetAccountKey(uint32_t i);

// FAILED_PRECONDITION when keys/account-0.pub is not LocalnetAccountKey(0)'s (the launcher
// derives its accounts otherwise: the phase would send from empty accounts).
Status CheckLocalnetAccounts(const std::filesystem::path& key_dir);

Result<TransferPhaseReport> RunTransferPhase(client::ReviewsClient& c,
                                             const client::ClientOptions& client_options,
                                             const TransferPhaseOptions& options,
                                             std::ostream& progress);

}  // namespace tessera::reviews::net
