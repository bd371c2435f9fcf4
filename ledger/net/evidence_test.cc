// Evidence and blacklisting (evidence.h, blacklist.h): genuine pool equivocation is proved to
// anyone holding the genesis, forged evidence against an honest politician is refused by the
// decoder, by VerifyEvidence, by the blacklist and by a politician (which never relays it),
// and a restarted honest politician never signs a second pool for a height.
#include "ledger/net/evidence.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "core/hex.h"
#include "ledger/crypto/hash.h"
#include "ledger/net/blacklist.h"
#include "ledger/net/citizen.h"
#include "ledger/net/politician.h"
#include "ledger/net/testing/pool_fixtures.h"

namespace tessera::ledger::net {
namespace {

KeyPair Key(int i) { return testing::TestKey("evidence test key ", i); }

Genesis SmallGenesis() {
  Genesis g = testing::TestGenesis({.salt = "evidence test key ", .politicians = 3});
  g.accounts.push_back({Key(300).public_key(), 1000});
  return g;
}

// A commitment of politician `id` for `height` to the pool named by `variant`, signed by
// `signer` (the politician's own key unless framing).
TxPoolCommitment Commitment(uint32_t id, uint64_t height, int variant, const KeyPair& signer) {
  TxPoolCommitment c{.politician_id = id,
                     .height = height,
                     .tx_count = 1,
                     .pool_hash = Sha256("pool " + std::to_string(variant))};
  SignTxPoolCommitment(c, signer);
  return c;
}

Evidence Genuine(uint32_t id, uint64_t height) {
  return *PoolEquivocation(Commitment(id, height, 1, Key(200 + id)),
                           Commitment(id, height, 2, Key(200 + id)));
}

TEST(EvidenceTest, EncodingIsCanonicalAndStrict) {
  const Evidence e = Genuine(1, 7);
  const std::string wire = EncodeEvidence(e);
  EXPECT_EQ(wire.size(), 228u);
  auto back = DecodeEvidence(AsBytes(wire));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, e);
  EXPECT_EQ(back->politician_id(), 1u);
  EXPECT_EQ(back->height(), 7u);
  // Either order of the commitments gives the same evidence (one lie, one encoding).
  EXPECT_EQ(EncodeEvidence(*PoolEquivocation(e.second, e.first)), wire);

  auto refused = [](const std::string& bytes, const std::string& why) {
    auto d = DecodeEvidence(AsBytes(bytes));
    ASSERT_FALSE(d.ok()) << why;
    EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument) << why;
    EXPECT_NE(d.status().ToString().find("evidence"), std::string::npos) << d.status();
  };
  refused("", "empty");
  refused(wire.substr(0, 227), "truncated");
  refused(wire + "x", "trailing byte");
  refused(wire + std::string(1 << 20, 'x'), "oversized");
  std::string kind = wire;
  kind[1] = 3;
  refused(kind, "unknown kind");
  kind[1] = 2;  // the other kind's layout does not fit these bytes
  refused(kind, "pool equivocation read as a wrong execution");
  std::string type = wire;
  type[0] = 2;
  refused(type, "wrong type");
  const std::string a = EncodeTxPoolCommitment(e.first), b = EncodeTxPoolCommitment(e.second);
  refused(wire.substr(0, 2) + b + a, "out of order");
  refused(wire.substr(0, 2) + a + a, "the same commitment twice");
  refused(wire.substr(0, 2) + a + EncodeTxPoolCommitment(Commitment(2, 7, 2, Key(202))),
          "two politicians");
  refused(wire.substr(0, 2) + a + EncodeTxPoolCommitment(Commitment(1, 8, 2, Key(201))),
          "two heights");
  // Same body, another signature bit: not two statements.
  TxPoolCommitment resigned = e.first;
  resigned.signature[0] ^= 1;
  EXPECT_FALSE(PoolEquivocation(e.first, resigned).ok());
}

TEST(EvidenceTest, ForgedEvidenceAgainstAnHonestPoliticianIsRefused) {
  const Genesis g = SmallGenesis();
  EXPECT_TRUE(VerifyEvidence(Genuine(1, 3), g).ok());
  // Politician 2 (or anyone) signs two pools in politician 0's name.
  auto framed = PoolEquivocation(Commitment(0, 3, 1, Key(202)), Commitment(0, 3, 2, Key(202)));
  ASSERT_TRUE(framed.ok());
  EXPECT_EQ(VerifyEvidence(*framed, g).code(), StatusCode::kPermissionDenied);
  // One genuine commitment of politician 0 and one forged.
  auto half = PoolEquivocation(Commitment(0, 3, 1, Key(200)), Commitment(0, 3, 2, Key(202)));
  ASSERT_TRUE(half.ok());
  EXPECT_EQ(VerifyEvidence(*half, g).code(), StatusCode::kPermissionDenied);
  // A politician the genesis does not know.
  EXPECT_EQ(VerifyEvidence(Genuine(9, 3), g).code(), StatusCode::kPermissionDenied);

  Blacklist blacklist(g, 10);
  EXPECT_FALSE(blacklist.Add(*framed, 3).ok());
  EXPECT_FALSE(blacklist.Add(*half, 3).ok());
  EXPECT_FALSE(blacklist.AddEncoded(AsBytes(std::string(228, '\x08')), 3).ok());
  EXPECT_FALSE(blacklist.Blocked(0, 3));
  EXPECT_TRUE(blacklist.Active(3).empty());
}

