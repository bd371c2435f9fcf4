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
  k.citizen = ledger::KeyPair::Generate().public_key();
  k.review = urs::GenerateKeyPair();
  k.input_msg = Bytes(40, 1);
  k.blinded_msg = Bytes(256, 2);
  k.inv = Bytes(256, 3);
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
  EXPECT_EQ(back->blinded_msg, k.blinded_msg);
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
  EXPECT_THAT(with("tessera-review-key v1", "v0"), HasSubstr("format is 'v0'"));
  EXPECT_THAT(with("\"epoch\": 4", "\"epoch\": -1"), HasSubstr("'epoch'"));
  std::string other = ToHex(urs::GenerateKeyPair().public_key);
  EXPECT_THAT(with(ToHex(k.review.public_key), other), HasSubstr("review_public"));
  EXPECT_THAT(with("\"registered\": false", "\"registered\": true"),
              HasSubstr("registered without a credential"));
}

}  // namespace
}  // namespace tessera::reviews::client
