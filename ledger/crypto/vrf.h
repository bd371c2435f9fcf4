// ECVRF-EDWARDS25519-SHA512-TAI, exactly as RFC 9381 (suite 0x03) specifies, on libsodium.
//
// A verifiable random function: the holder of a secret key maps an input alpha to a
// pseudorandom 64-byte output beta together with an 80-byte proof pi; anyone holding the
// public key can check that beta is the unique output for alpha. Sortition (sortition.h)
// uses beta as a lottery ticket that cannot be forged or ground.
//
//   TESSERA_ASSIGN_OR_RETURN(VrfProof pi, VrfProve(keys, alpha));
//   TESSERA_ASSIGN_OR_RETURN(VrfOutput beta, VrfVerify(keys.public_key(), alpha, pi));
//
// Keys are Ed25519 keys (ed25519.h): the secret scalar is derived from the 32-byte seed as in
// RFC 8032. The implementation is checked against the three vectors of RFC 9381 Appendix B.3.
//
// Differences from the RFC, all stricter and never affecting honest keys or proofs: the
// public key Y and Gamma must be canonical encodings of points in the prime-order subgroup
// (libsodium's scalar multiplication refuses anything else; the RFC's validate_key only
// excludes small-order Y), and proofs with s = 0 or c = 0 (probability 2^-128 or less for an
// honest prover) are rejected.
#pragma once

#include "core/status.h"
#include "ledger/crypto/ed25519.h"

namespace tessera::ledger {

using VrfProof = std::array<uint8_t, 80>;   // Gamma (32) || c (16) || s (32)
using VrfOutput = std::array<uint8_t, 64>;  // beta

// pi for `alpha` under `keys`. Fails only if encode-to-curve exhausts its 256 counters
// (probability about 2^-256).
Result<VrfProof> VrfProve(const KeyPair& keys, ByteSpan alpha);

// The output beta if `proof` is valid for (key, alpha); INVALID_ARGUMENT otherwise, with the
// reason (bad key, bad Gamma, s out of range, challenge mismatch). Through the thread's
// VrfCache when a VrfCache::Scope is open (vrf_cache.h).
Result<VrfOutput> VrfVerify(const PublicKey& key, ByteSpan alpha, const VrfProof& proof);

// VRF verifications and proofs this process has computed: what benchmarks use to see where a
// citizen daemon's CPU goes (a verification costs ~10 Ed25519 verifications).
uint64_t VrfVerificationsComputed();
uint64_t VrfProofsComputed();

// beta from a proof without verifying it (RFC 9381 ECVRF_proof_to_hash). Only meaningful for
// proofs that were verified or produced locally.
Result<VrfOutput> VrfProofToHash(const VrfProof& proof);

// The point H = encode_to_curve_try_and_increment(Y, alpha), exposed for the RFC's
// intermediate test values.
Result<std::array<uint8_t, 32>> VrfEncodeToCurve(const PublicKey& key, ByteSpan alpha);

}  // namespace tessera::ledger
