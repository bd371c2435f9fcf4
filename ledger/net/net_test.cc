// Unit tests of the network's building blocks: identities, the genesis file, the mempool's
// admission rules, certified-block verification, and a politician node driven in-process.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <optional>
#include <thread>

#include "core/file.h"
#include "ledger/crypto/hash.h"
#include "ledger/net/chain.h"
#include "ledger/net/execution_claim.h"
#include "ledger/net/genesis.h"
#include "ledger/net/identity.h"
#include "ledger/net/mempool.h"
#include "ledger/net/politician.h"
#include "ledger/net/registration.h"
#include "ledger/net/request_auth.h"
#include "ledger/net/round_item.h"
#include "ledger/state/account.h"
#include "ledger/vote_sortition.h"

namespace tessera::ledger::net {
namespace {

KeyPair Key(int i) { return KeyPair::FromSeed(Sha256("test key " + std::to_string(i))); }

TEST(IdentityTest, RoundTripsVerifiesAndRejectsTampering) {
  KeyPair registrar = Key(1), citizen = Key(2);
  Identity id{.citizen = citizen.public_key(), .registered_at = 7};
  SignIdentity(id, registrar);
  std::string wire = EncodeIdentity(id);
  auto back = DecodeIdentity(AsBytes(wire));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, id);
  EXPECT_TRUE(VerifyIdentity(*back, registrar.public_key()));
  EXPECT_FALSE(VerifyIdentity(*back, citizen.public_key()));
  Identity later = *back;
  later.registered_at = 1;  // backdating breaks the signature
  EXPECT_FALSE(VerifyIdentity(later, registrar.public_key()));
  EXPECT_FALSE(DecodeIdentity(AsBytes(wire.substr(0, wire.size() - 1))).ok());
  EXPECT_FALSE(DecodeIdentity(AsBytes(wire + "x")).ok());
}

TEST(IdentityTest, EligibilityStartsAfterTheRegistrationDelay) {
  Identity genesis_id{.registered_at = 0};
  EXPECT_TRUE(EligibleAt(genesis_id, 1, 3));
  Identity late{.registered_at = 10};
  EXPECT_FALSE(EligibleAt(late, 10, 3));
  EXPECT_FALSE(EligibleAt(late, 12, 3));
  EXPECT_TRUE(EligibleAt(late, 13, 3));
}

Genesis TestGenesis(int citizens, int politicians = 2) {
  Genesis g;
  // These tests sign certificates and votes with the height's committee ticket; the per-step
  // ones (ChainTest.PerStep*, PoliticianNodeTest.PerStep*) set kPerStep themselves.
  g.vote_committees = VoteCommittees::kPerHeight;
  g.registrar = Key(100).public_key();
  g.sortition.population = citizens;
  g.sortition.committee_size = citizens;  // everyone is on every committee
  g.sortition.proposers = citizens;
  g.sortition.seed_lookback = 1;
  g.cert_threshold = g.soft_threshold = 2 * citizens / 3 + 1;
  g.witness_threshold = 1;
  for (int i = 0; i < politicians; ++i) {
    g.politicians.push_back({static_cast<uint32_t>(i), Key(200 + i).public_key(),
                             "127.0.0.1:" + std::to_string(1 + i)});
  }
  g.accounts.push_back({Key(300).public_key(), 1000});
  g.accounts.push_back({Key(301).public_key(), 5});
  return g;
}

TEST(GenesisTest, TomlRoundTripAndClearErrors) {
  Genesis g = TestGenesis(4);
  g.vote_committees = Genesis{}.vote_committees;  // the default
  auto config = Config::Parse(GenesisToToml(g));
  ASSERT_TRUE(config.ok()) << config.status();
  auto back = ParseGenesis(*config);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->registrar, g.registrar);
  EXPECT_EQ(back->politicians.size(), 2u);
  EXPECT_EQ(back->cert_threshold, g.cert_threshold);
  EXPECT_EQ(back->GenesisHeader()->state_root, g.GenesisHeader()->state_root);
  auto bad = Config::Parse("[chain]\nregistrar = \"zz\"\n");
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(ParseGenesis(*bad).status().code(), StatusCode::kInvalidArgument);
  // Vote committees: per height unless the file says per step; always written, so a file is
  // read as what it says if the default changes.
  EXPECT_EQ(back->vote_committees, VoteCommittees::kPerHeight);
  EXPECT_NE(GenesisToToml(g).find("vote_committees = \"per-height\""), std::string::npos);
  std::string unstated = GenesisToToml(g);
  unstated.erase(
      unstated.find("vote_committees"),
      unstated.find('\n', unstated.find("vote_committees")) - unstated.find("vote_committees") + 1);
  auto default_mode = ParseGenesis(*Config::Parse(unstated));
  ASSERT_TRUE(default_mode.ok()) << default_mode.status();
  EXPECT_EQ(default_mode->vote_committees, VoteCommittees::kPerHeight);
  g.vote_committees = VoteCommittees::kPerStep;
  auto per_step = ParseGenesis(*Config::Parse(GenesisToToml(g)));
  ASSERT_TRUE(per_step.ok()) << per_step.status();
  EXPECT_EQ(per_step->vote_committees, VoteCommittees::kPerStep);
  // ... and back: a file's "per-height" is per height whatever the struct's default is.
  g.vote_committees = VoteCommittees::kPerHeight;
  auto per_height = ParseGenesis(*Config::Parse(GenesisToToml(g)));
  ASSERT_TRUE(per_height.ok()) << per_height.status();
  EXPECT_EQ(per_height->vote_committees, VoteCommittees::kPerHeight);
  std::string text = GenesisToToml(g);
  text.replace(text.find("per-height"), 10, "per-year");
  auto wrong = ParseGenesis(*Config::Parse(text));
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("vote_committees"), std::string::npos);
}

