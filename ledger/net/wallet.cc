#include "ledger/net/wallet.h"

#include <algorithm>
#include <random>

#include "core/file.h"

namespace tessera::ledger::net {

LightClient::LightClient(Genesis genesis, std::filesystem::path checkpoint_file)
    : genesis_(std::move(genesis)), checkpoint_file_(std::move(checkpoint_file)) {
  for (const PoliticianInfo& p : genesis_.politicians) {
    // A wallet reads what a politician's peer reads (whole blocks, pools included, in
    // BlockTxs), so it takes the peer's caps: no reply above the honest bound of its kind.
    politicians_.push_back(std::make_unique<PoliticianClient>(
        p.address, 3000, ReplyCaps::Peer(genesis_.politicians.size())));
  }
  head_ = genesis_.GenesisHeader().value();
}

Status LightClient::LoadCheckpoint() {
  if (checkpoint_file_.empty() || !std::filesystem::exists(checkpoint_file_)) return Status::Ok();
  TESSERA_ASSIGN_OR_RETURN(std::string text, ReadFile(checkpoint_file_));
  while (!text.empty() && text.back() == '\n') text.pop_back();
  TESSERA_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, FromHex(text));
  auto header = DecodeBlockHeader(bytes);
  if (!header.ok()) return header.status().WithContext(checkpoint_file_.string());
  // A checkpoint is only ever written after verification; it must still belong to this chain.
  if (header->height == 0 && BlockHash(*header) != BlockHash(head_)) {
    return FailedPreconditionError("checkpoint is the genesis of another chain");
  }
  head_ = *header;
  return Status::Ok();
}

Status LightClient::Sync(const std::function<void(const CertifiedBlockData&)>& on_block) {
  TESSERA_RETURN_IF_ERROR(LoadCheckpoint());
  std::vector<PoliticianClient*> order;
  for (auto& p : politicians_) order.push_back(p.get());
  std::shuffle(order.begin(), order.end(), std::mt19937_64(std::random_device{}()));
  size_t reachable = 0;
  for (PoliticianClient* p : order) {
    auto status = p->GetStatus();
    if (!status.ok()) continue;
    ++reachable;
    while (head_.height < status->height()) {
      auto reply = p->GetBlock(head_.height + 1, nullptr, /*header_only=*/true);
      if (!reply.ok()) break;
      const CertifiedBlock& cb = reply->block();
      auto block = DecodeCertifiedBlock(cb.header(), cb.certificate(),
                                        {cb.identities().begin(), cb.identities().end()});
      if (!block.ok() || !VerifyCertifiedBlock(genesis_, head_, *block, &tickets_).ok()) break;
      head_ = block->header;
      if (on_block) on_block(*block);
    }
  }
  if (reachable == 0) return UnavailableError("no politician is reachable");
  if (checkpoint_file_.empty()) return Status::Ok();
  return WriteFileAtomically(checkpoint_file_, ToHex(AsBytes(EncodeBlockHeader(head_))) + "\n");
}

std::vector<PoliticianClient*> LightClient::RandomOrder() {
  std::vector<PoliticianClient*> order;
  for (auto& p : politicians_) order.push_back(p.get());
  std::shuffle(order.begin(), order.end(), std::mt19937_64(std::random_device{}()));
  return order;
}

Result<std::vector<std::optional<LeafValue>>> LightClient::ReadLeaves(
    const std::vector<Hash256>& keys) {
  Status last = UnavailableError("no politician is reachable");
  for (PoliticianClient* p : RandomOrder()) {
    auto reply = p->ReadState(head_.height, keys);
    if (!reply.ok()) {
      last = reply.status();
      continue;
    }
    auto proof = StateProof::Decode(AsBytes(reply->proof()));
    if (!proof.ok()) {
      last = proof.status();
      continue;
    }
    auto values = proof->Verify(head_.state_root, keys);
    if (!values.ok()) {
      last = values.status().WithContext("proof from " + p->address() + " rejected");
      continue;
    }
    return std::move(*values);
  }
  return last;
}

