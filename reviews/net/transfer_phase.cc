#include "reviews/net/transfer_phase.h"

#include <algorithm>
#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "ledger/crypto/hash.h"
#include "ledger/crypto/key_file.h"
#include "ledger/net/client.h"
#include "ledger/state/account.h"
#include "reviews/net/poll_failures.h"

namespace tessera::reviews::net {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

ledger::KeyPair LocalnetAccountKey(uint32_t i) {
  return ledger::KeyPair::FromSeed(ledger::Sha256("tessera/localnet/account/" + std::to_string(i)));
}

Status CheckLocalnetAccounts(const std::filesystem::path& key_dir) {
  TESSERA_ASSIGN_OR_RETURN(ledger::PublicKey pub,
                           ledger::ReadPublicKeyFile(key_dir / "account-0.pub"));
  if (pub != LocalnetAccountKey(0).public_key()) {
    return FailedPreconditionError(
        "keys/account-0.pub is not the account the transfer phase derives: ledger-localnet "
        "derives its accounts otherwise (reviews/net/transfer_phase.h)");
  }
  return Status::Ok();
}

Result<TransferPhaseReport> RunTransferPhase(client::ReviewsClient& c,
                                             const client::ClientOptions& client_options,
                                             const TransferPhaseOptions& options,
                                             std::ostream& progress) {
  TransferPhaseReport report;
  std::vector<ledger::Transaction> txs;
  std::vector<ledger::Hash256> senders;
  for (uint32_t i = 0; i < options.count; ++i) {
    const uint32_t from = options.first_account + i;
    const ledger::KeyPair key = LocalnetAccountKey(from);
    ledger::Transaction tx{
        .to = LocalnetAccountKey(from + 1).public_key(), .amount = 1, .nonce = 0};
    ledger::SignTransaction(tx, key);
    txs.push_back(tx);
    senders.push_back(ledger::AccountKey(key.public_key()));
  }
  std::vector<std::string> addresses;
  for (const auto& p : c.genesis().politicians) addresses.push_back(p.address);
  if (addresses.empty()) return FailedPreconditionError("the genesis file names no politician");
  TESSERA_RETURN_IF_ERROR(c.Refresh());
  report.first_height = c.height();
  report.submitted = txs.size();
  progress << "height " << c.height() << ": sending " << txs.size() << " transfers (accounts "
           << options.first_account << ".." << options.first_account + options.count - 1 << ")\n";

  std::atomic<uint64_t> rejected{0}, busy{0}, busy_wait_ms{0};
  const auto start = Clock::now();
  const auto deadline = start + client_options.timeout;
  {
    std::vector<std::thread> threads;
    const uint32_t n = std::max<uint32_t>(options.submitters, 1);
    for (uint32_t t = 0; t < n; ++t) {
      threads.emplace_back([&, t] {
        std::vector<std::unique_ptr<ledger::net::PoliticianClient>> politicians;
        for (const std::string& a : addresses) {
          politicians.push_back(ledger::net::PoliticianClient::ForSubmitting(a, 2000));
        }
        std::mt19937 rng(1234 + t);
        for (size_t i = t; i < txs.size(); i += n) {
          // One politician at random; a busy one is passed over for the next at once, and the
          // shortest hint is slept only when all were busy (reviews-load does the same).
          bool done = false;
          while (!done && Clock::now() < deadline) {
            const size_t first = rng() % politicians.size();
            uint32_t shortest = 0;
            for (size_t k = 0; k < politicians.size() && !done; ++k) {
              uint32_t retry_ms = 0;
              Status s = politicians[(first + k) % politicians.size()]->SubmitTransaction(
                  ledger::LedgerTx(txs[i]), nullptr, &retry_ms);
              if (s.ok()) {
                done = true;
              } else if (s.code() == StatusCode::kResourceExhausted) {
                ++busy;
                if (retry_ms > 0 && (shortest == 0 || retry_ms < shortest)) shortest = retry_ms;
              } else {
                ++rejected;
                done = true;  // refused by a rule (or unreachable): not retried
              }
            }
            if (!done) {
              const uint32_t wait = shortest == 0 ? 200 : shortest;
              busy_wait_ms += wait;
              std::this_thread::sleep_for(std::chrono::milliseconds(wait));
            }
          }
        }
      });
    }
    for (std::thread& th : threads) th.join();
  }
  report.rejected = rejected.load();
  report.busy_retries = busy.load();
  report.busy_wait_s = static_cast<double>(busy_wait_ms.load()) / 1000;
  report.submit_seconds = Since(start);

  std::vector<bool> seen(senders.size(), false);
  uint64_t committed = 0;
  double last_commit_s = 0;
  const uint64_t expected = txs.size() - report.rejected;
  PollFailures failures;
  while (committed < expected) {
    // One poll (PollLeaves: a refresh, then every pending sender's proved leaf); a failed poll
    // is retried (poll_failures.h). A leaf with nonce >= 1 stays so: only pending ones are read.
    std::vector<size_t> pending;
    std::vector<ledger::Hash256> keys;
    for (size_t i = 0; i < senders.size(); ++i) {
      if (seen[i]) continue;
      pending.push_back(i);
      keys.push_back(senders[i]);
    }
    uint64_t now = committed;
    auto leaves = PollLeaves(c, keys);
    for (size_t j = 0; leaves.ok() && j < pending.size(); ++j) {
      const auto& leaf = (*leaves)[j];
      if (!leaf) continue;
      auto account = ledger::DecodeAccount(*leaf);
      if (account.ok() && account->nonce >= 1) {
        seen[pending[j]] = true;
        ++now;
      }
    }
    if (now > committed) {
      committed = now;
      last_commit_s = Since(start);
      report.last_height = c.height();
      progress << "height " << c.height() << ": " << committed << " transfers committed after "
               << last_commit_s << " s\n";
    }
    if (Status s = failures.Note(leaves.status()); !s.ok()) {
      report.poll_gave_up = s.ToString();
      report.cut_short = true;
      progress << "height " << c.height() << ": gave up polling for transfers: " << s << "\n";
      break;
    }
    if (!leaves.ok()) progress << failures.RetryLine(c.height(), leaves.status());
    if (committed >= expected) break;
    if ((options.stop_height != 0 && c.height() >= options.stop_height) ||
        Clock::now() >= deadline) {
      report.cut_short = true;
      break;
    }
    std::this_thread::sleep_for(failures.Pause(client_options.poll));
  }
  report.poll_failures = failures.total();
  report.committed = committed;
  report.seconds = last_commit_s;
  report.transfers_per_s = last_commit_s > 0 ? static_cast<double>(committed) / last_commit_s : 0;
  return report;
}

}  // namespace tessera::reviews::net
