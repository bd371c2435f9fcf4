// Unique ring signatures (URS) over ristretto255: "some member of this ring signed this
// message", plus a uniqueness tag that is the same every time one key signs within one scope
// (one item in one epoch) and unlinkable across scopes.
//
//   Ring ring = Ring::Create({pk1, pk2, ...}).value();       // e.g. the DRAC ring of an item
//   Bytes scope = ...;                                         // canonical (item, epoch)
//   Signature sig = Sign(my_key, ring, scope, review_bytes).value();
//   Verify(ring, scope, review_bytes, sig);                    // OK or PERMISSION_DENIED
//   sig.tag                                                    // same key + same scope =>
//                                                              // same tag: a double review
//
// Construction (a linkable ring signature in the style of Liu-Wei-Wong's LSAG, with the
// per-scope tag of Franklin-Zhang's unique ring signatures; details in docs/reviews.md):
//   H_T   = HashToPoint("tessera/reviews/urs/v1/tag", scope)       unknown discrete log
//   T     = x * H_T                                                 the uniqueness tag
//   for each ring member i (starting after the signer π, wrapping around):
//     L_i = s_i*G + c_i*Y_i,  R_i = s_i*H_T + c_i*T,  c_{i+1} = H(ctx, i, L_i, R_i)
//   the signer closes the ring with L_π = α*G, R_π = α*H_T and s_π = α - c_π*x.
//   Signature = (T, c_0, s_0..s_{n-1}); ctx binds the ring, the scope, the message and T.
// The ring is a 1-out-of-n proof that log_G(Y_j) = log_{H_T}(T) for some member j, so:
//   * only a ring member's key yields a valid signature (unforgeability);
//   * T is a deterministic function of (x, scope): two signatures by one key in one scope carry
//     the same tag, whichever message or ring they sign (uniqueness, one review per item);
//   * tags of one key in different scopes are x*H_1 and x*H_2 for independent random-oracle
//     points: telling them from two unrelated points is the DDH problem (unlinkability), and
//     the signature reveals nothing about j beyond membership (anonymity).
// Sign and Verify cost 4 scalar multiplications and one hash per ring member: linear in n.
//
// Unlike the two-tag scheme of rohitdwivedula/urs, the tag depends on the scope only, not on
// the ring, so a signer cannot mint a second tag for an item by signing over another ring.
#pragma once

#include <optional>
#include <vector>

#include "core/status.h"
#include "reviews/common/bytes.h"
#include "reviews/urs/ristretto.h"

namespace tessera::reviews::urs {

inline constexpr size_t kMaxRingSize = 4096;

// A set of distinct public keys in canonical (byte-wise ascending) order.
class Ring {
 public:
  // Validates every key (canonical, not the identity), sorts, and rejects duplicates, an empty
  // ring and rings over kMaxRingSize. Keys validated before in this process are not validated
  // again (RingKeyValidations): see ring_key_cache below.
  static Result<Ring> Create(std::vector<Point> members);

  const std::vector<Point>& members() const { return members_; }
  size_t size() const { return members_.size(); }
  std::optional<size_t> IndexOf(const Point& key) const;
  // SHA-512 over the members, bound into every challenge.
  const std::array<uint8_t, 64>& digest() const { return digest_; }

 private:
  std::vector<Point> members_;
  std::array<uint8_t, 64> digest_{};
};

// Ring keys recur: every ring of an epoch is drawn from the same registered keys, and a ledger
// node decodes a review batch's ring several times (admission, execution, and each of a citizen
// daemon's citizens). Validating a key costs a square root (about 5 us, a ring of 50 a quarter
// of a millisecond per decode), so Ring::Create remembers the keys it found valid, by value, in
// a bounded process-wide set (65,536 keys, oldest forgotten first; ordered, so crafted keys
// cannot degrade it). Only valid keys are kept and validity is a pure function of the 32
// bytes, so a remembered key is exactly what validating it again would say.
struct RingKeyValidations {
  uint64_t validated = 0;   // keys validated (square root computed)
  uint64_t remembered = 0;  // keys found valid from an earlier validation
};
RingKeyValidations RingKeyValidationStats();

struct Signature {
  Point tag;              // x * H_T: the uniqueness (double-review) tag
  Scalar c0;              // the challenge entering member 0
  std::vector<Scalar> s;  // one response per ring member
};

// The base point H_T of a scope's tags.
Point TagBase(ByteSpan scope);
// The tag `secret` would produce in `scope`: lets a key holder see whether it already signed.
Result<Point> ComputeTag(const Scalar& secret, ByteSpan scope);

// PERMISSION_DENIED when the key is not a member of the ring.
Result<Signature> Sign(const KeyPair& key, const Ring& ring, ByteSpan scope, ByteSpan message);

// OK, or PERMISSION_DENIED with the reason (wrong size, invalid tag or scalar, ring does not
// close).
Status Verify(const Ring& ring, ByteSpan scope, ByteSpan message, const Signature& sig);

}  // namespace tessera::reviews::urs
