// A citizen's cert votes survive a restart through its vote journal, and a citizen whose
// journal is unusable does not cert-vote at all.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "ledger/crypto/hash.h"
#include "ledger/net/citizen.h"

namespace tessera::ledger::net {
namespace {

class CitizenJournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("citizen-journal-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    options_.genesis.sortition.population = options_.genesis.sortition.committee_size = 4;
    options_.genesis.accounts.push_back({KeyPair::FromSeed(Sha256("acct")).public_key(), 10});
    options_.keys = KeyPair::FromSeed(Sha256("citizen"));
    options_.vote_journal = dir_ / "citizen-0.votes";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
  CitizenOptions options_;
};

TEST_F(CitizenJournalTest, ARestartedCitizenKnowsItsCertVotes) {
  const Hash256 value = Sha256("block 3");
  {
    auto journal = agreement::VoteJournal::Open(options_.vote_journal);
    ASSERT_TRUE(journal.ok()) << journal.status();
    agreement::JournalRecord r;
    r.vote = {.height = 3,
              .step = agreement::Step::kCert,
              .value = agreement::Value::Of(value),
              .voter = options_.keys.public_key()};
    ASSERT_TRUE(journal->Append(std::span(&r, 1)).ok());
  }
  Citizen restarted(options_, {});
  EXPECT_TRUE(restarted.may_cert_vote());
  ASSERT_TRUE(restarted.CertVote(3).has_value());
  EXPECT_EQ(*restarted.CertVote(3), value);  // PlayRound cert-votes at most once per height
  EXPECT_FALSE(restarted.CertVote(4).has_value());
}

TEST_F(CitizenJournalTest, ADamagedJournalStopsCertVoting) {
  {
    auto journal = agreement::VoteJournal::Open(options_.vote_journal);
    ASSERT_TRUE(journal.ok());
    std::vector<agreement::JournalRecord> records(3);
    for (auto& r : records) r.vote.step = agreement::Step::kCert;
    ASSERT_TRUE(journal->Append(records).ok());
  }
  {
    std::fstream f(options_.vote_journal, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(10);
    f.put('\x55');
  }
  Citizen citizen(options_, {});
  EXPECT_FALSE(citizen.may_cert_vote());
}

TEST_F(CitizenJournalTest, NoJournalConfiguredMeansNoDurability) {
  options_.vote_journal.clear();
  Citizen citizen(options_, {});
  EXPECT_TRUE(citizen.may_cert_vote());
  EXPECT_FALSE(std::filesystem::exists(dir_ / "citizen-0.votes"));
}

}  // namespace
}  // namespace tessera::ledger::net
