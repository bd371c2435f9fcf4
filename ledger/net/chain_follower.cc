#include "ledger/net/chain_follower.h"

#include <algorithm>
#include <chrono>

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

namespace {
// How long concurrent reads wait for the sample (as a committee round's reads do), and for a
// first answer when none has come by then (a loaded politician; the client deadline).
constexpr std::chrono::milliseconds kReadWait{300};
constexpr std::chrono::milliseconds kReadPatience{1500};
}  // namespace

bool ChainFollower::FollowOne(PoliticianClient& p, uint32_t wait_ms, Traffic* traffic) {
  for (;;) {
    const uint64_t from = tip().height;
    auto reply = p.GetHeads(from, options_.max_headers, wait_ms, traffic);
    if (!reply.ok()) return false;
    if (!Extend(*reply)) {
      ++bad_answers_;
      return false;
    }
    if (reply->height() <= tip().height) return true;  // nothing more there
    if (tip().height == from) return false;            // claims a height it does not hand out
  }
}

void ChainFollower::FollowAll(const std::vector<PoliticianClient*>& sample, Traffic* traffic,
                              PoliticianCalls& calls) {
  // Each round asks everyone for the headers after the tip; answers are tried highest claim
  // first. A round that extends the tip but leaves a higher claim of an honest-looking answer
  // unserved (more than max_headers behind) asks again; a claim nobody backs ends it.
  for (int round = 0; round < 64; ++round) {
    const uint64_t from = tip().height;
    const uint32_t max_headers = options_.max_headers;
    auto replies = calls.All<HeadsReply>(
        sample,
        [from, max_headers, traffic](PoliticianClient& p) {
          return p.GetHeads(from, max_headers, 0, traffic);
        },
        kReadWait, kReadPatience);
    std::vector<size_t> order;
    for (size_t i = 0; i < replies.size(); ++i) {
      if (replies[i]) order.push_back(i);
    }
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return replies[a]->height() > replies[b]->height();
    });
    // Only an answer whose headers all check backs its claim: a liar's claim asks nobody again.
    uint64_t claimed = from;
    for (size_t i : order) {
      if (Extend(*replies[i])) {
        claimed = std::max(claimed, replies[i]->height());
      } else {
        ++bad_answers_;
      }
    }
    if (tip().height == from || tip().height >= claimed) return;
  }
}

uint64_t ChainFollower::Advance(const std::vector<PoliticianClient*>& sample, bool wait,
                                Traffic* traffic, TicketCache* tickets, PoliticianCalls& calls) {
  const uint64_t before = tip().height;
  bool done = false;
  if (wait && !sample.empty()) {
    done = FollowOne(*sample[0], static_cast<uint32_t>(options_.wait_ms), traffic);
  }
  if (!done) FollowAll(sample, traffic, calls);
  if (unchecked_.size() >= options_.certify_every) {
    (void)CertifyTip(sample, traffic, tickets, calls);
  }
  return tip().height > before ? tip().height - before : 0;
}

Status ChainFollower::CheckCertified(const Result<BlockReply>& reply, PoliticianClient& p,
                                     TicketCache* tickets) {
  TESSERA_RETURN_IF_ERROR(reply.status());
  const BlockHeader& tip = unchecked_.back();
  const BlockHeader& below = unchecked_.size() >= 2 ? unchecked_[unchecked_.size() - 2] : verified_;
  const CertifiedBlock& cb = reply->block();
  auto block = DecodeCertifiedBlock(cb.header(), cb.certificate(),
                                    {cb.identities().begin(), cb.identities().end()});
  if (!block.ok()) {
    ++bad_answers_;
    return block.status();
  }
  if (BlockHash(block->header) != BlockHash(tip)) {
    // This politician's block at the tip's height is another one: either it or the one that
    // handed out the tip lies. Another politician may certify the tip.
    return InvalidArgumentError("politician " + p.address() + " holds another block " +
                                std::to_string(tip.height));
  }
  Status s = VerifyCertifiedBlock(genesis_, below, *block, tickets);
  if (!s.ok()) {
    ++bad_answers_;
    return s;
  }
  verified_ = tip;
  unchecked_.clear();
  ++certificates_checked_;
  return Status::Ok();
}

Status ChainFollower::CertifyTip(const std::vector<PoliticianClient*>& sample, Traffic* traffic,
                                 TicketCache* tickets, PoliticianCalls& calls) {
  if (unchecked_.empty()) return Status::Ok();
  const uint64_t height = unchecked_.back().height;
  Status last = UnavailableError("no politician in the sample answered");
  auto replies = calls.All<BlockReply>(
      sample,
      [height, traffic](PoliticianClient& p) {
        return p.GetBlock(height, traffic, /*header_only=*/true);
      },
      kReadWait, kReadPatience);
  for (size_t i = 0; i < sample.size(); ++i) {
    if (!replies[i]) continue;
    last = CheckCertified(std::move(*replies[i]), *sample[i], tickets);
    if (last.ok()) return last;
  }
  // Nobody certifies the tip: the headers after the last checked one are not believed.
  unchecked_.clear();
  ++bad_answers_;
  return last.WithContext("no politician certifies the followed block " + std::to_string(height) +
                          "; back to block " + std::to_string(verified_.height));
}

}  // namespace tessera::ledger::net
