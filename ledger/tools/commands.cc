#include "ledger/tools/commands.h"

#include <chrono>
#include <iomanip>
#include <random>

#include "ledger/codec/messages.h"
#include "ledger/crypto/hash.h"
#include "ledger/crypto/key_file.h"
#include "ledger/sortition.h"
#include "ledger/state/state_store.h"
#include "ledger/state/synthetic.h"
#include "ledger/state/transfer.h"

namespace tessera::ledger::tools {

namespace {

std::string Short(ByteSpan bytes) { return ToHex(bytes).substr(0, 16); }

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

KeyPair DerivedKey(const std::string& key_seed, uint64_t index) {
  Sha256Hasher h;
  h.Update(key_seed).Update(std::to_string(index));
  return KeyPair::FromSeed(h.Final());
}

}  // namespace

Status KeygenCommand(const std::filesystem::path& prefix, std::ostream& out) {
  KeyPair keys = KeyPair::Generate();
  std::filesystem::path secret = prefix;
  secret += ".key";
  std::filesystem::path pub = prefix;
  pub += ".pub";
  TESSERA_RETURN_IF_ERROR(WriteSecretKeyFile(secret, keys));
  TESSERA_RETURN_IF_ERROR(WritePublicKeyFile(pub, keys.public_key()));
  // Read back through the permission check, as any consumer will.
  TESSERA_ASSIGN_OR_RETURN(KeyPair loaded, ReadSecretKeyFile(secret));
  if (loaded.public_key() != keys.public_key()) return InternalError("key file round trip");
  out << "secret key: " << secret.string() << " (mode 0600)\n"
      << "public key: " << pub.string() << " " << ToHex(keys.public_key()) << "\n";
  return Status::Ok();
}

Status PubkeyCommand(const std::filesystem::path& key_file, std::ostream& out) {
  TESSERA_ASSIGN_OR_RETURN(KeyPair keys, ReadSecretKeyFile(key_file));
  out << ToHex(keys.public_key()) << "\n";
  return Status::Ok();
}

Status LotteryCommand(const LotteryOptions& o, std::ostream& out) {
  SortitionParams params{.population = o.citizens,
                         .committee_size = o.committee,
                         .proposers = o.proposers,
                         .seed_lookback = 2};
  Hash256 seed = Sha256(o.seed_text);
  out << "sortition for block " << o.height << ": " << o.citizens
      << " citizens, expected committee " << o.committee << ", expected proposers " << o.proposers
      << ", seed " << Short(seed) << "...\n";

  struct Published {
    uint64_t index;
    PublicKey key;
    VrfProof committee_proof;
    VrfProof proposer_proof;
  };
  std::vector<Published> published;
  auto start = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < o.citizens; ++i) {
    KeyPair k = DerivedKey(o.key_seed, i);
    TESSERA_ASSIGN_OR_RETURN(Ticket c, Draw(k, Role::kCommittee, o.height, seed, params));
    TESSERA_ASSIGN_OR_RETURN(Ticket p, Draw(k, Role::kProposer, o.height, seed, params));
    published.push_back({i, k.public_key(), c.proof, p.proof});
  }
  double prove_s = Seconds(start);

