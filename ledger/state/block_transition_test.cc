#include "ledger/state/block_transition.h"

#include <gtest/gtest.h>

#include "ledger/state/state_proof.h"

namespace tessera::ledger {
namespace {

// A toy application: payload "<counter name>" increments that counter; payload "!<name>"
// carries a bad "signature"; payload "?" does not decode. BeginBlock records the height.
class CounterApp : public Application {
 public:
  uint8_t id() const override { return 9; }
  std::string_view name() const override { return "counter"; }
  Result<std::vector<Hash256>> ReadSet(ByteSpan payload, const BlockContext&) const override {
    std::string_view text = AsChars(payload);
    if (text.empty() || text == "?") return InvalidArgumentError("counter: malformed payload");
    return std::vector<Hash256>{Key(text[0] == '!' ? text.substr(1) : text)};
  }
  Result<AppVerdict> Apply(ByteSpan payload, const BlockContext& ctx, const LeafReader& state,
                           bool verify_crypto) const override {
    std::string_view text = AsChars(payload);
    bool forged = text[0] == '!';
    if (forged && verify_crypto) return AppVerdict::RejectCrypto("forged");
    if (forged) text.remove_prefix(1);
    TESSERA_ASSIGN_OR_RETURN(auto leaf, state.Get(Key(text)));
    LeafValue value = leaf.value_or(LeafValue{});
    if (value[0] == 3) return AppVerdict::Reject("counter full");
    ++value[0];
    (void)ctx;
    return AppVerdict::Accept({{Key(text), value}});
  }
  std::vector<LeafUpdate> BeginBlock(const BlockContext& ctx) const override {
    LeafValue v{};
    v[31] = static_cast<uint8_t>(ctx.height);
    return {{AppLeafKey(id(), {AsBytes(std::string_view("height"))}), v}};
  }
  static Hash256 Key(std::string_view name) { return AppLeafKey(9, {AsBytes(name)}); }
};

// Writes a leaf it never declared.
class RogueApp : public CounterApp {
 public:
  uint8_t id() const override { return 10; }
  Result<AppVerdict> Apply(ByteSpan, const BlockContext&, const LeafReader&, bool) const override {
    return AppVerdict::Accept({{Key("elsewhere"), LeafValue{}}});
  }
};

Hash256 Sha256Of(int i) { return AppLeafKey(0, {AsBytes(std::to_string(i))}); }

LedgerTx App(uint8_t id, std::string payload) { return AppTransaction{id, std::move(payload)}; }

struct Fixture {
  KeyPair alice = KeyPair::FromSeed(Seed{1});
  KeyPair bob = KeyPair::FromSeed(Seed{2});
  SparseMerkleTree tree =
      *SparseMerkleTree().Update({{AccountKey(alice.public_key()), EncodeAccount({100, 0})}});
  AppRegistry apps;
  BlockContext ctx{.height = 7};
  Fixture() { EXPECT_TRUE(apps.Add(std::make_shared<CounterApp>()).ok()); }
  LedgerTx Transfer(uint64_t amount, uint64_t nonce, bool corrupt = false) {
    Transaction tx{.to = bob.public_key(), .amount = amount, .nonce = nonce};
    SignTransaction(tx, alice);
    if (corrupt) tx.signature[0] ^= 1;
    return tx;
  }
};

TEST(BlockTransitionTest, TransfersAndAppTransactionsShareOneOverlayInBlockOrder) {
  Fixture f;
  std::vector<LedgerTx> block = {App(9, "a"), f.Transfer(10, 0), App(9, "a"), App(9, "a"),
                                 App(9, "a"), f.Transfer(5, 1),  App(7, "x"), App(9, "?")};
  auto out = ApplyBlock(TreeLookup(f.tree), block, f.ctx, f.apps);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->applied, 5u);  // 3 increments, 2 transfers
  ASSERT_EQ(out->rejected.size(), 3u);
  EXPECT_EQ(out->rejected[0].first, 4u);
  EXPECT_EQ(out->rejected[0].second, "counter full");
  EXPECT_NE(out->rejected[1].second.find("unknown application 7"), std::string::npos);
  EXPECT_NE(out->rejected[2].second.find("malformed"), std::string::npos);
  EXPECT_TRUE(out->crypto_rejected.empty());

