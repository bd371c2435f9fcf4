#include "ledger/net/load_generator.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace tessera::ledger::net {
namespace {

// A transfer turned away by this many full politicians is dropped (and the thread pauses):
// asking every politician of a saturated network would multiply the refused calls by their
// number, all on the same cores as the network.
constexpr uint32_t kMaxBusyAnswers = 2;

}  // namespace

void BlockIntervalEstimate::Observe(Clock::time_point block_time) {
  if (last_) {
    const double interval = std::chrono::duration<double>(block_time - *last_).count();
    seconds_ = seconds_ ? 0.7 * *seconds_ + 0.3 * interval : interval;
  }
  last_ = block_time;
}

std::optional<double> ResendAfter(double resend_s, std::optional<double> block_interval_s) {
  if (!block_interval_s) return std::nullopt;
  return std::max(resend_s, 4 * *block_interval_s);
}

struct LoadGenerator::Worker {
  std::vector<std::unique_ptr<PoliticianClient>> clients;
  std::mutex mu;  // guards senders (the follower updates them)
  std::vector<Sender> senders;
  std::mt19937_64 rng;
  std::thread thread;
};

LoadGenerator::LoadGenerator(LoadOptions options, std::vector<std::string> politician_addresses,
                             std::vector<KeyPair> accounts, std::vector<uint32_t> senders)
    : options_(options),
      addresses_(std::move(politician_addresses)),
      accounts_(std::move(accounts)) {
  options_.threads = std::max(1u, options_.threads);
  options_.fanout = std::clamp<uint32_t>(options_.fanout, 1, addresses_.size());
  for (uint32_t t = 0; t < options_.threads; ++t) {
    auto w = std::make_unique<Worker>();
    for (const std::string& a : addresses_) {
      w->clients.push_back(PoliticianClient::ForSubmitting(a, 3000));
    }
    w->rng.seed(options_.seed + t);
    workers_.push_back(std::move(w));
  }
  for (size_t i = 0; i < senders.size(); ++i) {
    Sender s;
    s.account = senders[i];
    workers_[i % workers_.size()]->senders.push_back(std::move(s));
  }
}

LoadGenerator::~LoadGenerator() { Stop(); }

void LoadGenerator::Start() {
  start_ = Clock::now();
  for (auto& w : workers_) w->thread = std::thread([this, p = w.get()] { Run(p); });
}

void LoadGenerator::Stop() {
  stop_ = true;
  for (auto& w : workers_) {
    if (w->thread.joinable()) w->thread.join();
  }
}

LoadCounts LoadGenerator::counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  LoadCounts c = counts_;
  c.resent = resent_.load();
  c.busy_answers = busy_answers_.load();
  return c;
}

std::optional<LoadGenerator::Clock::time_point> LoadGenerator::first_submit() const {
  std::lock_guard<std::mutex> lock(mu_);
  return first_submit_;
}

std::vector<uint32_t> LoadGenerator::Send(Worker* w, const Transaction& tx,
                                          const std::vector<uint32_t>& avoid, uint32_t max_busy,
                                          uint32_t* retry_after_ms, bool* busy) {
  std::vector<uint32_t> order(addresses_.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), w->rng);
  std::vector<uint32_t> accepted;
  *busy = false;
  uint32_t busy_answers = 0;
  for (uint32_t p : order) {
    if (accepted.size() >= options_.fanout || busy_answers >= max_busy) break;
    if (std::find(avoid.begin(), avoid.end(), p) != avoid.end()) continue;
    uint32_t hint = 0;
    Status s = w->clients[p]->SubmitTransaction(tx, nullptr, &hint);
    if (s.ok()) {
      accepted.push_back(p);
    } else if (s.code() == StatusCode::kResourceExhausted) {
      *busy = true;
      ++busy_answers;
      ++busy_answers_;
      *retry_after_ms = std::max(*retry_after_ms, hint);
    }
  }
  return accepted;
}

