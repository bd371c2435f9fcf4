#include "ledger/net/chain_follower.h"

#include "ledger/net/identity.h"

namespace tessera::ledger::net {

ChainFollower::ChainFollower(const Genesis& genesis, FollowOptions options, BlockHeader verified)
    : genesis_(genesis), options_(options), verified_(std::move(verified)) {
  if (options_.certify_every == 0) options_.certify_every = 1;
}

void ChainFollower::Reset(const BlockHeader& head) {
  verified_ = head;
  unchecked_.clear();
}

bool ChainFollower::Extend(const HeadsReply& reply) {
  if (reply.proposer_identities_size() != reply.headers_size()) return false;
  for (int i = 0; i < reply.headers_size(); ++i) {
    auto header = DecodeBlockHeader(AsBytes(reply.headers(i)));
    if (!header.ok()) return false;
    if (header->height <= tip().height) continue;  // already have it (from another politician)
    auto proposer = DecodeIdentity(AsBytes(reply.proposer_identities(i)));
    if (!proposer.ok()) return false;
    // Height, link to the tip, the proposer's registration and ticket, and the seed.
    if (!VerifyProposal(genesis_, tip(), *header, *proposer).ok()) return false;
    unchecked_.push_back(std::move(*header));
  }
  return true;
}

uint64_t ChainFollower::Advance(const std::vector<PoliticianClient*>& sample, bool wait,
                                Traffic* traffic, TicketCache* tickets) {
  const uint64_t before = tip().height;
  for (size_t i = 0; i < sample.size(); ++i) {
    bool ask_next = false;  // this politician failed, lied, or withheld what it claims
    for (;;) {              // follow it for as long as it has headers beyond what it handed out
      const uint64_t from = tip().height;
      const uint32_t wait_ms = wait && i == 0 ? static_cast<uint32_t>(options_.wait_ms) : 0;
      auto reply = sample[i]->GetHeads(from, options_.max_headers, wait_ms, traffic);
      if (!reply.ok()) {
        ask_next = true;
        break;
      }
      if (!Extend(*reply)) {
        ++bad_answers_;
        ask_next = true;
        break;
      }
      if (reply->height() <= tip().height) break;  // nothing more there
      if (tip().height == from) {                  // claims a height it does not hand out
        ask_next = true;
        break;
      }
    }
    if (wait && !ask_next) break;
  }
  if (unchecked_.size() >= options_.certify_every) (void)CertifyTip(sample, traffic, tickets);
  return tip().height > before ? tip().height - before : 0;
}

Status ChainFollower::CertifyTip(const std::vector<PoliticianClient*>& sample, Traffic* traffic,
                                 TicketCache* tickets) {
  if (unchecked_.empty()) return Status::Ok();
  const BlockHeader& tip = unchecked_.back();
  const BlockHeader& below = unchecked_.size() >= 2 ? unchecked_[unchecked_.size() - 2] : verified_;
  const Hash256 want = BlockHash(tip);
  const uint64_t height = tip.height;
  Status last = UnavailableError("no politician in the sample");
  for (PoliticianClient* p : sample) {
    auto reply = p->GetBlock(tip.height, traffic, /*header_only=*/true);
    if (!reply.ok()) {
      last = reply.status();
      continue;
    }
    const CertifiedBlock& cb = reply->block();
    auto block = DecodeCertifiedBlock(cb.header(), cb.certificate(),
                                      {cb.identities().begin(), cb.identities().end()});
    if (!block.ok()) {
      last = block.status();
      ++bad_answers_;
      continue;
    }
    if (BlockHash(block->header) != want) {
      // This politician's block at the tip's height is another one: either it or the one that
      // handed out the tip lies. Another politician may certify the tip.
      last = InvalidArgumentError("politician " + p->address() + " holds another block " +
                                  std::to_string(tip.height));
      continue;
    }
    Status s = VerifyCertifiedBlock(genesis_, below, *block, tickets);
    if (s.ok()) {
      verified_ = tip;
      unchecked_.clear();
      ++certificates_checked_;
      return Status::Ok();
    }
    last = s;
    ++bad_answers_;
  }
  // Nobody certifies the tip: the headers after the last checked one are not believed.
  unchecked_.clear();
  ++bad_answers_;
  return last.WithContext("no politician certifies the followed block " + std::to_string(height) +
                          "; back to block " + std::to_string(verified_.height));
}

}  // namespace tessera::ledger::net
