// Wrong-execution evidence (evidence.h kind 2, execution_claim.h): a politician's signed
// Execute claim that re-executes to something else convinces a third party that holds only
// the genesis and the chain's applications -- a citizen that never talked to the liar -- and
// nothing made from an honest politician's executions, or forged in its name, does.
#include <gtest/gtest.h>

#include "ledger/crypto/hash.h"
#include "ledger/net/blacklist.h"
#include "ledger/net/evidence.h"
#include "ledger/net/execution_claim.h"
#include "ledger/state/block_transition.h"
#include "ledger/state/sparse_merkle_tree.h"
#include "ledger/state/state_proof.h"

namespace tessera::ledger::net {
namespace {

KeyPair Key(int i) {
  return KeyPair::FromSeed(Sha256("execution evidence key " + std::to_string(i)));
}

// How a politician executes (PoliticianNode::Execute): every signature checked on its own
// tree, a proof of every leaf the block reads, a claim signed by `signer` in politician
// `id`'s name -- lying as the `wrong` and `forge` adversaries do when asked (a wrong root; no
// signature failure claimed, with the honest root), or as a consistent forger would (the
// forged transfer applied, and the root to match).
enum class Lie { kNone, kWrongRoot, kHidesForgedSignature, kAppliesForgedSignature };

struct Chain {
  Genesis genesis;
  KeyPair alice = Key(1), bob = Key(2);
  SparseMerkleTree tree;
  AppRegistry apps;  // transfers only: the chain's applications, as LoadApps gives them
  BlockContext ctx{.height = 5, .prev_seed = Sha256("seed of block 4")};
  std::vector<std::vector<LedgerTx>> pools;

  Chain() {
    for (uint32_t i = 0; i < 3; ++i) {
      genesis.politicians.push_back({i, Key(200 + i).public_key(), "127.0.0.1:1"});
    }
    tree = *SparseMerkleTree().Update({{AccountKey(alice.public_key()), EncodeAccount({100, 0})}});
    // Two pools; the second carries a transfer whose signature does not verify.
    pools = {{Transfer(10, 0)}, {Transfer(5, 1), Transfer(7, 2, /*corrupt=*/true)}};
  }
  LedgerTx Transfer(uint64_t amount, uint64_t nonce, bool corrupt = false) {
    Transaction tx{.to = bob.public_key(), .amount = amount, .nonce = nonce};
    SignTransaction(tx, alice);
    if (corrupt) tx.signature[0] ^= 1;
    return tx;
  }

