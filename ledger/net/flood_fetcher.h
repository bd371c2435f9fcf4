// Announce-then-fetch gossip of round items (pool commitments, witness lists, proposals, votes)
// between politicians, with every quantity a hostile peer controls bounded (issue #12, "flood").
//
// A peer announces a height's items by hash (its GetRound hash listing); the receiver fetches
// the hashes it lacks in batches (GetItems: many hashes per call) and checks each item it gets
// against the hash it asked for. FloodFetcher is the receiver's bookkeeping, a pure state
// machine: events in (Announce, Delivered, Failed, Forget), fetches out (NextFetches); no I/O,
// no threads, the clock passed in. The politician's flood loop (politician_flood.cc) and the
// unit test's simulated peers (flood_fetcher_test.cc) drive the same code.
//
// Up to 80% of the politicians may be hostile. The bounds, each enforced here and counted in
// Stats when it drops something:
//   * one listing: at most Limits::max_listing hashes are looked at; the rest are refused
//     (RESOURCE_EXHAUSTED, Stats::over_listing), so a 1e6-hash listing costs max_listing
//     lookups;
//   * pending (announced, not yet fetched): at most Limits::max_pending in all. Each pending
//     hash is charged to the peer that announced it first, and a peer holds at most its fair
//     share, max_pending / peers (Stats::over_share): a flooder fills only its own share and
//     the honest peers' announcements still get in;
//   * dedupe: a hash announced by several peers is one pending entry that remembers every
//     announcer (at most one per peer) and is fetched from one of them at a time; a hash the
//     caller already holds (`known`) or fetched recently is not pending at all;
//   * fallback: a fetch not answered within Limits::fetch_deadline, or answered without some of
//     its hashes, moves those hashes to another announcer that has not failed them; with none
//     left the hash is dropped (Stats::undeliverable) until some peer announces it again;
//   * wrong bytes: a delivered item whose hash was not asked of that peer in that fetch is
//     thrown away (Stats::wrong_items) and counts against the peer;
//   * RPCs: at most one fetch outstanding per peer and at most one fetch per peer per
//     Limits::min_fetch_interval, each of at most max_batch_items hashes (the server stops at
//     max_batch_bytes of items, see ItemsRequest): fetches per second are bounded by
//     peers / min_fetch_interval whatever the item rate.
// Announcers are tried cheapest first: (misses + 1) / (items served + 1), misses being hashes
// asked and not delivered and wrong items; among equally cheap ones the first free one. A
// peer that lists and never serves is asked at most once per hash, and once it has missed,
// only for hashes that nobody cheaper listed; the first honest reply makes every honest
// announcer cheaper than it.
//
// Not thread-safe (the politician calls it under its flood lock).
//
//   FloodFetcher f(peers);
//   f.Announce(p, h, hashes, known);                // from p's listing
//   for (auto& fetch : f.NextFetches(now))          // send GetItems(fetch.height, fetch.hashes)
//     ... items = f.Delivered(fetch.id, reply, now) // the items to accept, hashes checked
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "core/status.h"
#include "ledger/crypto/bytes.h"
#include "ledger/net/blockene.pb.h"

namespace tessera::ledger::net {

class FloodFetcher {
 public:
  using Clock = std::chrono::steady_clock;

  struct Limits {
    size_t max_listing = 1024;         // hashes looked at per listing
    size_t max_pending = 16384;        // announced-but-unfetched hashes, all peers together
    size_t max_batch_items = 256;      // hashes per fetch
    size_t max_batch_bytes = 4 << 20;  // item bytes per fetch reply (the server cuts there)
    std::chrono::milliseconds fetch_deadline{1000};    // then the hashes go to another peer
    std::chrono::milliseconds min_fetch_interval{20};  // per peer
    size_t max_recent = 65536;  // fetched hashes remembered, not fetched again when announced
  };

  struct Stats {
    uint64_t announced = 0;      // hashes that became pending
    uint64_t duplicate = 0;      // already pending (announcer added), known, or recent
    uint64_t over_listing = 0;   // past max_listing in one listing
    uint64_t over_share = 0;     // the announcer's share was full
    uint64_t over_total = 0;     // max_pending was reached
    uint64_t fetches = 0;        // fetch RPCs planned
    uint64_t delivered = 0;      // items handed to the caller (hash checked)
    uint64_t wrong_items = 0;    // items not asked of that peer in that fetch
    uint64_t misses = 0;         // hashes asked and not delivered (or deadline passed)
    uint64_t undeliverable = 0;  // dropped: every announcer failed it
    uint64_t forgotten = 0;      // dropped: its height was forgotten
    uint64_t scanned = 0;        // pending hashes NextFetches looked at (its work)
  };

