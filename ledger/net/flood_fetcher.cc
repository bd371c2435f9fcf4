#include "ledger/net/flood_fetcher.h"

#include <algorithm>
#include <string>

#include "ledger/net/round_item.h"

namespace tessera::ledger::net {

FloodFetcher::FloodFetcher(size_t peers, Limits limits)
    : limits_(limits),
      share_(std::max<size_t>(1, limits.max_pending / std::max<size_t>(peers, 1))),
      peers_(peers) {}

Status FloodFetcher::Announce(size_t peer, uint64_t height, const std::vector<Hash256>& hashes,
                              const std::function<bool(uint64_t, const Hash256&)>& known,
                              Clock::time_point, size_t* taken) {
  if (taken != nullptr) *taken = 0;
  if (peer >= peers_.size()) return InvalidArgumentError("unknown peer " + std::to_string(peer));
  const size_t n = std::min(hashes.size(), limits_.max_listing);
  size_t first_dropped = n;
  const size_t over_listing = hashes.size() - n;
  size_t over_share = 0, over_total = 0;
  PeerState& p = peers_[peer];
  for (size_t i = 0; i < n; ++i) {
    const Key key{height, hashes[i]};
    auto it = pending_.find(key);
    if (it != pending_.end()) {
      std::vector<uint32_t>& a = it->second.announcers;
      if (std::find(a.begin(), a.end(), peer) == a.end()) a.push_back(static_cast<uint32_t>(peer));
      ++stats_.duplicate;
      continue;
    }
    if (recent_.count(key) || (known && known(height, hashes[i]))) {
      ++stats_.duplicate;
      continue;
    }
    if (p.charged >= share_) {
      ++over_share;
      first_dropped = std::min(first_dropped, i);
      continue;
    }
    if (pending_.size() >= limits_.max_pending) {
      ++over_total;
      first_dropped = std::min(first_dropped, i);
      continue;
    }
    Entry& e = pending_[key];
    e.owner = peer;
    e.announcers.push_back(static_cast<uint32_t>(peer));
    ++p.charged;
    ++stats_.announced;
    Ready(key, e);
  }
  if (taken != nullptr) *taken = first_dropped;
  stats_.over_listing += over_listing;
  stats_.over_share += over_share;
  stats_.over_total += over_total;
  if (over_listing + over_share + over_total == 0) return Status::Ok();
  return ResourceExhaustedError(
      "listing of " + std::to_string(hashes.size()) + " hashes from peer " + std::to_string(peer) +
      ": " + std::to_string(over_listing) + " past the listing cap of " +
      std::to_string(limits_.max_listing) + ", " + std::to_string(over_share) +
      " past the peer's share of " + std::to_string(share_) + " pending, " +
      std::to_string(over_total) + " past the total of " + std::to_string(limits_.max_pending));
}

void FloodFetcher::Ready(const Key& key, Entry& e) {
  if (e.queued) return;
  e.queued = true;
  ready_.push_back(key);
}

std::vector<FloodFetcher::Fetch> FloodFetcher::NextFetches(Clock::time_point now) {
  for (auto it = in_flight_.begin(); it != in_flight_.end();) {
    if (it->second.deadline > now) {
      ++it;
      continue;
    }
    Outstanding o = std::move(it->second);
    it = in_flight_.erase(it);
    peers_[o.fetch.peer].fetch = 0;
    Miss(o, {}, SIZE_MAX);
  }
  // Cheapest announcer first: (misses + 1) per (item served + 1); among equally cheap ones,
  // the first that can take the hash now.
  auto cost = [&](uint32_t peer) {
    const PeerState& p = peers_[peer];
    return static_cast<double>(p.missed + 1) / static_cast<double>(p.served + 1);
  };
  std::vector<Fetch> out;
  std::vector<size_t> building(peers_.size(), SIZE_MAX);  // peer -> index in out
  // Peers that can still take a hash in this call: free now, or with a batch being built that
  // has room. Once none can, the scan stops: the rest of ready_ would only be put back. Under
  // a flood ready_ holds thousands of hashes, and this is called after every listing and
  // fetch of every peer (about 100 times a second); scanning it all each time took about a
  // fifth of an honest politician's CPU samples in a flood run (docs/ledger-network.md, "What
  // a flood costs, session 13").
  size_t open = 0;
  for (const PeerState& p : peers_) {
    open += p.fetch == 0 && now - p.last_fetch >= limits_.min_fetch_interval;
  }
  std::vector<Key> again;  // scanned and still waiting: back to the front, in order
  for (size_t k = ready_.size(); k > 0 && open > 0; --k) {
    const Key key = ready_.front();
    ready_.pop_front();
    ++stats_.scanned;
    auto it = pending_.find(key);
    if (it == pending_.end()) continue;
    Entry& e = it->second;
    e.queued = false;
    if (e.fetch != 0) continue;
    double cheapest = 0;
    bool any = false;
    for (uint32_t a : e.announcers) {
      if (std::find(e.tried.begin(), e.tried.end(), a) != e.tried.end()) continue;
      if (!any || cost(a) < cheapest) cheapest = cost(a);
      any = true;
    }
    if (!any) {  // every announcer failed it
      ++stats_.undeliverable;
      Drop(it);
      continue;
    }
    // An announcer can take the hash if its fetch being built is for this height and has room,
    // or it has none outstanding and its interval has passed.
    size_t peer = SIZE_MAX;
    for (uint32_t a : e.announcers) {
      if (cost(a) != cheapest || std::find(e.tried.begin(), e.tried.end(), a) != e.tried.end()) {
        continue;
      }
      if (building[a] != SIZE_MAX) {
        const Fetch& f = out[building[a]];
        if (f.height == key.first && f.hashes.size() < limits_.max_batch_items) peer = a;
      } else if (peers_[a].fetch == 0 && now - peers_[a].last_fetch >= limits_.min_fetch_interval) {
        peer = a;
      }
      if (peer != SIZE_MAX) break;
    }
    if (peer == SIZE_MAX) {  // its cheapest announcers are busy: wait for one
      e.queued = true;
      again.push_back(key);
      continue;
    }
    if (building[peer] == SIZE_MAX) {
      building[peer] = out.size();
      out.push_back(Fetch{.id = next_id_++, .peer = peer, .height = key.first, .hashes = {}});
    }
    Fetch& f = out[building[peer]];
    f.hashes.push_back(key.second);
    e.fetch = f.id;
    if (f.hashes.size() >= limits_.max_batch_items) --open;
  }
  ready_.insert(ready_.begin(), again.begin(), again.end());
  for (const Fetch& f : out) {
    PeerState& p = peers_[f.peer];
    p.fetch = f.id;
    p.last_fetch = now;
    in_flight_.emplace(f.id, Outstanding{.fetch = f, .deadline = now + limits_.fetch_deadline});
    ++stats_.fetches;
  }
  return out;
}

std::vector<RoundItem> FloodFetcher::Delivered(uint64_t id, const std::vector<RoundItem>& items,
                                               size_t looked_at, Clock::time_point) {
  std::vector<RoundItem> out;
  auto it = in_flight_.find(id);
  if (it == in_flight_.end()) return out;
  Outstanding o = std::move(it->second);
  in_flight_.erase(it);
  PeerState& p = peers_[o.fetch.peer];
  p.fetch = 0;
  const std::set<Hash256> asked(o.fetch.hashes.begin(), o.fetch.hashes.end());
  std::set<Hash256> got;
  for (const RoundItem& item : items) {
    const Hash256 h = RoundItemHash(item);
    if (!asked.count(h) || !got.insert(h).second) {  // wrong bytes, or not asked, or twice
      ++stats_.wrong_items;
      ++p.missed;
      continue;
    }
    const Key key{o.fetch.height, h};
    auto e = pending_.find(key);
    if (e == pending_.end() || e->second.fetch != id) continue;  // forgotten meanwhile
    Drop(e);
    Remember(key);
    out.push_back(item);
    ++p.served;
    ++stats_.delivered;
  }
  // A reply cut by the byte cap excuses the hashes after it, but only if it made progress.
  Miss(o, got, got.empty() ? SIZE_MAX : looked_at);
  return out;
}

void FloodFetcher::Failed(uint64_t id, Clock::time_point) {
  auto it = in_flight_.find(id);
  if (it == in_flight_.end()) return;
  Outstanding o = std::move(it->second);
  in_flight_.erase(it);
  peers_[o.fetch.peer].fetch = 0;
  Miss(o, {}, SIZE_MAX);
}

void FloodFetcher::Miss(const Outstanding& o, const std::set<Hash256>& delivered,
                        size_t looked_at) {
  const auto peer = static_cast<uint32_t>(o.fetch.peer);
  for (size_t i = 0; i < o.fetch.hashes.size(); ++i) {
    const Hash256& h = o.fetch.hashes[i];
    if (delivered.count(h)) continue;
    const Key key{o.fetch.height, h};
    auto it = pending_.find(key);
    if (it == pending_.end() || it->second.fetch != o.fetch.id) continue;
    Entry& e = it->second;
    e.fetch = 0;
    if (i < looked_at) {
      e.tried.push_back(peer);
      ++peers_[peer].missed;
      ++stats_.misses;
    }
    Ready(key, e);
  }
}

void FloodFetcher::Forget(uint64_t height) {
  while (!pending_.empty() && pending_.begin()->first.first <= height) {
    Drop(pending_.begin());
    ++stats_.forgotten;
  }
}

void FloodFetcher::Drop(std::map<Key, Entry>::iterator it) {
  --peers_[it->second.owner].charged;
  pending_.erase(it);
}

void FloodFetcher::Remember(const Key& key) {
  if (!recent_.insert(key).second) return;
  recent_order_.push_back(key);
  while (recent_order_.size() > limits_.max_recent) {
    recent_.erase(recent_order_.front());
    recent_order_.pop_front();
  }
}

}  // namespace tessera::ledger::net
