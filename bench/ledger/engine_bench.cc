// Ledger engine ceilings (docs/ledger-engine.md): what one core of this box can do per
// component a politician or citizen spends CPU on, each beside its baseline from the same run.
//
//   signatures:  Ed25519 verification uncached vs a signature-cache hit, and uncached on 1 and
//                2 threads (does parallel verification pay on this box?)
//   caches:      bytes per signature-cache entry; bytes per state version kept in memory
//                (a 1,000-transfer block over 40,000 accounts), both measured with mallinfo2
//   old reads:   a 2-key proof at an old version from the in-memory versions vs the O(N)
//                rebuild from disk the politician used to do (200,000 accounts)
//   RPC:         a politician over gRPC on loopback: GetStatus and SubmitTransaction calls/s
//                from 1 and 4 client threads; a registered caller's signed ReadState calls/s
//                alone vs during a flood of unsigned ReadState calls from 2 other threads
//                (request_auth.h: the flood is refused from the anonymous budget)
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <random>
#include <thread>

#include "ledger/crypto/hash.h"
#include "ledger/crypto/signature_cache.h"
#include "ledger/net/client.h"
#include "ledger/net/identity.h"
#include "ledger/net/politician_server.h"
#include "ledger/net/process.h"
#include "ledger/net/request_auth.h"
#include "ledger/state/account.h"
#include "ledger/state/state_store.h"
#include "ledger/state/synthetic.h"

