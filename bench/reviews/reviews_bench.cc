// Costs of the reviews system's cryptography, each beside its baselines from the same run:
//   * unique ring signatures: sign and verify versus ring size (10 to 1,000), against one
//     ristretto255 variable-base scalar multiplication, one Ed25519 signature verification and
//     the version-1 (LSAG) verification's per-member work (BM_UrsVerifyV1Baseline);
//   * RFC 9474 blind signatures: Blind, BlindSign, Finalize, Verify for 2048- and 4096-bit keys;
//   * the DRAC lottery over N registered keys.
#include <benchmark/benchmark.h>
#include <sodium.h>

#include <vector>

#include "reviews/blind/blind_rsa.h"
#include "reviews/drac/eligibility.h"
#include "reviews/urs/codec.h"
#include "reviews/urs/urs.h"

namespace {

using namespace tessera::reviews;

// Baseline 1: one variable-base scalar multiplication in ristretto255.
void BM_RistrettoScalarMult(benchmark::State& state) {
  urs::KeyPair kp = urs::GenerateKeyPair();
  urs::Scalar s = urs::RandomNonzeroScalar();
  urs::Point out;
  for (auto _ : state) {
    int rc = crypto_scalarmult_ristretto255(out.data(), s.data(), kp.public_key.data());
    benchmark::DoNotOptimize(rc);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_RistrettoScalarMult)->Unit(benchmark::kMicrosecond);

// The other group operations a ring member's verification uses (version 2, urs.h:
// L = s*G + c*(C - Y): one fixed-base and one variable-base multiplication, one subtraction,
// one addition, one hash; version 1 had L = s*G + c*Y, R = s*H + c*T: one fixed-base and three
// variable-base multiplications, two additions), and the square root that validating a ring
// key costs: the per-member budget, operation by operation.
void BM_RistrettoMulBase(benchmark::State& state) {
  urs::Scalar s = urs::RandomNonzeroScalar();
  urs::Point out;
  for (auto _ : state) {
    int rc = crypto_scalarmult_ristretto255_base(out.data(), s.data());
    benchmark::DoNotOptimize(rc);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_RistrettoMulBase)->Unit(benchmark::kMicrosecond);

void BM_RistrettoAdd(benchmark::State& state) {
  urs::Point a = urs::GenerateKeyPair().public_key, b = urs::GenerateKeyPair().public_key, out;
  for (auto _ : state) {
    int rc = crypto_core_ristretto255_add(out.data(), a.data(), b.data());
    benchmark::DoNotOptimize(rc);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_RistrettoAdd)->Unit(benchmark::kMicrosecond);

void BM_RistrettoValidatePoint(benchmark::State& state) {
  urs::Point p = urs::GenerateKeyPair().public_key;
  for (auto _ : state) {
    int rc = crypto_core_ristretto255_is_valid_point(p.data());
    benchmark::DoNotOptimize(rc);
  }
}
BENCHMARK(BM_RistrettoValidatePoint)->Unit(benchmark::kMicrosecond);

// Baseline 2: one Ed25519 signature verification (what a plain, non-anonymous review costs).
void BM_Ed25519Verify(benchmark::State& state) {
  unsigned char pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES];
  unsigned char sig[crypto_sign_BYTES];
  const unsigned char msg[64] = {1};
  crypto_sign_keypair(pk, sk);
  crypto_sign_detached(sig, nullptr, msg, sizeof(msg), sk);
  for (auto _ : state) {
    int rc = crypto_sign_verify_detached(sig, msg, sizeof(msg), pk);
    benchmark::DoNotOptimize(rc);
  }
}
BENCHMARK(BM_Ed25519Verify)->Unit(benchmark::kMicrosecond);

struct RingFixture {
  std::vector<urs::KeyPair> keys;
  urs::Ring ring;
};

RingFixture MakeRing(size_t n) {
  RingFixture f;
  std::vector<urs::Point> pks;
  for (size_t i = 0; i < n; ++i) {
    f.keys.push_back(urs::GenerateKeyPair());
    pks.push_back(f.keys.back().public_key);
  }
  f.ring = *urs::Ring::Create(pks);
  return f;
}

const Bytes kScope = {'i', 't', 'e', 'm'};
const Bytes kMessage(200, 'r');

// Issue 16's ring sizes, k = 10 .. 1,000, timed in milliseconds.
void RingSizes(benchmark::internal::Benchmark* b) {
  for (int k : {10, 30, 50, 100, 300, 1000}) b->Arg(k);
  b->Unit(benchmark::kMillisecond);
}

// A ring of state.range(0) members and one signature by its first key.
struct SignedRing {
  RingFixture f;
  urs::Signature sig;
};
SignedRing MakeSignedRing(const benchmark::State& state) {
  RingFixture f = MakeRing(static_cast<size_t>(state.range(0)));
  urs::Signature sig = *urs::Sign(f.keys[0], f.ring, kScope, kMessage);
  return {std::move(f), std::move(sig)};
}

void BM_UrsSign(benchmark::State& state) {
  RingFixture f = MakeRing(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    auto sig = urs::Sign(f.keys[0], f.ring, kScope, kMessage);
    benchmark::DoNotOptimize(sig);
  }
}
BENCHMARK(BM_UrsSign)->Apply(RingSizes);

void BM_UrsVerify(benchmark::State& state) {
  const auto [f, sig] = MakeSignedRing(state);
  for (auto _ : state) {
    auto st = urs::Verify(f.ring, kScope, kMessage, sig);
    if (!st.ok()) state.SkipWithError("verification failed");
  }
}
BENCHMARK(BM_UrsVerify)->Apply(RingSizes);

// The baseline for BM_UrsVerify, in the same run: version 1's verification (the LSAG ring that
// urs.h replaced), member by member as it was: L_i = s_i*G + c_i*Y_i, R_i = s_i*H + c_i*T,
// c_{i+1} = SHA-512(ctx, i, L_i, R_i). No version-1 signer is kept, so the ring is fed a
// version-2 signature's responses and does not close; the work done per member, which is all
// this measures, does not depend on that.
void BM_UrsVerifyV1Baseline(benchmark::State& state) {
  const auto [f, sig] = MakeSignedRing(state);
  const urs::Point h = urs::TagBase(kScope);
  crypto_hash_sha512_state base;
  crypto_hash_sha512_init(&base);
  crypto_hash_sha512_update(&base, kMessage.data(), kMessage.size());
  crypto_hash_sha512_update(&base, sig.tag.data(), sig.tag.size());
  for (auto _ : state) {
    urs::Scalar c = sig.c0;
    for (size_t i = 0; i < f.ring.size(); ++i) {
      const urs::Point l = urs::Add(*urs::MulBase(sig.s[i]), *urs::Mul(c, f.ring.members()[i]));
      const urs::Point r = urs::Add(*urs::Mul(sig.s[i], h), *urs::Mul(c, sig.tag));
      crypto_hash_sha512_state st = base;
      const uint8_t idx[4] = {0, 0, static_cast<uint8_t>(i >> 8), static_cast<uint8_t>(i)};
      crypto_hash_sha512_update(&st, idx, sizeof(idx));
      crypto_hash_sha512_update(&st, l.data(), l.size());
      crypto_hash_sha512_update(&st, r.data(), r.size());
      uint8_t out[crypto_hash_sha512_BYTES];
      crypto_hash_sha512_final(&st, out);
      crypto_core_ristretto255_scalar_reduce(c.data(), out);
    }
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK(BM_UrsVerifyV1Baseline)->Apply(RingSizes);

// Verifying reviews as a ledger node does: decode the ring (validate its keys), then verify.
// Args: ring size k, reviews per batch b. b = 1 is the unbatched baseline: every review decodes
// and validates its own ring, as before the ring-key cache (urs.h). b = 8 is a ledger batch
// (payload.h: reviews of one item sharing one ring) with the cache warm: the ring decoded once,
// its keys remembered, then each review verified. items_per_second counts reviews. The ring
// signature itself does not batch (each challenge hashes the previous member's commitments)
// and libsodium has no multi-scalar multiplication, so this is all batching can share.
void BM_UrsVerifyReviews(benchmark::State& state) {
  const size_t k = static_cast<size_t>(state.range(0));
  const size_t batch = static_cast<size_t>(state.range(1));
  RingFixture f = MakeRing(k);
  std::vector<urs::Signature> sigs;
  for (size_t j = 0; j < batch; ++j)
    sigs.push_back(*urs::Sign(f.keys[j], f.ring, kScope, kMessage));
  const std::vector<urs::Point>& members = f.ring.members();
  for (auto _ : state) {
    if (batch == 1) {
      for (const urs::Point& m : members) {
        if (crypto_core_ristretto255_is_valid_point(m.data()) != 1) state.SkipWithError("invalid");
      }
    }
    auto ring = urs::Ring::Create(members);
    for (const urs::Signature& sig : sigs) {
      if (!urs::Verify(*ring, kScope, kMessage, sig).ok())
        state.SkipWithError("verification failed");
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * batch));
}
BENCHMARK(BM_UrsVerifyReviews)
    ->ArgsProduct({{10, 30, 50, 100, 300, 1000}, {1, 8}})
    ->Unit(benchmark::kMillisecond);

const blind::SecretKey& IssuerKey(int bits) {
  static blind::SecretKey* k2048 = new blind::SecretKey(*blind::SecretKey::Generate(2048));
  static blind::SecretKey* k4096 = new blind::SecretKey(*blind::SecretKey::Generate(4096));
  return bits == 2048 ? *k2048 : *k4096;
}

constexpr blind::Variant kVariant = blind::Variant::kSha384PssRandomized;

void BM_BlindRsaBlind(benchmark::State& state) {
  const blind::SecretKey& sk = IssuerKey(static_cast<int>(state.range(0)));
  Bytes input = blind::PrepareMessage(kVariant, Bytes(48, 7));
  for (auto _ : state) benchmark::DoNotOptimize(blind::Blind(sk.public_key(), kVariant, input));
}
BENCHMARK(BM_BlindRsaBlind)->Arg(2048)->Arg(4096)->Unit(benchmark::kMicrosecond);

void BM_BlindRsaBlindSign(benchmark::State& state) {
  const blind::SecretKey& sk = IssuerKey(static_cast<int>(state.range(0)));
  Bytes input = blind::PrepareMessage(kVariant, Bytes(48, 7));
  auto b = *blind::Blind(sk.public_key(), kVariant, input);
  for (auto _ : state) benchmark::DoNotOptimize(blind::BlindSign(sk, b.blinded_msg));
}
BENCHMARK(BM_BlindRsaBlindSign)->Arg(2048)->Arg(4096)->Unit(benchmark::kMicrosecond);

void BM_BlindRsaFinalize(benchmark::State& state) {
  const blind::SecretKey& sk = IssuerKey(static_cast<int>(state.range(0)));
  Bytes input = blind::PrepareMessage(kVariant, Bytes(48, 7));
  auto b = *blind::Blind(sk.public_key(), kVariant, input);
  Bytes blind_sig = *blind::BlindSign(sk, b.blinded_msg);
  for (auto _ : state) {
    benchmark::DoNotOptimize(blind::Finalize(sk.public_key(), kVariant, input, blind_sig, b.inv));
  }
}
BENCHMARK(BM_BlindRsaFinalize)->Arg(2048)->Arg(4096)->Unit(benchmark::kMicrosecond);

void BM_BlindRsaVerify(benchmark::State& state) {
  const blind::SecretKey& sk = IssuerKey(static_cast<int>(state.range(0)));
  Bytes input = blind::PrepareMessage(kVariant, Bytes(48, 7));
  auto b = *blind::Blind(sk.public_key(), kVariant, input);
  Bytes sig = *blind::Finalize(sk.public_key(), kVariant, input,
                               *blind::BlindSign(sk, b.blinded_msg), b.inv);
  for (auto _ : state)
    benchmark::DoNotOptimize(blind::Verify(sk.public_key(), kVariant, input, sig));
}
BENCHMARK(BM_BlindRsaVerify)->Arg(2048)->Arg(4096)->Unit(benchmark::kMicrosecond);

// Recomputing one item's DRAC ring over N registered keys (what every verifier does once per
// item and epoch).
void BM_DracRing(benchmark::State& state) {
  std::vector<urs::Point> keys;
  for (int64_t i = 0; i < state.range(0); ++i) keys.push_back(urs::GenerateKeyPair().public_key);
  drac::Seed seed{};
  for (auto _ : state) {
    benchmark::DoNotOptimize(drac::EligibleKeys(keys, "item", 1, seed, 50));
  }
}
BENCHMARK(BM_DracRing)->Arg(10000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
