#include "reviews/client/key_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "core/file.h"

namespace tessera::reviews::client {
namespace {

using ::testing::HasSubstr;

ReviewKeyFile Sample() {
  ReviewKeyFile k;
  k.epoch = 4;
  k.review = urs::GenerateKeyPair();
  k.input_msg = Bytes(40, 1);
  return k;
}

TEST(KeyFile, RoundTripsWithMode0600AndRefusesReadableFiles) {
  auto dir = std::filesystem::temp_directory_path() / ("rk-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto path = dir / "key.json";
  ReviewKeyFile k = Sample();
  ASSERT_TRUE(WriteKeyFile(path, k).ok());
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto back = ReadKeyFile(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->review.public_key, k.review.public_key);
  EXPECT_EQ(back->input_msg, k.input_msg);
  EXPECT_FALSE(back->issued());
  ::chmod(path.c_str(), 0644);
  EXPECT_EQ(ReadKeyFile(path).status().code(), StatusCode::kPermissionDenied);
  std::filesystem::remove_all(dir);
}

TEST(KeyFile, MalformedContentsNameTheField) {
  EXPECT_THAT(DecodeKeyFile("[1]").status().message(), HasSubstr("not a JSON object"));
  ReviewKeyFile k = Sample();
  std::string good = EncodeKeyFile(k);
  ASSERT_TRUE(DecodeKeyFile(good).ok());
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    s.replace(s.find(from), from.size(), to);
    return DecodeKeyFile(s).status().message();
  };
  EXPECT_THAT(with("tessera-review-key v3", "v0"), HasSubstr("format is 'v0'"));
  EXPECT_THAT(with("tessera-review-key v3", "tessera-review-key v1"),
              HasSubstr("mixed the identity"));
  EXPECT_THAT(with("tessera-review-key v3", "tessera-review-key v2"), HasSubstr("key on G"));
  EXPECT_THAT(with("\"epoch\": 4", "\"epoch\": -1"), HasSubstr("'epoch'"));
  std::string other = ToHex(urs::GenerateKeyPair().public_key);
  EXPECT_THAT(with(ToHex(k.review.public_key), other), HasSubstr("review_public"));
  EXPECT_THAT(with("\"registered\": false", "\"registered\": true"),
              HasSubstr("registered without a credential"));
}

// Issue 16: the review key file names no identity. Nothing in it is the citizen key or the
// blinding values of the request file, in any encoding the file uses.
TEST(KeyFile, TheReviewKeyFileHoldsNoIdentityMaterial) {
  const ledger::KeyPair citizen = ledger::KeyPair::Generate();
  ReviewKeyFile k = Sample();
  k.signature = Bytes(256, 7);
  k.registered = true;
  KeyRequestFile r{k.epoch, citizen.public_key(), k.review.public_key, Bytes(256, 0x5a),
                   Bytes(256, 0xc3)};
  const std::string key_text = EncodeKeyFile(k);
  for (const std::string& secret : {ToHex(r.citizen), ToHex(r.blinded_msg), ToHex(r.inv)}) {
    EXPECT_EQ(key_text.find(secret), std::string::npos);
  }
  EXPECT_EQ(key_text.find("citizen"), std::string::npos);
  EXPECT_EQ(key_text.find("inv"), std::string::npos);
  // The request file round-trips and is what links the key to the identity.
  auto back = DecodeRequestFile(EncodeRequestFile(r));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->citizen, r.citizen);
  EXPECT_EQ(back->inv, r.inv);
  EXPECT_EQ(back->review_public, k.review.public_key);
  EXPECT_THAT(DecodeRequestFile(key_text).status().message(), HasSubstr("expected"));
  EXPECT_EQ(RequestFilePath("/a/alice.key.json"), "/a/alice.key.json.request");
}

}  // namespace
}  // namespace tessera::reviews::client