Result<std::optional<Account>> LightClient::Balance(const PublicKey& account) {
  TESSERA_ASSIGN_OR_RETURN(auto values, ReadLeaves({AccountKey(account)}));
  if (!values[0]) return std::optional<Account>();
  TESSERA_ASSIGN_OR_RETURN(Account a, DecodeAccount(*values[0]));
  return std::optional<Account>(a);
}

Status LightClient::Submit(const LedgerTx& tx, size_t fanout) {
  std::string reasons;
  size_t accepted = 0, tried = 0;
  for (PoliticianClient* p : RandomOrder()) {
    if (tried++ >= std::max<size_t>(fanout, 1)) break;
    Status s = p->SubmitTransaction(tx);
    if (s.ok()) {
      ++accepted;
    } else {
      reasons += (reasons.empty() ? "" : "; ") + p->address() + ": " + s.message();
    }
  }
  if (accepted == 0) return FailedPreconditionError("transaction rejected: " + reasons);
  return Status::Ok();
}

Result<BlockHeader> LightClient::HeaderAt(uint64_t height) {
  if (height > head_.height) {
    return NotFoundError("block " + std::to_string(height) + " is above the checkpoint (" +
                         std::to_string(head_.height) + ")");
  }
  known_hashes_[head_.height] = BlockHash(head_);
  // Walk down the prev_hash links from the nearest verified header above `height`.
  auto above = known_hashes_.lower_bound(height);
  std::optional<BlockHeader> found;
  for (uint64_t k = above->first; k >= height; --k) {
    Status last = UnavailableError("no politician served block " + std::to_string(k));
    std::optional<BlockHeader> header;
    for (PoliticianClient* p : RandomOrder()) {
      auto reply = p->GetBlock(k, nullptr, /*header_only=*/true);
      if (!reply.ok()) continue;
      auto h = DecodeBlockHeader(AsBytes(reply->block().header()));
      if (h.ok() && BlockHash(*h) == known_hashes_.at(k)) {
        header = *h;
        break;
      }
      last = DataLossError("politician " + p->address() + " served a wrong block " +
                           std::to_string(k));
    }
    if (!header) return last;
    if (k > 0) known_hashes_[k - 1] = header->prev_hash;
    if (k == height) found = header;
    if (k == 0) break;
  }
  return *found;
}

Result<std::vector<LedgerTx>> LightClient::BlockTxs(uint64_t height) {
  TESSERA_ASSIGN_OR_RETURN(BlockHeader header, HeaderAt(height));
  Status last = UnavailableError("no politician served block " + std::to_string(height));
  for (PoliticianClient* p : RandomOrder()) {
    auto reply = p->GetBlock(height);
    if (!reply.ok()) continue;
    auto served = DecodeBlockHeader(AsBytes(reply->block().header()));
    if (!served.ok() || BlockHash(*served) != BlockHash(header) ||
        static_cast<size_t>(reply->pools_size()) != header.pool_hashes.size()) {
      last = DataLossError("politician " + p->address() + " served a wrong block");
      continue;
    }
    std::vector<LedgerTx> txs;
    bool good = true;
    for (size_t i = 0; i < header.pool_hashes.size() && good; ++i) {
      std::vector<LedgerTx> pool;
      for (const std::string& t : reply->pools(static_cast<int>(i)).txs()) {
        auto tx = DecodeLedgerTx(AsBytes(t));
        if (!tx.ok()) {
          good = false;
          break;
        }
        pool.push_back(std::move(*tx));
      }
      good = good && PoolHash(pool) == header.pool_hashes[i];
      txs.insert(txs.end(), pool.begin(), pool.end());
    }
    if (good) return txs;
    last = DataLossError("politician " + p->address() + " served pools that do not match");
  }
  return last;
}

Result<Transaction> LightClient::Send(const KeyPair& from, const PublicKey& to, uint64_t amount,
                                      size_t fanout) {
  TESSERA_ASSIGN_OR_RETURN(std::optional<Account> account, Balance(from.public_key()));
  if (!account) return NotFoundError("the sending account does not exist");
  Transaction tx{.from = from.public_key(), .to = to, .amount = amount, .nonce = account->nonce};
  SignTransaction(tx, from);
  TESSERA_RETURN_IF_ERROR(Submit(tx, fanout));
  return tx;
}

}  // namespace tessera::ledger::net
