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
// Construction, version 2 (ours; docs/reviews.md, "Unique ring signatures"). Three
// generators with unknown discrete logs between them: G (ristretto255's base point), J
// (KeyBase: review keys are Y = x*J) and H_T = HashToPoint("tessera/reviews/urs/v1/tag", scope).
//   T = x*H_T                  the uniqueness tag
//   C = x*J + r*G              a fresh, perfectly hiding commitment to the signer's key
//   link proof: knowledge of (x, r) with C = x*J + r*G and T = x*H_T (a Chaum-Pedersen-style
//     sigma proof: A1 = a*J + b*G, A2 = a*H_T, e = H(ctx, A1, A2), z_x = a - e*x, z_r = b - e*r)
//   ring proof (Abe-Ohkubo-Suzuki): knowledge of r with C - Y_i = r*G for some member i:
//     L_i = s_i*G + c_i*(C - Y_i),  c_{i+1} = H(ctx, i, L_i); the signer closes it at its own
//     index with L_pi = alpha*G and s_pi = alpha - c_pi*r.
//   Signature = (T, C, e, z_x, z_r, c_0, s_0..s_{n-1}); ctx binds the ring, the scope, the
//   message, T and C.
// Why it is sound: the two proofs give C = x*J + r*G and C - Y_i = r'*G, so Y_i = x*J +
// (r - r')*G; with Y_i = x_i*J that forces x = x_i (else log_G(J) is found), hence T = x_i*H_T.
// So:
//   * only a ring member's key yields a valid signature (unforgeability);
//   * T is a deterministic function of (x, scope): two signatures by one key in one scope carry
//     the same tag, whichever message or ring they sign (uniqueness, one review per item);
//   * tags of one key in different scopes are x*H_1 and x*H_2 for independent random-oracle
//     points: telling them from two unrelated points is the DDH problem (unlinkability); C is
//     uniform whatever the key, and the ring proof is witness-indistinguishable (anonymity).
// Cost per ring member, Sign and Verify: one fixed-base multiplication (libsodium's table for
// G), one variable-base multiplication, one subtraction, one addition and one short hash;
// about half of version 1 (LSAG: L_i = s_i*G + c_i*Y_i, R_i = s_i*H_T + c_i*T, three
// variable-base multiplications per member), which is what a node's verification costs.
// Plus a constant of 5 multiplications for the link proof.
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
  Point commitment;       // C = x * J + r * G
  Scalar link_challenge;  // e, the link proof's challenge
  Scalar link_x;          // z_x = a - e * x
  Scalar link_r;          // z_r = b - e * r
  Scalar c0;              // the ring's challenge entering member 0
  std::vector<Scalar> s;  // one response per ring member
};

// The base point H_T of a scope's tags.
Point TagBase(ByteSpan scope);
// The tag `secret` would produce in `scope`: lets a key holder see whether it already signed.
Result<Point> ComputeTag(const Scalar& secret, ByteSpan scope);

// PERMISSION_DENIED when the key is not a member of the ring.
Result<Signature> Sign(const KeyPair& key, const Ring& ring, ByteSpan scope, ByteSpan message);

// OK, or PERMISSION_DENIED with the reason (wrong size, invalid tag, commitment or scalar, the
// link proof fails, the ring does not close).
Status Verify(const Ring& ring, ByteSpan scope, ByteSpan message, const Signature& sig);

}  // namespace tessera::reviews::urs
