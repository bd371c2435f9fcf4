#include "reviews/urs/urs.h"

#include <sodium.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <mutex>
#include <set>
#include <shared_mutex>

namespace tessera::reviews::urs {
namespace {

constexpr std::string_view kTagDomain = "tessera/reviews/urs/v1/tag";
constexpr std::string_view kChallengeDomain = "tessera/reviews/urs/v1/challenge";
constexpr std::string_view kRingDomain = "tessera/reviews/urs/v1/ring";

// The challenge hash c_{i+1} = H(ctx, i, L_i, R_i). The fixed context (ring digest, scope,
// message, tag) is absorbed once and the state copied per member, keeping Sign and Verify at
// one short hash per member.
class ChallengeHasher {
 public:
  ChallengeHasher(const Ring& ring, ByteSpan scope, ByteSpan message, const Point& tag) {
    crypto_hash_sha512_init(&base_);
    Bytes header;
    AppendLengthPrefixed(header, AsBytes(kChallengeDomain));
    AppendLengthPrefixed(header, ring.digest());
    AppendLengthPrefixed(header, scope);
    AppendLengthPrefixed(header, message);
    AppendLengthPrefixed(header, tag);
    crypto_hash_sha512_update(&base_, header.data(), header.size());
  }

  Scalar Challenge(size_t index, const Point& l, const Point& r) const {
    crypto_hash_sha512_state state = base_;
    uint8_t idx[4] = {static_cast<uint8_t>(index >> 24), static_cast<uint8_t>(index >> 16),
                      static_cast<uint8_t>(index >> 8), static_cast<uint8_t>(index)};
    crypto_hash_sha512_update(&state, idx, sizeof(idx));
    crypto_hash_sha512_update(&state, l.data(), l.size());
    crypto_hash_sha512_update(&state, r.data(), r.size());
    uint8_t h[crypto_hash_sha512_BYTES];
    crypto_hash_sha512_final(&state, h);
    Scalar c;
    crypto_core_ristretto255_scalar_reduce(c.data(), h);
    return c;
  }

 private:
  crypto_hash_sha512_state base_;
};

// L = s*G + c*Y and R = s*H + c*T for one ring member.
Status Commitments(const Scalar& s, const Scalar& c, const Point& y, const Point& h, const Point& t,
                   Point& l, Point& r) {
  TESSERA_ASSIGN_OR_RETURN(Point sg, MulBase(s));
  TESSERA_ASSIGN_OR_RETURN(Point cy, Mul(c, y));
  TESSERA_ASSIGN_OR_RETURN(Point sh, Mul(s, h));
  TESSERA_ASSIGN_OR_RETURN(Point ct, Mul(c, t));
  l = Add(sg, cy);
  r = Add(sh, ct);
  return Status::Ok();
}

// The keys Ring::Create found valid (urs.h, RingKeyValidations).
class ValidKeyCache {
 public:
  static ValidKeyCache& Instance() {
    static ValidKeyCache* cache = new ValidKeyCache;  // never destroyed: used at exit too
    return *cache;
  }

  Status Validate(const Point& key, size_t index) {
    {
      std::shared_lock lock(mu_);
      if (keys_.count(key) > 0) {
        remembered_.fetch_add(1, std::memory_order_relaxed);
        return Status::Ok();
      }
    }
    TESSERA_RETURN_IF_ERROR(ValidatePoint(key, "ring member " + std::to_string(index)));
    validated_.fetch_add(1, std::memory_order_relaxed);
    std::unique_lock lock(mu_);
    if (keys_.insert(key).second) {
      order_.push_back(key);
      if (order_.size() > kCapacity) {
        keys_.erase(order_.front());
        order_.pop_front();
      }
    }
    return Status::Ok();
  }

  RingKeyValidations stats() const {
    return {validated_.load(std::memory_order_relaxed),
            remembered_.load(std::memory_order_relaxed)};
  }