  SparseMerkleTree after = *f.tree.Update(out->updates);
  EXPECT_EQ(after.Get(CounterApp::Key("a")).value()[0], 3);
  EXPECT_EQ(after.Get(AppLeafKey(9, {AsBytes(std::string_view("height"))})).value()[31], 7);
  EXPECT_EQ(DecodeAccount(*after.Get(AccountKey(f.alice.public_key())))->balance, 85u);
}

TEST(BlockTransitionTest, ACitizenReExecutesOverAProofOfBlockKeys) {
  Fixture f;
  std::vector<LedgerTx> block = {App(9, "a"), f.Transfer(10, 0), App(9, "b"), f.Transfer(1, 5)};
  auto full = ApplyBlock(TreeLookup(f.tree), block, f.ctx, f.apps);
  ASSERT_TRUE(full.ok());
  Hash256 new_root = f.tree.Update(full->updates)->root_hash();

  std::vector<Hash256> keys = BlockKeys(block, f.ctx, f.apps);
  StateProof proof = f.tree.Prove(keys);
  auto light = ApplyBlock(ProofLookup(proof, f.tree.root_hash()), block, f.ctx, f.apps);
  ASSERT_TRUE(light.ok()) << light.status();
  auto root = proof.RootAfter(f.tree.root_hash(), light->updates);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(*root, new_root);

  // A proof that misses a key the block reads cannot execute it (in a tree of many leaves:
  // in a one-leaf tree, any proof also proves every other key absent).
  std::vector<LeafUpdate> filler;
  for (int i = 0; i < 64; ++i) filler.push_back({Sha256Of(i), LeafValue{1}});
  SparseMerkleTree big = *f.tree.Update(filler);
  StateProof partial = big.Prove(std::vector<Hash256>{AccountKey(f.alice.public_key())});
  EXPECT_FALSE(ApplyBlock(ProofLookup(partial, big.root_hash()), block, f.ctx, f.apps).ok());
}

TEST(BlockTransitionTest, CryptoFailuresAreReportedSeparately) {
  Fixture f;
  std::vector<LedgerTx> block = {f.Transfer(10, 0, /*corrupt=*/true), App(9, "!a"), App(9, "a")};
  auto out = ApplyBlock(TreeLookup(f.tree), block, f.ctx, f.apps);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->crypto_rejected, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(out->applied, 1u);
  EXPECT_EQ(out->crypto_checked, 3u);
}

TEST(BlockTransitionTest, SampledValidationTakesClaimsOnlyForUnsampledTransactions) {
  Fixture f;
  std::vector<LedgerTx> block = {f.Transfer(10, 0, true), App(9, "!a"), App(9, "a")};
  const std::vector<uint32_t> truth = {0, 1};
  auto none = [](size_t) { return false; };
  auto all = [](size_t) { return true; };

  // The truthful claim passes whatever is sampled, with the same result as full validation.
  for (const auto& sample : {std::function<bool(size_t)>(none), std::function<bool(size_t)>(all)}) {
    auto out = ApplyBlock(TreeLookup(f.tree), block, f.ctx, f.apps,
                          CryptoPolicy{.claimed_failures = &truth, .verify = sample});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->crypto_rejected, truth);
    EXPECT_EQ(out->applied, 1u);
  }

  // A lie that a forged transaction is fine: caught when sampled, believed when not.
  const std::vector<uint32_t> lie = {0};
  auto caught = ApplyBlock(TreeLookup(f.tree), block, f.ctx, f.apps,
                           CryptoPolicy{.claimed_failures = &lie, .verify = all});
  ASSERT_FALSE(caught.ok());
  EXPECT_EQ(caught.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(caught.status().message().find("transaction 1"), std::string::npos);
  auto missed = ApplyBlock(TreeLookup(f.tree), block, f.ctx, f.apps,
                           CryptoPolicy{.claimed_failures = &lie, .verify = none});
  ASSERT_TRUE(missed.ok());
  EXPECT_EQ(missed->applied, 2u);  // the forged increment went through unchecked

  // A lie that a valid transaction failed its check (censorship) is caught when sampled.
  const std::vector<uint32_t> censor = {0, 1, 2};
  auto censored = ApplyBlock(
      TreeLookup(f.tree), block, f.ctx, f.apps,
      CryptoPolicy{.claimed_failures = &censor, .verify = [](size_t i) { return i == 2; }});
  EXPECT_EQ(censored.status().code(), StatusCode::kPermissionDenied);
}

TEST(BlockTransitionTest, AnApplicationWritingOutsideItsReadSetFailsTheBlock) {
  Fixture f;
  ASSERT_TRUE(f.apps.Add(std::make_shared<RogueApp>()).ok());
  auto out = ApplyBlock(TreeLookup(f.tree), std::vector<LedgerTx>{App(10, "a")}, f.ctx, f.apps);
  EXPECT_EQ(out.status().code(), StatusCode::kInternal);
}

TEST(BlockTransitionTest, RegistryRefusesDuplicateIdsAndParamsAreTyped) {
  AppRegistry apps;
  ASSERT_TRUE(apps.Add(std::make_shared<CounterApp>()).ok());
  EXPECT_EQ(apps.Add(std::make_shared<CounterApp>()).code(), StatusCode::kAlreadyExists);
  AppParams params{.name = "counter", .values = {{"k", "12"}, {"s", "x1"}}};
  EXPECT_EQ(*params.GetInt("k"), 12);
  EXPECT_FALSE(params.GetInt("s").ok());
  EXPECT_FALSE(params.GetString("missing").ok());
  EXPECT_EQ(*params.GetIntOr("missing", 5), 5);
}

TEST(BlockTransitionTest, AppLeafKeysDoNotCollideAcrossPartBoundaries) {
  std::string ab = "ab", a = "a", b = "b";
  EXPECT_NE(AppLeafKey(1, {AsBytes(ab)}), AppLeafKey(1, {AsBytes(a), AsBytes(b)}));
  EXPECT_NE(AppLeafKey(1, {AsBytes(a)}), AppLeafKey(2, {AsBytes(a)}));
}

}  // namespace
}  // namespace tessera::ledger