  // Verification uses only what was published: public keys and proofs.
  start = std::chrono::steady_clock::now();
  std::vector<const Published*> committee;
  std::vector<ProposerClaim> claims;
  std::vector<uint64_t> claim_index;
  for (const Published& p : published) {
    TESSERA_ASSIGN_OR_RETURN(
        Ticket c, VerifyTicket(p.key, Role::kCommittee, o.height, seed, p.committee_proof, params));
    if (c.selected) committee.push_back(&p);
    TESSERA_ASSIGN_OR_RETURN(
        Ticket t, VerifyTicket(p.key, Role::kProposer, o.height, seed, p.proposer_proof, params));
    if (t.selected) {
      claims.push_back({p.key, p.proposer_proof});
      claim_index.push_back(p.index);
    }
  }
  double verify_s = Seconds(start);
  out << std::fixed << std::setprecision(2) << "drew " << 2 * o.citizens << " tickets in "
      << prove_s << " s, verified all " << 2 * o.citizens << " proofs from public keys in "
      << verify_s << " s\n";
  out << "committee: " << committee.size() << " selected (expected " << o.committee << ")\n";
  for (size_t i = 0; i < committee.size() && i < o.show; ++i) {
    TESSERA_ASSIGN_OR_RETURN(Ticket t, VerifyTicket(committee[i]->key, Role::kCommittee, o.height,
                                                    seed, committee[i]->committee_proof, params));
    out << "  citizen " << std::setw(5) << committee[i]->index << "  pk "
        << Short(committee[i]->key) << "...  beta " << Short(t.output) << "...  proof verified\n";
  }
  if (committee.size() > o.show) out << "  ... and " << committee.size() - o.show << " more\n";
  auto winner = SelectProposer(claims, o.height, seed, params);
  if (winner.ok()) {
    out << "proposer: citizen " << claim_index[*winner] << " (lowest VRF output among "
        << claims.size() << " selected proposer candidates)\n";
    VrfOutput beta = *VrfProofToHash(claims[*winner].proof);
    out << "next seed: " << Short(NextSeed(seed, beta)) << "...\n";
  } else {
    out << "proposer: none selected this round (" << winner.status().message() << ")\n";
  }
  if (!committee.empty()) {
    VrfProof forged = committee[0]->committee_proof;
    forged[50] ^= 0x01;
    auto bad = VerifyTicket(committee[0]->key, Role::kCommittee, o.height, seed, forged, params);
    out << "tampered proof (one bit flipped): "
        << (bad.ok() ? "ACCEPTED (bug)" : "rejected: " + bad.status().message()) << "\n";
    if (bad.ok()) return InternalError("a tampered VRF proof verified");
  }
  return Status::Ok();
}

Status StateCommand(const StateOptions& o, std::ostream& out) {
  if (o.senders < 2 || o.senders > o.accounts) {
    return InvalidArgumentError("need 2 <= senders <= accounts");
  }
  auto start = std::chrono::steady_clock::now();
  // Accounts 0..senders-1 belong to real key holders; the rest are synthetic.
  std::vector<KeyPair> holders;
  std::vector<LeafUpdate> genesis;
  genesis.reserve(o.accounts);
  for (uint64_t i = 0; i < o.senders; ++i) {
    holders.push_back(DerivedKey("demo senders", i));
    genesis.push_back({AccountKey(holders.back().public_key()), EncodeAccount({1000000, 0})});
  }
  for (uint64_t i = o.senders; i < o.accounts; ++i) {
    genesis.push_back({SyntheticAccountKey(i), EncodeAccount({1000, 0})});
  }
  std::unique_ptr<StateStore> store;
  SparseMerkleTree state;
  if (!o.db.empty()) {
    TESSERA_ASSIGN_OR_RETURN(store, StateStore::Open(o.db));
    if (store->version() != 0) return FailedPreconditionError(o.db.string() + " is not empty");
    TESSERA_RETURN_IF_ERROR(store->Commit(genesis).status());
    state = store->tree();
  } else {
    TESSERA_ASSIGN_OR_RETURN(state, SparseMerkleTree().Update(genesis));
  }
  out << std::fixed << std::setprecision(2) << "genesis: " << state.size() << " accounts, root "
      << Short(state.root_hash()) << "... (" << Seconds(start) << " s"
      << (store ? ", committed to RocksDB as version 1" : "") << ")\n";

  std::mt19937_64 rng(42);
  std::vector<uint64_t> nonces(holders.size(), 0);
  std::vector<Transaction> txs;
  for (uint64_t i = 0; i < o.transfers; ++i) {
    size_t from = rng() % holders.size();
    // Mostly to other key holders, sometimes to a brand-new account.
    PublicKey to = rng() % 10 == 0 ? DerivedKey("demo newcomers", i).public_key()
                                   : holders[rng() % holders.size()].public_key();
    Transaction tx{.to = to, .amount = 1 + rng() % 500, .nonce = nonces[from]};
    SignTransaction(tx, holders[from]);
    if (tx.from != tx.to) nonces[from]++;
    txs.push_back(tx);
  }
  // One replayed transaction, which the nonce rule must reject.
  txs.push_back(txs.front());

  start = std::chrono::steady_clock::now();
  TESSERA_ASSIGN_OR_RETURN(TransferOutcome outcome, ApplyTransfers(TreeLookup(state), txs, true));
  SparseMerkleTree next;
  if (store) {
    TESSERA_RETURN_IF_ERROR(store->Commit(outcome.updates).status());
    next = store->tree();
  } else {
    TESSERA_ASSIGN_OR_RETURN(next, state.Update(outcome.updates));
  }
  out << "block: " << txs.size() << " signed transfers, " << outcome.applied << " applied, "
      << outcome.rejected.size() << " rejected";
  if (!outcome.rejected.empty())
    out << " (e.g. #" << outcome.rejected.back().first << ": " << outcome.rejected.back().second
        << ")";
  out << "; " << outcome.updates.size() << " leaves updated in " << Seconds(start)
      << " s including signature checks\n";
  out << "new state root: " << ToHex(next.root_hash()) << "\n";

  std::vector<Hash256> touched = TouchedKeys(txs);
  StateProof proof = state.Prove(touched);
  std::string wire = proof.Encode();
  size_t singles = 0;
  for (size_t i = 0; i < touched.size(); ++i)
    singles += state.Prove(std::span(&touched[i], 1)).EncodedSize();
  out << "multi-proof for the " << touched.size() << " touched accounts: " << wire.size()
      << " bytes (single proofs: " << singles << " bytes, ratio "
      << static_cast<double>(wire.size()) / static_cast<double>(singles) << ")\n";

  // The light client: old root + proof bytes + the block, nothing else.
  start = std::chrono::steady_clock::now();
  TESSERA_ASSIGN_OR_RETURN(StateProof received, StateProof::Decode(AsBytes(wire)));
  TESSERA_ASSIGN_OR_RETURN(TransferOutcome replay,
                           ApplyTransfers(ProofLookup(received, state.root_hash()), txs, true));
  TESSERA_ASSIGN_OR_RETURN(Hash256 recomputed,
                           received.RootAfter(state.root_hash(), replay.updates));
  bool match = recomputed == next.root_hash();
  out << "light client: replayed the block from the proof in " << Seconds(start)
      << " s; recomputed root " << Short(recomputed) << "... "
      << (match ? "MATCHES" : "DOES NOT MATCH") << " the server's root\n";
  if (!match) return InternalError("light-client root transition mismatch");
  Hash256 lie = next.root_hash();
  lie[0] ^= 1;
  out << "a politician claiming root " << Short(lie)
      << "... would be caught: " << (recomputed != lie ? "yes" : "NO") << "\n";
  if (store) {
    out << "RocksDB store " << o.db.string() << ": version " << store->version() << ", root "
        << Short(store->root()) << "...\n";
  }
  return Status::Ok();
}

