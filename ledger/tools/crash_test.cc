// Kill -9 during block writes: a real `ledger-tool write-blocks` child commits synthetic
// blocks (one synced RocksDB batch each, plus a pruning batch after each commit) and is killed
// with SIGKILL at random moments; after
// each kill the store must reopen (its rebuilt root matching the stored one) at a committed
// version whose root equals the root recomputed independently by replaying the same blocks.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <sstream>
#include <thread>

#include "ledger/state/state_store.h"
#include "ledger/state/synthetic.h"

namespace tessera::ledger {
namespace {

constexpr uint64_t kSeed = 7;
constexpr uint64_t kAccounts = 20000;
constexpr uint64_t kBlockSize = 2000;
constexpr uint64_t kKeep = 3;  // the writer also prunes after every commit

struct Child {
  pid_t pid;
  int out;  // read end of the child's stdout
};

Child SpawnWriter(const std::filesystem::path& tool, const std::filesystem::path& db) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    std::string d = db.string(), a = std::to_string(kAccounts), b = std::to_string(kBlockSize),
                s = std::to_string(kSeed), k = std::to_string(kKeep);
    ::execl(tool.c_str(), "ledger-tool", "--log-level", "off", "write-blocks", "--db", d.c_str(),
            "--blocks", "1000000", "--accounts", a.c_str(), "--block-size", b.c_str(), "--seed",
            s.c_str(), "--keep", k.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[1]);
  return {pid, fds[0]};
}

// Reads whole lines from `fd` until `lines` "committed" lines arrived (or EOF); returns those
// and records the highest "pruned below X" seen in `*pruned`.
std::vector<std::string> ReadCommitted(int fd, size_t lines, std::string& buffer,
                                       uint64_t* pruned) {
  std::vector<std::string> committed;
  char chunk[4096];
  while (committed.size() < lines) {
    size_t nl;
    while ((nl = buffer.find('\n')) != std::string::npos) {
      std::string line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      if (line.rfind("committed ", 0) == 0) committed.push_back(line);
      if (line.rfind("pruned below ", 0) == 0) {
        *pruned = std::max<uint64_t>(*pruned, std::stoull(line.substr(13)));
      }
    }
    if (committed.size() >= lines) break;
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n <= 0) break;
    buffer.append(chunk, static_cast<size_t>(n));
  }
  return committed;
}

TEST(CrashTest, KillNineDuringBlockWritesReopensAtLastCommittedRoot) {
  const char* bin_dir = std::getenv("TESSERA_BIN_DIR");
  ASSERT_NE(bin_dir, nullptr) << "TESSERA_BIN_DIR not set (run through ctest)";
  std::filesystem::path tool = std::filesystem::path(bin_dir) / "ledger-tool";
  ASSERT_TRUE(std::filesystem::exists(tool)) << tool;
  std::filesystem::path db =
      std::filesystem::temp_directory_path() / ("ledger_crash_" + std::to_string(::getpid()));
  std::filesystem::remove_all(db);

  // Independent replay of the workload: roots[v] is the root version v must have.
  SparseMerkleTree replay;
  std::vector<Hash256> roots = {replay.root_hash()};
  auto root_of = [&](uint64_t v) {
    while (roots.size() <= v) {
      replay = *replay.Update(SyntheticBlock(kSeed, roots.size(), kAccounts, kBlockSize));
      roots.push_back(replay.root_hash());
    }
    return roots[v];
  };

  std::mt19937_64 rng(12345);
  uint64_t reopened_at = 0;
  uint64_t oldest_before = 0;
  for (int round = 0; round < 5; ++round) {
    Child child = SpawnWriter(tool, db);
    std::string buffer;
    uint64_t pruned_printed = 0;
    // Let it commit a few blocks, then kill it at a random moment inside a later one.
    auto first = ReadCommitted(child.out, 1 + rng() % 4, buffer, &pruned_printed);
    ASSERT_FALSE(first.empty()) << "writer produced no commits in round " << round;
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 20000));
    ASSERT_EQ(::kill(child.pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(child.pid, &status, 0), child.pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "round " << round;
    // Everything the child printed before dying: it printed each line after its commit.
    auto rest = ReadCommitted(child.out, SIZE_MAX, buffer, &pruned_printed);
    ::close(child.out);
    first.insert(first.end(), rest.begin(), rest.end());
    std::istringstream last(first.back());
    std::string word, root_hex;
    uint64_t printed = 0;
    last >> word >> printed >> root_hex;

    auto store = StateStore::Open(db, {.cached_versions = 1, .sync = true});
    ASSERT_TRUE(store.ok()) << "round " << round << ": " << store.status();
    uint64_t v = (*store)->version();
    // The commit after the last printed line may or may not have reached the disk.
    EXPECT_GE(v, printed) << "round " << round;
    EXPECT_LE(v, printed + 1) << "round " << round;
    EXPECT_GT(v, reopened_at) << "round " << round << ": no progress";
    EXPECT_EQ((*store)->root(), root_of(v)) << "round " << round << " version " << v;
    EXPECT_EQ(ToHex(*(*store)->RootAt(printed)), root_hex) << "round " << round;
    // Pruning is crash-safe too. A prune the writer reported is durable; a prune it was
    // killed before (in this or an earlier round) may be missing, so the oldest kept version
    // lies between the last reported prune and the prune that follows commit v; it never
    // moves backwards. Every kept version still rebuilds to its replayed root.
    uint64_t oldest = (*store)->oldest_version();
    uint64_t after_prune = v + 1 >= kKeep ? v + 1 - kKeep : 0;  // the prune after commit v
    EXPECT_GE(oldest, pruned_printed) << "round " << round;
    EXPECT_GE(oldest, oldest_before) << "round " << round;
    EXPECT_LE(oldest, after_prune) << "round " << round << ": oldest " << oldest << " at " << v;
    oldest_before = oldest;
    for (uint64_t kept = oldest; kept <= v; ++kept) {
      auto tree = (*store)->TreeAt(kept);
      ASSERT_TRUE(tree.ok()) << tree.status();
      EXPECT_EQ(tree->root_hash(), root_of(kept)) << "round " << round << " version " << kept;
    }
    if (oldest > 0) {
      EXPECT_EQ((*store)->RootAt(oldest - 1).status().code(), StatusCode::kNotFound);
    }
    reopened_at = v;
    std::cout << "round " << round << ": killed after commit " << printed << ", reopened at " << v
              << " with the expected root\n";
  }
  std::filesystem::remove_all(db);
}

}  // namespace
}  // namespace tessera::ledger