TEST(EvidenceTest, BlacklistLastsItsTimeAndNeverEmptiesTheSample) {
  const Genesis g = SmallGenesis();
  Blacklist blacklist(g, 10);
  auto added = blacklist.Add(Genuine(1, 5), 6);
  ASSERT_TRUE(added.ok());
  EXPECT_TRUE(*added);                             // news: relay it
  EXPECT_FALSE(*blacklist.Add(Genuine(1, 5), 6));  // known: nothing to relay
  EXPECT_FALSE(*blacklist.Add(Genuine(1, 4), 6));  // older evidence: the newest is kept
  EXPECT_TRUE(blacklist.Blocked(1, 6));
  EXPECT_TRUE(blacklist.Blocked(1, 15));
  EXPECT_FALSE(blacklist.Blocked(1, 16));  // 10 blocks after the evidence's height
  EXPECT_FALSE(blacklist.Blocked(0, 6));
  EXPECT_EQ(blacklist.BlockedAt(6), std::vector<uint32_t>{1});
  ASSERT_EQ(blacklist.Active(6).size(), 1u);
  EXPECT_EQ(blacklist.Active(6)[0], EncodeEvidence(Genuine(1, 5)));
  EXPECT_TRUE(blacklist.Active(16).empty());
  EXPECT_TRUE(*blacklist.Add(Genuine(1, 20), 16));  // caught again later: blacklisted again

  std::mt19937_64 rng(1);
  for (int i = 0; i < 50; ++i) {
    auto sample = blacklist.Sample({0, 1, 2}, 3, 16, rng);
    EXPECT_EQ(sample.size(), 2u);
    EXPECT_EQ(std::count(sample.begin(), sample.end(), 1u), 0);
  }
  ASSERT_TRUE(blacklist.Add(Genuine(0, 20), 16).ok());
  ASSERT_TRUE(blacklist.Add(Genuine(2, 20), 16).ok());
  // Every politician blacklisted (impossible with one honest one): sample them all again.
  EXPECT_EQ(blacklist.Sample({0, 1, 2}, 3, 16, rng).size(), 3u);
}

// Issue #12: evidence kept across a restart. A blacklist that persists rewrites its file on
// every change; a new one over the same file (the restarted citizen or politician) is
// blacklisting the same politicians at once. The file is checked like relayed evidence.
TEST(EvidenceTest, TheBlacklistSurvivesARestartAndAnEditedFileFramesNoOne) {
  const Genesis g = SmallGenesis();
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / ("blacklist-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::filesystem::path file = dir / "citizen-0.evidence";
  {
    Blacklist before(g, 10);
    ASSERT_TRUE(before.Persist(file).ok());  // no file yet: empty
    ASSERT_TRUE(before.Add(Genuine(1, 5), 6).ok());
    for (uint64_t h = 1; h < 30; ++h) ASSERT_TRUE(before.Add(Genuine(2, h), h).ok());
  }
  // Bounded: one line (the newest evidence) per politician, 2 x 228 hex digits + newline.
  EXPECT_EQ(std::filesystem::file_size(file), 2u * 457u);
  {
    Blacklist after(g, 10);
    ASSERT_TRUE(after.Persist(file).ok());
    EXPECT_TRUE(after.Blocked(1, 6));
    EXPECT_TRUE(after.Blocked(2, 30));
    EXPECT_FALSE(after.Blocked(0, 6));
    EXPECT_EQ(after.load_refused(), 0u);
  }
  // Someone edits the file: forged evidence against honest politician 0 and a garbage line.
  {
    auto framed = PoolEquivocation(Commitment(0, 7, 1, Key(202)), Commitment(0, 7, 2, Key(202)));
    std::ofstream out(file, std::ios::app);
    out << ToHex(AsBytes(EncodeEvidence(*framed))) << "\n"
        << "zz not hex\n";
  }
  {
    Blacklist after(g, 10);
    ASSERT_TRUE(after.Persist(file).ok());
    EXPECT_FALSE(after.Blocked(0, 8));  // never framed
    EXPECT_TRUE(after.Blocked(1, 6));
    EXPECT_EQ(after.load_refused(), 2u);
  }
  // An oversized file is not read (clear error), and is replaced by the next write.
  {
    std::ofstream out(file, std::ios::trunc);
    out << std::string((g.politicians.size() + 1) * (2 * kMaxEvidenceBytes + 1) + 1, 'a');
  }
  {
    Blacklist after(g, 10);
    Status s = after.Persist(file);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("larger than"), std::string::npos) << s;
    EXPECT_TRUE(after.BlockedAt(6).empty());
    ASSERT_TRUE(after.Add(Genuine(1, 5), 6).ok());
    EXPECT_EQ(std::filesystem::file_size(file), 457u);
  }
  std::filesystem::remove_all(dir);
}

