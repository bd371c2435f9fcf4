#include "ledger/net/round_listener.h"

#include <algorithm>

#include "ledger/net/wire_bytes.h"

namespace tessera::ledger::net {

RoundListener::RoundListener(const std::vector<PoliticianClient*>& politicians, Options options)
    : options_(std::move(options)) {
  for (PoliticianClient* client : politicians) {
    auto p = std::make_unique<Politician>();
    p->client = client;
    politicians_.push_back(std::move(p));
  }
  for (auto& p : politicians_) p->thread = std::thread([this, raw = p.get()] { Loop(raw); });
}

RoundListener::~RoundListener() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    for (auto& p : politicians_) p->canceller.Cancel();
  }
  cv_.notify_all();
  for (auto& p : politicians_) p->thread.join();
}

void RoundListener::Listen(uint64_t height, const std::vector<PoliticianClient*>& sample) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++generation_;
    active_ = true;
    height_ = height;
    pending_ = {};
    for (auto& p : politicians_) {
      p->in_sample = std::find(sample.begin(), sample.end(), p->client) != sample.end();
      p->offset = 0;
      p->last_start = {};
      p->canceller.Cancel();  // a listing of the last round still held
    }
  }
  cv_.notify_all();
}

void RoundListener::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  ++generation_;
  active_ = false;
  pending_ = {};
  for (auto& p : politicians_) p->canceller.Cancel();
}

RoundListener::Listing RoundListener::Take() {
  std::lock_guard<std::mutex> lock(mu_);
  Listing out = std::move(pending_);
  pending_ = {};
  return out;
}

void RoundListener::Reread(PoliticianClient* client) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& p : politicians_) {
    if (p->client != client) continue;
    p->offset = 0;
    ++p->rereads;
    p->canceller.Cancel();  // a held call would list only what comes after the old offset
  }
}

uint64_t RoundListener::calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_;
}

uint64_t RoundListener::listings_cut() const {
  std::lock_guard<std::mutex> lock(mu_);
  return listings_cut_;
}

void RoundListener::Loop(Politician* p) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || (active_ && p->in_sample); });
    if (stop_) return;
    // Paced: a round whose items trickle in one by one costs one call per min_interval.
    const uint64_t generation = generation_;
    const auto next = p->last_start + options_.min_interval;
    cv_.wait_until(lock, next, [&] { return stop_ || generation_ != generation; });
    if (stop_) return;
    if (generation_ != generation || !active_ || !p->in_sample) continue;
    const uint64_t height = height_, offset = p->offset, rereads = p->rereads;
    const RoundWait wait{.wait_ms = static_cast<uint32_t>(options_.wait.count()),
                         .listener = options_.listener,
                         .canceller = &p->canceller,
                         .epoch = p->canceller.epoch()};
    p->last_start = Clock::now();
    ++calls_;
    lock.unlock();
    auto reply = p->client->ListenRound(height, offset, wait, options_.traffic);
    lock.lock();
    if (!reply.ok() || generation_ != generation) continue;  // failed, or a later round's now
    // At most kMaxRoundListing hashes per reply (what an honest politician sends; a flooder's
    // longer listing is cut, so what waits here for Take is bounded per politician and call),
    // the rest from offset + kMaxRoundListing next time.
    const bool cut = static_cast<size_t>(reply->item_hashes_size()) > kMaxRoundListing;
    if (cut) ++listings_cut_;
    if (p->rereads == rereads) p->offset = cut ? offset + kMaxRoundListing : reply->next_offset();
    const int take = std::min(reply->item_hashes_size(), static_cast<int>(kMaxRoundListing));
    for (int i = 0; i < take; ++i) {
      const std::string& bytes = reply->item_hashes(i);
      auto hash = HashFromBytes(bytes, "item hash");
      if (!hash.ok()) continue;
      std::vector<PoliticianClient*>& who = pending_.listers[*hash];
      if (std::find(who.begin(), who.end(), p->client) == who.end()) who.push_back(p->client);
    }
    pending_.heights[p->client] = reply->height();
  }
}

}  // namespace tessera::ledger::net
