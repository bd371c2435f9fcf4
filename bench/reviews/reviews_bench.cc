// Costs of the reviews system's cryptography, each beside its baselines from the same run:
//   * unique ring signatures: sign and verify versus ring size (10 to 1,000), against one
//     ristretto255 variable-base scalar multiplication and one Ed25519 signature verification;
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

void BM_UrsSign(benchmark::State& state) {
  RingFixture f = MakeRing(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    auto sig = urs::Sign(f.keys[0], f.ring, kScope, kMessage);
    benchmark::DoNotOptimize(sig);
  }
}
BENCHMARK(BM_UrsSign)
    ->Arg(10)
    ->Arg(30)
    ->Arg(50)
    ->Arg(100)
    ->Arg(300)
    ->Arg(1000)
    ->Unit(benchmark::kMillisecond);

void BM_UrsVerify(benchmark::State& state) {
  RingFixture f = MakeRing(static_cast<size_t>(state.range(0)));
  urs::Signature sig = *urs::Sign(f.keys[0], f.ring, kScope, kMessage);
  for (auto _ : state) {
    auto st = urs::Verify(f.ring, kScope, kMessage, sig);
    if (!st.ok()) state.SkipWithError("verification failed");
  }
}
BENCHMARK(BM_UrsVerify)
    ->Arg(10)
    ->Arg(30)
    ->Arg(50)
    ->Arg(100)
    ->Arg(300)
    ->Arg(1000)
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
