#include "ledger/crypto/signature_cache.h"

#include <algorithm>
#include <cstring>

#include "ledger/crypto/hash.h"

namespace tessera::ledger {

SignatureCache::SignatureCache(size_t capacity) : capacity_(std::max<size_t>(capacity, 2)) {
  young_.reserve(capacity_ / 2);
}

Hash256 SignatureCache::EntryOf(const PublicKey& key, ByteSpan message,
                                const Signature& signature) {
  // Key and signature have fixed sizes, so the concatenation is unambiguous.
  return Sha256Hasher()
      .Update("tessera/sigcache")
      .Update(ByteSpan(key.data(), key.size()))
      .Update(ByteSpan(signature.data(), signature.size()))
      .Update(message)
      .Final();
}

size_t SignatureCache::EntryHash::operator()(const Hash256& h) const {
  size_t v;
  std::memcpy(&v, h.data(), sizeof(v));  // already a uniform hash
  return v;
}

bool SignatureCache::Lookup(const Hash256& entry) {
  std::lock_guard<std::mutex> lock(mu_);
  if (young_.count(entry)) {
    ++stats_.hits;
    return true;
  }
  auto it = old_.find(entry);
  if (it == old_.end()) {
    ++stats_.misses;
    return false;
  }
  ++stats_.hits;
  old_.erase(it);
  young_.insert(entry);  // still in use: promote
  if (young_.size() >= capacity_ / 2) {
    stats_.evictions += old_.size();
    old_ = std::move(young_);
    young_ = Set();
    young_.reserve(capacity_ / 2);
  }
  return true;
}

void SignatureCache::Insert(const Hash256& entry) {
  std::lock_guard<std::mutex> lock(mu_);
  if (old_.count(entry)) return;
  young_.insert(entry);
  if (young_.size() >= capacity_ / 2) {
    stats_.evictions += old_.size();
    old_ = std::move(young_);
    young_ = Set();
    young_.reserve(capacity_ / 2);
  }
}

SignatureCache::Stats SignatureCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s = stats_;
  s.size = young_.size() + old_.size();
  return s;
}

}  // namespace tessera::ledger