// A citizen restarted over its files (citizen-<i>.head beside citizen-<i>.evidence) starts
// with the politicians it had blacklisted.
TEST(EvidenceTest, ARestartedCitizenStartsWithItsBlacklist) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                                    ("citizen-evidence-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  CitizenOptions options;
  options.genesis = SmallGenesis();
  options.keys = Key(500);
  options.head_file = dir / "citizen-0.head";
  {
    Blacklist written(options.genesis);
    ASSERT_TRUE(written.Persist(dir / "citizen-0.evidence").ok());
    ASSERT_TRUE(written.Add(Genuine(1, 0), 1).ok());
  }
  Citizen restarted(options, {});
  EXPECT_EQ(restarted.stats().blacklisted, std::vector<uint32_t>{1});
  std::filesystem::remove_all(dir);
}

class PoliticianEvidenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.id = 0;
    options_.genesis = SmallGenesis();
    options_.keys = Key(200);
    options_.dir =
        std::filesystem::temp_directory_path() / ("evidence_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(options_.dir);
    Reopen();
  }
  void TearDown() override {
    node_.reset();
    std::filesystem::remove_all(options_.dir);
  }
  void Reopen() {
    node_.reset();
    auto node = PoliticianNode::Open(options_);
    ASSERT_TRUE(node.ok()) << node.status();
    node_ = std::move(*node);
  }
  std::string Post(uint64_t height, const std::string& payload) {
    PostRequest req;
    req.set_height(height);
    req.mutable_item()->set_payload(payload);
    PostReply rep;
    node_->Post(req, &rep);
    return rep.accepted() ? "" : rep.error();
  }
  std::vector<std::string> Round(uint64_t height) {
    RoundRequest req;
    req.set_height(height);
    RoundReply rep;
    node_->GetRound(req, &rep);
    std::vector<std::string> out;
    for (const RoundItem& item : rep.items()) out.push_back(item.payload());
    return out;
  }
  PoliticianOptions options_;
  std::unique_ptr<PoliticianNode> node_;
};

TEST_F(PoliticianEvidenceTest, RelaysGenuineEvidenceAndRefusesForgedEvidence) {
  auto framed = PoolEquivocation(Commitment(1, 1, 1, Key(202)), Commitment(1, 1, 2, Key(202)));
  EXPECT_NE(Post(1, EncodeEvidence(*framed)).find("not its own"), std::string::npos);
  EXPECT_NE(Post(1, std::string(5, '\x08')).find("evidence"), std::string::npos);
  const std::string genuine = EncodeEvidence(Genuine(2, 1));
  EXPECT_EQ(Post(1, genuine), "");
  auto round = Round(1);
  EXPECT_EQ(std::count(round.begin(), round.end(), genuine), 1);
  EXPECT_EQ(std::count(round.begin(), round.end(), EncodeEvidence(*framed)), 0);
}

// Issue #12: a politician restarted (its node reopened over the same directory) still relays
// the evidence it had verified, in the next round it serves, without anyone posting it again.
TEST_F(PoliticianEvidenceTest, ARestartedPoliticianStillRelaysTheEvidenceItHeld) {
  const std::string genuine = EncodeEvidence(Genuine(2, 1));
  ASSERT_EQ(Post(1, genuine), "");
  Reopen();  // the round logs are gone (memory only); the evidence file is not
  auto round = Round(1);
  EXPECT_EQ(std::count(round.begin(), round.end(), genuine), 1);
}

TEST_F(PoliticianEvidenceTest, ARestartedPoliticianNeverSignsASecondPoolForAHeight) {
  auto own = [&](const std::vector<std::string>& items) {
    std::vector<TxPoolCommitment> mine;
    for (const std::string& p : items) {
      auto c = DecodeTxPoolCommitment(AsBytes(p));
      if (c.ok() && c->politician_id == 0) mine.push_back(*c);
    }
    return mine;
  };
  Transaction tx{.from = Key(300).public_key(), .to = Key(400).public_key(), .amount = 1};
  SignTransaction(tx, Key(300));
  TxRequest submit;
  submit.set_tx(EncodeLedgerTx(tx));
  TxReply submitted;
  node_->SubmitTransaction(submit, &submitted);
  ASSERT_TRUE(submitted.accepted()) << submitted.error();
  auto before = own(Round(1));
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(before[0].tx_count, 1u);
  // A crash loses the mempool: frozen again, height 1's pool would be empty -- a second,
  // different commitment. The restarted politician signs none for height 1.
  Reopen();
  EXPECT_TRUE(own(Round(1)).empty());
}

}  // namespace
}  // namespace tessera::ledger::net
