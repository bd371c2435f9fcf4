#include "ledger/state/state_store.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "ledger/state/synthetic.h"

namespace tessera::ledger {
namespace {

class StateStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ledger_store_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<StateStore> OpenStore() {
    auto store = StateStore::Open(dir_, {.cached_versions = 2, .sync = false});
    EXPECT_TRUE(store.ok()) << store.status();
    return std::move(store).value();
  }

  std::filesystem::path dir_;
};

TEST_F(StateStoreTest, CommitsReopenAndServeOldVersions) {
  std::vector<Hash256> roots;
  SparseMerkleTree reference;
  {
    auto store = OpenStore();
    EXPECT_EQ(store->version(), 0u);
    EXPECT_EQ(store->root(), Hash256{});
    roots.push_back(store->root());
    for (uint64_t v = 1; v <= 6; ++v) {
      auto block = SyntheticBlock(1, v, 300, 40);
      reference = *reference.Update(block);
      auto root = store->Commit(block);
      ASSERT_TRUE(root.ok()) << root.status();
      EXPECT_EQ(*root, reference.root_hash());
      roots.push_back(*root);
    }
  }
  auto store = OpenStore();
  EXPECT_EQ(store->version(), 6u);
  EXPECT_EQ(store->root(), reference.root_hash());
  for (uint64_t v = 0; v <= 6; ++v) {
    EXPECT_EQ(*store->RootAt(v), roots[v]);
    auto tree = store->TreeAt(v);
    ASSERT_TRUE(tree.ok()) << tree.status();
    EXPECT_EQ(tree->root_hash(), roots[v]);
  }
  // Point reads at an old version agree with that version's tree.
  SparseMerkleTree v3 = *store->TreeAt(3);
  for (uint64_t i = 0; i < 300; i += 7) {
    Hash256 key = SyntheticAccountKey(i);
    EXPECT_EQ(*store->GetAt(key, 3), v3.Get(key)) << i;
  }
  EXPECT_EQ(store->RootAt(7).status().code(), StatusCode::kNotFound);
  // Proofs against an old (rebuilt) and the latest (cached) version.
  std::vector<Hash256> keys = {SyntheticAccountKey(1), SyntheticAccountKey(2)};
  for (uint64_t v : {2u, 6u}) {
    auto proof = store->ProveAt(keys, v);
    ASSERT_TRUE(proof.ok()) << proof.status();
    auto values = proof->Verify(roots[v], keys);
    ASSERT_TRUE(values.ok()) << values.status();
    SparseMerkleTree tree = *store->TreeAt(v);
    EXPECT_EQ((*values)[0], tree.Get(keys[0]));
  }
  EXPECT_FALSE(store->ProveAt(keys, 9).ok());
}

TEST_F(StateStoreTest, PruneForgetsOldVersionsButKeepsNewerOnesExact) {
  auto store = OpenStore();
  std::vector<Hash256> roots = {store->root()};
  for (uint64_t v = 1; v <= 8; ++v) roots.push_back(*store->Commit(SyntheticBlock(2, v, 200, 60)));
  SparseMerkleTree v5 = *store->TreeAt(5);
  ASSERT_TRUE(store->Prune(5).ok());
  EXPECT_EQ(store->oldest_version(), 5u);
  EXPECT_EQ(store->RootAt(4).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store->TreeAt(2).status().code(), StatusCode::kNotFound);
  for (uint64_t v = 5; v <= 8; ++v) EXPECT_EQ(store->TreeAt(v)->root_hash(), roots[v]) << v;
  for (uint64_t i = 0; i < 200; ++i) {
    EXPECT_EQ(*store->GetAt(SyntheticAccountKey(i), 5), v5.Get(SyntheticAccountKey(i)));
  }
  EXPECT_FALSE(store->Prune(9).ok());
  store.reset();
  store = OpenStore();
  EXPECT_EQ(store->version(), 8u);
  EXPECT_EQ(store->oldest_version(), 5u);
  EXPECT_EQ(store->root(), roots[8]);
  EXPECT_EQ(store->TreeAt(5)->root_hash(), roots[5]);
  // Pruning everything but the latest still reopens at the right root.
  ASSERT_TRUE(store->Prune(8).ok());
  store.reset();
  store = OpenStore();
  EXPECT_EQ(store->root(), roots[8]);
}

TEST_F(StateStoreTest, TamperedLeafRecordIsDetectedOnOpen) {
  {
    auto store = OpenStore();
    ASSERT_TRUE(store->Commit(SyntheticBlock(3, 1, 50, 20)).ok());
  }
  {
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), dir_.string(), &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
    it->Seek("l");
    ASSERT_TRUE(it->Valid());
    std::string value = it->value().ToString();
    value[0] ^= 1;
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), it->key(), value).ok());
  }
  auto store = StateStore::Open(dir_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(store.status().message().find("does not match the stored root"), std::string::npos);
}

