// A committee member's listings of a round's items, long-polled (issue #13: the fixed-interval
// polls of every politician for the whole round were ~5 CPU-s of a committee-64 height's
// 7.7 CPU-s of fixed cost, docs/ledger-engine.md).
//
// One thread per politician of the sample holds a GetRound (item hashes only) until that
// politician has items after what this member has read from it, block `height` commits, or
// `wait` passes (PoliticianNode::GetRound), then asks again -- no sooner than `min_interval`
// after its previous call, so a busy round costs at most one call per politician per interval
// (what the fixed-interval poll cost) and a quiet one a call per `wait`. The politicians are
// listened to independently: a slow, stopped or withholding one delays only its own listings.
// What the threads hear accumulates until the member's round loop takes it (Take).
//
//   RoundListener listener(politicians, {.wait = 2000ms, .min_interval = 150ms, .listener = key});
//   listener.Listen(h, sample);        // a round starts: every sample politician from offset 0
//   RoundListener::Listing l = listener.Take();  // hashes listed since the last Take
//   listener.Reread(p);                // p listed an item it did not serve: list it from 0 again
//   listener.Stop();                   // the round ended: no calls until the next Listen
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ledger/crypto/hash.h"
#include "ledger/net/client.h"

namespace tessera::ledger::net {

class RoundListener {
 public:
  struct Options {
    // How long a politician may hold a listing (capped by PoliticianNode::kMaxRoundWaitMs);
    // 0: it answers at once, i.e. a plain poll every min_interval.
    std::chrono::milliseconds wait{2000};
    std::chrono::milliseconds min_interval{150};
    std::string listener;  // this member's public key (the politicians' per-peer bound)
    Traffic* traffic = nullptr;
  };
  struct Listing {
    // Item hashes listed since the last Take, each with the politicians that listed it.
    std::map<Hash256, std::vector<PoliticianClient*>> listers;
    // The latest height each politician claimed in a listing since the last Take.
    std::map<PoliticianClient*, uint64_t> heights;
  };

  RoundListener(const std::vector<PoliticianClient*>& politicians, Options options);
  ~RoundListener();  // cancels held calls and joins the threads
  RoundListener(const RoundListener&) = delete;
  RoundListener& operator=(const RoundListener&) = delete;

  // Listens to round `height` at the politicians of `sample` (each of `politicians`), every
  // one from offset 0; listings of an earlier Listen still arriving are dropped.
  void Listen(uint64_t height, const std::vector<PoliticianClient*>& sample);
  // Listens to nothing (held calls are cancelled).
  void Stop();
  Listing Take();
  // Lists p's items from offset 0 again (it listed an item and then did not serve it).
  void Reread(PoliticianClient* p);
  // Listing calls made so far (for tests and the bench).
  uint64_t calls() const;
  // Replies that listed more than kMaxRoundListing hashes (cut to that many).
  uint64_t listings_cut() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Politician {
    PoliticianClient* client = nullptr;
    bool in_sample = false;
    uint64_t offset = 0;
    uint64_t rereads = 0;  // Reread()s: a listing asked before one must not move the offset
    Clock::time_point last_start{};
    CallCanceller canceller;
    std::thread thread;
  };
  void Loop(Politician* p);

  const Options options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Politician>> politicians_;
  bool stop_ = false;
  bool active_ = false;
  uint64_t generation_ = 0;  // Listen()/Stop() calls
  uint64_t height_ = 0;
  uint64_t calls_ = 0;
  uint64_t listings_cut_ = 0;
  Listing pending_;
};

}  // namespace tessera::ledger::net
