// How a politician spreads and serves the chain: gossip to its peers (bounded queues), catching
// up on blocks it missed, and the read side of the chain (GetStatus, the GetHeads long-poll,
// GetBlock).
#include <spdlog/spdlog.h>

#include <algorithm>

#include "ledger/net/politician.h"

namespace tessera::ledger::net {
namespace {

constexpr size_t kMaxPeerQueue = 20000;

}  // namespace

// ---- Gossip and catch-up --------------------------------------------------------------------

void PoliticianNode::Gossip(std::function<void(PoliticianClient&)> task) {
  if (Drop()) return;
  {
    std::lock_guard<std::mutex> lock(peers_mu_);
    for (auto& peer : peers_) {
      if (peer->queue.size() >= kMaxPeerQueue) peer->queue.pop_front();
      peer->queue.push_back(task);
    }
  }
  peers_cv_.notify_all();
}

void PoliticianNode::PeerLoop(Peer* peer) {
  for (;;) {
    std::function<void(PoliticianClient&)> task;
    {
      std::unique_lock<std::mutex> lock(peers_mu_);
      peers_cv_.wait(lock, [&] { return stopping_ || !peer->queue.empty(); });
      if (stopping_) return;
      task = std::move(peer->queue.front());
      peer->queue.pop_front();
    }
    task(*peer->client);
  }
}

void PoliticianNode::CatchUpLoop() {
  uint64_t tick = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(peers_mu_);
      if (peers_cv_.wait_for(lock, std::chrono::milliseconds(100), [&] { return stopping_; })) {
        return;
      }
    }
    CommitFromVotes();
    if (++tick % 3 != 0) continue;
    std::vector<PoliticianClient*> order;
    for (auto& p : peers_) order.push_back(p->client.get());
    std::shuffle(order.begin(), order.end(), rng_);
    for (PoliticianClient* peer : order) {
      auto status = peer->GetStatus();
      if (!status.ok() || status->height() <= height()) continue;
      // Fetch and verify every missing block from this peer; stop at its first bad answer.
      while (height() < status->height()) {
        auto reply = peer->GetBlock(height() + 1);
        if (!reply.ok()) break;
        const CertifiedBlock& cb = reply->block();
        auto block = DecodeCertifiedBlock(cb.header(), cb.certificate(),
                                          {cb.identities().begin(), cb.identities().end()});
        if (!block.ok()) break;
        Status s = CommitBlock(*block, {reply->pools().begin(), reply->pools().end()},
                               /*from_votes=*/false);
        if (!s.ok()) {
          spdlog::warn("politician {}: block {} from {} rejected: {}", options_.id,
                       block->header.height, peer->address(), s.ToString());
          break;
        }
      }
    }
  }
}

void PoliticianNode::GetStatus(StatusReply* rep) {
  Delay();
  std::lock_guard<std::mutex> lock(mu_);
  rep->set_politician_id(options_.id);
  rep->set_height(latest_.height);
  *rep->mutable_latest() = latest_reply_.block();
  std::lock_guard<std::mutex> pending(mempool_mu_);
  rep->set_mempool(mempool_.size());
}

namespace {

// A certified block's canonical header and its proposer's identity (GetHeads' answer for it).
std::pair<std::string, std::string> HeadOf(const CertifiedBlock& block) {
  auto header = DecodeBlockHeader(AsBytes(block.header()));
  if (!header.ok()) return {};
  for (const std::string& bytes : block.identities()) {
    auto id = DecodeIdentity(AsBytes(bytes));
    if (id.ok() && id->citizen == header->proposer) return {block.header(), bytes};
  }
  return {block.header(), ""};
}

}  // namespace

void PoliticianNode::RememberHead(const CertifiedBlock& block) {
  auto head = HeadOf(block);
  auto header = DecodeBlockHeader(AsBytes(head.first));
  if (!header.ok()) return;
  recent_heads_[header->height] = std::move(head);
  while (recent_heads_.size() > kRecentHeads) recent_heads_.erase(recent_heads_.begin());
}

void PoliticianNode::GetHeads(const HeadsRequest& req, HeadsReply* rep,
                              const std::function<bool()>& cancelled) {
  Delay();
  const uint64_t after = req.after_height();
  const uint64_t max = req.max_headers() == 0
                           ? kMaxHeadsPerReply
                           : std::min<uint64_t>(req.max_headers(), kMaxHeadsPerReply);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(std::min(req.wait_ms(), kMaxHeadsWaitMs));
  std::vector<std::pair<uint64_t, std::pair<std::string, std::string>>> heads;
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (latest_.height <= after && head_waiters_ < kMaxHeadWaiters) {
      ++head_waiters_;
      // Short slices: a cancelled call or a server shutting down ends the wait within 100 ms.
      while (latest_.height <= after && std::chrono::steady_clock::now() < deadline &&
             !(cancelled && cancelled())) {
        head_cv_.wait_for(lock, std::chrono::milliseconds(100));
      }
      --head_waiters_;
    }
    rep->set_height(latest_.height);
    if (options_.faults.withhold) return;  // claims the height, hands out nothing
    for (uint64_t h = after + 1; h <= latest_.height && h <= after + max; ++h) {
      auto it = recent_heads_.find(h);
      heads.push_back(
          {h, it == recent_heads_.end() ? std::pair<std::string, std::string>{} : it->second});
    }
  }
  for (auto& [h, head] : heads) {
    if (head.first.empty()) {  // older than the in-memory window: from the block store
      auto stored = blocks_->Get(h);
      if (!stored.ok()) return;
      head = HeadOf(stored->block());
    }
    rep->add_headers(std::move(head.first));
    rep->add_proposer_identities(std::move(head.second));
  }
}

void PoliticianNode::GetBlock(const BlockRequest& req, BlockReply* rep) {
  Delay();
  if (options_.faults.withhold) return;
  auto block = blocks_->Get(req.height());
  if (block.ok()) *rep = std::move(*block);
  if (req.header_only()) rep->clear_pools();
}

}  // namespace tessera::ledger::net