  struct Fetch {
    uint64_t id = 0;
    size_t peer = 0;
    uint64_t height = 0;
    std::vector<Hash256> hashes;
  };

  explicit FloodFetcher(size_t peers, Limits limits);
  explicit FloodFetcher(size_t peers) : FloodFetcher(peers, Limits{}) {}

  // Peer `peer`'s listing of round `height`: OK, or RESOURCE_EXHAUSTED when some hashes were
  // dropped by a bound (listing size, the peer's share, the total); the message says which
  // and how many. INVALID_ARGUMENT for an unknown peer. `known(height, hash)`: the caller
  // holds that item already (not pending). `taken` (if given): how many leading hashes were
  // looked at before the first one a bound dropped (all of them if none was): a caller reading
  // a listing by offset reads again from there.
  Status Announce(size_t peer, uint64_t height, const std::vector<Hash256>& hashes,
                  const std::function<bool(uint64_t, const Hash256&)>& known = {},
                  Clock::time_point now = Clock::now(), size_t* taken = nullptr);

  // The fetches to send now (one per peer at most); fetches past their deadline are failed
  // first. Looks at pending hashes only while some peer can still take one: with every peer
  // busy it costs nothing, whatever a flood left pending.
  std::vector<Fetch> NextFetches(Clock::time_point now = Clock::now());

  // The reply to fetch `id`: the items whose RoundItemHash was asked in it (each once), for
  // the caller to accept. `looked_at`: how many of the fetch's hashes the server looked at
  // before its byte cap (ItemsRequest); hashes after it go back to pending without counting
  // against the peer, unless nothing was delivered at all. Unknown or expired ids: nothing.
  std::vector<RoundItem> Delivered(uint64_t id, const std::vector<RoundItem>& items,
                                   size_t looked_at, Clock::time_point now = Clock::now());
  std::vector<RoundItem> Delivered(uint64_t id, const std::vector<RoundItem>& items,
                                   Clock::time_point now = Clock::now()) {
    return Delivered(id, items, SIZE_MAX, now);
  }
  // Fetch `id` failed (RPC error): its hashes go to other announcers.
  void Failed(uint64_t id, Clock::time_point now = Clock::now());
  // Drops every pending hash of heights <= `height` (committed rounds).
  void Forget(uint64_t height);

  size_t pending() const { return pending_.size(); }
  size_t pending_of(size_t peer) const { return peers_.at(peer).charged; }
  size_t share() const { return share_; }
  size_t in_flight() const { return in_flight_.size(); }
  const Stats& stats() const { return stats_; }
  const Limits& limits() const { return limits_; }

 private:
  using Key = std::pair<uint64_t, Hash256>;  // (height, hash)
  struct Entry {
    size_t owner = 0;                  // charged to this peer's share
    std::vector<uint32_t> announcers;  // every peer that announced it, in order
    std::vector<uint32_t> tried;       // announcers that failed it
    uint64_t fetch = 0;                // outstanding fetch id, 0 if none
    bool queued = false;               // in ready_
  };
  struct PeerState {
    size_t charged = 0;  // pending entries charged to this peer
    uint64_t served = 0, missed = 0;
    uint64_t fetch = 0;  // outstanding fetch id, 0 if none
    Clock::time_point last_fetch{};
  };
  struct Outstanding {
    Fetch fetch;
    Clock::time_point deadline;
  };

  void Drop(std::map<Key, Entry>::iterator it);
  // Hashes of `o` not delivered: counted against the peer and made ready again.
  void Miss(const Outstanding& o, const std::set<Hash256>& delivered, size_t looked_at);
  void Remember(const Key& key);
  void Ready(const Key& key, Entry& e);

  const Limits limits_;
  const size_t share_;
  std::vector<PeerState> peers_;
  std::map<Key, Entry> pending_;
  std::deque<Key> ready_;  // pending, not in a fetch (stale keys skipped)
  std::map<uint64_t, Outstanding> in_flight_;
  std::set<Key> recent_;
  std::deque<Key> recent_order_;
  uint64_t next_id_ = 1;
  Stats stats_;
};

}  // namespace tessera::ledger::net