TEST(MempoolTest, AdmitsValidTransfersAndSaysWhyOthersAreRejected) {
  Genesis g = TestGenesis(4);
  SparseMerkleTree state = *g.GenesisState();
  KeyPair alice = Key(300), bob = Key(301), nobody = Key(999);
  Mempool pool(10);
  auto tx = [&](const KeyPair& from, const PublicKey& to, uint64_t amount, uint64_t nonce) {
    Transaction t{.from = from.public_key(), .to = to, .amount = amount, .nonce = nonce};
    SignTransaction(t, from);
    return t;
  };
  Transaction ok = tx(alice, bob.public_key(), 10, 0);
  EXPECT_TRUE(pool.Admit(ok, state).ok());
  EXPECT_EQ(pool.Admit(ok, state).code(), StatusCode::kAlreadyExists);
  Status conflict = pool.Admit(tx(alice, nobody.public_key(), 10, 0), state);
  EXPECT_NE(conflict.message().find("same sender and nonce"), std::string::npos) << conflict;
  Transaction forged = tx(alice, bob.public_key(), 11, 1);
  forged.amount = 500;
  EXPECT_NE(pool.Admit(forged, state).message().find("bad signature"), std::string::npos);
  EXPECT_NE(pool.Admit(tx(bob, alice.public_key(), 6, 0), state).message().find("insufficient"),
            std::string::npos);
  EXPECT_EQ(pool.Admit(tx(nobody, alice.public_key(), 1, 0), state).code(), StatusCode::kNotFound);
  EXPECT_NE(pool.Admit(tx(alice, bob.public_key(), 1, 500), state).message().find("too far"),
            std::string::npos);
  EXPECT_EQ(pool.Admit(tx(alice, alice.public_key(), 1, 1), state).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(pool.size(), 1u);
  // Once alice's nonce 0 is committed, her pending nonce-0 transfer is pruned.
  auto next = state.Update({{AccountKey(alice.public_key()), EncodeAccount({990, 1})}});
  pool.Prune(*next, AppRegistry{}, BlockContext{});
  EXPECT_EQ(pool.size(), 0u);
}

// Builds block 1 certified by `signers` of the 4 test citizens.
struct Fixture {
  Genesis g = TestGenesis(4);
  KeyPair registrar = Key(100);
  std::vector<KeyPair> citizens{Key(10), Key(11), Key(12), Key(13)};
  BlockHeader genesis = *g.GenesisHeader();

  Identity IdOf(const KeyPair& k, uint64_t at = 0) {
    Identity id{.citizen = k.public_key(), .registered_at = at};
    SignIdentity(id, registrar);
    return id;
  }
  // Block 1 (its header: no pools, the genesis root, unless given) certified by `signers`,
  // each with the credential `ticket` gives it (default: its committee ticket for block 1),
  // the certificate of period `period`.
  using TicketOf = std::function<VrfProof(const KeyPair&)>;
  CertifiedBlockData Block(size_t signers, std::vector<Hash256> pools = {},
                           std::optional<Hash256> root = std::nullopt, TicketOf ticket = nullptr,
                           uint32_t period = 0) {
    CertifiedBlockData b;
    b.header.pool_hashes = std::move(pools);
    auto proposer = *Draw(citizens[0], Role::kProposer, 1, genesis.seed, g.sortition);
    b.header.height = 1;
    b.header.prev_hash = BlockHash(genesis);
    SetRegistrations(g, genesis, {}, &b.header);
    b.header.seed = NextSeed(genesis.seed, proposer.output);
    b.header.proposer = citizens[0].public_key();
    b.header.proposer_credential = proposer.proof;
    b.header.state_root = root.value_or(genesis.state_root);
    b.certificate.height = 1;
    b.certificate.period = period;
    b.certificate.block_hash = BlockHash(b.header);
    std::vector<KeyPair> sorted = citizens;
    std::sort(sorted.begin(), sorted.end(),
              [](const KeyPair& a, const KeyPair& c) { return a.public_key() < c.public_key(); });
    for (size_t i = 0; i < signers; ++i) {
      const VrfProof proof =
          ticket ? ticket(sorted[i])
                 : Draw(sorted[i], Role::kCommittee, 1, genesis.seed, g.sortition)->proof;
      b.certificate.signers.push_back({sorted[i].public_key(), proof,
                                       SignBlock(1, period, b.certificate.block_hash, sorted[i])});
    }
    for (const KeyPair& k : citizens) b.identities.push_back(IdOf(k));
    return b;
  }
};

TEST(ChainTest, AcceptsAQuorumCertificateAndRejectsEveryBrokenPart) {
  Fixture f;
  ASSERT_EQ(f.g.cert_threshold, 3u);
  EXPECT_TRUE(VerifyCertifiedBlock(f.g, f.genesis, f.Block(3)).ok());
  EXPECT_EQ(VerifyCertifiedBlock(f.g, f.genesis, f.Block(2)).code(),
            StatusCode::kFailedPrecondition);
  CertifiedBlockData b = f.Block(3);
  b.header.state_root[0] ^= 1;  // the certificate no longer names this header
  EXPECT_FALSE(VerifyCertifiedBlock(f.g, f.genesis, b).ok());
  b = f.Block(3);
  b.certificate.signers[1].signature[5] ^= 1;  // one forged signature: below quorum
  EXPECT_FALSE(VerifyCertifiedBlock(f.g, f.genesis, b).ok());
  b = f.Block(3);
  b.identities = {f.IdOf(f.citizens[0])};  // signers without registered identities
  EXPECT_FALSE(VerifyCertifiedBlock(f.g, f.genesis, b).ok());
  b = f.Block(3);
  for (Identity& id : b.identities) SignIdentity(id, Key(101));  // not the genesis registrar
  EXPECT_FALSE(VerifyCertifiedBlock(f.g, f.genesis, b).ok());
  b = f.Block(3);
  b.identities.clear();
  for (const KeyPair& k : f.citizens) b.identities.push_back(f.IdOf(k, 1));  // too recent
  EXPECT_FALSE(VerifyCertifiedBlock(f.g, f.genesis, b).ok());
  b = f.Block(3);
  b.header.seed[0] ^= 1;  // a seed not derived from the proposer's VRF output
  b.certificate.block_hash = BlockHash(b.header);
  EXPECT_FALSE(VerifyCertifiedBlock(f.g, f.genesis, b).ok());
  BlockHeader other = f.genesis;
  other.state_root[3] ^= 1;  // not on top of this parent
  EXPECT_FALSE(VerifyCertifiedBlock(f.g, other, f.Block(3)).ok());
}

TEST(ChainTest, PerStepCertificatesNeedEachSignersCertTicketOfTheCertificatesPeriod) {
  // Everyone wins every draw here (committee = population), so only the ticket's binding to
  // (height, period, step) is tested: another step's, period's or role's proof does not
  // verify.
  Fixture f;
  f.g.vote_committees = VoteCommittees::kPerStep;
  auto vote_ticket = [&](uint32_t period, VoteStep step) -> Fixture::TicketOf {
    return [&, period, step](const KeyPair& k) {
      return DrawVote(k, 1, period, static_cast<uint8_t>(step), f.genesis.seed, f.g.sortition)
          ->proof;
    };
  };
  EXPECT_TRUE(
      VerifyCertifiedBlock(f.g, f.genesis, f.Block(3, {}, {}, vote_ticket(0, VoteStep::kCert)))
          .ok());
  EXPECT_TRUE(
      VerifyCertifiedBlock(f.g, f.genesis, f.Block(3, {}, {}, vote_ticket(2, VoteStep::kCert), 2))
          .ok());
  // The height's committee ticket, a soft ticket, and a cert ticket of another period.
  Status s = VerifyCertifiedBlock(f.g, f.genesis, f.Block(3));
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s;
  EXPECT_FALSE(
      VerifyCertifiedBlock(f.g, f.genesis, f.Block(3, {}, {}, vote_ticket(0, VoteStep::kSoft)))
          .ok());
  EXPECT_FALSE(
      VerifyCertifiedBlock(f.g, f.genesis, f.Block(3, {}, {}, vote_ticket(1, VoteStep::kCert), 2))
          .ok());
  // Under per-height committees a per-step certificate is refused, and one cache serves both
  // kinds of checks without mixing their verdicts.
  TicketCache cache;
  const CertifiedBlockData per_step = f.Block(3, {}, {}, vote_ticket(0, VoteStep::kCert));
  EXPECT_TRUE(VerifyCertifiedBlock(f.g, f.genesis, per_step, &cache).ok());
  Genesis per_height = f.g;
  per_height.vote_committees = VoteCommittees::kPerHeight;
  EXPECT_FALSE(VerifyCertifiedBlock(per_height, f.genesis, per_step, &cache).ok());
  EXPECT_TRUE(VerifyCertifiedBlock(per_height, f.genesis, f.Block(3), &cache).ok());
  EXPECT_FALSE(VerifyCertifiedBlock(f.g, f.genesis, f.Block(3), &cache).ok());
}

TEST(ChainTest, PerStepCertificateSignersMustWinTheirDraw) {
  // A large population with 2 expected members per step: signers that lost their cert draw
  // are not counted, winners are.
  Fixture f;
  f.g.vote_committees = VoteCommittees::kPerStep;
  f.g.sortition.population = 6;
  f.g.sortition.committee_size = 2;
  f.g.sortition.proposers = 6;  // the proposer always wins: only the certificate is tested
  f.g.cert_threshold = f.g.soft_threshold = 1;
  f.genesis = *f.g.GenesisHeader();  // its population is the live one at block 1
  // Find a period in which some citizen wins and some loses its cert draw.
  for (uint32_t period = 0; period < 64; ++period) {
    size_t winners = 0;
    for (const KeyPair& k : f.citizens) {
      winners += DrawVote(k, 1, period, 2, f.genesis.seed, f.g.sortition)->selected;
    }
    if (winners == 0 || winners == f.citizens.size()) continue;
    auto ticket = [&, period](const KeyPair& k) {
      return DrawVote(k, 1, period, 2, f.genesis.seed, f.g.sortition)->proof;
    };
    // All 4 sign; exactly `winners` count (the threshold set to it and one above).
    f.g.cert_threshold = static_cast<uint32_t>(winners);
    EXPECT_TRUE(VerifyCertifiedBlock(f.g, f.genesis, f.Block(4, {}, {}, ticket, period)).ok());
    f.g.cert_threshold = static_cast<uint32_t>(winners + 1);
    Status s = VerifyCertifiedBlock(f.g, f.genesis, f.Block(4, {}, {}, ticket, period));
    EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition)
        << s << "; " << winners << " winners in period " << period;
    return;
  }
  FAIL() << "no period with a split cert draw";
}