Status WriteBlocksCommand(const WriteBlocksOptions& o, std::ostream& out) {
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<StateStore> store, StateStore::Open(o.db));
  out << "opened " << o.db.string() << " at version " << store->version() << " root "
      << ToHex(store->root()) << std::endl;
  uint64_t first = store->version() + 1;
  for (uint64_t v = first; v < first + o.blocks; ++v) {
    TESSERA_ASSIGN_OR_RETURN(Hash256 root,
                             store->Commit(SyntheticBlock(o.seed, v, o.accounts, o.block_size)));
    out << "committed " << v << " " << ToHex(root) << std::endl;
    if (o.keep > 0 && v >= o.keep) {
      TESSERA_RETURN_IF_ERROR(store->Prune(v - o.keep + 1));
      out << "pruned below " << v - o.keep + 1 << std::endl;
    }
  }
  return Status::Ok();
}

Status ReplayCommand(const WriteBlocksOptions& o, uint64_t versions, std::ostream& out) {
  SparseMerkleTree tree;
  for (uint64_t v = 1; v <= versions; ++v) {
    TESSERA_ASSIGN_OR_RETURN(tree,
                             tree.Update(SyntheticBlock(o.seed, v, o.accounts, o.block_size)));
  }
  out << "root " << ToHex(tree.root_hash()) << "\n";
  return Status::Ok();
}

Status InspectCommand(const std::filesystem::path& db, std::ostream& out) {
  if (!std::filesystem::exists(db)) return NotFoundError("no store at " + db.string());
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<StateStore> store, StateStore::Open(db));
  out << "version " << store->version() << "\nroot " << ToHex(store->root()) << "\naccounts "
      << store->tree().size() << "\noldest_version " << store->oldest_version() << "\n";
  return Status::Ok();
}

}  // namespace tessera::ledger::tools
