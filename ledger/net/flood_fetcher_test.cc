// FloodFetcher (flood_fetcher.h) against peers it was not written around, in virtual time:
// honest peers originate items at a steady rate and serve them; beside them a peer that lists
// 1e6 random hashes, one that lists every real hash first and never answers, and one that
// lists every real hash first and answers with other bytes. Each test names the property it
// guards: bounded pending set (memory), bounded work per listing, honest items delivered within
// a bound (useful work), fetch RPCs per item and per second, items checked against their hash.
#include "ledger/net/flood_fetcher.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <random>

#include "ledger/net/round_item.h"

namespace tessera::ledger::net {
namespace {

using Clock = FloodFetcher::Clock;
using std::chrono::milliseconds;

enum class Kind { kHonest, kRandomHashes, kNeverServes, kWrongBytes };

RoundItem Item(uint64_t n) {
  RoundItem item;
  item.set_payload("honest item " + std::to_string(n) + std::string(100, 'x'));
  return item;
}

// One receiver and its peers; every peer sees every honest item (originated by one honest
// peer, which lists it at once; the others list it a step later, as relayed gossip would).
struct Network {
  explicit Network(std::vector<Kind> kinds, FloodFetcher::Limits limits = {})
      : kinds(std::move(kinds)), fetcher(this->kinds.size(), limits) {}

  std::vector<Kind> kinds;
  FloodFetcher fetcher;
  Clock::time_point now{};
  std::mt19937_64 rng{12};
  std::map<Hash256, RoundItem> honest;  // every honest item, by hash
  std::map<Hash256, Clock::time_point> created;
  std::map<Hash256, Clock::time_point> delivered_at;
  std::vector<std::vector<Hash256>> relay_next;  // per peer: hashes to list next step
  std::vector<Hash256> junk;                     // the random-hash lister's listing
  uint64_t step = 0, next_item = 0, known_calls = 0, fetch_rpcs = 0, wrong_delivered = 0;
  size_t max_pending = 0, max_share_used = 0;
  struct Reply {
    uint64_t id;
    std::vector<RoundItem> items;
    Clock::time_point at;
  };
  std::vector<Reply> replies;  // in flight, answered at `at`

  std::vector<size_t> Honest() const {
    std::vector<size_t> out;
    for (size_t i = 0; i < kinds.size(); ++i) {
      if (kinds[i] == Kind::kHonest) out.push_back(i);
    }
    return out;
  }

  void Announce(size_t peer, const std::vector<Hash256>& hashes) {
    (void)fetcher.Announce(
        peer, 1, hashes,
        [&](uint64_t, const Hash256& h) {
          ++known_calls;
          return delivered_at.count(h) > 0;
        },
        now);
  }