TEST(ChainTest, ProposerTicketsOfLaterPeriodsVerifyInProposalsAndAnnouncements) {
  Fixture f;
  f.g.sortition.proposers = 1;
  int found = 0;
  for (const KeyPair& k : f.citizens) {
    for (uint32_t p = 0; p < 3; ++p) {
      auto t = Draw(k, Role::kProposer, 1, ProposerSeed(f.genesis.seed, p),
                    ProposerParams(f.g.sortition, p));
      if (!t->selected) continue;
      BlockHeader h;
      h.height = 1;
      h.prev_hash = BlockHash(f.genesis);
      SetRegistrations(f.g, f.genesis, {}, &h);
      h.seed = NextSeed(f.genesis.seed, t->output);
      h.proposer = k.public_key();
      h.proposer_credential = t->proof;
      auto beta = VerifyProposal(f.g, f.genesis, h, f.IdOf(k));
      ASSERT_TRUE(beta.ok()) << beta.status();
      EXPECT_EQ(*beta, t->output);
      ++found;
      // Its early announcement (ProposerTicket) verifies for exactly its height, period, key
      // and proof.
      const ProposerTicket ticket{
          .height = 1, .period = p, .proposer = k.public_key(), .credential = t->proof};
      auto announced = VerifyProposerTicket(f.g, f.genesis, ticket, f.IdOf(k));
      ASSERT_TRUE(announced.ok()) << announced.status();
      EXPECT_EQ(*announced, t->output);
      ProposerTicket other_height = ticket;
      other_height.height = 2;
      EXPECT_EQ(VerifyProposerTicket(f.g, f.genesis, other_height, f.IdOf(k)).status().code(),
                StatusCode::kInvalidArgument);
      ProposerTicket past_last = ticket;
      past_last.period = kMaxProposerPeriods;
      EXPECT_EQ(VerifyProposerTicket(f.g, f.genesis, past_last, f.IdOf(k)).status().code(),
                StatusCode::kInvalidArgument);
      ProposerTicket other_period = ticket;  // the proof is bound to its period's input
      other_period.period = p + 3;
      EXPECT_EQ(VerifyProposerTicket(f.g, f.genesis, other_period, f.IdOf(k)).status().code(),
                StatusCode::kPermissionDenied);
      ProposerTicket tampered = ticket;
      tampered.credential[40] ^= 1;
      EXPECT_FALSE(VerifyProposerTicket(f.g, f.genesis, tampered, f.IdOf(k)).ok());
      const KeyPair& someone_else = &k == &f.citizens[0] ? f.citizens[1] : f.citizens[0];
      EXPECT_FALSE(VerifyProposerTicket(f.g, f.genesis, ticket, f.IdOf(someone_else)).ok());
    }
  }
  EXPECT_GT(found, 0);  // period 2 expects 4 proposers out of 4: everyone wins
}

// Options of an in-process politician 0 (key Key(200)) of `g`, in a fresh directory.
PoliticianOptions TestPolitician(Genesis g, const std::string& name) {
  g.politicians[0].key = Key(200).public_key();
  PoliticianOptions o;
  o.id = 0;
  o.genesis = std::move(g);
  o.keys = Key(200);
  o.dir = std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(o.dir);
  return o;
}

