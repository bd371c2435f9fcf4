// The flood adversary (PoliticianFaults::flood): what a politician can send without limit --
// signed commitments by the thousand for the height being agreed, and pools for heights far
// ahead. Honest politicians keep two commitments per politician and height and refuse pools
// more than two heights ahead (AddPool, AcceptItem); citizens keep two commitments per
// politician (two are equivocation and exclude its pool). docs/ledger-network.md,
// "Adversaries and their measured effect".
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "ledger/crypto/hash.h"
#include "ledger/net/politician.h"
#include "ledger/net/round_item.h"
#include "ledger/net/surplus_filter.h"
#include "ledger/net/wire_bytes.h"

namespace tessera::ledger::net {

void PoliticianNode::Flood(uint64_t h) {
  RoundLog& log = rounds_[h];
  for (int i = 0; i < PoliticianFaults::kFloodCommitments; ++i) {
    TxPoolCommitment c{.politician_id = options_.id,
                       .height = h,
                       .tx_count = 0,
                       .pool_hash = Sha256("flood " + std::to_string(h) + " " + std::to_string(i))};
    SignTxPoolCommitment(c, options_.keys);
    RoundItem item;
    item.set_payload(EncodeTxPoolCommitment(c));
    // Served to citizens from its own round log, and pushed to every peer.
    if (log.seen.emplace(RoundItemHash(item), log.items.size()).second) log.items.push_back(item);
    Gossip([item, h](PoliticianClient& peer) { (void)peer.Post(h, item); });
  }
  for (uint64_t ahead : {10, 1000, 1000000}) {
    TxPoolCommitment c{.politician_id = options_.id,
                       .height = h + ahead,
                       .tx_count = 0,
                       .pool_hash = PoolHash({})};
    SignTxPoolCommitment(c, options_.keys);
    Pool pool;
    pool.set_commitment(EncodeTxPoolCommitment(c));
    Gossip([pool](PoliticianClient& peer) { (void)peer.PostPool(pool); });
  }
}

// The cap comes first: a commitment of a politician that already has two for this height is
// refused on its decoded fields alone, so the thousands a flooder signs cost an honest
// politician a decode each, not a signature check each (PoliticianFloodTest counts them). A
// forged commitment never enters the cap (it is inserted only once verified), so nobody else
// can use it up for a politician.
Status PoliticianNode::AdmitCommitment(uint64_t h, const TxPoolCommitment& c, RoundLog& log) {
  const PoliticianInfo* owner = options_.genesis.Politician(c.politician_id);
  if (c.height != h || owner == nullptr) return InvalidArgumentError("invalid pool commitment");
  std::set<Hash256>& signed_pools = log.commitments[c.politician_id];
  if (!signed_pools.count(c.pool_hash) && signed_pools.size() >= 2) {
    return ResourceExhaustedError("politician " + std::to_string(c.politician_id) +
                                  " already has two commitments for height " + std::to_string(h));
  }
  if (!VerifyTxPoolCommitment(c, owner->key))
    return InvalidArgumentError("invalid pool commitment");
  // One commitment per politician and height; a second is equivocation evidence and is kept
  // (citizens leave such a politician out).
  signed_pools.insert(c.pool_hash);
  return Status::Ok();
}

// ---- Pushes from other processes (Post, PostPool) -------------------------------------------
//
// A hostile politician (or anyone) can call Post once per item, as fast as it can send. Each
// such call would cost a decode and up to two signature checks (VerifyItemSignatures) before
// any cap refuses it. The budget per transport connection bounds that to pushes_per_s calls
// per connection, refused here before anything in them is looked at; and with pull gossip on,
// nobody honest pushes a pool commitment (citizens never post one, politicians pull them from
// each other's listings), so a pushed one is refused on its type byte alone.

Status PoliticianNode::AdmitPush(const std::string& peer, const RoundItem* item) {
  if (!push_limiter_.Allow(peer)) {
    ++pushes_over_budget_;
    return ResourceExhaustedError(fmt::format(
        "push budget of connection {} spent ({:g} per s, burst {:g}); retry after {} ms", peer,
        options_.pushes_per_s, options_.pushes_burst, push_limiter_.RetryAfterMs(peer)));
  }
  if (options_.pull_gossip && item != nullptr && !item->payload().empty() &&
      static_cast<uint8_t>(item->payload()[0]) ==
          static_cast<uint8_t>(MessageType::kTxPoolCommitment)) {
    ++pushed_commitments_;
    return FailedPreconditionError(
        "pool commitments are pulled from the politicians' listings, not pushed");
  }
  return Status::Ok();
}

PoliticianNode::PushStats PoliticianNode::push_stats() const {
  return {.over_budget = pushes_over_budget_.load(),
          .pushed_commitments = pushed_commitments_.load()};
}

// ---- Pull gossip (flood_fetcher.h) -----------------------------------------------------------
//
// Per peer, ListenLoop long-polls the peer's hash listing of the next height (RoundRequest
// with relay set, so that it does not freeze the peer's pool) at most once per
// flood.min_fetch_interval, and announces it to fetcher_; FetchLoop sends the GetItems batches
// fetcher_ plans for that peer and hands each item the fetcher checked against its hash to
// Post, as a peer's push used to. A flooder therefore costs this politician at most one
// listing and one fetch per peer per interval, and at most its share of the pending set.

bool PoliticianNode::Stopping() { return flood_stop_.load(); }

void PoliticianNode::PlanFetches() {
  for (FloodFetcher::Fetch& f : fetcher_->NextFetches()) {
    mailboxes_[f.peer].push_back(std::move(f));
  }
}

void PoliticianNode::ListenLoop(size_t i) {
  // A listing reply holds at most kMaxRoundListing hashes of 34 wire bytes from an honest
  // peer; a longer one fails the call before it is parsed, so a flooder's listing costs at
  // most ~160 KiB of receive per call.
  PoliticianClient client(peers_[i]->client->address(), 1000,
                          static_cast<int>(kMaxRoundListing * 40));
  const auto interval = options_.flood.min_fetch_interval;
  uint64_t listed = 0, offset = 0;
  while (!Stopping()) {
    const auto start = std::chrono::steady_clock::now();
    const uint64_t h = height() + 1;
    if (h != listed) {  // a new height: the old one's pending hashes are of no use
      listed = h;
      offset = 0;
      std::lock_guard<std::mutex> lock(flood_mu_);
      fetcher_->Forget(h - 1);
    }
    RoundWait wait;
    wait.wait_ms = kFloodListenWaitMs;
    wait.listener = "politician " + std::to_string(options_.id);
    wait.relay = true;
    auto rep = client.ListenRound(h, offset, wait);
    if (rep.ok()) {
      std::vector<Hash256> hashes;
      bool malformed = false;
      for (const std::string& b : rep->item_hashes()) {
        auto hash = HashFromBytes(b, "item hash");
        if (!hash.ok()) {
          malformed = true;
          break;
        }
        hashes.push_back(*hash);
      }
      size_t taken = 0;
      {
        // What this politician holds already, looked up under mu_ and then released: mu_
        // guards every request handler, and holding it through Announce and PlanFetches (a
        // scan of the pending set, thousands of hashes under a flood) held citizens' calls
        // behind a flooder's listing. An item taken meanwhile is fetched once more, and Post
        // finds it already held.
        std::set<Hash256> held;
        {
          std::lock_guard<std::mutex> lock(mu_);
          auto round = rounds_.find(h);
          if (round != rounds_.end()) {
            const size_t n = std::min(hashes.size(), options_.flood.max_listing);
            for (size_t k = 0; k < n; ++k) {
              if (round->second.seen.count(hashes[k])) held.insert(hashes[k]);
            }
          }
        }
        auto known = [&](uint64_t, const Hash256& x) { return held.count(x) > 0; };
        std::lock_guard<std::mutex> flood_lock(flood_mu_);
        ++flood_counts_.listing_rpcs;
        Status s =
            fetcher_->Announce(i, h, hashes, known, std::chrono::steady_clock::now(), &taken);
        if (!s.ok()) spdlog::debug("politician {}: {}", options_.id, s.ToString());
        PlanFetches();
      }
      flood_cv_.notify_all();
      offset = (taken == hashes.size() && !malformed) ? rep->next_offset() : offset + taken;
    } else {
      std::lock_guard<std::mutex> lock(flood_mu_);
      ++flood_counts_.listing_rpcs;
      ++flood_counts_.listing_errors;
    }
    // One listing per interval at most; a peer that fails is asked again after 10 intervals.
    const auto next = start + (rep.ok() ? interval : 10 * interval);
    while (!Stopping() && std::chrono::steady_clock::now() < next) {
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
          next - std::chrono::steady_clock::now(), std::chrono::milliseconds(50)));
    }
  }
}

