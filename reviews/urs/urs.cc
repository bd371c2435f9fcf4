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
constexpr std::string_view kChallengeDomain = "tessera/reviews/urs/v2/challenge";
constexpr std::string_view kLinkDomain = "tessera/reviews/urs/v2/link";
constexpr std::string_view kRingDomain = "tessera/reviews/urs/v1/ring";

// The challenge hashes: the ring's c_{i+1} = H(ctx, i, L_i) and the link proof's
// e = H(ctx, A1, A2), under two domains. The fixed context (ring digest, scope, message, tag,
// commitment) is absorbed once and the state copied per member, keeping Sign and Verify at one
// short hash per member.
class ChallengeHasher {
 public:
  ChallengeHasher(std::string_view domain, const Ring& ring, ByteSpan scope, ByteSpan message,
                  const Point& tag, const Point& commitment) {
    crypto_hash_sha512_init(&base_);
    Bytes header;
    AppendLengthPrefixed(header, AsBytes(domain));
    AppendLengthPrefixed(header, ring.digest());
    AppendLengthPrefixed(header, scope);
    AppendLengthPrefixed(header, message);
    AppendLengthPrefixed(header, tag);
    AppendLengthPrefixed(header, commitment);
    crypto_hash_sha512_update(&base_, header.data(), header.size());
  }

  // The ring's challenge after member `index`.
  Scalar Challenge(size_t index, const Point& l) const {
    crypto_hash_sha512_state state = base_;
    uint8_t idx[4] = {static_cast<uint8_t>(index >> 24), static_cast<uint8_t>(index >> 16),
                      static_cast<uint8_t>(index >> 8), static_cast<uint8_t>(index)};
    crypto_hash_sha512_update(&state, idx, sizeof(idx));
    crypto_hash_sha512_update(&state, l.data(), l.size());
    return Final(state);
  }

  // The link proof's challenge.
  Scalar Challenge(const Point& a1, const Point& a2) const {
    crypto_hash_sha512_state state = base_;
    crypto_hash_sha512_update(&state, a1.data(), a1.size());
    crypto_hash_sha512_update(&state, a2.data(), a2.size());
    return Final(state);
  }

 private:
  static Scalar Final(crypto_hash_sha512_state& state) {
    uint8_t h[crypto_hash_sha512_BYTES];
    crypto_hash_sha512_final(&state, h);
    Scalar c;
    crypto_core_ristretto255_scalar_reduce(c.data(), h);
    return c;
  }

  crypto_hash_sha512_state base_;
};

bool IsIdentity(const Point& p) { return sodium_is_zero(p.data(), p.size()) == 1; }