TEST(PoliticianNodeTest, AcceptsAndRejectsTransactionsAndServesProvedState) {
  PoliticianOptions o = TestPolitician(TestGenesis(4, 1), "politician_test");
  const Genesis g = o.genesis;
  const std::filesystem::path dir = o.dir;
  auto node = PoliticianNode::Open(o);
  ASSERT_TRUE(node.ok()) << node.status();
  KeyPair alice = Key(300), bob = Key(301);
  Transaction tx{.from = alice.public_key(), .to = bob.public_key(), .amount = 3, .nonce = 0};
  SignTransaction(tx, alice);
  TxRequest req;
  req.set_tx(EncodeTransaction(tx));
  TxReply rep;
  (*node)->SubmitTransaction(req, &rep);
  EXPECT_TRUE(rep.accepted()) << rep.error();
  req.set_tx("garbage");
  rep.Clear();
  (*node)->SubmitTransaction(req, &rep);
  EXPECT_FALSE(rep.accepted());
  EXPECT_FALSE(rep.error().empty());

  StateRequest sreq;
  sreq.add_keys(std::string(AsChars(AccountKey(alice.public_key()))));
  sreq.add_keys(std::string(AsChars(AccountKey(Key(5).public_key()))));
  StateReply srep;
  ASSERT_TRUE((*node)->ReadState(sreq, &srep).ok());
  auto proof = StateProof::Decode(AsBytes(srep.proof()));
  ASSERT_TRUE(proof.ok());
  std::vector<Hash256> keys{AccountKey(alice.public_key()), AccountKey(Key(5).public_key())};
  auto values = proof->Verify(g.GenesisHeader()->state_root, keys);
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_EQ(DecodeAccount(*(*values)[0])->balance, 1000u);
  EXPECT_FALSE((*values)[1].has_value());
  sreq.add_keys("short");
  EXPECT_EQ((*node)->ReadState(sreq, &srep).code(), StatusCode::kInvalidArgument);

  // The frozen pool for block 1 holds the admitted transfer, signed by the politician.
  RoundRequest rreq;
  rreq.set_height(1);
  RoundReply rrep;
  (*node)->GetRound(rreq, &rrep);
  ASSERT_EQ(rrep.items_size(), 1);
  auto c = DecodeTxPoolCommitment(AsBytes(rrep.items(0).payload()));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->tx_count, 1u);
  EXPECT_TRUE(VerifyTxPoolCommitment(*c, Key(200).public_key()));
  node->reset();
  // Reopening finds the same genesis; a different genesis is refused.
  EXPECT_TRUE(PoliticianNode::Open(o).ok());
  o.genesis.accounts[0].balance = 1;
  EXPECT_EQ(PoliticianNode::Open(o).status().code(), StatusCode::kDataLoss);
  std::filesystem::remove_all(dir);
}