  // One 5 ms step: `per_step` new honest items, every peer's listing, the fetches and replies.
  void Step(size_t per_step) {
    ++step;
    relay_next.resize(kinds.size());
    const std::vector<size_t> honest_peers = Honest();
    std::vector<Hash256> fresh;
    for (size_t i = 0; i < per_step; ++i) {
      RoundItem item = Item(next_item++);
      const Hash256 h = RoundItemHash(item);
      honest.emplace(h, item);
      created.emplace(h, now);
      fresh.push_back(h);
    }
    // The adversaries list the fresh hashes first (or random ones), then the origin, then the
    // relaying honest peers.
    for (size_t p = 0; p < kinds.size(); ++p) {
      if (kinds[p] == Kind::kRandomHashes) {
        // A listing of 1e6 random hashes, fresh ones where the receiver looks, each time the
        // receiver asks for its listing (every 20 ms, as the politician's flood loop).
        if (step % 4 != 0) continue;
        const bool first = junk.empty();
        if (first) junk.resize(1000000);
        for (size_t i = 0; i < junk.size(); i += (first || i < 4096 ? 1 : junk.size())) {
          for (size_t w = 0; w < 4; ++w) {
            const uint64_t r = rng();
            std::memcpy(junk[i].data() + 8 * w, &r, 8);
          }
        }
        Announce(p, junk);
      } else if (kinds[p] != Kind::kHonest) {
        Announce(p, fresh);
      }
    }
    for (size_t p : honest_peers) {  // last step's items, relayed
      std::vector<Hash256> list;
      list.swap(relay_next[p]);
      Announce(p, list);
    }
    for (size_t i = 0; i < fresh.size(); ++i) {
      const size_t origin = honest_peers[i % honest_peers.size()];
      Announce(origin, {fresh[i]});
      for (size_t p : honest_peers) {
        if (p != origin) relay_next[p].push_back(fresh[i]);
      }
    }
    for (const FloodFetcher::Fetch& f : fetcher.NextFetches(now)) {
      ++fetch_rpcs;
      Reply r{.id = f.id, .items = {}, .at = now + milliseconds(2)};
      switch (kinds[f.peer]) {
        case Kind::kHonest:
          for (const Hash256& h : f.hashes) {
            if (auto it = honest.find(h); it != honest.end()) r.items.push_back(it->second);
          }
          replies.push_back(std::move(r));
          break;
        case Kind::kWrongBytes:
          for (const Hash256& h : f.hashes) {
            if (auto it = honest.find(h); it != honest.end()) {
              RoundItem bad = it->second;
              bad.set_block_signature("not the item that was listed");
              r.items.push_back(bad);
            }
          }
          replies.push_back(std::move(r));
          break;
        case Kind::kRandomHashes:  // answers, with nothing
          replies.push_back(std::move(r));
          break;
        case Kind::kNeverServes:  // never answers: the deadline moves its hashes on
          break;
      }
    }
    now += milliseconds(5);
    for (auto it = replies.begin(); it != replies.end();) {
      if (it->at > now) {
        ++it;
        continue;
      }
      for (const RoundItem& item : fetcher.Delivered(it->id, it->items, now)) {
        const Hash256 h = RoundItemHash(item);
        auto original = honest.find(h);
        if (original == honest.end() ||
            original->second.SerializeAsString() != item.SerializeAsString()) {
          ++wrong_delivered;
        }
        delivered_at.emplace(h, now);
      }
      it = replies.erase(it);
    }
    max_pending = std::max(max_pending, fetcher.pending());
    for (size_t p = 0; p < kinds.size(); ++p) {
      if (kinds[p] != Kind::kHonest) {
        max_share_used = std::max(max_share_used, fetcher.pending_of(p));
      }
    }
  }

  // Runs `seconds` of virtual time at `rate` honest items per second, then lets it drain.
  void Run(int seconds, size_t rate) {
    const size_t per_step = rate / 200;
    for (int s = 0; s < seconds * 200; ++s) Step(per_step);
    for (int s = 0; s < 2 * 200; ++s) Step(0);
  }

