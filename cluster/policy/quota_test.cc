#include "cluster/policy/quota.h"

#include <gtest/gtest.h>

namespace tessera::cluster {
namespace {

JobSpec Job(std::string tenant, Tier tier, int workers) {
  JobSpec spec;
  spec.id = tenant + "-job";
  spec.tenant = std::move(tenant);
  spec.tier = tier;
  spec.requested_workers = workers;
  spec.min_workers = workers;
  return spec;
}

QuotaConfig TwoTenants() {
  Result<QuotaConfig> config = ParseQuotaConfig(
      "# tenant premium standard\n"
      "vision 8 8\n"
      "speech 4 12   # the other tenant\n");
  EXPECT_TRUE(config.ok()) << config.status();
  return *config;
}

TEST(QuotaConfigTest, ParsesAndRejectsBadLines) {
  const QuotaConfig config = TwoTenants();
  ASSERT_EQ(config.tenants.size(), 2u);
  EXPECT_EQ(config.tenants.at("speech").premium, 4);
  EXPECT_EQ(config.tenants.at("speech").standard, 12);
  EXPECT_TRUE(config.borrowing);
  EXPECT_FALSE(ParseQuotaConfig("borrowing off\n")->borrowing);
  EXPECT_NE(ParseQuotaConfig("a 1\n").status().message().find("quota line 1"), std::string::npos);
  EXPECT_FALSE(ParseQuotaConfig("a -1 2\n").ok());
  EXPECT_FALSE(ParseQuotaConfig("a 1.5 2\n").ok());
  EXPECT_FALSE(ParseQuotaConfig("a 1 2 3\n").ok());
  EXPECT_NE(ParseQuotaConfig("a 1 2\na 3 4\n").status().message().find("line 2"),
            std::string::npos);
  EXPECT_FALSE(ParseQuotaConfig("borrowing maybe\n").ok());
}

TEST(QuotaConfigTest, QuotasMayNotOversellTheCluster) {
  const QuotaConfig config = TwoTenants();  // 12 premium, 32 guaranteed in all
  EXPECT_TRUE(ValidateQuota(config, 32).ok());
  EXPECT_NE(ValidateQuota(config, 31).message().find("premium and standard"), std::string::npos);
  EXPECT_NE(ValidateQuota(config, 11).message().find("premium would be oversold"),
            std::string::npos);
}

TEST(QuotaLedgerTest, InQuotaThenBorrowingThenRefused) {
  QuotaLedger ledger(TwoTenants());
  JobSpec a = Job("vision", Tier::kPremium, 8);
  EXPECT_EQ(ledger.Check(a, 64).kind, Admission::Kind::kInQuota);
  ledger.Add(a);
  // vision's premium quota is used up; speech's 4 idle premium slots can be lent.
  JobSpec b = Job("vision", Tier::kPremium, 4);
  Admission borrow = ledger.Check(b, 64);
  EXPECT_EQ(borrow.kind, Admission::Kind::kBorrowing) << borrow.reason;
  b.borrowed = true;
  ledger.Add(b);
  EXPECT_EQ(ledger.Borrowed("vision", Tier::kPremium), 4);
  // Nothing idle is left: refused, with a message that says why.
  Admission refused = ledger.Check(Job("vision", Tier::kPremium, 1), 64);
  EXPECT_EQ(refused.kind, Admission::Kind::kRefused);
  EXPECT_NE(refused.reason.find("premium quota exceeded"), std::string::npos) << refused.reason;
  EXPECT_NE(refused.reason.find("tenant 'vision' has 8 premium slots"), std::string::npos)
      << refused.reason;
  // The owner's own quota is still its own: speech is admitted in quota although vision borrows
  // its slots (the policy then evicts the borrower).
  EXPECT_EQ(ledger.Check(Job("speech", Tier::kPremium, 4), 64).kind, Admission::Kind::kInQuota);
  // Basic needs no quota; tenants without a quota get no guaranteed work.
  EXPECT_EQ(ledger.Check(Job("vision", Tier::kBasic, 64), 64).kind, Admission::Kind::kInQuota);
  Admission stranger = ledger.Check(Job("ads", Tier::kStandard, 1), 64);
  EXPECT_EQ(stranger.kind, Admission::Kind::kRefused);
  EXPECT_NE(stranger.reason.find("no quota"), std::string::npos);
  // Jobs that end give their quota back.
  ledger.Remove(b);
  ledger.Remove(a);
  EXPECT_EQ(ledger.InQuota("vision", Tier::kPremium), 0);
  EXPECT_EQ(ledger.Check(Job("vision", Tier::kPremium, 8), 64).kind, Admission::Kind::kInQuota);
}

TEST(QuotaLedgerTest, NoBorrowingWhenDisabled) {
  QuotaConfig config = TwoTenants();
  config.borrowing = false;
  QuotaLedger ledger(config);
  EXPECT_EQ(ledger.Check(Job("speech", Tier::kStandard, 13), 64).kind, Admission::Kind::kRefused);
  EXPECT_EQ(ledger.Check(Job("speech", Tier::kStandard, 12), 64).kind, Admission::Kind::kInQuota);
}

// Whatever the quotas say, guaranteed work never exceeds the live slots: premium against all of
// them, standard against what premium leaves.
TEST(QuotaLedgerTest, NeverOversellsTheLiveCapacity) {
  QuotaLedger ledger(TwoTenants());
  JobSpec p = Job("vision", Tier::kPremium, 8);
  ledger.Add(p);
  // A node was lost: 10 live slots. 8 premium admitted; 4 more premium would oversell.
  Admission a = ledger.Check(Job("speech", Tier::kPremium, 4), 10);
  EXPECT_EQ(a.kind, Admission::Kind::kRefused);
  EXPECT_NE(a.reason.find("cluster full for premium"), std::string::npos) << a.reason;
  EXPECT_EQ(ledger.Check(Job("speech", Tier::kPremium, 2), 10).kind, Admission::Kind::kInQuota);
  EXPECT_EQ(ledger.Check(Job("speech", Tier::kStandard, 3), 10).kind, Admission::Kind::kRefused);
  EXPECT_EQ(ledger.Check(Job("speech", Tier::kStandard, 2), 10).kind, Admission::Kind::kInQuota);
}

// Borrowed slots never block their owner, but a borrower counts everything admitted.
TEST(QuotaLedgerTest, BorrowersDoNotBlockOwners) {
  QuotaLedger ledger(TwoTenants());
  JobSpec borrower = Job("speech", Tier::kPremium, 8);
  ASSERT_EQ(ledger.Check(borrower, 8).kind, Admission::Kind::kBorrowing);
  borrower.borrowed = true;
  ledger.Add(borrower);
  // The owner's 8 slots fit the 8 live slots: admitted (the policy evicts the borrower).
  EXPECT_EQ(ledger.Check(Job("vision", Tier::kPremium, 8), 8).kind, Admission::Kind::kInQuota);
  // A borrower counts the borrowed work too: b's 16 idle quota slots exceed the 12 live ones
  // (nodes lost); a may borrow 8, not 16.
  QuotaLedger lost_nodes(*ParseQuotaConfig("a 0 0\nb 16 0\n"));
  JobSpec first = Job("a", Tier::kPremium, 8);
  ASSERT_EQ(lost_nodes.Check(first, 12).kind, Admission::Kind::kBorrowing);
  first.borrowed = true;
  lost_nodes.Add(first);
  Admission more = lost_nodes.Check(Job("a", Tier::kPremium, 8), 12);
  EXPECT_EQ(more.kind, Admission::Kind::kRefused) << more.reason;
  EXPECT_NE(more.reason.find("cluster full"), std::string::npos) << more.reason;
}

}  // namespace
}  // namespace tessera::cluster
