#include "ledger/net/wallet.h"

#include <algorithm>
#include <random>

#include "core/file.h"

namespace tessera::ledger::net {

LightClient::LightClient(Genesis genesis, std::filesystem::path checkpoint_file)
    : genesis_(std::move(genesis)), checkpoint_file_(std::move(checkpoint_file)) {
  for (const PoliticianInfo& p : genesis_.politicians) {
    politicians_.push_back(std::make_unique<PoliticianClient>(p.address, 3000));
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

Result<std::optional<Account>> LightClient::Balance(const PublicKey& account) {
  std::vector<Hash256> keys{AccountKey(account)};
  Status last = UnavailableError("no politician is reachable");
  for (auto& p : politicians_) {
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
    if (!(*values)[0]) return std::optional<Account>();
    TESSERA_ASSIGN_OR_RETURN(Account a, DecodeAccount(*(*values)[0]));
    return std::optional<Account>(a);
  }
  return last;
}

Result<Transaction> LightClient::Send(const KeyPair& from, const PublicKey& to, uint64_t amount,
                                      size_t fanout) {
  TESSERA_ASSIGN_OR_RETURN(std::optional<Account> account, Balance(from.public_key()));
  if (!account) return NotFoundError("the sending account does not exist");
  Transaction tx{.from = from.public_key(), .to = to, .amount = amount, .nonce = account->nonce};
  SignTransaction(tx, from);
  std::string reasons;
  size_t accepted = 0, tried = 0;
  std::vector<PoliticianClient*> order;
  for (auto& p : politicians_) order.push_back(p.get());
  std::shuffle(order.begin(), order.end(), std::mt19937_64(std::random_device{}()));
  for (PoliticianClient* p : order) {
    if (tried++ >= std::max<size_t>(fanout, 1)) break;
    Status s = p->SubmitTransaction(tx);
    if (s.ok()) {
      ++accepted;
    } else {
      reasons += (reasons.empty() ? "" : "; ") + p->address() + ": " + s.message();
    }
  }
  if (accepted == 0) return FailedPreconditionError("transfer rejected: " + reasons);
  return tx;
}

}  // namespace tessera::ledger::net