  // The slowest honest item, creation to delivery; a day if one was never delivered.
  milliseconds WorstLatency() const {
    milliseconds worst{0};
    for (const auto& [h, t] : created) {
      auto d = delivered_at.find(h);
      if (d == delivered_at.end()) return std::chrono::hours(24);
      worst = std::max(worst, std::chrono::duration_cast<milliseconds>(d->second - t));
    }
    return worst;
  }
};

FloodFetcher::Limits TestLimits() {
  FloodFetcher::Limits l;
  l.max_listing = 1024;
  l.max_pending = 8192;
  l.max_batch_items = 256;
  l.fetch_deadline = milliseconds(200);
  l.min_fetch_interval = milliseconds(20);
  return l;
}

// The reference: honest peers only. Every item arrives, in a few fetch intervals, each fetched
// once although five peers list it (dedupe), many per fetch.
TEST(FloodFetcherTest, HonestPeersDeliverEveryItemInBatches) {
  Network net({Kind::kHonest, Kind::kHonest, Kind::kHonest, Kind::kHonest, Kind::kHonest},
              TestLimits());
  net.Run(5, 8000);  // 40,000 items
  EXPECT_EQ(net.delivered_at.size(), 40000u);
  EXPECT_EQ(net.fetcher.stats().delivered, 40000u);
  EXPECT_EQ(net.wrong_delivered, 0u);
  EXPECT_LE(net.WorstLatency(), milliseconds(100));
  EXPECT_LE(static_cast<double>(net.fetch_rpcs) / 40000, 0.05) << net.fetch_rpcs;
  EXPECT_EQ(net.fetcher.pending(), 0u);
}

// Fetch RPCs per second are bounded by peers / min_fetch_interval, not by the item rate: four
// times the items cost about as many fetches.
TEST(FloodFetcherTest, FetchRateDoesNotGrowWithItemRate) {
  Network slow({Kind::kHonest, Kind::kHonest, Kind::kHonest}, TestLimits());
  Network fast({Kind::kHonest, Kind::kHonest, Kind::kHonest}, TestLimits());
  slow.Run(4, 2000);
  fast.Run(4, 8000);
  EXPECT_EQ(slow.delivered_at.size(), 8000u);
  EXPECT_EQ(fast.delivered_at.size(), 32000u);
  // 6 s of virtual time (4 + 2 to drain), 3 peers, one fetch per 20 ms each at most.
  EXPECT_LE(fast.fetch_rpcs, 3u * 6 * 50);
  EXPECT_LE(static_cast<double>(fast.fetch_rpcs), 1.25 * static_cast<double>(slow.fetch_rpcs))
      << slow.fetch_rpcs << " fetches for 8,000 items, " << fast.fetch_rpcs << " for 32,000";
  std::printf("fetches: %llu for 8,000 items, %llu for 32,000\n",
              static_cast<unsigned long long>(slow.fetch_rpcs),
              static_cast<unsigned long long>(fast.fetch_rpcs));
}

// Bounded memory and work: peers listing 1e6 random hashes every 5 ms
// holds at most its share of the pending set, costs at most max_listing lookups per listing,
// and the honest items still arrive as fast as without it.
TEST(FloodFetcherTest, RandomHashListingsStayInTheirShare) {
  Network net(
      {Kind::kRandomHashes, Kind::kHonest, Kind::kHonest, Kind::kRandomHashes, Kind::kRandomHashes},
      TestLimits());
  net.Run(2, 4000);
  const auto& st = net.fetcher.stats();
  EXPECT_GE(st.over_listing, uint64_t{3} * 200 * (1000000 - 1024));
  EXPECT_GT(st.over_share, 0u);
  EXPECT_LE(net.max_pending, TestLimits().max_pending);
  EXPECT_LE(net.max_share_used, net.fetcher.share());
  // Work per listing: at most max_listing lookups of the caller's store, whatever its length.
  // 200 random listings per flooder; the honest peers list 20 items a step.
  EXPECT_LE(net.known_calls, uint64_t{3} * 200 * 1024 + 2 * 800 * 40);
  EXPECT_EQ(net.delivered_at.size(), 8000u);
  EXPECT_LE(net.WorstLatency(), milliseconds(100));
  EXPECT_EQ(net.wrong_delivered, 0u);
  // The flooders' fetches are bounded by the per-peer interval, not by what they list.
  EXPECT_LE(net.fetch_rpcs, 5u * (4 * 1000 / 20) + 5);
}

// Fallback and dedupe: three of five peers list every real hash before the honest ones and
// never answer; every honest item still arrives, within a deadline and a few intervals, each
// fetched from the honest peers in batches, and the silent peers stop being asked first.
TEST(FloodFetcherTest, AnnouncersThatNeverServeFallBackToHonestPeers) {
  Network net(
      {Kind::kNeverServes, Kind::kNeverServes, Kind::kHonest, Kind::kNeverServes, Kind::kHonest},
      TestLimits());
  net.Run(5, 4000);
  EXPECT_EQ(net.delivered_at.size(), 20000u);
  EXPECT_LE(net.WorstLatency(), TestLimits().fetch_deadline + milliseconds(200));
  EXPECT_LE(net.max_pending, TestLimits().max_pending);
  EXPECT_LE(static_cast<double>(net.fetch_rpcs) / 20000, 0.05) << net.fetch_rpcs;
  // The silent peers are each asked a few times, then only when nobody better listed a hash.
  EXPECT_LT(net.fetcher.stats().misses, 3u * 256 * 4);
  EXPECT_EQ(net.fetcher.pending(), 0u);
}

// Items are checked against the hash asked: peers answering with other bytes deliver nothing,
// are counted, and the real items come from the honest peers.
TEST(FloodFetcherTest, WrongBytesAreRefusedAndFetchedElsewhere) {
  Network net(
      {Kind::kWrongBytes, Kind::kHonest, Kind::kWrongBytes, Kind::kWrongBytes, Kind::kHonest},
      TestLimits());
  net.Run(5, 4000);
  EXPECT_EQ(net.wrong_delivered, 0u);
  EXPECT_GT(net.fetcher.stats().wrong_items, 0u);
  EXPECT_EQ(net.delivered_at.size(), 20000u);
  EXPECT_LE(net.WorstLatency(), milliseconds(100));
  EXPECT_LE(static_cast<double>(net.fetch_rpcs) / 20000, 0.05) << net.fetch_rpcs;
}

// Every adversary at once, 4 of 5 peers hostile (the threat model's 80%).
TEST(FloodFetcherTest, FourHostilePeersOfFive) {
  Network net({Kind::kRandomHashes, Kind::kNeverServes, Kind::kHonest, Kind::kWrongBytes,
               Kind::kRandomHashes},
              TestLimits());
  net.Run(3, 4000);
  EXPECT_EQ(net.wrong_delivered, 0u);
  EXPECT_EQ(net.delivered_at.size(), 12000u);
  EXPECT_LE(net.WorstLatency(), TestLimits().fetch_deadline + milliseconds(200));
  EXPECT_LE(net.max_pending, TestLimits().max_pending);
  EXPECT_LE(net.max_share_used, net.fetcher.share());
  // RPCs per second bounded by peers / min_fetch_interval, whatever the item rate.
  EXPECT_LE(net.fetch_rpcs, 5u * (5 * 1000 / 20) + 5);
}

// One listing over the cap is cut with a clear error, and the cut is counted.
TEST(FloodFetcherTest, ListingCapAndShareErrors) {
  FloodFetcher::Limits l = TestLimits();
  FloodFetcher f(2, l);
  std::vector<Hash256> many(5000);
  for (size_t i = 0; i < many.size(); ++i) {
    many[i][0] = static_cast<uint8_t>(i);
    many[i][1] = static_cast<uint8_t>(i >> 8);
  }
  Status s = f.Announce(0, 1, many);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.ToString().find("past the listing cap of 1024"), std::string::npos) << s;
  EXPECT_EQ(f.stats().over_listing, 5000u - 1024);
  EXPECT_EQ(f.pending(), 1024u);
  for (int i = 0; i < 4; ++i) {
    std::vector<Hash256> next(many.begin() + 1024 * (i + 1),
                              many.begin() + std::min<size_t>(1024 * (i + 2), many.size()));
    (void)f.Announce(0, 1, next);
  }
  EXPECT_EQ(f.pending_of(0), f.share());  // 4096 of 8192: half for each of two peers
  EXPECT_EQ(f.Announce(1, 1, {many[0]}).code(), StatusCode::kOk);  // dedupe, not charged
  EXPECT_EQ(f.pending_of(1), 0u);
  EXPECT_EQ(f.Announce(7, 1, {many[0]}).code(), StatusCode::kInvalidArgument);
  f.Forget(1);
  EXPECT_EQ(f.pending(), 0u);
  EXPECT_EQ(f.pending_of(0), 0u);
}

// What planning fetches costs an honest politician under a flood: four peers list 2,000
// hashes each (the `flood` adversary's surplus commitments per height), and the politician
// plans fetches after every listing and fetch of every peer (about 100 times a second). With
// every peer's fetch in flight there is nothing to plan, and NextFetches must not look at the
// thousands of pending hashes again (it did: an honest politician spent about a fifth of its
// CPU there in session 13's `flood` runs).
TEST(FloodFetcherTest, PlanningWithEveryPeerBusyLooksAtNothing) {
  FloodFetcher f(4);
  for (size_t peer = 0; peer < 4; ++peer) {
    std::vector<Hash256> listing(2000);
    for (size_t i = 0; i < listing.size(); ++i) {
      listing[i][0] = static_cast<uint8_t>(peer);
      listing[i][1] = static_cast<uint8_t>(i);
      listing[i][2] = static_cast<uint8_t>(i >> 8);
    }
    // A listing past max_listing (1,024) is cut; read again from where it stopped.
    for (size_t at = 0; at < listing.size();) {
      size_t taken = 0;
      (void)f.Announce(peer, 7, {listing.begin() + at, listing.end()}, {}, Clock::now(), &taken);
      at += taken;
    }
  }
  ASSERT_EQ(f.pending(), 8000u);
  const auto t0 = Clock::now();
  const std::vector<FloodFetcher::Fetch> first = f.NextFetches(t0);
  ASSERT_EQ(first.size(), 4u);  // one batch per peer, each full
  for (const auto& fetch : first) EXPECT_EQ(fetch.hashes.size(), 256u);
  // Every peer has a fetch in flight now: planning again looks at nothing and plans nothing.
  const uint64_t scanned = f.stats().scanned;
  EXPECT_LE(scanned, 8000u);  // each pending hash at most once per call
  for (int call = 0; call < 100; ++call) {
    EXPECT_TRUE(f.NextFetches(t0 + milliseconds(1 + call)).empty());
  }
  EXPECT_EQ(f.stats().scanned, scanned);
  // One peer answers: the next plan fills that peer's batch and stops.
  std::vector<RoundItem> none;
  (void)f.Delivered(first[0].id, none, t0 + milliseconds(200));
  const auto next = f.NextFetches(t0 + milliseconds(200));
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].hashes.size(), 256u);
  // Its hashes waited at the front of the queue, in their order: one batch's worth looked at.
  EXPECT_EQ(f.stats().scanned - scanned, 256u);
}

}  // namespace
}  // namespace tessera::ledger::net
