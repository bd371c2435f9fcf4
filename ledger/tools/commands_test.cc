#include "ledger/tools/commands.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sstream>

namespace tessera::ledger::tools {
namespace {

class CommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ledger_tools_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(CommandsTest, KeygenThenPubkeyAndPermissionCheck) {
  std::ostringstream out;
  ASSERT_TRUE(KeygenCommand(dir_ / "k", out).ok());
  std::ostringstream pub;
  ASSERT_TRUE(PubkeyCommand(dir_ / "k.key", pub).ok());
  EXPECT_NE(out.str().find(pub.str().substr(0, 64)), std::string::npos);
  ::chmod((dir_ / "k.key").c_str(), 0640);
  EXPECT_EQ(PubkeyCommand(dir_ / "k.key", pub).code(), StatusCode::kPermissionDenied);
}

TEST_F(CommandsTest, LotteryVerifiesAndRejectsATamperedProof) {
  std::ostringstream out;
  ASSERT_TRUE(LotteryCommand({.citizens = 40, .committee = 20, .proposers = 10}, out).ok());
  EXPECT_NE(out.str().find("committee: "), std::string::npos);
  EXPECT_NE(out.str().find("tampered proof (one bit flipped): rejected"), std::string::npos);
}

TEST_F(CommandsTest, StateBlockIsReplayedByTheLightClient) {
  std::ostringstream out;
  Status s =
      StateCommand({.accounts = 600, .senders = 40, .transfers = 150, .db = dir_ / "db"}, out);
  ASSERT_TRUE(s.ok()) << s << "\n" << out.str();
  EXPECT_NE(out.str().find("MATCHES the server's root"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("version 2"), std::string::npos);
  // The store is not empty any more: a second genesis is refused.
  std::ostringstream again;
  EXPECT_EQ(
      StateCommand({.accounts = 600, .senders = 40, .transfers = 10, .db = dir_ / "db"}, again)
          .code(),
      StatusCode::kFailedPrecondition);
  EXPECT_FALSE(StateCommand({.accounts = 10, .senders = 20, .transfers = 1, .db = {}}, again).ok());
}

TEST_F(CommandsTest, WriteBlocksContinuesFromTheStoredVersion) {
  WriteBlocksOptions w{.db = dir_ / "db", .blocks = 3, .accounts = 100, .block_size = 10};
  std::ostringstream out;
  ASSERT_TRUE(WriteBlocksCommand(w, out).ok());
  EXPECT_NE(out.str().find("committed 3 "), std::string::npos);
  ASSERT_TRUE(WriteBlocksCommand(w, out).ok());
  EXPECT_NE(out.str().find("committed 6 "), std::string::npos);
  std::ostringstream inspect;
  ASSERT_TRUE(InspectCommand(dir_ / "db", inspect).ok());
  EXPECT_NE(inspect.str().find("version 6\n"), std::string::npos) << inspect.str();
  EXPECT_EQ(InspectCommand(dir_ / "missing", inspect).code(), StatusCode::kNotFound);
  // The in-memory replay reaches the same root as the store.
  std::ostringstream replay;
  ASSERT_TRUE(ReplayCommand(w, 6, replay).ok());
  std::string root_line = replay.str();
  EXPECT_NE(inspect.str().find(root_line), std::string::npos) << root_line << inspect.str();
}

TEST_F(CommandsTest, WriteBlocksPrunesToTheNewestVersions) {
  WriteBlocksOptions w{
      .db = dir_ / "db", .blocks = 5, .accounts = 100, .block_size = 10, .keep = 2};
  std::ostringstream out;
  ASSERT_TRUE(WriteBlocksCommand(w, out).ok());
  EXPECT_NE(out.str().find("pruned below 4"), std::string::npos) << out.str();
  std::ostringstream inspect;
  ASSERT_TRUE(InspectCommand(dir_ / "db", inspect).ok());
  EXPECT_NE(inspect.str().find("oldest_version 4\n"), std::string::npos) << inspect.str();
}

}  // namespace
}  // namespace tessera::ledger::tools
