#include "reviews/tool/formats.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/file.h"

namespace tessera::reviews::tool {
namespace {

Review MakeReview() {
  urs::KeyPair k = urs::GenerateKeyPair();
  urs::Ring ring = *urs::Ring::Create({k.public_key, urs::GenerateKeyPair().public_key});
  return *SignReview(k, ring, "item", 4, 3, "text");
}

TEST(Formats, ReviewRoundTrip) {
  Review r = MakeReview();
  json j = ReviewToJson(r);
  auto back = ReviewFromJson(j, "r.json");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->item, "item");
  EXPECT_EQ(back->epoch, 4u);
  EXPECT_EQ(back->rating, 3);
  EXPECT_EQ(back->text, "text");
  EXPECT_EQ(back->signature.tag, r.signature.tag);
  EXPECT_EQ(back->signature.s, r.signature.s);
}

// Malformed review files get errors that name the file and the field.
TEST(Formats, MalformedReviewsGetClearErrors) {
  json good = ReviewToJson(MakeReview());
  auto error = [](const json& j) {
    auto r = ReviewFromJson(j, "r.json");
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    return r.status().message();
  };
  json j = good;
  j.erase("item");
  EXPECT_NE(error(j).find("r.json: missing string field 'item'"), std::string::npos);
  j = good;
  j["epoch"] = -1;
  EXPECT_NE(error(j).find("missing unsigned integer field 'epoch'"), std::string::npos);
  j = good;
  j["rating"] = "five";
  EXPECT_NE(error(j).find("'rating'"), std::string::npos);
  j = good;
  j["signature"] = "zz";
  EXPECT_NE(error(j).find("field 'signature'"), std::string::npos);
  j = good;
  j["signature"] = "0100";
  EXPECT_NE(error(j).find("malformed signature"), std::string::npos);
  j = good;
  j["tag"] = std::string(64, '0');
  EXPECT_NE(error(j).find("does not match"), std::string::npos);
  EXPECT_NE(error(json::array()).find("not a JSON object"), std::string::npos);
}

TEST(Formats, CredentialRoundTripAndErrors) {
  Credential c;
  c.review_key = urs::GenerateKeyPair().public_key;
  c.epoch = 9;
  c.msg_prefix = Bytes(32, 1);
  c.signature = Bytes(256, 2);
  auto back = CredentialFromJson(CredentialToJson(c), "c.json");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->review_key, c.review_key);
  EXPECT_EQ(back->signature, c.signature);
  json j = CredentialToJson(c);
  j["review_key"] = "abcd";
  auto bad = CredentialFromJson(j, "c.json");
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("field 'review_key'"), std::string::npos);
}

TEST(Formats, Files) {
  std::string dir =
      (std::filesystem::temp_directory_path() / ("reviews_formats_" + std::to_string(::getpid())))
          .string();
  std::filesystem::create_directories(dir);
  EXPECT_EQ(ReadJson(dir + "/missing.json").status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(WriteFileAtomically(dir + "/bad.json", "[1, 2").ok());
  EXPECT_NE(ReadJson(dir + "/bad.json").status().message().find("not a JSON object"),
            std::string::npos);
  ASSERT_TRUE(WriteJson(dir + "/ring.json", {{"item", "x"},
                                             {"epoch", 1},
                                             {"seed", std::string(64, '0')},
                                             {"k", 5},
                                             {"registered", 10},
                                             {"members", json::array({"00"})}})
                  .ok());
  auto ring = LoadRing(dir + "/ring.json");
  EXPECT_FALSE(ring.ok());
  EXPECT_NE(ring.status().message().find("member"), std::string::npos) << ring.status();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessera::reviews::tool
