// The seam between the ledger and the reviews application (issue 16): the ledger's LoadApps
// builds "reviews" only through the factory this binary registered (register_app.cc), and a
// genesis naming an application no binary registered is refused by name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ledger/net/app_factories.h"
#include "ledger/net/genesis.h"
#include "reviews/blind/blind_rsa.h"
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

}  // namespace
}  // namespace tessera::reviews