void LoadGenerator::Run(Worker* w) {
  const double rate = options_.rate / static_cast<double>(workers_.size());
  double issued = 0;
  auto last_resend_scan = Clock::now();
  while (!stop_.load()) {
    const auto now = Clock::now();
    const double due = rate * std::chrono::duration<double>(now - start_).count() - issued;
    uint32_t pause_ms = 0;
    for (int n = 0; n < static_cast<int>(due) && !stop_.load(); ++n) {
      issued += 1;
      // Pick an idle account of this thread.
      std::unique_lock<std::mutex> lock(w->mu);
      Sender* sender = nullptr;
      for (int tries = 0; tries < 8 && sender == nullptr && !w->senders.empty(); ++tries) {
        Sender& s = w->senders[w->rng() % w->senders.size()];
        if (!s.in_flight) sender = &s;
      }
      if (sender == nullptr) {
        lock.unlock();
        std::lock_guard<std::mutex> stats(mu_);
        ++counts_.offered;
        ++counts_.idle_miss;
        continue;
      }
      uint32_t from = sender->account;
      uint32_t to = static_cast<uint32_t>(w->rng() % (accounts_.size() - 1));
      if (to >= from) ++to;
      Transaction tx{.from = accounts_[from].public_key(),
                     .to = accounts_[to].public_key(),
                     .amount = 1 + w->rng() % 10,
                     .nonce = sender->next_nonce};
      SignTransaction(tx, accounts_[from]);
      sender->in_flight = tx;
      sender->sent = Clock::now();
      const bool twin_too =
          std::uniform_real_distribution<double>(0, 1)(w->rng) < options_.double_spend_fraction;
      lock.unlock();
      uint32_t hint = 0;
      bool busy = false;
      const Clock::time_point first_submit = Clock::now();
      std::vector<uint32_t> took = Send(w, tx, {}, kMaxBusyAnswers, &hint, &busy);
      {
        std::lock_guard<std::mutex> stats(mu_);
        ++counts_.offered;
        if (!took.empty()) {
          ++counts_.submitted;
          auto sent = Clock::now();
          submitted_.emplace(std::string(AsChars(TransactionId(tx))),
                             Submission{first_submit, sent, took});
          if (!first_submit_) first_submit_ = sent;
        } else if (busy) {
          ++counts_.busy;
        } else {
          ++counts_.rejected;
        }
      }
      if (took.empty()) {
        std::lock_guard<std::mutex> relock(w->mu);
        sender->in_flight.reset();  // nobody holds it: the nonce is still free
        if (busy) pause_ms = std::max<uint32_t>(pause_ms, std::min<uint32_t>(hint, 200));
        if (busy) break;
        continue;
      }
      if (twin_too) {
        // A double spend: the same nonce to someone else, sent to other politicians.
        Transaction twin = tx;
        uint32_t other = (to + 1) % accounts_.size();
        if (other == from) other = (other + 1) % accounts_.size();
        twin.to = accounts_[other].public_key();
        SignTransaction(twin, accounts_[from]);
        bool twin_busy = false;
        uint32_t twin_hint = 0;
        (void)Send(w, twin, took, kMaxBusyAnswers, &twin_hint, &twin_busy);
        std::lock_guard<std::mutex> stats(mu_);
        ++counts_.double_spend_attempts;
      }
    }
    // Resend transfers that have waited long (a dropping politician may have eaten them):
    // longer than resend_s and than 4 block intervals, so that a saturated chain, whose
    // transfers wait two or three intervals, is not sent its backlog again.
    const double interval_s = block_interval_s_.load();
    const std::optional<double> resend_after =
        ResendAfter(options_.resend_s, interval_s > 0 ? std::optional(interval_s) : std::nullopt);
    if (resend_after && Clock::now() - last_resend_scan > std::chrono::seconds(1)) {
      last_resend_scan = Clock::now();
      const double resend_after_s = *resend_after;
      std::vector<Transaction> resend;
      {
        std::lock_guard<std::mutex> lock(w->mu);
        for (Sender& s : w->senders) {
          if (s.in_flight &&
              std::chrono::duration<double>(Clock::now() - s.sent).count() > resend_after_s) {
            resend.push_back(*s.in_flight);
            s.sent = Clock::now();
          }
        }
      }
      for (const Transaction& tx : resend) {
        uint32_t hint = 0;
        bool busy = false;
        (void)Send(w, tx, {}, 1, &hint, &busy);  // a full politician: it waits for next time
        ++resent_;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::max<uint32_t>(pause_ms, 5)));
    if (pause_ms > 0) {
      // Back-pressure: the offered transfers of the pause are offered (and turned away) too.
      const double skipped =
          rate * std::chrono::duration<double>(Clock::now() - start_).count() - issued;
      if (skipped >= 1) {
        issued += std::floor(skipped);
        std::lock_guard<std::mutex> stats(mu_);
        counts_.offered += static_cast<uint64_t>(skipped);
        counts_.busy += static_cast<uint64_t>(skipped);
      }
    }
  }
}

std::vector<CommittedTransfer> LoadGenerator::OnBlock(
    const std::vector<Transaction>& applied,
    const std::function<uint64_t(const PublicKey&)>& nonce_of, uint64_t height,
    Clock::time_point now) {
  std::vector<CommittedTransfer> committed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    interval_.Observe(now);
    block_interval_s_ = interval_.seconds().value_or(0);
    for (const Transaction& tx : applied) {
      auto it = submitted_.find(std::string(AsChars(TransactionId(tx))));
      if (it == submitted_.end()) continue;
      committed.push_back({.height = height,
                           .first_submit = it->second.first_submit,
                           .accepted = it->second.accepted,
                           .visible = now,
                           .politicians = std::move(it->second.politicians)});
      submitted_.erase(it);
    }
  }
  for (auto& w : workers_) {
    std::lock_guard<std::mutex> lock(w->mu);
    for (Sender& s : w->senders) {
      if (!s.in_flight) continue;
      const uint64_t nonce = nonce_of(s.in_flight->from);
      if (nonce > s.in_flight->nonce) {
        s.in_flight.reset();
        s.next_nonce = nonce;
      }
    }
  }
  return committed;
}

}  // namespace tessera::ledger::net
