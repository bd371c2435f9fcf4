// Ledger foundations benchmarks; bench/ledger/run.sh prints each figure beside its baseline.
//
//   signatures:  VerifyTransaction (domain-separated, canonical bytes) vs libsodium's
//                crypto_sign_ed25519_verify_detached on the same signed bytes
//   VRF:         ECVRF prove / verify vs libsodium Ed25519 sign / verify
//   state tree:  one 10,000-transfer block over 1,000,000 accounts, batched, vs the same leaf
//                updates applied one at a time, vs the hashing alone of a depth-256 tree
//   store:       the same size of block committed to RocksDB (synced batch), 200,000 accounts
//   proofs:      multi-proof bytes for 1,000 random keys in 1,000,000 accounts vs 1,000 single
//                proofs (reported as counters)
//   a member's check of a block (a committee member re-executing a politician's Execute reply
//                through its multi-proof) vs the politician's execution of the same block
#define OPENSSL_SUPPRESS_DEPRECATED  // SHA256_*, as in ledger/crypto/hash.cc
#include <benchmark/benchmark.h>
#include <openssl/sha.h>
#include <sodium.h>
#include <unistd.h>

#include <filesystem>
#include <random>

#include "core/hex.h"
#include "ledger/codec/messages.h"
#include "ledger/crypto/vrf.h"
#include "ledger/state/account.h"
#include "ledger/state/block_transition.h"
#include "ledger/state/sparse_merkle_tree.h"
#include "ledger/state/state_proof.h"
#include "ledger/state/state_store.h"
#include "ledger/state/synthetic.h"
#include "ledger/state/transfer.h"