TEST_F(StateStoreTest, RejectedBatchLeavesTheStoreUnchanged) {
  auto store = OpenStore();
  ASSERT_TRUE(store->Commit(SyntheticBlock(4, 1, 50, 20)).ok());
  Hash256 root = store->root();
  Hash256 k = SyntheticAccountKey(1);
  EXPECT_FALSE(store->Commit({{k, LeafValue{}}, {k, LeafValue{1}}}).ok());
  EXPECT_EQ(store->version(), 1u);
  EXPECT_EQ(store->root(), root);
}

// A server reads old versions only from memory: CachedTreeAt never rebuilds from disk.
TEST_F(StateStoreTest, CachedTreeAtServesOnlyTheVersionsInMemory) {
  auto store = OpenStore();  // cached_versions = 2
  std::vector<Hash256> roots = {store->root()};
  for (uint64_t v = 1; v <= 5; ++v) roots.push_back(*store->Commit(SyntheticBlock(5, v, 100, 30)));
  EXPECT_EQ(store->CachedTreeAt(5)->root_hash(), roots[5]);
  EXPECT_EQ(store->CachedTreeAt(4)->root_hash(), roots[4]);
  Status old = store->CachedTreeAt(3).status();
  EXPECT_EQ(old.code(), StatusCode::kNotFound);
  EXPECT_NE(old.message().find("not in memory"), std::string::npos) << old;
  EXPECT_EQ(store->TreeAt(3)->root_hash(), roots[3]);  // tools may still rebuild
  EXPECT_EQ(store->CachedTreeAt(6).status().code(), StatusCode::kNotFound);
}

// Readers run while the single writer commits and prunes; every version a reader sees is
// complete: its tree has the root the store recorded for it.
TEST_F(StateStoreTest, ReadersSeeOnlyCompleteVersionsWhileTheWriterCommitsAndPrunes) {
  auto opened = StateStore::Open(dir_, {.cached_versions = 4, .sync = false});
  ASSERT_TRUE(opened.ok());
  std::unique_ptr<StateStore> store = std::move(opened).value();
  std::atomic<bool> done{false};
  std::atomic<int> checked{0}, bad{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&] {
      while (!done.load()) {
        const uint64_t v = store->version();
        auto tree = store->CachedTreeAt(v);
        if (!tree.ok()) continue;  // pruned or moved on meanwhile
        auto root = store->RootAt(v);
        if (root.ok() && *root != tree->root_hash()) ++bad;
        if (store->tree().size() < tree->size()) ++bad;  // versions only move forward
        ++checked;
      }
    });
  }
  for (uint64_t v = 1; v <= 60; ++v) {
    ASSERT_TRUE(store->Commit(SyntheticBlock(6, v, 500, 50)).ok());
    if (v % 10 == 0) {
      ASSERT_TRUE(store->Prune(v - 3).ok());
    }
  }
  done = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(checked.load(), 0);
  EXPECT_EQ(store->version(), 60u);
  EXPECT_EQ(store->oldest_version(), 57u);
}

}  // namespace
}  // namespace tessera::ledger
