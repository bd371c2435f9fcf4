#include "reviews/issuer/issuer.h"

#include <spdlog/spdlog.h>

#include <thread>

#include "core/file.h"
#include "ledger/crypto/hash.h"

namespace tessera::reviews::issuer {

using namespace onchain;  // NOLINT: the payload and leaf vocabulary of this file

Issuer::Issuer(IssuerOptions options, std::unique_ptr<client::ReviewsClient> client,
               blind::SecretKey key)
    : options_(std::move(options)), client_(std::move(client)), key_(std::move(key)) {}

Result<std::unique_ptr<Issuer>> Issuer::Open(IssuerOptions options) {
  TESSERA_ASSIGN_OR_RETURN(auto client, client::ReviewsClient::Open(options.client));
  TESSERA_ASSIGN_OR_RETURN(std::string pem, ReadFile(options.secret_key));
  auto key = blind::SecretKey::FromPem(pem);
  if (!key.ok()) return key.status().WithContext(options.secret_key.string());
  if (key->public_key().Fingerprint() != client->params().issuer.Fingerprint()) {
    return FailedPreconditionError("the issuer key " + options.secret_key.string() +
                                   " is not the chain's [apps.reviews] issuer_public");
  }
  return std::unique_ptr<Issuer>(new Issuer(std::move(options), std::move(client), *key));
}

Result<size_t> Issuer::Step() {
  TESSERA_RETURN_IF_ERROR(client_->Refresh([&](uint64_t, const std::vector<Payload>& payloads) {
    for (const Payload& p : payloads) {
      if (const auto* r = std::get_if<KeyRequest>(&p)) {
        pending_[{r->epoch, r->identity.citizen}].blinded.push_back(r->blinded_msg);
      }
    }
  }));
  if (pending_.empty()) return size_t{0};
  std::vector<ledger::Hash256> keys;
  for (const auto& [k, p] : pending_) {
    keys.push_back(leaf::KeyRequest(k.first, k.second));
    keys.push_back(leaf::KeyIssue(k.first, k.second));
  }
  TESSERA_ASSIGN_OR_RETURN(auto leaves, client_->ReadLeaves(keys));
  const uint64_t height = client_->height();
  size_t submitted = 0, i = 0;
  for (auto it = pending_.begin(); it != pending_.end(); i += 2) {
    const auto& request = leaves[i];
    const auto& issue = leaves[i + 1];
    if (issue) {
      ++answered_;
      it = pending_.erase(it);
      continue;
    }
    if (!request) {  // the request was skipped by the ledger (late, duplicate, forged)
      it = pending_.erase(it);
      continue;
    }
    Pending& p = it->second;
    if (p.submitted_at != 0 && height < p.submitted_at + options_.resubmit_after_blocks) {
      ++it;
      continue;
    }
    const Bytes* committed = nullptr;
    for (const Bytes& b : p.blinded) {
      if (ledger::Sha256(b) == *request) committed = &b;
    }
    if (committed == nullptr) {
      ++it;  // committed in a block indexed later (cannot happen after Refresh, but harmless)
      continue;
    }
    auto blind_sig = blind::BlindSign(key_, *committed);
    if (!blind_sig.ok()) {
      // A blinded message >= n: nobody can ever answer it; drop it (it stays visible on chain).
      spdlog::warn("cannot sign the request of epoch {}: {}", it->first.first,
                   blind_sig.status().message());
      it = pending_.erase(it);
      continue;
    }
    Status s = client_->Submit(KeyIssue{it->first.first, it->first.second, *committed, *blind_sig});
    if (!s.ok()) spdlog::warn("submitting an issue for epoch {}: {}", it->first.first, s.message());
    p.submitted_at = height;
    ++submitted;
    ++it;
  }
  return submitted;
}

Status Issuer::Run(const std::atomic<bool>& stop) {
  spdlog::info("issuer {} answering key requests", client_->params().issuer.Fingerprint());
  while (!stop.load()) {
    auto n = Step();
    if (!n.ok()) {
      spdlog::warn("issuer step: {}", n.status().message());
    } else if (*n > 0) {
      spdlog::info("height {}: answered {} key requests ({} committed so far)", client_->height(),
                   *n, answered_);
    }
    std::this_thread::sleep_for(options_.poll);
  }
  return Status::Ok();
}

}  // namespace tessera::reviews::issuer