// A citizen loads the genesis file without its account list when the file states the root
// (at 1M accounts every citizen parsed a 77 MB list and built a 1M-leaf tree twice); a file
// that states no root is loaded whole, and a stated root the accounts do not build is refused
// by the node that builds the state.
TEST(GenesisTest, ACitizenLoadsTheStatedRootWithoutTheAccounts) {
  Genesis g = TestGenesis(4);
  for (int i = 0; i < 500; ++i) g.accounts.push_back({Key(1000 + i).public_key(), 7});
  const Hash256 root = g.GenesisHeader()->state_root;
  const auto dir =
      std::filesystem::temp_directory_path() / ("genesis_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(WriteFileAtomically(dir / "unsealed.toml", GenesisToToml(g)).ok());
  ASSERT_TRUE(g.SealStateRoot().ok());
  EXPECT_EQ(*g.state_root, root);
  g.apps.push_back({.name = "after", .values = {{"k", "v"}}});  // a table after [accounts]
  ASSERT_TRUE(WriteFileAtomically(dir / "sealed.toml", GenesisToToml(g)).ok());

  auto light = LoadGenesis(dir / "sealed.toml", GenesisAccounts::kSkip);
  ASSERT_TRUE(light.ok()) << light.status();
  EXPECT_TRUE(light->accounts.empty());
  EXPECT_EQ(light->GenesisHeader()->state_root, root);
  ASSERT_EQ(light->apps.size(), 1u);  // the table after the accounts is still read
  EXPECT_EQ(light->apps[0].name, "after");
  auto full = LoadGenesis(dir / "sealed.toml");
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_EQ(full->accounts.size(), g.accounts.size());
  ASSERT_TRUE(full->state_root.has_value());
  auto unsealed = LoadGenesis(dir / "unsealed.toml", GenesisAccounts::kSkip);
  ASSERT_TRUE(unsealed.ok()) << unsealed.status();
  EXPECT_EQ(unsealed->accounts.size(), g.accounts.size());  // no root stated: loaded whole
  EXPECT_EQ(unsealed->GenesisHeader()->state_root, root);

  // A politician building the state from accounts that do not give the stated root.
  PoliticianOptions o = TestPolitician(*full, "genesis_root_test");
  o.genesis.apps.clear();  // "after" is no application of this build
  o.genesis.accounts[0].balance += 1;
  auto node = PoliticianNode::Open(o);
  EXPECT_EQ(node.status().code(), StatusCode::kDataLoss) << node.status();
  EXPECT_NE(node.status().message().find("the file states"), std::string::npos) << node.status();
  std::filesystem::remove_all(o.dir);
  std::filesystem::remove_all(dir);
}

// A registered citizen that is not on the next block's committee cannot have its votes relayed.
// Posts a round item for block 1 with `id` as its identity.
PostReply PostForBlock1(PoliticianNode& node, const std::string& payload, const Identity& id) {
  PostRequest req;
  req.set_height(1);
  req.mutable_item()->set_payload(payload);
  req.mutable_item()->set_identity(EncodeIdentity(id));
  PostReply rep;
  node.Post(req, &rep);
  return rep;
}

// Votes and proposer tickets (ProposerTicket) of the next block: only from the winners of
// their draw.
TEST(PoliticianNodeTest, RelaysVotesAndProposerTicketsOnlyFromWinnersOfTheNextBlock) {
  for (bool everyone_selected : {true, false}) {
    Genesis g = TestGenesis(4, 1);
    g.sortition.proposers = everyone_selected ? 4 : 1;
    if (!everyone_selected) {
      g.sortition.population = 1000000;  // one expected member and proposer out of a million
      g.sortition.committee_size = 1;
      g.cert_threshold = g.soft_threshold = 1;
    }
    PoliticianOptions o = TestPolitician(g, "politician_vote_test");
    const std::filesystem::path dir = o.dir;
    auto node = PoliticianNode::Open(o);
    ASSERT_TRUE(node.ok()) << node.status();

    KeyPair citizen = Key(7);
    Identity id{.citizen = citizen.public_key(), .registered_at = 0};
    SignIdentity(id, Key(100));
    const Hash256 seed = g.GenesisHeader()->seed;
    auto ticket = Draw(citizen, Role::kCommittee, 1, seed, g.sortition);
    ASSERT_TRUE(ticket.ok());
    ASSERT_EQ(ticket->selected, everyone_selected);
    Vote v{.height = 1,
           .step = VoteStep::kSoft,
           .value = Sha256("a block"),
           .credential = ticket->proof};
    SignVote(v, citizen);
    const PostReply rep = PostForBlock1(**node, EncodeVote(v), id);
    EXPECT_EQ(rep.accepted(), everyone_selected) << rep.error();
    if (!everyone_selected) {
      EXPECT_NE(rep.error().find("not on the committee"), std::string::npos);
    }
    auto proposer_ticket = Draw(citizen, Role::kProposer, 1, seed, ProposerParams(g.sortition, 0));
    ASSERT_TRUE(proposer_ticket.ok());
    ASSERT_EQ(proposer_ticket->selected, everyone_selected);
    const PostReply announced =
        PostForBlock1(**node,
                      EncodeProposerTicket({.height = 1,
                                            .period = 0,
                                            .proposer = citizen.public_key(),
                                            .credential = proposer_ticket->proof}),
                      id);
    EXPECT_EQ(announced.accepted(), everyone_selected) << announced.error();
    if (!everyone_selected) {
      EXPECT_NE(announced.error().find("does not win"), std::string::npos);
    }
    node->reset();
    std::filesystem::remove_all(dir);
  }
}

TEST(PoliticianNodeTest,
     PerStepCommitteesRelayVotesWithTheirStepsTicketAndExecuteOnlyForSoftTickets) {
  Genesis g = TestGenesis(4, 1);
  g.vote_committees = VoteCommittees::kPerStep;
  PoliticianOptions o = TestPolitician(g, "politician_per_step_test");
  const std::filesystem::path dir = o.dir;
  auto node = PoliticianNode::Open(o);
  ASSERT_TRUE(node.ok()) << node.status();
  PoliticianNode& p = **node;
  KeyPair citizen = Key(7);
  Identity id{.citizen = citizen.public_key(), .registered_at = 0};
  SignIdentity(id, Key(100));
  const Hash256 seed = g.GenesisHeader()->seed;
  auto vote_ticket = [&](uint32_t period, uint8_t step) {
    auto t = DrawVote(citizen, 1, period, step, seed, g.sortition);
    EXPECT_TRUE(t.ok() && t->selected);
    return t->proof;
  };
  auto post = [&](VoteStep step, const VrfProof& credential) {
    Vote v{.height = 1,
           .step = step,
           .bottom = IsNextVoteStep(step),
           .value = IsNextVoteStep(step) ? Hash256{} : Sha256("a block"),
           .credential = credential};
    SignVote(v, citizen);
    PostRequest req;
    req.set_height(1);
    req.mutable_item()->set_payload(EncodeVote(v));
    req.mutable_item()->set_identity(EncodeIdentity(id));
    PostReply rep;
    p.Post(req, &rep);
    return rep;
  };
  // A soft vote with its soft ticket; not with the height's ticket nor a cert ticket.
  EXPECT_TRUE(post(VoteStep::kSoft, vote_ticket(0, 1)).accepted());
  const VrfProof height_ticket = Draw(citizen, Role::kCommittee, 1, seed, g.sortition)->proof;
  PostReply refused = post(VoteStep::kSoft, height_ticket);
  EXPECT_FALSE(refused.accepted());
  EXPECT_NE(refused.error().find("period 0 step 1"), std::string::npos) << refused.error();
  EXPECT_FALSE(post(VoteStep::kNext, vote_ticket(0, 1)).accepted());
  // A repeated next round (step 6) with its own ticket.
  const auto round1 = static_cast<VoteStep>(6);
  EXPECT_TRUE(post(round1, vote_ticket(0, 6)).accepted());

  // Execute: the height's ticket (step 0), or a soft ticket naming its period; never a cert
  // ticket, which must stay secret until the cert vote.
  ExecuteRequest ereq;
  ereq.set_height(1);
  ExecuteReply erep;
  auto execute = [&](const VrfProof& credential, uint32_t period, uint8_t step) {
    SignExecuteRequest(ereq, {citizen, EncodeIdentity(id), credential, period, step});
    return p.Execute(ereq, &erep);
  };
  EXPECT_TRUE(execute(height_ticket, 0, 0).ok());
  EXPECT_TRUE(execute(vote_ticket(0, 1), 0, 1).ok());
  Status s = execute(vote_ticket(1, 2), 1, 2);  // a valid cert ticket
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s;
  EXPECT_NE(s.message().find("cert tickets may not execute"), std::string::npos) << s;
  s = execute(vote_ticket(0, 1), 0, 2);  // a soft ticket named as cert
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s;
  EXPECT_EQ(execute(vote_ticket(0, 3), 0, 3).code(), StatusCode::kPermissionDenied);  // next
  // A period far past any next quorum this politician holds: searched-for tickets are refused.
  EXPECT_EQ(execute(vote_ticket(kExecutePeriodsAhead + 1, 1), kExecutePeriodsAhead + 1, 1).code(),
            StatusCode::kPermissionDenied);
  EXPECT_TRUE(execute(vote_ticket(kExecutePeriodsAhead, 1), kExecutePeriodsAhead, 1).ok());
  // A height past the next: this politician is behind, not the caller off the committee.
  ereq.set_height(2);
  s = execute(height_ticket, 0, 0);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s;
  EXPECT_NE(s.message().find("block 1 is not committed here yet"), std::string::npos) << s;
  ereq.set_height(1);
  // The signature covers (period, step): renaming them breaks it.
  SignExecuteRequest(ereq, {citizen, EncodeIdentity(id), vote_ticket(0, 1), 0, 1});
  ereq.set_vote_step(2);
  s = p.Execute(ereq, &erep);
  EXPECT_NE(s.message().find("bad request signature"), std::string::npos) << s;
  node->reset();
  std::filesystem::remove_all(dir);

  // Per-height chains take no vote tickets for Execute.
  g.vote_committees = VoteCommittees::kPerHeight;
  PoliticianOptions o2 = TestPolitician(g, "politician_per_height_execute_test");
  auto node2 = PoliticianNode::Open(o2);
  ASSERT_TRUE(node2.ok()) << node2.status();
  SignExecuteRequest(ereq, {citizen, EncodeIdentity(id), vote_ticket(0, 1), 0, 1});
  s = (*node2)->Execute(ereq, &erep);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s;
  EXPECT_NE(s.message().find("names no ticket"), std::string::npos) << s;
  node2->reset();
  std::filesystem::remove_all(o2.dir);
}

// The engine in one process: a transfer admitted, frozen into a pool, executed for a citizen
// and committed from cert votes. Its signature is verified once through all of it (the
// signature cache), the mempool empties, and the state at both heights is served from memory.
TEST(PoliticianNodeTest, CommitsFromVotesVerifyingEachSignatureOnce) {
  Fixture f;
  PoliticianOptions o = TestPolitician(f.g, "politician_commit_test");
  const std::filesystem::path dir = o.dir;
  auto node = PoliticianNode::Open(o);
  ASSERT_TRUE(node.ok()) << node.status();
  PoliticianNode& p = **node;
  KeyPair alice = Key(300), bob = Key(301);
  Transaction tx{.from = alice.public_key(), .to = bob.public_key(), .amount = 3, .nonce = 0};
  SignTransaction(tx, alice);
  TxRequest req;
  req.set_tx(EncodeTransaction(tx));
  TxReply rep;
  const uint64_t before_submit = VerificationsComputed();
  p.SubmitTransaction(req, &rep);
  ASSERT_TRUE(rep.accepted()) << rep.error();
  EXPECT_EQ(p.signature_stats().misses, 1u);  // checked before the lock, hit in the mempool
  EXPECT_EQ(VerificationsComputed() - before_submit, 1u);

  RoundRequest rreq;
  rreq.set_height(1);
  RoundReply rrep;
  p.GetRound(rreq, &rrep);  // freezes the pool for block 1
  ASSERT_EQ(rrep.items_size(), 1);
  auto c = DecodeTxPoolCommitment(AsBytes(rrep.items(0).payload()));
  ASSERT_TRUE(c.ok());
  const uint64_t misses_before_execute = p.signature_stats().misses;
  const uint64_t computed_before_execute = VerificationsComputed();
  ExecuteRequest ereq;
  ereq.set_height(1);
  ereq.add_pool_hashes(std::string(AsChars(c->pool_hash)));
  ExecuteReply erep;
  EXPECT_EQ(p.Execute(ereq, &erep).code(), StatusCode::kPermissionDenied);  // no credential
  auto ticket = *Draw(f.citizens[1], Role::kCommittee, 1, f.genesis.seed, f.g.sortition);
  SignExecuteRequest(ereq, {f.citizens[1], EncodeIdentity(f.IdOf(f.citizens[1])), ticket.proof});
  ASSERT_TRUE(p.Execute(ereq, &erep).ok());
  EXPECT_EQ(p.signature_stats().misses, misses_before_execute);  // the transfer: a hit
  // Two curve verifications: the request's signature and the caller's identity (outside the
  // cache's scope); the transfer's own signature is a cache hit.
  EXPECT_EQ(VerificationsComputed() - computed_before_execute, 2u);
  ASSERT_EQ(erep.pools_size(), 1);
  EXPECT_EQ(erep.pools(0).txs_size(), 1);
  // A member that holds the pool (it witnessed it) names it: the reply leaves it out -- an
  // empty Pool in its place -- and carries the same execution (from the politician's cache).
  ExecuteRequest held_req = ereq;
  held_req.add_held_pools(0);
  SignExecuteRequest(held_req,
                     {f.citizens[1], EncodeIdentity(f.IdOf(f.citizens[1])), ticket.proof});
  ExecuteReply held_rep;
  ASSERT_TRUE(p.Execute(held_req, &held_rep).ok());
  ASSERT_EQ(held_rep.pools_size(), 1);
  EXPECT_TRUE(held_rep.pools(0).commitment().empty());
  EXPECT_EQ(held_rep.pools(0).txs_size(), 0);
  EXPECT_EQ(held_rep.proof(), erep.proof());
  EXPECT_EQ(held_rep.new_root(), erep.new_root());
  EXPECT_EQ(held_rep.signature(), erep.signature());
  // Indices past the body (or not ascending) are refused.
  held_req.add_held_pools(0);
  SignExecuteRequest(held_req,
                     {f.citizens[1], EncodeIdentity(f.IdOf(f.citizens[1])), ticket.proof});
  EXPECT_EQ(p.Execute(held_req, &held_rep).code(), StatusCode::kInvalidArgument);
  held_req.clear_held_pools();
  held_req.add_held_pools(1);
  SignExecuteRequest(held_req,
                     {f.citizens[1], EncodeIdentity(f.IdOf(f.citizens[1])), ticket.proof});
  EXPECT_EQ(p.Execute(held_req, &held_rep).code(), StatusCode::kInvalidArgument);
  // The reply is signed (execution_claim.h): the claim a citizen rebuilds from its request and
  // its latest header verifies under politician 0's key, and under no other reading.
  const ExecutionClaim claim =
      ClaimOfReply(0, 1, f.genesis.state_root, f.genesis.seed, {c->pool_hash}, erep);
  EXPECT_TRUE(VerifyExecutionClaim(claim, Key(200).public_key()));
  EXPECT_FALSE(VerifyExecutionClaim(
      ClaimOfReply(0, 1, f.genesis.state_root, f.genesis.seed, {}, erep), Key(200).public_key()));
  Hash256 root;
  ASSERT_EQ(erep.new_root().size(), root.size());
  std::copy(erep.new_root().begin(), erep.new_root().end(), root.begin());

  CertifiedBlockData block = f.Block(3, {c->pool_hash}, root);
  PostRequest post;
  post.set_height(1);
  post.mutable_item()->set_payload(EncodeBlockHeader(block.header));
  post.mutable_item()->set_identity(EncodeIdentity(f.IdOf(f.citizens[0])));
  PostReply prep;
  p.Post(post, &prep);
  ASSERT_TRUE(prep.accepted()) << prep.error();
  // A follower long-polling for the block after the genesis is woken by the commit and gets
  // the header with its proposer's identity (chain_follower.h).
  HeadsReply heads;
  std::thread follower([&] {
    HeadsRequest hreq;
    hreq.set_after_height(0);
    hreq.set_wait_ms(PoliticianNode::kMaxHeadsWaitMs);
    p.GetHeads(hreq, &heads);
  });
  for (const CertificateSigner& s : block.certificate.signers) {
    const KeyPair* key = nullptr;
    for (const KeyPair& k : f.citizens) {
      if (k.public_key() == s.citizen) key = &k;
    }
    ASSERT_NE(key, nullptr);
    Vote v{.height = 1,
           .step = VoteStep::kCert,
           .value = block.certificate.block_hash,
           .credential = s.credential};
    SignVote(v, *key);
    post.mutable_item()->set_payload(EncodeVote(v));
    post.mutable_item()->set_identity(EncodeIdentity(f.IdOf(*key)));
    post.mutable_item()->set_block_signature(std::string(AsChars(s.signature)));
    prep.Clear();
    p.Post(post, &prep);
    ASSERT_TRUE(prep.accepted()) << prep.error();
  }
  ASSERT_EQ(p.height(), 1u);  // the third cert vote completed the certificate
  // A member still validating block 1 is told it is committed (OUT_OF_RANGE, which ends its
  // execution at once: Citizen::ExecuteHedged), not refused like a non-member.
  EXPECT_EQ(p.Execute(ereq, &erep).code(), StatusCode::kOutOfRange);
  follower.join();
  ASSERT_EQ(heads.headers_size(), 1);
  EXPECT_EQ(heads.headers(0), EncodeBlockHeader(block.header));
  EXPECT_EQ(heads.proposer_identities(0), EncodeIdentity(f.IdOf(f.citizens[0])));
  HeadsReply none;
  HeadsRequest after1;
  after1.set_after_height(1);  // nothing newer, no wait: answers at once, empty
  p.GetHeads(after1, &none);
  EXPECT_EQ(none.height(), 1u);
  EXPECT_EQ(none.headers_size(), 0);
  StatusReply status;
  p.GetStatus(&status);
  EXPECT_EQ(status.mempool(), 0u);
  EXPECT_GT(p.signature_stats().hits, 3u);

  // Heights are exact: 0 is the genesis state even after block 1 (it once meant "latest", and a
  // light client still at the genesis header then got a proof against a root it did not hold).
  for (uint64_t h : {0, 1}) {
    StateRequest sreq;
    sreq.set_height(h);
    sreq.add_keys(std::string(AsChars(AccountKey(alice.public_key()))));
    StateReply srep;
    ASSERT_TRUE(p.ReadState(sreq, &srep).ok()) << h;
    auto proof = StateProof::Decode(AsBytes(srep.proof()));
    ASSERT_TRUE(proof.ok());
    EXPECT_EQ(srep.height(), h);
    const Hash256 expected_root = h == 0 ? f.genesis.state_root : root;
    EXPECT_EQ(srep.root(), std::string(AsChars(expected_root))) << h;
    std::vector<Hash256> keys{AccountKey(alice.public_key())};
    auto values = proof->Verify(expected_root, keys);
    ASSERT_TRUE(values.ok()) << values.status();
    if (h == 1) EXPECT_EQ(DecodeAccount(*(*values)[0])->balance, 997u);
    if (h == 0) EXPECT_GT(DecodeAccount(*(*values)[0])->balance, 997u);
  }
  node->reset();
  std::filesystem::remove_all(dir);
}

// Execute and ReadState are authenticated and rate-limited (request_auth.h): a flood of
// unauthenticated reads is refused from one small shared budget with a clear error, while a
// registered caller's signed reads, interleaved with the flood, are all served; forged
// credentials are refused before any proof is built.
TEST(PoliticianNodeTest, AnUnauthenticatedFloodIsRefusedAndSignedReadsAreStillServed) {
  Fixture f;
  PoliticianOptions o = TestPolitician(f.g, "politician_auth_test");
  o.anonymous_reads_per_s = 5;
  o.anonymous_reads_burst = 5;
  o.reads_per_s = 1000;
  o.reads_burst = 1000;
  const std::filesystem::path dir = o.dir;
  auto node = PoliticianNode::Open(o);
  ASSERT_TRUE(node.ok()) << node.status();
  PoliticianNode& p = **node;
  const std::vector<Hash256> keys{AccountKey(Key(300).public_key())};
  auto request = [&](const RequestSigner* signer) {
    StateRequest req;
    for (const Hash256& k : keys) req.add_keys(std::string(AsChars(k)));
    if (signer) SignStateRequest(req, *signer);
    return req;
  };
  const RequestSigner honest{f.citizens[2], EncodeIdentity(f.IdOf(f.citizens[2]))};
  const auto start = std::chrono::steady_clock::now();
  std::atomic<int> flood_served{0}, flood_refused{0};
  std::string flood_error;
  std::thread flood([&] {
    for (int i = 0; i < 2000; ++i) {
      StateReply rep;
      Status s = p.ReadState(request(nullptr), &rep);
      if (s.ok()) {
        ++flood_served;
      } else {
        ++flood_refused;
        if (flood_error.empty()) flood_error = s.ToString();
        EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s;
      }
    }
  });
  for (int i = 0; i < 200; ++i) {
    StateReply rep;
    Status s = p.ReadState(request(&honest), &rep);
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_TRUE(StateProof::Decode(AsBytes(rep.proof())).ok());
  }
  flood.join();
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LE(flood_served.load(), 5 + static_cast<int>(5 * elapsed) + 1);
  EXPECT_GE(flood_refused.load(), 2000 - 6 - static_cast<int>(5 * elapsed));
  EXPECT_NE(flood_error.find("unauthenticated ReadState"), std::string::npos) << flood_error;
  EXPECT_NE(flood_error.find("retry after"), std::string::npos) << flood_error;

  StateReply rep;
  StateRequest forged = request(&honest);
  forged.mutable_keys(0)->at(0) ^= 1;  // the signature no longer covers the request
  EXPECT_EQ(p.ReadState(forged, &rep).code(), StatusCode::kPermissionDenied);
  const KeyPair impostor = Key(77);
  Identity self_made{.citizen = impostor.public_key()};
  SignIdentity(self_made, impostor);  // not the registrar's signature
  const RequestSigner unregistered{impostor, EncodeIdentity(self_made)};
  EXPECT_EQ(p.ReadState(request(&unregistered), &rep).code(), StatusCode::kPermissionDenied);

  // Execute: a member's signed request with another member's credential is refused.
  ExecuteRequest ereq;
  ereq.set_height(1);
  auto other = *Draw(f.citizens[0], Role::kCommittee, 1, f.genesis.seed, f.g.sortition);
  SignExecuteRequest(ereq, {f.citizens[1], EncodeIdentity(f.IdOf(f.citizens[1])), other.proof});
  ExecuteReply erep;
  Status s = p.Execute(ereq, &erep);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s;
  EXPECT_NE(s.message().find("not on the committee"), std::string::npos) << s;
  node->reset();
  std::filesystem::remove_all(dir);
}

// Back-pressure: beyond its capacity the mempool turns transfers away with a retry hint
// instead of queueing them.
TEST(PoliticianNodeTest, AFullMempoolAnswersResourceExhaustedWithARetryHint) {
  Genesis g = TestGenesis(4, 1);
  g.max_pool_txs = 2;
  PoliticianOptions o = TestPolitician(g, "politician_full_test");
  o.backlog_pools = 1;  // room for one pool: 2 transfers
  const std::filesystem::path dir = o.dir;
  auto node = PoliticianNode::Open(o);
  ASSERT_TRUE(node.ok()) << node.status();
  KeyPair alice = Key(300), bob = Key(301);
  for (uint64_t nonce = 0; nonce < 3; ++nonce) {
    Transaction tx{.from = alice.public_key(), .to = bob.public_key(), .amount = 1, .nonce = nonce};
    SignTransaction(tx, alice);
    TxRequest req;
    req.set_tx(EncodeTransaction(tx));
    TxReply rep;
    (*node)->SubmitTransaction(req, &rep);
    if (nonce < 2) {
      EXPECT_TRUE(rep.accepted()) << rep.error();
      EXPECT_EQ(rep.retry_after_ms(), 0u);
    } else {
      EXPECT_FALSE(rep.accepted());
      EXPECT_NE(rep.error().find("mempool full"), std::string::npos) << rep.error();
      EXPECT_GT(rep.retry_after_ms(), 0u);
    }
  }
  node->reset();
  std::filesystem::remove_all(dir);
}

// The admission bound tied to the next pool: before the pool for height 1 is frozen a
// politician admits one pool's worth (the next pool), then "next pool full"; once the pool is
// frozen another pool's worth waits behind it, then the total bound (two pools) holds. With
// waiting_pools 0 only the total bound counts: two pools' worth before any freeze.
TEST(PoliticianNodeTest, AdmissionStopsAtWhatTheNextPoolCanCarry) {
  for (double waiting_pools : {1.0, 0.0}) {
    Genesis g = TestGenesis(4, 1);
    g.max_pool_txs = 3;  // pools of 3
    PoliticianOptions o = TestPolitician(g, "politician_waiting_test");
    o.backlog_pools = 2;
    o.waiting_pools = waiting_pools;
    const std::filesystem::path dir = o.dir;
    auto node = PoliticianNode::Open(o);
    ASSERT_TRUE(node.ok()) << node.status();
    KeyPair alice = Key(300), bob = Key(301);
    uint64_t nonce = 0;
    auto submit = [&](TxReply* rep) {
      Transaction tx{
          .from = alice.public_key(), .to = bob.public_key(), .amount = 1, .nonce = nonce};
      SignTransaction(tx, alice);
      TxRequest req;
      req.set_tx(EncodeTransaction(tx));
      (*node)->SubmitTransaction(req, rep);
      if (rep->accepted()) ++nonce;
    };
    auto admitted_until_refused = [&](std::string* error) {
      int n = 0;
      for (;; ++n) {
        TxReply rep;
        submit(&rep);
        if (rep.accepted()) continue;
        *error = rep.error();
        EXPECT_GT(rep.retry_after_ms(), 0u) << rep.error();
        return n;
      }
    };
    std::string error;
    if (waiting_pools > 0) {
      EXPECT_EQ(admitted_until_refused(&error), 3);
      EXPECT_NE(error.find("next pool full"), std::string::npos) << error;
      RoundRequest round;
      round.set_height(1);
      round.set_hashes_only(true);
      RoundReply listed;
      (*node)->GetRound(round, &listed);  // freezes this politician's pool for height 1
      EXPECT_EQ(admitted_until_refused(&error), 3);
    } else {
      EXPECT_EQ(admitted_until_refused(&error), 6);
    }
    EXPECT_EQ(nonce, 6u);
    node->reset();
    std::filesystem::remove_all(dir);
  }
}

// Long-polled round listings (round_listener.h): a held GetRound returns when an item arrives,
// not at its deadline, and no more calls are held than the bounds allow (per peer -- the
// transport peer and the caller's listener key -- and in all); beyond them a call answers at
// once, as a poll.
TEST(PoliticianNodeTest, AHeldRoundListingReturnsWhenAnItemArrivesAndHeldCallsAreBounded) {
  Fixture f;
  PoliticianOptions o = TestPolitician(f.g, "politician_round_wait_test");
  o.round_waiters = 4;
  o.round_waiters_per_peer = 2;
  const std::filesystem::path dir = o.dir;
  auto node = PoliticianNode::Open(o);
  ASSERT_TRUE(node.ok()) << node.status();
  PoliticianNode& p = **node;
  RoundRequest first;
  first.set_height(1);
  first.set_hashes_only(true);
  RoundReply listed;
  p.GetRound(first, &listed);  // freezes the pool: the round's items so far
  const uint64_t offset = listed.next_offset();
  auto held = [&](const std::string& peer, const std::string& listener, RoundReply* rep) {
    RoundRequest req = first;
    req.set_offset(offset);
    req.set_wait_ms(PoliticianNode::kMaxRoundWaitMs);
    req.set_listener(listener);
    p.GetRound(req, rep, peer);
  };
  auto wait_for_held = [&](size_t n) {
    for (int i = 0; i < 10000 && p.round_wait_stats().held < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return p.round_wait_stats().held;
  };
  std::vector<RoundReply> replies(4);
  std::vector<std::thread> waiters;
  waiters.emplace_back([&] { held("ipv4:127.0.0.1:1001", "member-a", &replies[0]); });
  waiters.emplace_back([&] { held("ipv4:127.0.0.1:1001", "member-a", &replies[1]); });
  waiters.emplace_back([&] { held("ipv4:127.0.0.1:1002", "member-b", &replies[2]); });
  ASSERT_EQ(wait_for_held(3), 3u);
  // A third call of member-a (its peer's bound is 2) is answered at once, with nothing new;
  // the same listener key over another connection is another peer.
  RoundReply third;
  held("ipv4:127.0.0.1:1001", "member-a", &third);
  EXPECT_EQ(third.item_hashes_size(), 0);
  EXPECT_EQ(p.round_wait_stats().over_bound, 1u);
  waiters.emplace_back([&] { held("ipv4:127.0.0.1:1003", "member-a", &replies[3]); });
  ASSERT_EQ(wait_for_held(4), 4u);
  // Four held in all: a new peer's call is answered at once too.
  RoundReply fifth;
  held("ipv4:127.0.0.1:1004", "member-c", &fifth);
  EXPECT_EQ(fifth.item_hashes_size(), 0);
  EXPECT_EQ(p.round_wait_stats().over_bound, 2u);
  EXPECT_EQ(p.round_wait_stats().held, 4u);

  // An item arrives: a committee member's soft vote for block 1.
  const KeyPair& member = f.citizens[1];
  auto ticket = *Draw(member, Role::kCommittee, 1, f.genesis.seed, f.g.sortition);
  ASSERT_TRUE(ticket.selected);
  Vote v{
      .height = 1, .step = VoteStep::kSoft, .value = Sha256("a block"), .credential = ticket.proof};
  SignVote(v, member);
  PostRequest post;
  post.set_height(1);
  post.mutable_item()->set_payload(EncodeVote(v));
  post.mutable_item()->set_identity(EncodeIdentity(f.IdOf(member)));
  PostReply posted;
  p.Post(post, &posted);
  ASSERT_TRUE(posted.accepted()) << posted.error();
  for (std::thread& t : waiters) t.join();
  // All four were woken by the item (none ran to its 5 s deadline) and list it.
  const PoliticianNode::RoundWaitStats stats = p.round_wait_stats();
  EXPECT_EQ(stats.woken, 4u);
  EXPECT_EQ(stats.expired, 0u);
  EXPECT_EQ(stats.held, 0u);
  for (const RoundReply& r : replies) {
    ASSERT_EQ(r.item_hashes_size(), 1);
    EXPECT_EQ(r.item_hashes(0), std::string(AsChars(RoundItemHash(post.item()))));
    EXPECT_EQ(r.next_offset(), offset + 1);
  }
  // With an item after the offset, or for a height already committed, nothing is held.
  RoundReply at_once;
  held("ipv4:127.0.0.1:1001", "member-a", &at_once);
  EXPECT_EQ(at_once.item_hashes_size(), 1);
  EXPECT_EQ(p.round_wait_stats().held, 0u);
  EXPECT_EQ(p.round_wait_stats().woken, 4u);  // not a wait at all
  node->reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessera::ledger::net
