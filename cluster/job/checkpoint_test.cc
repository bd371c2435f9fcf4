#include "cluster/job/checkpoint.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace tessera::cluster {
namespace {

class CheckpointStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ckpt_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST(CheckpointCodecTest, RoundTripsBinaryState) {
  Checkpoint in{.step = 42, .world_size = 4, .state = std::string("a\0b\xff", 4)};
  Result<Checkpoint> out = DecodeCheckpoint(EncodeCheckpoint(in));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, in);
}

TEST(CheckpointCodecTest, RejectsTruncatedCorruptAndForeignBytes) {
  std::string bytes = EncodeCheckpoint({.step = 1, .world_size = 2, .state = "params"});
  EXPECT_EQ(DecodeCheckpoint(bytes.substr(0, bytes.size() - 1)).status().code(),
            StatusCode::kDataLoss);
  std::string flipped = bytes;
  flipped.back() ^= 1;
  EXPECT_EQ(DecodeCheckpoint(flipped).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(DecodeCheckpoint("hello").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(DecodeCheckpoint("").status().code(), StatusCode::kDataLoss);
}

TEST_F(CheckpointStoreTest, EmptyStoreHasNoLatest) {
  CheckpointStore store(dir_);
  Result<std::optional<Checkpoint>> latest = store.LoadLatest();
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_FALSE(latest->has_value());
}

TEST_F(CheckpointStoreTest, LoadsNewestAndKeepsOnlyTheLastFew) {
  CheckpointStore store(dir_, /*keep=*/2);
  for (int64_t step : {10, 20, 30}) {
    ASSERT_TRUE(store.Save({.step = step, .world_size = 4, .state = std::to_string(step)}).ok());
  }
  Result<std::optional<Checkpoint>> latest = store.LoadLatest();
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->step, 30);
  EXPECT_EQ((*latest)->state, "30");
  EXPECT_EQ(*store.ListSteps(), (std::vector<int64_t>{20, 30}));
}

TEST_F(CheckpointStoreTest, RefusesToGoBackwards) {
  CheckpointStore store(dir_);
  ASSERT_TRUE(store.Save({.step = 5, .world_size = 1, .state = "x"}).ok());
  EXPECT_EQ(store.Save({.step = 4, .world_size = 1, .state = "y"}).code(),
            StatusCode::kFailedPrecondition);
  // Saving the same step again (a job checkpointing twice at one boundary) is fine.
  EXPECT_TRUE(store.Save({.step = 5, .world_size = 1, .state = "x"}).ok());
}

TEST_F(CheckpointStoreTest, FallsBackToPreviousWhenNewestIsDamaged) {
  CheckpointStore store(dir_);
  ASSERT_TRUE(store.Save({.step = 1, .world_size = 1, .state = "good"}).ok());
  ASSERT_TRUE(store.Save({.step = 2, .world_size = 1, .state = "later"}).ok());
  std::ofstream(dir_ / "ckpt-000000000002.bin", std::ios::trunc) << "garbage";
  Result<std::optional<Checkpoint>> latest = store.LoadLatest();
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->step, 1);
  EXPECT_EQ((*latest)->state, "good");
}

}  // namespace
}  // namespace tessera::cluster
