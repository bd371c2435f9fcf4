// The seam between the ledger and the reviews application (issue 16): the ledger's LoadApps
// builds "reviews" only through the factory this binary registered (register_app.cc), and a
// genesis naming an application no binary registered is refused by name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ledger/net/app_factories.h"
#include "ledger/net/genesis.h"
#include "ledger/net/mempool.h"
#include "ledger/state/sparse_merkle_tree.h"
#include "reviews/blind/blind_rsa.h"
#include "reviews/ledger/payload.h"
#include "reviews/ledger/reviews_app.h"

namespace tessera::reviews {
namespace {

using ::testing::HasSubstr;

TEST(RegisterApp, TheLedgerLoadsReviewsThroughTheRegisteredFactory) {
  ASSERT_NE(ledger::net::FindAppFactory("reviews"), nullptr);
  auto issuer = blind::SecretKey::Generate(2048);
  ASSERT_TRUE(issuer.ok());
  ledger::net::Genesis genesis;
  genesis.registrar = ledger::KeyPair::Generate().public_key();
  ledger::AppParams params;
  params.name = "reviews";
  params.values["issuer_public"] = *IssuerPublicToHex(issuer->public_key());
  params.values["ring_size"] = "7";
  genesis.apps.push_back(params);
  auto registry = ledger::net::LoadApps(genesis);
  ASSERT_TRUE(registry.ok()) << registry.status();
  const ledger::Application* app = registry->Find(kReviewsAppId);
  ASSERT_NE(app, nullptr);
  EXPECT_EQ(app->name(), "reviews");

  genesis.apps[0].name = "no-such-app";
  auto refused = ledger::net::LoadApps(genesis);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              HasSubstr("genesis names application 'no-such-app', which this binary does not "
                        "include (it has: reviews)"));
}

// Issue 16, part 5: reviews transactions may take at most mempool_percent of a politician's
// pool, and the quota is checked before the transaction is applied: past it even a forged one
// is refused for the quota, without a signature check.
TEST(RegisterApp, ReviewsTransactionsHaveAMempoolQuota) {
  auto issuer = blind::SecretKey::Generate(2048);
  ASSERT_TRUE(issuer.ok());
  const ledger::KeyPair registrar = ledger::KeyPair::Generate();
  ReviewsParams params{issuer->public_key(), registrar.public_key(), 50, 10};
  params.mempool_percent = 50;
  ledger::AppRegistry apps;
  ASSERT_TRUE(apps.Add(MakeReviewsApp(params)).ok());
  auto create = [&](const std::string& name, bool forge) {
    const ledger::KeyPair citizen = ledger::KeyPair::Generate();
    onchain::CreateItem tx{name, {citizen.public_key(), 0, {}}, {}};
    ledger::net::SignIdentity(tx.identity, registrar);
    onchain::SignCreateItem(tx, citizen);
    if (forge) tx.signature[0] ^= 1;
    return ledger::AppTransaction{kReviewsAppId, onchain::EncodePayload(tx)};
  };
  ledger::net::Mempool pool(4);  // quota: 2
  ledger::SparseMerkleTree state;
  const ledger::BlockContext next{1, {}};
  Status forged_first = pool.AdmitApp(create("x", true), state, apps, next);
  EXPECT_THAT(forged_first.message(), HasSubstr("not signed by the identity"));
  EXPECT_TRUE(pool.AdmitApp(create("a", false), state, apps, next).ok());
  EXPECT_TRUE(pool.AdmitApp(create("b", false), state, apps, next).ok());
  Status over = pool.AdmitApp(create("c", false), state, apps, next);
  EXPECT_EQ(over.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(over.message(), HasSubstr("mempool quota of application 'reviews' reached (2"));
  Status forged = pool.AdmitApp(create("d", true), state, apps, next);
  EXPECT_THAT(forged.message(), HasSubstr("quota"));  // refused before its signature is checked
  EXPECT_EQ(pool.size(), 2u);
}

}  // namespace
}  // namespace tessera::reviews
