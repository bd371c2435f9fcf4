#include "reviews/tool/commands.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/file.h"

namespace tessera::reviews::tool {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kSeed(64, 'a');

// One issuer, six registered review keys in epoch 3, everyone eligible (k >= N).
class ToolFlow : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("reviews_tool_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ASSERT_TRUE(IssuerKeygen(2048, P("issuer.pem"), P("issuer.pub"), out_).ok());
    for (int i = 0; i < 6; ++i) ASSERT_TRUE(IssueAndRegister(i).ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string P(const std::string& name) const { return (dir_ / name).string(); }
  std::string N(const char* base, int i) const { return P(base + std::to_string(i) + ".json"); }

  Status IssueAndRegister(int i) {
    TESSERA_RETURN_IF_ERROR(ReviewKeygen(3, N("key", i), out_));
    TESSERA_RETURN_IF_ERROR(
        BlindRequest(P("issuer.pub"), N("key", i), N("req", i), N("state", i), out_));
    TESSERA_RETURN_IF_ERROR(BlindSignRequest(P("issuer.pem"), N("req", i), "id" + std::to_string(i),
                                             P("issued.json"), N("resp", i), out_));
    TESSERA_RETURN_IF_ERROR(
        FinalizeCredential(P("issuer.pub"), N("state", i), N("resp", i), N("cred", i), out_));
    return Register(P("issuer.pub"), N("cred", i), P("registry.json"), out_);
  }

  fs::path dir_;
  std::ostringstream out_;
};

TEST_F(ToolFlow, ReviewVerifyAndDetectDoubleReview) {
  ASSERT_TRUE(
      ComputeRing(P("issuer.pub"), P("registry.json"), "item-1", kSeed, 10, P("ring.json"), out_)
          .ok());
  ASSERT_TRUE(SignReviewFile(N("key", 2), P("ring.json"), 4, "fine", P("r1.json"), out_).ok());
  Status verified =
      VerifyReviewFile(P("ring.json"), P("r1.json"), P("issuer.pub"), P("registry.json"), out_);
  EXPECT_TRUE(verified.ok()) << verified;
  ASSERT_TRUE(SignReviewFile(N("key", 2), P("ring.json"), 1, "again", P("r2.json"), out_).ok());
  ASSERT_TRUE(SignReviewFile(N("key", 3), P("ring.json"), 5, "other", P("r3.json"), out_).ok());
  std::ostringstream report;
  EXPECT_TRUE(FindDuplicates({P("r1.json"), P("r2.json"), P("r3.json")}, false, report).ok());
  EXPECT_NE(report.str().find("1 double review(s)"), std::string::npos) << report.str();
  EXPECT_EQ(FindDuplicates({P("r1.json"), P("r2.json")}, true, report).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_TRUE(FindDuplicates({P("r1.json"), P("r3.json")}, true, report).ok());
  // The tally counts r1 and r3 and rejects r2, the second review by key 2.
  std::ostringstream tally;
  ASSERT_TRUE(Tally(P("ring.json"), {P("r1.json"), P("r2.json"), P("r3.json")}, tally).ok());
  EXPECT_NE(tally.str().find("REJECTED"), std::string::npos) << tally.str();
  EXPECT_NE(tally.str().find("2 reviews, mean 4.5"), std::string::npos) << tally.str();
}

TEST_F(ToolFlow, OneIssuancePerIdentityPerEpoch) {
  ASSERT_TRUE(ReviewKeygen(3, P("extra.json"), out_).ok());
  ASSERT_TRUE(
      BlindRequest(P("issuer.pub"), P("extra.json"), P("xreq.json"), P("xstate.json"), out_).ok());
  Status again = BlindSignRequest(P("issuer.pem"), P("xreq.json"), "id0", P("issued.json"),
                                  P("xresp.json"), out_);
  EXPECT_EQ(again.code(), StatusCode::kAlreadyExists);
  EXPECT_NE(again.message().find("'id0' already obtained"), std::string::npos);
  EXPECT_TRUE(BlindSignRequest(P("issuer.pem"), P("xreq.json"), "newcomer", P("issued.json"),
                               P("xresp.json"), out_)
                  .ok());
}

TEST_F(ToolFlow, RejectsForgedAndDoctoredFiles) {
  ASSERT_TRUE(
      ComputeRing(P("issuer.pub"), P("registry.json"), "item-1", kSeed, 10, P("ring.json"), out_)
          .ok());
  ASSERT_TRUE(SignReviewFile(N("key", 1), P("ring.json"), 4, "ok", P("r.json"), out_).ok());

  // A ring file with a member removed no longer matches the DRAC lottery.
  json ring = json::parse(*ReadFile(P("ring.json")));
  ring["members"].erase(ring["members"].begin());
  ASSERT_TRUE(WriteFileAtomically(P("doctored.json"), ring.dump()).ok());
  Status st =
      VerifyReviewFile(P("doctored.json"), P("r.json"), P("issuer.pub"), P("registry.json"), out_);
  EXPECT_EQ(st.code(), StatusCode::kPermissionDenied);

  // A tampered rating fails verification.
  json review = json::parse(*ReadFile(P("r.json")));
  review["rating"] = 5;
  ASSERT_TRUE(WriteFileAtomically(P("tampered.json"), review.dump()).ok());
  EXPECT_EQ(VerifyReviewFile(P("ring.json"), P("tampered.json"), "", "", out_).code(),
            StatusCode::kPermissionDenied);

  // A truncated signature is a clear decoding error.
  review = json::parse(*ReadFile(P("r.json")));
  std::string sig = review["signature"];
  review["signature"] = sig.substr(0, sig.size() - 2);
  ASSERT_TRUE(WriteFileAtomically(P("short.json"), review.dump()).ok());
  st = VerifyReviewFile(P("ring.json"), P("short.json"), "", "", out_);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("malformed signature"), std::string::npos) << st;

  // Not JSON at all.
  ASSERT_TRUE(WriteFileAtomically(P("junk.json"), "{{{").ok());
  st = VerifyReviewFile(P("ring.json"), P("junk.json"), "", "", out_);
  EXPECT_NE(st.message().find("not a JSON object"), std::string::npos) << st;

  // A credential from another issuer cannot be registered.
  ASSERT_TRUE(IssuerKeygen(2048, P("rogue.pem"), P("rogue.pub"), out_).ok());
  ASSERT_TRUE(ReviewKeygen(3, P("rk.json"), out_).ok());
  ASSERT_TRUE(
      BlindRequest(P("rogue.pub"), P("rk.json"), P("rreq.json"), P("rstate.json"), out_).ok());
  ASSERT_TRUE(
      BlindSignRequest(P("rogue.pem"), P("rreq.json"), "x", P("rlog.json"), P("rresp.json"), out_)
          .ok());
  ASSERT_TRUE(
      FinalizeCredential(P("rogue.pub"), P("rstate.json"), P("rresp.json"), P("rcred.json"), out_)
          .ok());
  st = Register(P("issuer.pub"), P("rcred.json"), P("registry.json"), out_);
  EXPECT_EQ(st.code(), StatusCode::kPermissionDenied) << st;
}

TEST(ToolHijack, PrintsTheMetric) {
  std::ostringstream out;
  ASSERT_TRUE(Hijack(10000, 50, 100, 4.0, 0.5, out).ok());
  EXPECT_NE(out.str().find("3934"), std::string::npos) << out.str();
  EXPECT_FALSE(Hijack(0, 50, 100, 4.0, 0.5, out).ok());
}

}  // namespace
}  // namespace tessera::reviews::tool