void PoliticianNode::FetchLoop(size_t i) {
  // An honest reply stops after the item crossing kMaxItemsReplyBytes.
  PoliticianClient client(peers_[i]->client->address(), 1000,
                          static_cast<int>(4 * kMaxItemsReplyBytes));
  // This peer's surplus commitments are dropped here, before Post's signature checks and
  // mu_ (surplus_filter.h).
  std::set<uint32_t> ids;
  for (const PoliticianInfo& p : options_.genesis.politicians) ids.insert(p.id);
  SurplusFilter surplus(std::move(ids));
  while (!Stopping()) {
    FloodFetcher::Fetch f;
    {
      std::unique_lock<std::mutex> lock(flood_mu_);
      flood_cv_.wait_for(lock, std::chrono::milliseconds(50),
                         [&] { return Stopping() || !mailboxes_[i].empty(); });
      if (Stopping()) return;
      if (mailboxes_[i].empty()) {  // deadlines pass, peers free up: plan again
        PlanFetches();
        if (mailboxes_[i].empty()) continue;
      }
      f = std::move(mailboxes_[i].front());
      mailboxes_[i].pop_front();
      ++flood_counts_.fetch_rpcs;
    }
    flood_cv_.notify_all();  // PlanFetches may have filled other peers' mailboxes
    auto rep = client.GetItems(f.height, f.hashes);
    std::vector<RoundItem> items;
    {
      std::lock_guard<std::mutex> lock(flood_mu_);
      if (rep.ok()) {
        items = fetcher_->Delivered(f.id, {rep->items().begin(), rep->items().end()},
                                    rep->next_offset());
      } else {
        fetcher_->Failed(f.id);
      }
    }
    surplus.Forget(height());
    size_t dropped = 0;
    for (const RoundItem& item : items) {
      if (!surplus.Admit(f.height, item)) {
        ++dropped;
        continue;
      }
      PostRequest req;
      req.set_height(f.height);
      *req.mutable_item() = item;
      PostReply post;
      Post(req, &post);
      std::lock_guard<std::mutex> lock(flood_mu_);
      ++(post.accepted() ? flood_counts_.accepted : flood_counts_.refused);
    }
    {
      std::lock_guard<std::mutex> lock(flood_mu_);
      flood_counts_.surplus_dropped += dropped;
      PlanFetches();
    }
    flood_cv_.notify_all();
  }
}

PoliticianNode::FloodStats PoliticianNode::flood_stats() const {
  std::lock_guard<std::mutex> lock(flood_mu_);
  FloodStats s = flood_counts_;
  if (fetcher_) {
    s.fetcher = fetcher_->stats();
    s.pending = fetcher_->pending();
  }
  return s;
}

}  // namespace tessera::ledger::net