// L = s*G + c*(C - Y) for one ring member. C equal to a member's key (C - Y the identity) is
// refused: an honest signer's C equals no key but with probability ~n/2^252 (it resamples r).
Result<Point> RingCommitment(const Scalar& s, const Scalar& c, const Point& commitment,
                             const Point& y) {
  const Point d = Sub(commitment, y);
  if (IsIdentity(d)) return InvalidArgumentError("the commitment equals a ring member's key");
  TESSERA_ASSIGN_OR_RETURN(Point sg, MulBase(s));
  TESSERA_ASSIGN_OR_RETURN(Point cd, Mul(c, d));
  return Add(sg, cd);
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
  const Point& j = KeyBase();
  Signature sig;
  TESSERA_ASSIGN_OR_RETURN(sig.tag, Mul(key.secret, h));

  // Zero scalars are invalid by rule (Verify rejects them), and a commitment equal to a ring
  // member's key is refused, so the signer resamples in those (probability ~n/2^252) events.
  for (;;) {
    const Scalar r = RandomNonzeroScalar();
    TESSERA_ASSIGN_OR_RETURN(Point rg, MulBase(r));
    sig.commitment = Add(key.public_key, rg);
    if (IsIdentity(sig.commitment) ||
        std::any_of(ring.members().begin(), ring.members().end(),
                    [&](const Point& y) { return y == sig.commitment; })) {
      continue;
    }

    // The link proof: C = x*J + r*G and T = x*H.
    const ChallengeHasher link(kLinkDomain, ring, scope, message, sig.tag, sig.commitment);
    const Scalar a = RandomNonzeroScalar(), b = RandomNonzeroScalar();
    TESSERA_ASSIGN_OR_RETURN(Point aj, Mul(a, j));
    TESSERA_ASSIGN_OR_RETURN(Point bg, MulBase(b));
    TESSERA_ASSIGN_OR_RETURN(Point ah, Mul(a, h));
    sig.link_challenge = link.Challenge(Add(aj, bg), ah);
    sig.link_x = ScalarSub(a, ScalarMul(sig.link_challenge, key.secret));
    sig.link_r = ScalarSub(b, ScalarMul(sig.link_challenge, r));
    if (IsZero(sig.link_challenge) || IsZero(sig.link_x) || IsZero(sig.link_r)) continue;

    // The ring: C - Y_pi = r*G.
    const ChallengeHasher ring_hasher(kChallengeDomain, ring, scope, message, sig.tag,
                                      sig.commitment);
    std::vector<Scalar> c(n);
    sig.s.assign(n, Scalar{});
    const Scalar alpha = RandomNonzeroScalar();
    TESSERA_ASSIGN_OR_RETURN(Point l, MulBase(alpha));
    c[(pi + 1) % n] = ring_hasher.Challenge(pi, l);
    bool retry = false;
    for (size_t step = 1; step < n && !retry; ++step) {
      const size_t i = (pi + step) % n;
      if (IsZero(c[i])) {
        retry = true;
        break;
      }
      sig.s[i] = RandomNonzeroScalar();
      TESSERA_ASSIGN_OR_RETURN(l,
                               RingCommitment(sig.s[i], c[i], sig.commitment, ring.members()[i]));
      c[(i + 1) % n] = ring_hasher.Challenge(i, l);
    }
    if (retry || IsZero(c[pi])) continue;
    sig.s[pi] = ScalarSub(alpha, ScalarMul(c[pi], r));
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
  for (const auto& [point, what] : {std::pair{&sig.tag, "tag"}, {&sig.commitment, "commitment"}}) {
    Status ok = ValidatePoint(*point, what);
    if (!ok.ok()) return PermissionDeniedError(ok.message());
  }
  for (const auto& [scalar, what] : {std::pair{&sig.c0, "challenge c0"},
                                     {&sig.link_challenge, "link challenge"},
                                     {&sig.link_x, "link response z_x"},
                                     {&sig.link_r, "link response z_r"}}) {
    if (!IsCanonicalScalar(*scalar) || IsZero(*scalar)) {
      return PermissionDeniedError(std::string(what) + " is not a nonzero canonical scalar");
    }
  }
  for (size_t i = 0; i < sig.s.size(); ++i) {
    if (!IsCanonicalScalar(sig.s[i]) || IsZero(sig.s[i])) {
      return PermissionDeniedError("response " + std::to_string(i) +
                                   " is not a nonzero canonical scalar");
    }
  }
  const Point h = TagBase(scope);

  // The link proof: A1 = z_x*J + z_r*G + e*C, A2 = z_x*H + e*T, and e = H(ctx, A1, A2).
  {
    const ChallengeHasher link(kLinkDomain, ring, scope, message, sig.tag, sig.commitment);
    auto zj = Mul(sig.link_x, KeyBase());
    auto zg = MulBase(sig.link_r);
    auto ec = Mul(sig.link_challenge, sig.commitment);
    auto zh = Mul(sig.link_x, h);
    auto et = Mul(sig.link_challenge, sig.tag);
    if (!zj.ok() || !zg.ok() || !ec.ok() || !zh.ok() || !et.ok()) {
      return PermissionDeniedError("the link proof does not verify (a zero product)");
    }
    const Point a1 = Add(Add(*zj, *zg), *ec);
    const Point a2 = Add(*zh, *et);
    const Scalar e = link.Challenge(a1, a2);
    if (sodium_memcmp(e.data(), sig.link_challenge.data(), e.size()) != 0) {
      return PermissionDeniedError(
          "ring signature does not verify (the tag and the commitment are not of one key)");
    }
  }

  const ChallengeHasher hasher(kChallengeDomain, ring, scope, message, sig.tag, sig.commitment);
  Scalar c = sig.c0;
  for (size_t i = 0; i < ring.size(); ++i) {
    if (IsZero(c)) return PermissionDeniedError("ring does not close (zero challenge)");
    auto l = RingCommitment(sig.s[i], c, sig.commitment, ring.members()[i]);
    if (!l.ok()) return PermissionDeniedError("ring does not close: " + l.status().message());
    c = hasher.Challenge(i, *l);
  }
  if (sodium_memcmp(c.data(), sig.c0.data(), c.size()) != 0) {
    return PermissionDeniedError("ring signature does not verify (the ring does not close)");
  }
  return Status::Ok();
}

}  // namespace tessera::reviews::urs
