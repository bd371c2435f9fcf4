#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "core/file.h"
#include "ledger/crypto/ed25519.h"
#include "ledger/crypto/hash.h"
#include "ledger/crypto/key_file.h"

namespace tessera::ledger {
namespace {

TEST(HexTest, RoundTripsAndRejectsBadInput) {
  std::vector<uint8_t> bytes = {0x00, 0x7f, 0xab, 0xff};
  EXPECT_EQ(ToHex(bytes), "007fabff");
  EXPECT_EQ(*FromHex("007FABff"), bytes);
  EXPECT_FALSE(FromHex("abc").ok());
  EXPECT_FALSE(FromHex("zz").ok());
  EXPECT_FALSE(ArrayFromHex<2>("001122").ok());
}

TEST(HashTest, KnownAnswers) {
  // FIPS 180-2 examples.
  EXPECT_EQ(ToHex(Sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(ToHex(Sha512("abc")),
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c"
            "23a3feebbd454d4423643ce80e2a9ac94fa54ca49f");
  Sha256Hasher h;
  h.Update("a").Update("bc");
  EXPECT_EQ(h.Final(), Sha256("abc"));
}

TEST(Ed25519Test, Rfc8032Vector1) {
  // RFC 8032 §7.1 TEST 1: empty message.
  KeyPair keys = KeyPair::FromSeed(
      *ArrayFromHex<32>("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"));
  EXPECT_EQ(ToHex(keys.public_key()),
            "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
  Signature sig = SignRaw(keys, {});
  EXPECT_EQ(ToHex(sig),
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39"
            "701cf9b46bd25bf5f0595bbe24655141438e7a100b");
  EXPECT_TRUE(VerifyRaw(keys.public_key(), {}, sig));
}

TEST(Ed25519Test, DomainSeparationAndTampering) {
  KeyPair keys = KeyPair::Generate();
  std::string msg = "transfer 5 coins";
  Signature sig = Sign(keys, "tx", AsBytes(msg));
  EXPECT_TRUE(Verify(keys.public_key(), "tx", AsBytes(msg), sig));
  EXPECT_FALSE(Verify(keys.public_key(), "vote", AsBytes(msg), sig));
  EXPECT_FALSE(VerifyRaw(keys.public_key(), AsBytes(msg), sig));
  for (size_t bit = 0; bit < sig.size() * 8; ++bit) {
    Signature bad = sig;
    bad[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    EXPECT_FALSE(Verify(keys.public_key(), "tx", AsBytes(msg), bad)) << "signature bit " << bit;
  }
  for (size_t bit = 0; bit < keys.public_key().size() * 8; ++bit) {
    PublicKey bad = keys.public_key();
    bad[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    EXPECT_FALSE(Verify(bad, "tx", AsBytes(msg), sig)) << "key bit " << bit;
  }
  for (size_t bit = 0; bit < msg.size() * 8; ++bit) {
    std::string bad = msg;
    bad[bit / 8] = static_cast<char>(bad[bit / 8] ^ (1 << (bit % 8)));
    EXPECT_FALSE(Verify(keys.public_key(), "tx", AsBytes(bad), sig)) << "message bit " << bit;
  }
  EXPECT_FALSE(Verify(KeyPair::Generate().public_key(), "tx", AsBytes(msg), sig));
}

class KeyFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ledger_keyfile_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(KeyFileTest, SecretKeyRoundTripsWithMode0600) {
  KeyPair keys = KeyPair::Generate();
  auto path = dir_ / "citizen.key";
  ASSERT_TRUE(WriteSecretKeyFile(path, keys).ok());
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto loaded = ReadSecretKeyFile(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->public_key(), keys.public_key());
  // Never overwritten.
  EXPECT_EQ(WriteSecretKeyFile(path, KeyPair::Generate()).code(), StatusCode::kAlreadyExists);
}

TEST_F(KeyFileTest, GroupReadableSecretKeyIsRefused) {
  auto path = dir_ / "leaky.key";
  ASSERT_TRUE(WriteSecretKeyFile(path, KeyPair::Generate()).ok());
  ::chmod(path.c_str(), 0640);
  auto loaded = ReadSecretKeyFile(path);
  EXPECT_EQ(loaded.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(loaded.status().message().find("0640"), std::string::npos);
}

TEST_F(KeyFileTest, MalformedFilesGiveClearErrors) {
  auto path = dir_ / "bad.key";
  ASSERT_TRUE(WriteFileAtomically(path, "tessera-ed25519-secret v1\nnothex\n", 0600).ok());
  EXPECT_EQ(ReadSecretKeyFile(path).status().code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(WriteFileAtomically(path, "hello\n", 0600).ok());
  EXPECT_EQ(ReadSecretKeyFile(path).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadSecretKeyFile(dir_ / "missing.key").status().code(), StatusCode::kNotFound);
  // A public key file is not accepted as a secret key.
  auto pub = dir_ / "a.pub";
  ASSERT_TRUE(WritePublicKeyFile(pub, KeyPair::Generate().public_key()).ok());
  ::chmod(pub.c_str(), 0600);
  EXPECT_EQ(ReadSecretKeyFile(pub).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(KeyFileTest, PublicKeyRoundTrips) {
  KeyPair keys = KeyPair::Generate();
  auto path = dir_ / "citizen.pub";
  ASSERT_TRUE(WritePublicKeyFile(path, keys.public_key()).ok());
  EXPECT_EQ(*ReadPublicKeyFile(path), keys.public_key());
}

}  // namespace
}  // namespace tessera::ledger