namespace tessera::ledger {
namespace {

constexpr uint64_t kAccounts = 1'000'000;
constexpr size_t kBlockTransfers = 10'000;

Transaction SampleTx() {
  KeyPair from = KeyPair::FromSeed(Seed{1});
  Transaction tx{.to = KeyPair::FromSeed(Seed{2}).public_key(), .amount = 7, .nonce = 3};
  SignTransaction(tx, from);
  return tx;
}

void BM_SigVerify_Tessera(benchmark::State& state) {
  Transaction tx = SampleTx();
  for (auto _ : state) benchmark::DoNotOptimize(VerifyTransaction(tx));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SigVerify_Tessera);

void BM_SigVerify_LibsodiumBaseline(benchmark::State& state) {
  // The exact bytes VerifyTransaction hands to libsodium, prepared once.
  Transaction tx = SampleTx();
  std::string signed_bytes =
      std::string("tessera/transaction") + '\0' + TransactionSigningBytes(tx);
  for (auto _ : state) {
    benchmark::DoNotOptimize(crypto_sign_ed25519_verify_detached(
        tx.signature.data(), reinterpret_cast<const uint8_t*>(signed_bytes.data()),
        signed_bytes.size(), tx.from.data()));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SigVerify_LibsodiumBaseline);

void BM_Ed25519Sign_LibsodiumBaseline(benchmark::State& state) {
  KeyPair keys = KeyPair::FromSeed(Seed{3});
  std::string msg(64, 'm');
  for (auto _ : state) benchmark::DoNotOptimize(SignRaw(keys, AsBytes(msg)));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Ed25519Sign_LibsodiumBaseline);

void BM_VrfProve(benchmark::State& state) {
  KeyPair keys = KeyPair::FromSeed(Seed{3});
  std::string alpha(64, 'a');
  uint64_t i = 0;
  for (auto _ : state) {
    alpha[0] = static_cast<char>(i++);  // vary the input: encode-to-curve costs vary
    benchmark::DoNotOptimize(VrfProve(keys, AsBytes(alpha)));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_VrfProve);

void BM_VrfVerify(benchmark::State& state) {
  KeyPair keys = KeyPair::FromSeed(Seed{3});
  std::vector<std::pair<std::string, VrfProof>> inputs;
  for (int i = 0; i < 64; ++i) {
    std::string alpha(64, static_cast<char>(i));
    inputs.emplace_back(alpha, *VrfProve(keys, AsBytes(alpha)));
  }
  size_t i = 0;
  for (auto _ : state) {
    const auto& [alpha, proof] = inputs[i++ % inputs.size()];
    benchmark::DoNotOptimize(VrfVerify(keys.public_key(), AsBytes(alpha), proof));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_VrfVerify);

// --- state tree --------------------------------------------------------------------------

const SparseMerkleTree& MillionAccounts() {
  static const SparseMerkleTree* tree = [] {
    return new SparseMerkleTree(*SparseMerkleTree().Update(SyntheticGenesis(kAccounts, 1000)));
  }();
  return *tree;
}

// The leaf updates of a block of kBlockTransfers random transfers among the accounts: each
// transfer changes its sender and its receiver (about 20,000 distinct leaves).
std::vector<LeafUpdate> TransferBlockUpdates(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::map<uint64_t, Account> touched;
  for (size_t i = 0; i < kBlockTransfers; ++i) {
    uint64_t from = rng() % kAccounts, to = rng() % kAccounts;
    if (from == to) continue;
    auto& f = touched.try_emplace(from, Account{1000, 0}).first->second;
    auto& t = touched.try_emplace(to, Account{1000, 0}).first->second;
    f.balance -= 1;
    f.nonce += 1;
    t.balance += 1;
  }
  std::vector<LeafUpdate> updates;
  for (const auto& [index, account] : touched) {
    updates.push_back({SyntheticAccountKey(index), EncodeAccount(account)});
  }
  return updates;
}

void BM_TreeBlockUpdate_Batched(benchmark::State& state) {
  const SparseMerkleTree& base = MillionAccounts();
  std::vector<LeafUpdate> updates = TransferBlockUpdates(1);
  for (auto _ : state) {
    auto next = base.Update(updates);
    benchmark::DoNotOptimize(next->root_hash());
  }
  state.SetItemsProcessed(state.iterations() * updates.size());
  state.counters["leaves_per_block"] = static_cast<double>(updates.size());
}
BENCHMARK(BM_TreeBlockUpdate_Batched)->Unit(benchmark::kMillisecond)->MinTime(2.0);

void BM_TreeBlockUpdate_OneByOneBaseline(benchmark::State& state) {
  const SparseMerkleTree& base = MillionAccounts();
  std::vector<LeafUpdate> updates = TransferBlockUpdates(1);
  for (auto _ : state) {
    SparseMerkleTree t = base;
    for (const LeafUpdate& u : updates) t = *t.Update({u});
    benchmark::DoNotOptimize(t.root_hash());
  }
  state.SetItemsProcessed(state.iterations() * updates.size());
}
BENCHMARK(BM_TreeBlockUpdate_OneByOneBaseline)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// What a plain depth-256 sparse Merkle tree must at least do per leaf update: 256 SHA-256
// compressions of a 65-byte node (no memory traffic counted, so a lower bound on its cost).
void BM_Depth256HashingOnlyBaseline(benchmark::State& state) {
  uint8_t node[65] = {1};
  for (auto _ : state) {
    for (int level = 0; level < 256; ++level) {
      SHA256_CTX ctx;  // the tree's own way of hashing a node (ledger/state/tree_node.cc)
      SHA256_Init(&ctx);
      SHA256_Update(&ctx, node, sizeof node);
      SHA256_Final(node + 1, &ctx);
    }
    benchmark::DoNotOptimize(node);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Depth256HashingOnlyBaseline);

// A block committed to the RocksDB store (tree update + one synced write batch), on a store of
// 200,000 accounts (its own genesis; a 1,000,000-account store takes minutes to create here).
// Each iteration commits a fresh ~20,000-leaf block. Compare with BM_TreeBlockUpdate_Batched.
void BM_StoreCommitBlock(benchmark::State& state) {
  constexpr uint64_t kStoreAccounts = 200'000;
  auto dir =
      std::filesystem::temp_directory_path() / ("ledger_bench_store_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  auto store = *StateStore::Open(dir, {.cached_versions = 2, .sync = true});
  (void)*store->Commit(SyntheticGenesis(kStoreAccounts, 1000));
  uint64_t block = 0, leaves = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto updates = SyntheticBlock(9, ++block, kStoreAccounts, 20'000);
    leaves += updates.size();
    state.ResumeTiming();
    benchmark::DoNotOptimize(store->Commit(std::move(updates)));
  }
  state.SetItemsProcessed(static_cast<int64_t>(leaves));
  store.reset();
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_StoreCommitBlock)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// The whole block transition as a politician runs it: 10,000 transfers among 20,000 funded
// accounts (in the 1,000,000), checked against the state (signatures not verified here:
// that cost is BM_SigVerify_*) and applied.
void BM_TransferBlockApply(benchmark::State& state) {
  const SparseMerkleTree& base = MillionAccounts();
  std::mt19937_64 rng(2);
  std::vector<Transaction> txs;
  std::vector<KeyPair> keys;
  for (int i = 0; i < 20000; ++i)
    keys.push_back(
        KeyPair::FromSeed(Seed{static_cast<uint8_t>(i), static_cast<uint8_t>(i >> 8), 7}));
  std::vector<LeafUpdate> funding;
  for (const auto& k : keys)
    funding.push_back({AccountKey(k.public_key()), EncodeAccount({1000000, 0})});
  SparseMerkleTree funded = *base.Update(funding);
  std::vector<uint64_t> nonces(keys.size(), 0);
  for (size_t i = 0; i < kBlockTransfers; ++i) {
    size_t from = rng() % keys.size(), to = rng() % keys.size();
    Transaction tx{.from = keys[from].public_key(),
                   .to = keys[to].public_key(),
                   .amount = 1,
                   .nonce = nonces[from]};
    if (from != to) nonces[from]++;
    txs.push_back(tx);
  }
  for (auto _ : state) {
    auto out = ApplyTransfers(TreeLookup(funded), txs, false);
    auto next = funded.Update(out->updates);
    benchmark::DoNotOptimize(next->root_hash());
  }
  state.SetItemsProcessed(state.iterations() * txs.size());
}
BENCHMARK(BM_TransferBlockApply)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// Walks a StateProof encoding (state_proof.h) counting interior nodes, i.e. the siblings a
// classic proof of 32 bytes per level would carry. Returns the offset after the node.
size_t CountInteriors(const std::string& bytes, size_t pos, size_t* interiors) {
  switch (bytes[pos]) {
    case 0x02:
      ++*interiors;
      pos = CountInteriors(bytes, pos + 1, interiors);
      return CountInteriors(bytes, pos, interiors);
    case 0x01:
      return pos + 65;
    case 0x03:
      return pos + 33;
    default:
      return pos + 1;
  }
}

void BM_MultiProofBytes(benchmark::State& state) {
  const SparseMerkleTree& tree = MillionAccounts();
  std::mt19937_64 rng(3);
  std::vector<Hash256> keys;
  for (int i = 0; i < 1000; ++i) keys.push_back(SyntheticAccountKey(rng() % kAccounts));
  size_t multi = 0;
  for (auto _ : state) {
    StateProof proof = tree.Prove(keys);
    multi = proof.EncodedSize();
    benchmark::DoNotOptimize(multi);
  }
  size_t singles = 0, siblings = 0;
  for (const Hash256& k : keys) {
    StateProof single = tree.Prove(std::span(&k, 1));
    singles += single.EncodedSize();
    size_t depth = 0;
    CountInteriors(single.Encode(), 0, &depth);
    siblings += depth;
  }
  StateProof proof = tree.Prove(keys);
  auto verified = proof.Verify(tree.root_hash(), keys);
  state.counters["multi_proof_bytes"] = static_cast<double>(multi);
  state.counters["single_proofs_bytes"] = static_cast<double>(singles);
  state.counters["bare_siblings_bytes"] = static_cast<double>(siblings * 32);
  state.counters["verified"] = verified.ok() ? 1 : 0;
}
BENCHMARK(BM_MultiProofBytes)->Unit(benchmark::kMillisecond)->Iterations(5);

void BM_MultiProofVerify(benchmark::State& state) {
  const SparseMerkleTree& tree = MillionAccounts();
  std::mt19937_64 rng(3);
  std::vector<Hash256> keys;
  for (int i = 0; i < 1000; ++i) keys.push_back(SyntheticAccountKey(rng() % kAccounts));
  std::string bytes = tree.Prove(keys).Encode();
  for (auto _ : state) {
    auto proof = StateProof::Decode(AsBytes(bytes));
    benchmark::DoNotOptimize(proof->Verify(tree.root_hash(), keys));
  }
  state.SetItemsProcessed(state.iterations() * keys.size());
}
BENCHMARK(BM_MultiProofVerify)->Unit(benchmark::kMillisecond);

// --- a member's check of a block ---------------------------------------------------------
//
// Issue #13's "proofs" component at the committee-64 bench's sizes (40,000 funded accounts,
// blocks of about 2,500 transfers): what every committee member does with a politician's
// Execute reply -- decode the transactions, hash them as a pool, decode the multi-proof,
// re-execute every transfer through it and recompute the new root (citizen.cc,
// CheckExecution). Signatures are not checked here (the executor's claims taken): that cost is
// BM_SigVerify_*, and in a citizen daemon sharing its checks a sampled signature is a cache
// hit. Baseline in the same run: the politician's side of the same block (applied to its
// tree, the proof built and encoded, the tree updated).

constexpr size_t kMemberAccounts = 40'000;
constexpr size_t kMemberBlockTransfers = 2'500;

struct MemberBlock {
  SparseMerkleTree tree;
  std::vector<LedgerTx> txs;
  std::vector<std::string> encoded;  // as the Execute reply carries them
  std::string proof;                 // the multi-proof of every leaf the block reads
};

const MemberBlock& MemberBlockFixture() {
  static const MemberBlock* block = [] {
    std::vector<KeyPair> keys;
    std::vector<LeafUpdate> funding;
    for (size_t i = 0; i < kMemberAccounts; ++i) {
      keys.push_back(KeyPair::FromSeed(Seed{static_cast<uint8_t>(i), static_cast<uint8_t>(i >> 8),
                                            static_cast<uint8_t>(i >> 16), 9}));
      funding.push_back({AccountKey(keys.back().public_key()), EncodeAccount({1'000'000, 0})});
    }
    auto* b = new MemberBlock{*SparseMerkleTree().Update(funding), {}, {}, {}};
    std::mt19937_64 rng(5);
    std::vector<uint64_t> nonces(keys.size(), 0);
    for (size_t i = 0; i < kMemberBlockTransfers; ++i) {
      size_t from = rng() % keys.size(), to = rng() % keys.size();
      if (from == to) to = (to + 1) % keys.size();
      Transaction tx{.from = keys[from].public_key(),
                     .to = keys[to].public_key(),
                     .amount = 1,
                     .nonce = nonces[from]++};
      SignTransaction(tx, keys[from]);
      b->txs.push_back(tx);
      b->encoded.push_back(EncodeLedgerTx(b->txs.back()));
    }
    const std::vector<Hash256> read = BlockKeys(b->txs, BlockContext{.height = 2}, AppRegistry());
    b->proof = b->tree.Prove(read).Encode();
    return b;
  }();
  return *block;
}

// Every claim taken, no signature checked: the state work of a block alone.
CryptoPolicy TrustClaims(const std::vector<uint32_t>* none) {
  return CryptoPolicy{.claimed_failures = none, .verify = [](size_t) { return false; }};
}

void BM_MemberBlockCheck(benchmark::State& state) {
  const MemberBlock& b = MemberBlockFixture();
  const AppRegistry apps;
  const BlockContext ctx{.height = 2};
  const std::vector<uint32_t> none;
  const CryptoPolicy trust_claims = TrustClaims(&none);
  const Hash256 old_root = b.tree.root_hash();
  for (auto _ : state) {
    std::vector<LedgerTx> txs;
    txs.reserve(b.encoded.size());
    for (const std::string& e : b.encoded) txs.push_back(*DecodeLedgerTx(AsBytes(e)));
    benchmark::DoNotOptimize(PoolHash(txs));
    auto proof = StateProof::Decode(AsBytes(b.proof));
    auto outcome = ApplyBlock(ProofLookup(*proof, old_root), txs, ctx, apps, trust_claims);
    auto root = proof->RootAfter(old_root, outcome->updates);
    if (!root.ok() || outcome->applied != txs.size()) state.SkipWithError("block did not check");
    benchmark::DoNotOptimize(root);
  }
  state.SetItemsProcessed(state.iterations() * b.encoded.size());
  state.counters["proof_bytes_per_tx"] = static_cast<double>(b.proof.size()) / b.encoded.size();
}
BENCHMARK(BM_MemberBlockCheck)->Unit(benchmark::kMillisecond)->MinTime(2.0);

void BM_PoliticianBlockExecute(benchmark::State& state) {
  const MemberBlock& b = MemberBlockFixture();
  const AppRegistry apps;
  const BlockContext ctx{.height = 2};
  const std::vector<uint32_t> none;
  const CryptoPolicy trust_claims = TrustClaims(&none);
  for (auto _ : state) {
    auto outcome = ApplyBlock(TreeLookup(b.tree), b.txs, ctx, apps, trust_claims);
    std::string proof = b.tree.Prove(BlockKeys(b.txs, ctx, apps)).Encode();
    auto next = b.tree.Update(outcome->updates);
    benchmark::DoNotOptimize(proof);
    benchmark::DoNotOptimize(next->root_hash());
  }
  state.SetItemsProcessed(state.iterations() * b.txs.size());
}
BENCHMARK(BM_PoliticianBlockExecute)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace
}  // namespace tessera::ledger

BENCHMARK_MAIN();
