#include "pipeline/checkpoint.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace tessera::pipeline {
namespace {

std::filesystem::path TempRoot(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() /
           ("pipeline_ckpt_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  return p;
}

UnitState Sample(float x) {
  UnitState s;
  s.params = {{{2, 2}, {x, 2, 3, 4}}, {{3}, {5, 6, 7}}};
  s.momentum = {{{2, 2}, {0, 0, 1, 1}}, {{3}, {0, 0, 0}}};
  return s;
}

TEST(Checkpoint, UnitStateRoundTripAndCorruption) {
  const std::string bytes = EncodeUnitState(Sample(1));
  auto back = DecodeUnitState(bytes);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->params, Sample(1).params);
  EXPECT_EQ(back->momentum, Sample(1).momentum);
  std::string bad = bytes;
  bad[bad.size() - 3] ^= 1;
  EXPECT_EQ(DecodeUnitState(bad).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(DecodeUnitState(bytes.substr(0, 20)).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(DecodeUnitState("garbage").status().code(), StatusCode::kDataLoss);
}

// Adam's second moments travel as a third list; SGD files have none (and older files decode).
// A third list that is present but empty is refused: it would not encode back to its bytes.
TEST(Checkpoint, SecondMomentsRoundTrip) {
  UnitState adam = Sample(2);
  adam.second_moment = {{{2, 2}, {1, 1, 1, 1}}, {{3}, {2, 2, 2}}};
  const std::string bytes = EncodeUnitState(adam);
  auto back = DecodeUnitState(bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->second_moment, adam.second_moment);
  EXPECT_EQ(EncodeUnitState(*back), bytes);
  EXPECT_TRUE(DecodeUnitState(EncodeUnitState(Sample(2)))->second_moment.empty());
  adam.second_moment.pop_back();  // one per parameter or none
  EXPECT_EQ(DecodeUnitState(EncodeUnitState(adam)).status().code(), StatusCode::kDataLoss);
  // An empty state with an empty third list appended, checksum (FNV-1a) made valid again.
  std::string body = EncodeUnitState(UnitState{}).substr(16) + std::string(8, '\0');
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : body) h = (h ^ c) * 0x100000001b3ULL;
  std::string forged = EncodeUnitState(UnitState{}).substr(0, 8);
  forged.append(reinterpret_cast<const char*>(&h), 8);
  EXPECT_EQ(DecodeUnitState(forged + body).status().code(), StatusCode::kDataLoss);
}

// Hostile files with a valid checksum: absurd counts and shapes are refused, not allocated.
TEST(Checkpoint, HostileSizesAreDataLoss) {
  auto wrap = [](const std::string& body) {
    uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a, as the format uses
    for (unsigned char c : body) {
      h ^= c;
      h *= 0x100000001b3ULL;
    }
    std::string out = "TSPLUNT1";
    out.append(reinterpret_cast<const char*>(&h), 8);
    return out + body;
  };
  auto u64 = [](uint64_t v) { return std::string(reinterpret_cast<const char*>(&v), 8); };
  // 2^40 tensors in a 8-byte body.
  EXPECT_EQ(DecodeUnitState(wrap(u64(uint64_t{1} << 40))).status().code(), StatusCode::kDataLoss);
  // One tensor whose dims multiply past int64.
  std::string body = u64(1) + u64(3) + u64(uint64_t{1} << 40) + u64(uint64_t{1} << 40) +
                     u64(uint64_t{1} << 40) + u64(0);
  EXPECT_EQ(DecodeUnitState(wrap(body)).status().code(), StatusCode::kDataLoss);
  // The wrapper itself is right: an empty state decodes.
  EXPECT_TRUE(DecodeUnitState(wrap(u64(0) + u64(0))).ok());
}

TEST(Checkpoint, LatestCompleteSkipsPartialOnes) {
  auto root = TempRoot("latest");
  EXPECT_EQ(LatestCompleteCheckpoint(root).status().code(), StatusCode::kNotFound);
  CheckpointMeta meta;
  meta.steps_done = 5;
  meta.lr = 0.1;
  meta.momentum = 0.9;
  meta.seed = 1;
  meta.num_units = 2;
  ASSERT_TRUE(WriteMeta(root, meta).ok());
  ASSERT_TRUE(WriteUnitState(root, 5, 0, Sample(1)).ok());
  ASSERT_TRUE(WriteUnitState(root, 5, 1, Sample(2)).ok());
  // Step 9 lacks unit 1: a crash mid-save.
  meta.steps_done = 9;
  ASSERT_TRUE(WriteMeta(root, meta).ok());
  ASSERT_TRUE(WriteUnitState(root, 9, 0, Sample(3)).ok());
  EXPECT_EQ(*LatestCompleteCheckpoint(root), 5);
  ASSERT_TRUE(WriteUnitState(root, 9, 1, Sample(4)).ok());
  EXPECT_EQ(*LatestCompleteCheckpoint(root), 9);
  EXPECT_EQ(ReadUnitState(root, 9, 1)->params[0].values[0], 4.0f);
  EXPECT_DOUBLE_EQ(ReadMeta(root, 9)->lr, 0.1);
  EXPECT_FALSE(ReadUnitState(root, 9, 7).ok());
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace tessera::pipeline