  Evidence Execute(uint32_t id, Lie lie, const KeyPair* signer = nullptr) {
    std::vector<LedgerTx> txs;
    ExecutionClaim claim;
    claim.politician_id = id;
    claim.height = ctx.height;
    claim.prev_root = tree.root_hash();
    claim.prev_seed = ctx.prev_seed;
    std::vector<std::vector<std::string>> wire;
    for (const auto& pool : pools) {
      claim.pool_hashes.push_back(PoolHash(pool));
      wire.emplace_back();
      for (const LedgerTx& tx : pool) {
        txs.push_back(tx);
        wire.back().push_back(EncodeLedgerTx(tx));
      }
    }
    const std::vector<uint32_t> none;
    const CryptoPolicy forger{.claimed_failures = &none, .verify = [](size_t) { return false; }};
    auto outcome = ApplyBlock(TreeLookup(tree), txs, ctx, apps,
                              lie == Lie::kAppliesForgedSignature ? forger : CryptoPolicy{});
    EXPECT_TRUE(outcome.ok()) << outcome.status();
    claim.new_root = tree.Update(outcome->updates)->root_hash();
    claim.crypto_rejected = outcome->crypto_rejected;
    EXPECT_EQ(claim.crypto_rejected,
              lie == Lie::kAppliesForgedSignature ? none : std::vector<uint32_t>{2});
    if (lie == Lie::kWrongRoot) claim.new_root[0] ^= 0x5a;
    if (lie == Lie::kHidesForgedSignature) claim.crypto_rejected.clear();
    SignExecutionClaim(claim, signer ? *signer : Key(200 + static_cast<int>(id)));
    auto e = WrongExecutionEvidence(claim, wire, tree.Prove(BlockKeys(txs, ctx, apps)).Encode());
    EXPECT_TRUE(e.ok()) << e.status();
    return *e;
  }
};

TEST(ExecutionEvidenceTest, ALyingPoliticiansClaimConvincesACitizenThatNeverTalkedToIt) {
  for (Lie lie : {Lie::kWrongRoot, Lie::kHidesForgedSignature, Lie::kAppliesForgedSignature}) {
    SCOPED_TRACE(static_cast<int>(lie));
    Chain chain;
    const std::string relayed = EncodeEvidence(chain.Execute(1, lie));
    // A third party: the genesis and the applications, no state, no contact with politician 1.
    Chain elsewhere;
    Blacklist citizen(elsewhere.genesis, kBlacklistBlocks, &elsewhere.apps);
    auto news = citizen.AddEncoded(AsBytes(relayed), 6);
    ASSERT_TRUE(news.ok()) << news.status();
    EXPECT_TRUE(*news);
    EXPECT_TRUE(citizen.Blocked(1, 6));
    EXPECT_TRUE(citizen.Blocked(1, 5 + kBlacklistBlocks));
    EXPECT_FALSE(citizen.Blocked(1, 6 + kBlacklistBlocks));
    EXPECT_FALSE(citizen.Blocked(0, 6));
    // What it relays onwards is the same evidence, byte for byte.
    ASSERT_EQ(citizen.Active(6).size(), 1u);
    EXPECT_EQ(citizen.Active(6)[0], relayed);
  }
}

TEST(ExecutionEvidenceTest, FabricatedEvidenceAgainstAnHonestPoliticianIsRefused) {
  Chain chain;
  Blacklist citizen(chain.genesis, kBlacklistBlocks, &chain.apps);
  auto refused = [&](const Evidence& e, const std::string& reason, const std::string& why) {
    Status s = VerifyEvidence(e, chain.genesis, &chain.apps);
    EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << why << ": " << s;
    EXPECT_NE(s.message().find(reason), std::string::npos) << why << ": " << s;
    EXPECT_FALSE(citizen.Add(e, 6).ok()) << why;
  };
  // Its own, true claim: re-executes to exactly what it says.
  const Evidence honest = chain.Execute(0, Lie::kNone);
  refused(honest, "no lie", "an honest execution");
  // Its true claim with the root or the failure list edited: the signature no longer covers it.
  Evidence edited = honest;
  edited.execution.claim.new_root[3] ^= 1;
  refused(edited, "not its own", "an edited root");
  edited = honest;
  edited.execution.claim.crypto_rejected.clear();
  refused(edited, "not its own", "an edited failure list");
  // A false claim in its name, signed by a framer's key.
  refused(chain.Execute(0, Lie::kWrongRoot, &chain.alice), "not its own", "forged signature");
  // Its true claim with other transactions than the ones it executed.
  Evidence swapped = honest;
  std::swap(swapped.execution.pools[0], swapped.execution.pools[1]);
  refused(swapped, "does not carry the executed pools", "other transactions");
  // ... or with a proof that does not cover the block: nothing to re-execute.
  Evidence unproved = honest;
  unproved.execution.proof = chain.tree.Prove({}).Encode();
  refused(unproved, "cannot be re-executed", "no proof");
  // ... or a proof on another state than the one it executed on.
  Evidence other_state = honest;
  const SparseMerkleTree richer =
      *chain.tree.Update({{AccountKey(chain.alice.public_key()), EncodeAccount({1, 0})}});
  std::vector<LedgerTx> txs;
  for (const auto& pool : chain.pools) txs.insert(txs.end(), pool.begin(), pool.end());
  other_state.execution.proof = richer.Prove(BlockKeys(txs, chain.ctx, chain.apps)).Encode();
  refused(other_state, "cannot be re-executed", "a proof on another state");
  // A verifier without the chain's applications accepts no wrong execution at all.
  EXPECT_FALSE(VerifyEvidence(chain.Execute(1, Lie::kWrongRoot), chain.genesis).ok());
  // Unknown politician.
  Evidence stranger = chain.Execute(1, Lie::kWrongRoot);
  stranger.execution.claim.politician_id = 9;
  EXPECT_EQ(VerifyEvidence(stranger, chain.genesis, &chain.apps).code(),
            StatusCode::kPermissionDenied);
  EXPECT_TRUE(citizen.BlockedAt(6).empty());
}

TEST(ExecutionEvidenceTest, EncodingIsCanonicalAndStrict) {
  Chain chain;
  const Evidence e = chain.Execute(2, Lie::kWrongRoot);
  const std::string wire = EncodeEvidence(e);
  auto back = DecodeEvidence(AsBytes(wire));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, e);
  EXPECT_EQ(back->politician_id(), 2u);
  EXPECT_EQ(back->height(), 5u);
  auto refused = [](const std::string& bytes, const std::string& why) {
    auto d = DecodeEvidence(AsBytes(bytes));
    ASSERT_FALSE(d.ok()) << why;
    EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument) << why;
    EXPECT_NE(d.status().ToString().find("evidence"), std::string::npos) << d.status();
  };
  for (size_t cut : {size_t{2}, size_t{40}, wire.size() / 2, wire.size() - 1}) {
    refused(wire.substr(0, cut), "truncated at " + std::to_string(cut));
  }
  refused(wire + "x", "trailing byte");
  refused(wire + std::string(kMaxEvidenceBytes, 'x'), "oversized");
  std::string kind = wire;
  kind[1] = 3;
  refused(kind, "unknown kind");
  // A pool count other than the claim's.
  Evidence fewer = e;
  fewer.execution.pools.pop_back();
  refused(EncodeEvidence(fewer), "pool count");
  EXPECT_FALSE(WrongExecutionEvidence(fewer.execution.claim, fewer.execution.pools, "").ok());
  // A failure list not strictly ascending (two encodings of one claim otherwise).
  Evidence unordered = e;
  unordered.execution.claim.crypto_rejected = {2, 2};
  refused(EncodeEvidence(unordered), "crypto_rejected repeated");
  // A transaction that does not decode.
  Evidence garbage = e;
  garbage.execution.pools[0][0] = "\x01garbage";
  refused(EncodeEvidence(garbage), "garbage transaction");
  // A transaction count far beyond the bytes present.
  Evidence empty_pools = e;
  for (auto& pool : empty_pools.execution.pools) pool.clear();
  empty_pools.execution.proof.clear();
  std::string forged = EncodeEvidence(empty_pools);
  // The first pool's u32 count (big-endian) comes after the claim and the pool count; the
  // encoding ends with the pools' counts and the proof's length.
  const size_t first_count = forged.size() - 4 - 4 * empty_pools.execution.pools.size();
  forged[first_count] = '\x7f';
  refused(forged, "forged transaction count");
  // Too large to build at all.
  std::vector<std::vector<std::string>> huge = e.execution.pools;
  huge[0].assign(kMaxEvidenceBytes / 100, std::string(100, 'x'));
  EXPECT_FALSE(WrongExecutionEvidence(e.execution.claim, huge, "").ok());
}

}  // namespace
}  // namespace tessera::ledger::net