 private:
  static constexpr size_t kCapacity = 1 << 16;
  std::shared_mutex mu_;
  std::set<Point> keys_;
  std::deque<Point> order_;
  std::atomic<uint64_t> validated_{0}, remembered_{0};
};

}  // namespace

RingKeyValidations RingKeyValidationStats() { return ValidKeyCache::Instance().stats(); }

Result<Ring> Ring::Create(std::vector<Point> members) {
  EnsureSodium();
  if (members.empty()) return InvalidArgumentError("ring is empty");
  if (members.size() > kMaxRingSize) {
    return InvalidArgumentError("ring has " + std::to_string(members.size()) +
                                " members; at most " + std::to_string(kMaxRingSize));
  }
  for (size_t i = 0; i < members.size(); ++i) {
    TESSERA_RETURN_IF_ERROR(ValidKeyCache::Instance().Validate(members[i], i));
  }
  std::sort(members.begin(), members.end());
  if (std::adjacent_find(members.begin(), members.end()) != members.end()) {
    return InvalidArgumentError("ring contains a duplicate public key");
  }
  Ring ring;
  ring.members_ = std::move(members);
  crypto_hash_sha512_state state;
  crypto_hash_sha512_init(&state);
  Bytes header;
  AppendLengthPrefixed(header, AsBytes(kRingDomain));
  AppendBigEndian(header, ring.members_.size(), 4);
  crypto_hash_sha512_update(&state, header.data(), header.size());
  for (const Point& p : ring.members_) crypto_hash_sha512_update(&state, p.data(), p.size());
  crypto_hash_sha512_final(&state, ring.digest_.data());
  return ring;
}

std::optional<size_t> Ring::IndexOf(const Point& key) const {
  auto it = std::lower_bound(members_.begin(), members_.end(), key);
  if (it == members_.end() || *it != key) return std::nullopt;
  return static_cast<size_t>(it - members_.begin());
}

Point TagBase(ByteSpan scope) { return HashToPoint(kTagDomain, {scope}); }

Result<Point> ComputeTag(const Scalar& secret, ByteSpan scope) {
  if (!IsCanonicalScalar(secret) || IsZero(secret)) {
    return InvalidArgumentError("secret key is not a nonzero canonical scalar");
  }
  return Mul(secret, TagBase(scope));
}

Result<Signature> Sign(const KeyPair& key, const Ring& ring, ByteSpan scope, ByteSpan message) {
  std::optional<size_t> signer = ring.IndexOf(key.public_key);
  if (!signer) return PermissionDeniedError("signing key is not a member of the ring");
  const size_t n = ring.size();
  const size_t pi = *signer;
  const Point h = TagBase(scope);
  Signature sig;
  TESSERA_ASSIGN_OR_RETURN(sig.tag, Mul(key.secret, h));
  ChallengeHasher hasher(ring, scope, message, sig.tag);

  // Zero responses are invalid by rule (Verify rejects them), so the signer resamples in the
  // (probability ~n/2^252) event that one appears.
  for (;;) {
    std::vector<Scalar> c(n);
    sig.s.assign(n, Scalar{});
    const Scalar alpha = RandomNonzeroScalar();
    TESSERA_ASSIGN_OR_RETURN(Point l, MulBase(alpha));
    TESSERA_ASSIGN_OR_RETURN(Point r, Mul(alpha, h));
    c[(pi + 1) % n] = hasher.Challenge(pi, l, r);
    bool retry = false;
    for (size_t step = 1; step < n && !retry; ++step) {
      const size_t i = (pi + step) % n;
      if (IsZero(c[i])) {
        retry = true;
        break;
      }
      sig.s[i] = RandomNonzeroScalar();
      TESSERA_RETURN_IF_ERROR(Commitments(sig.s[i], c[i], ring.members()[i], h, sig.tag, l, r));
      c[(i + 1) % n] = hasher.Challenge(i, l, r);
    }
    if (retry || IsZero(c[pi])) continue;
    sig.s[pi] = ScalarSub(alpha, ScalarMul(c[pi], key.secret));
    if (IsZero(sig.s[pi])) continue;
    sig.c0 = c[0];
    return sig;
  }
}

Status Verify(const Ring& ring, ByteSpan scope, ByteSpan message, const Signature& sig) {
  EnsureSodium();
  if (sig.s.size() != ring.size()) {
    return PermissionDeniedError("signature has " + std::to_string(sig.s.size()) +
                                 " responses for a ring of " + std::to_string(ring.size()));
  }
  Status tag_ok = ValidatePoint(sig.tag, "tag");
  if (!tag_ok.ok()) return PermissionDeniedError(tag_ok.message());
  if (!IsCanonicalScalar(sig.c0) || IsZero(sig.c0)) {
    return PermissionDeniedError("challenge c0 is not a nonzero canonical scalar");
  }
  for (size_t i = 0; i < sig.s.size(); ++i) {
    if (!IsCanonicalScalar(sig.s[i]) || IsZero(sig.s[i])) {
      return PermissionDeniedError("response " + std::to_string(i) +
                                   " is not a nonzero canonical scalar");
    }
  }
  const Point h = TagBase(scope);
  ChallengeHasher hasher(ring, scope, message, sig.tag);
  Scalar c = sig.c0;
  for (size_t i = 0; i < ring.size(); ++i) {
    if (IsZero(c)) return PermissionDeniedError("ring does not close (zero challenge)");
    Point l, r;
    Status st = Commitments(sig.s[i], c, ring.members()[i], h, sig.tag, l, r);
    if (!st.ok()) return PermissionDeniedError("ring does not close: " + st.message());
    c = hasher.Challenge(i, l, r);
  }
  if (sodium_memcmp(c.data(), sig.c0.data(), c.size()) != 0) {
    return PermissionDeniedError("ring signature does not verify (the ring does not close)");
  }
  return Status::Ok();
}

}  // namespace tessera::reviews::urs
