// The fuzzers' seed corpora (reviews/fuzz_corpus/<fuzzer>/) must be in the current formats:
// a seed the decoder refuses at its first byte only exercises the refusal, and the fuzzer then
// has to rediscover the format by mutation. The signature version 2 change (codec byte 0x02)
// left every signature seed in version 1, which DecodeSignature refuses at offset 0; this
// test fails when a format change leaves the seeds behind again.
//
// Regenerate the seeds that carry signatures (after a format change):
//   TESSERA_SOURCE_DIR=$PWD TESSERA_WRITE_FUZZ_SEEDS=1 build/release/tests/reviews_fuzz_seed_test
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/file.h"
#include "ledger/crypto/ed25519.h"
#include "ledger/net/identity.h"
#include "reviews/ledger/payload.h"
#include "reviews/review/review.h"
#include "reviews/tool/formats.h"
#include "reviews/urs/codec.h"
#include "reviews/urs/urs.h"

namespace tessera::reviews {
namespace {

namespace fs = std::filesystem;

fs::path Corpus(const std::string& fuzzer) {
  const char* src = std::getenv("TESSERA_SOURCE_DIR");
  return fs::path(src != nullptr ? src : ".") / "reviews" / "fuzz_corpus" / fuzzer;
}

bool Writing() { return std::getenv("TESSERA_WRITE_FUZZ_SEEDS") != nullptr; }

std::string Read(const fs::path& p) {
  Result<std::string> r = ReadFile(p);
  EXPECT_TRUE(r.ok()) << p << ": " << r.status().ToString();
  return r.ok() ? *r : std::string();
}

void Write(const fs::path& p, std::string_view bytes) {
  ASSERT_TRUE(WriteFileAtomically(p, bytes).ok()) << p;
}

std::string AsString(const Bytes& b) { return std::string(b.begin(), b.end()); }

std::vector<urs::KeyPair> Keys(size_t n) {
  std::vector<urs::KeyPair> keys;
  for (size_t i = 0; i < n; ++i) keys.push_back(urs::GenerateKeyPair());
  return keys;
}

urs::Ring RingOf(const std::vector<urs::KeyPair>& keys) {
  std::vector<urs::Point> members;
  for (const auto& k : keys) members.push_back(k.public_key);
  Result<urs::Ring> ring = urs::Ring::Create(members);
  EXPECT_TRUE(ring.ok());
  return *ring;
}

// urs_codec_fuzzer splits its input into a ring of data[0] % 4 + 1 members and a signature,
// and verifies the signature with scope = data[0..1) and message = data[0..2). A ring's
// encoding starts 0x01 0x00 0x02 for two members, so a ring of two followed by a signature made
// with exactly that scope and message reaches Verify's success path.
TEST(FuzzSeedCorpus, UrsCodecSeedsDecodeInTheCurrentFormatAndOneVerifies) {
  const fs::path dir = Corpus("reviews_urs_codec_fuzzer");
  if (Writing()) {
    std::vector<urs::KeyPair> keys = Keys(11);
    const urs::Ring ring11 = RingOf(keys);
    Result<urs::Signature> sig = urs::Sign(keys[3], ring11, AsBytes("seed scope"), AsBytes("m"));
    ASSERT_TRUE(sig.ok());
    Write(dir / "ring11.bin", AsString(urs::EncodeRing(ring11)));
    Write(dir / "signature_ring11.bin", AsString(urs::EncodeSignature(*sig)));
    std::vector<urs::KeyPair> two(keys.begin(), keys.begin() + 2);
    const Bytes ring2 = urs::EncodeRing(RingOf(two));
    ASSERT_EQ(ring2.size(), 3u + 2 * 32);
    Result<urs::Signature> s2 =
        urs::Sign(two[1], RingOf(two), ByteSpan(ring2.data(), 1), ByteSpan(ring2.data(), 2));
    ASSERT_TRUE(s2.ok());
    Write(dir / "ring2_then_signature.bin", AsString(ring2) + AsString(urs::EncodeSignature(*s2)));
  }
  const std::string ring = Read(dir / "ring11.bin");
  EXPECT_TRUE(urs::DecodeRing(AsBytes(ring)).ok());
  const std::string sig = Read(dir / "signature_ring11.bin");
  Result<urs::Signature> decoded = urs::DecodeSignature(AsBytes(sig));
  EXPECT_TRUE(decoded.ok()) << decoded.status().ToString();
  const std::string both = Read(dir / "ring2_then_signature.bin");
  ASSERT_GT(both.size(), 67u);
  const auto* data = reinterpret_cast<const uint8_t*>(both.data());
  ASSERT_EQ(3u + 32 * (data[0] % 4 + 1), 67u);  // the fuzzer's split
  Result<urs::Ring> r = urs::DecodeRing(ByteSpan(data, 67));
  Result<urs::Signature> s = urs::DecodeSignature(ByteSpan(data + 67, both.size() - 67));
  ASSERT_TRUE(r.ok() && s.ok()) << s.status().ToString();
  EXPECT_TRUE(urs::Verify(*r, ByteSpan(data, 1), ByteSpan(data, 2), *s).ok());
}

TEST(FuzzSeedCorpus, LedgerPayloadSeedsDecodeAndReencode) {
  const fs::path dir = Corpus("reviews_ledger_payload_fuzzer");
  if (Writing()) {
    std::vector<urs::KeyPair> keys = Keys(2);
    const urs::Ring ring = RingOf(keys);
    onchain::ItemId item{};
    for (size_t i = 0; i < item.size(); ++i) item[i] = static_cast<uint8_t>(i);
    onchain::ReviewBatch batch{item, 2, 2, {}};
    for (size_t i = 0; i < keys.size(); ++i) {  // two reviews: a coalesced batch
      const std::string text = i == 0 ? "great" : "fine";
      Result<Review> r =
          SignReview(keys[i], ring, onchain::ItemBytes(item), 2, 5 - static_cast<int>(i), text);
      ASSERT_TRUE(r.ok());
      batch.reviews.push_back(onchain::ReviewEntry{r->rating, r->text, r->signature});
    }
    Write(dir / "reviews", onchain::EncodePayload(batch));
    // The other kinds, each with well-formed fields (the decoder checks formats, not
    // signatures or RSA values).
    const ledger::KeyPair citizen = ledger::KeyPair::Generate();
    ledger::net::Identity identity{.citizen = citizen.public_key(), .registered_at = 3};
    identity.signature.fill(0x11);
    onchain::CreateItem create{.name = "cafe du coin", .identity = identity};
    onchain::SignCreateItem(create, citizen);
    Write(dir / "create_item", onchain::EncodePayload(create));
    const Bytes rsa(onchain::kMinRsaBytes, 0x5a);
    onchain::KeyRequest request{.identity = identity, .epoch = 2, .blinded_msg = rsa};
    request.commitment.fill(0x22);
    onchain::SignKeyRequest(request, citizen);
    Write(dir / "key_request", onchain::EncodePayload(request));
    Write(dir / "key_issue", onchain::EncodePayload(onchain::KeyIssue{2, citizen.public_key(), rsa,
                                                                      Bytes(rsa.size(), 0x3c)}));
    onchain::RegisterKey reg{.epoch = 2, .review_key = keys[0].public_key, .signature = rsa};
    reg.msg_prefix.fill(0x44);
    Write(dir / "register_key", onchain::EncodePayload(reg));
    onchain::FrontRunProof proof{.epoch = 2,
                                 .citizen = citizen.public_key(),
                                 .blinded_msg = rsa,
                                 .inv = Bytes(rsa.size(), 0x66),
                                 .review_key = keys[1].public_key,
                                 .signature = Bytes(rsa.size(), 0x77)};
    proof.salt.fill(0x55);
    proof.msg_prefix.fill(0x44);
    Write(dir / "front_run_proof", onchain::EncodePayload(proof));
    Write(dir / "ring_open",
          onchain::EncodePayload(onchain::RingOpen{item, 2, 0, 0, 2, ring.members()}));
  }
  size_t seeds = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("truncated")) continue;  // refused on purpose
    ++seeds;
    const std::string bytes = Read(entry.path());
    Result<onchain::Payload> p = onchain::DecodePayload(AsBytes(bytes));
    EXPECT_TRUE(p.ok()) << name << ": " << p.status().ToString();
    if (p.ok()) EXPECT_EQ(onchain::EncodePayload(*p), bytes) << name;
  }
  EXPECT_GE(seeds, 7u);  // every kind
}

TEST(FuzzSeedCorpus, ReviewJsonSeedLoads) {
  const fs::path dir = Corpus("reviews_review_json_fuzzer");
  if (Writing()) {
    std::vector<urs::KeyPair> keys = Keys(8);
    Result<Review> r = SignReview(keys[0], RingOf(keys), "cafe-du-coin", 1, 5, "great coffee");
    ASSERT_TRUE(r.ok());
    Write(dir / "review.json", tool::ReviewToJson(*r).dump(2) + "\n");
  }
  tool::json j = tool::json::parse(Read(dir / "review.json"), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  Result<Review> r = tool::ReviewFromJson(j, "seed");
  EXPECT_TRUE(r.ok()) << r.status().ToString();
}

}  // namespace
}  // namespace tessera::reviews