namespace tessera::ledger::net {
namespace {

namespace fs = std::filesystem;

struct SignedTxs {
  std::vector<Transaction> txs;
  explicit SignedTxs(size_t n) {
    for (size_t i = 0; i < n; ++i) {
      KeyPair k = KeyPair::FromSeed(Sha256("engine bench " + std::to_string(i)));
      Transaction tx{.to = KeyPair::FromSeed(Seed{2}).public_key(), .amount = 1, .nonce = i};
      tx.from = k.public_key();
      SignTransaction(tx, k);
      txs.push_back(tx);
    }
  }
};
const SignedTxs& Txs() {
  static const SignedTxs txs(256);
  return txs;
}

// --- signatures --------------------------------------------------------------------------

void BM_SigVerify_Uncached(benchmark::State& state) {
  const auto& txs = Txs().txs;
  size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(VerifyTransaction(txs[i++ % txs.size()]));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SigVerify_Uncached);

void BM_SigVerify_CacheHit(benchmark::State& state) {
  const auto& txs = Txs().txs;
  SignatureCache cache(1 << 12);
  SignatureCache::Scope scope(&cache);
  for (const Transaction& tx : txs) VerifyTransaction(tx);  // fill
  size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(VerifyTransaction(txs[i++ % txs.size()]));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SigVerify_CacheHit);

// Uncached verification on several threads at once: items/s summed over threads.
void BM_SigVerify_Parallel(benchmark::State& state) {
  const auto& txs = Txs().txs;
  size_t i = static_cast<size_t>(state.thread_index()) * 17;
  for (auto _ : state) benchmark::DoNotOptimize(VerifyTransaction(txs[i++ % txs.size()]));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SigVerify_Parallel)->Threads(1)->Threads(2)->UseRealTime();

// --- caches ------------------------------------------------------------------------------

size_t HeapInUse() { return mallinfo2().uordblks; }

void BM_SignatureCacheBytesPerEntry(benchmark::State& state) {
  constexpr size_t kEntries = 100000;
  double per_entry = 0;
  for (auto _ : state) {
    const size_t before = HeapInUse();
    auto cache = std::make_unique<SignatureCache>(2 * kEntries + 2);  // nothing evicted
    for (size_t i = 0; i < kEntries; ++i) {
      Hash256 e = Sha256(std::to_string(i));
      cache->Insert(e);
    }
    per_entry = static_cast<double>(HeapInUse() - before) / kEntries;
    benchmark::DoNotOptimize(cache->stats());
  }
  state.counters["bytes_per_entry"] = per_entry;
}
BENCHMARK(BM_SignatureCacheBytesPerEntry)->Unit(benchmark::kMillisecond)->Iterations(3);

// What keeping one more state version in memory costs: the nodes a block's updates replace.
void BM_StateVersionBytes(benchmark::State& state) {
  constexpr uint64_t kAccounts = 40000, kTransfers = 1000;
  auto genesis = SparseMerkleTree().Update(SyntheticGenesis(kAccounts, 1000));
  double per_version = 0;
  uint64_t v = 1;
  for (auto _ : state) {
    const size_t before = HeapInUse();
    auto next = genesis->Update(SyntheticBlock(7, v++, kAccounts, 2 * kTransfers));
    per_version = static_cast<double>(HeapInUse() - before);
    benchmark::DoNotOptimize(next->root_hash());
  }
  state.counters["bytes_per_version"] = per_version;
  state.counters["accounts"] = kAccounts;
  state.counters["leaves_per_block"] = 2 * kTransfers;
}
BENCHMARK(BM_StateVersionBytes)->Unit(benchmark::kMillisecond)->Iterations(3);

// --- old-version reads -------------------------------------------------------------------

struct OldVersions {
  fs::path dir = fs::temp_directory_path() / ("engine_bench_store_" + std::to_string(::getpid()));
  std::unique_ptr<StateStore> store;
  std::vector<Hash256> keys{SyntheticAccountKey(1), SyntheticAccountKey(2)};
  OldVersions() {
    fs::remove_all(dir);
    store = *StateStore::Open(dir, {.cached_versions = 16, .sync = false});
    (void)*store->Commit(SyntheticGenesis(200000, 1000));
    for (uint64_t v = 2; v <= 8; ++v) (void)*store->Commit(SyntheticBlock(3, v, 200000, 2000));
  }
  ~OldVersions() {
    store.reset();
    fs::remove_all(dir);
  }
};
OldVersions& Versions() {
  static OldVersions* v = new OldVersions();
  return *v;
}

void BM_OldVersionProof_InMemory(benchmark::State& state) {
  OldVersions& o = Versions();
  for (auto _ : state) {
    auto tree = o.store->CachedTreeAt(3);
    benchmark::DoNotOptimize(tree->Prove(o.keys));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_OldVersionProof_InMemory);

// ProveAt(3) is served from memory too when 3 is cached; the baseline needs a store that
// keeps only the latest version in memory, as the politician did.
void BM_OldVersionProof_Rebuild(benchmark::State& state) {
  OldVersions& o = Versions();
  o.store.reset();
  o.store = *StateStore::Open(o.dir, {.cached_versions = 1, .sync = false});
  for (auto _ : state) benchmark::DoNotOptimize(o.store->ProveAt(o.keys, 3));
  state.SetItemsProcessed(state.iterations());
  o.store.reset();
  o.store = *StateStore::Open(o.dir, {.cached_versions = 16, .sync = false});
}
BENCHMARK(BM_OldVersionProof_Rebuild)->Unit(benchmark::kMillisecond)->Iterations(5);

// --- RPC ---------------------------------------------------------------------------------

constexpr uint32_t kRpcAccounts = 20000;

KeyPair RpcAccount(uint32_t i) { return KeyPair::FromSeed(Sha256("rpc " + std::to_string(i))); }

struct RpcPolitician {
  fs::path dir = fs::temp_directory_path() / ("engine_bench_pol_" + std::to_string(::getpid()));
  std::atomic<bool> stop{false};
  std::thread server;
  std::string address;
  std::vector<std::string> txs;  // encoded, valid, distinct
  std::atomic<size_t> next_tx{0};

  RpcPolitician() {
    fs::remove_all(dir);
    Genesis g;
    g.name = "engine-bench";
    g.registrar = KeyPair::FromSeed(Seed{9}).public_key();
    g.sortition.population = g.sortition.committee_size = g.sortition.proposers = 1;
    g.sortition.seed_lookback = 1;
    g.cert_threshold = g.soft_threshold = g.witness_threshold = 1;
    g.max_pool_txs = 200000;  // room for every transfer below: measures admission, not "full"
    KeyPair me = KeyPair::FromSeed(Seed{8});
    address = "127.0.0.1:" + std::to_string(*FreeLoopbackPort());
    g.politicians.push_back({0, me.public_key(), address});
    for (uint32_t i = 0; i < kRpcAccounts; ++i)
      g.accounts.push_back({RpcAccount(i).public_key(), 1000});
    PoliticianOptions o;
    o.id = 0;
    o.genesis = g;
    o.keys = me;
    o.dir = dir;
    // The signed reader measures throughput, not its own budget; unsigned callers keep the
    // default anonymous budget (50/s, burst 100).
    o.reads_per_s = o.reads_burst = 1e9;
    for (uint64_t nonce = 0; nonce < 3; ++nonce) {
      for (uint32_t i = 0; i < kRpcAccounts; ++i) {
        KeyPair k = RpcAccount(i);
        Transaction tx{.from = k.public_key(),
                       .to = RpcAccount((i + 1) % kRpcAccounts).public_key(),
                       .amount = 1,
                       .nonce = nonce};
        SignTransaction(tx, k);
        txs.push_back(EncodeTransaction(tx));
      }
    }
    server = std::thread([this, o] { (void)RunPolitician(o, stop); });
    PoliticianClient c(address, 1000);
    while (!c.GetStatus().ok()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ~RpcPolitician() {
    stop = true;
    server.join();
    fs::remove_all(dir);
  }
};
RpcPolitician& Politician() {
  static RpcPolitician* p = new RpcPolitician();
  return *p;
}

void BM_Rpc_GetStatus(benchmark::State& state) {
  RpcPolitician& p = Politician();
  PoliticianClient client(p.address, 2000);
  for (auto _ : state) benchmark::DoNotOptimize(client.GetStatus());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Rpc_GetStatus)->Threads(1)->Threads(4)->UseRealTime();

void BM_Rpc_SubmitTransaction(benchmark::State& state) {
  RpcPolitician& p = Politician();
  PoliticianClient client(p.address, 2000);
  int64_t accepted = 0;
  for (auto _ : state) {
    size_t i = p.next_tx++;
    if (i >= p.txs.size()) {
      state.SkipWithError("out of pre-signed transfers");
      break;
    }
    auto tx = DecodeLedgerTx(AsBytes(p.txs[i]));
    accepted += client.SubmitTransaction(*tx).ok();
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["accepted"] = static_cast<double>(accepted);
}
BENCHMARK(BM_Rpc_SubmitTransaction)->Threads(1)->Threads(4)->UseRealTime()->MinTime(1.0);

// Arg 0: the signed reader alone; arg 1: the same during an unsigned flood from 2 threads.
void BM_Rpc_SignedReadStateUnderFlood(benchmark::State& state) {
  RpcPolitician& p = Politician();
  const KeyPair registrar = KeyPair::FromSeed(Seed{9}), citizen = KeyPair::FromSeed(Seed{7});
  Identity id{.citizen = citizen.public_key(), .registered_at = 0};
  SignIdentity(id, registrar);
  const RequestSigner signer{citizen, EncodeIdentity(id)};
  const std::vector<Hash256> keys{AccountKey(RpcAccount(1).public_key()),
                                  AccountKey(RpcAccount(2).public_key())};
  std::atomic<bool> stop{false};
  std::atomic<int64_t> flood_ok{0}, flood_refused{0};
  std::vector<std::thread> flood;
  for (int t = 0; state.range(0) == 1 && t < 2; ++t) {
    flood.emplace_back([&] {
      PoliticianClient c(p.address, 2000);
      while (!stop) (c.ReadState(0, keys).ok() ? flood_ok : flood_refused)++;
    });
  }
  PoliticianClient client(p.address, 2000);
  int64_t failed = 0;
  for (auto _ : state) failed += !client.ReadState(0, keys, nullptr, &signer).ok();
  stop = true;
  for (std::thread& t : flood) t.join();
  state.SetItemsProcessed(state.iterations());
  state.counters["signed_failed"] = static_cast<double>(failed);
  state.counters["flood_served"] = static_cast<double>(flood_ok);
  state.counters["flood_refused"] = static_cast<double>(flood_refused);
}
BENCHMARK(BM_Rpc_SignedReadStateUnderFlood)->Arg(0)->Arg(1)->UseRealTime()->MinTime(2.0);

}  // namespace
}  // namespace tessera::ledger::net

BENCHMARK_MAIN();
