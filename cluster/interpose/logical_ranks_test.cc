// Logical ranks (cluster/interpose/cc/elastic_session.h) as real processes over gloo, outside
// the scheduler: the same 4-rank job held by 4, 3, 2 and 1 processes (the agent's dealing of
// ranks to slots, cluster/job/rank_dealing.h) ends with the same parameters, bit for bit, as
// long as its gradients are summed in rank order whatever process computed them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <regex>

#include "cluster/job/process.h"
#include "core/file.h"

namespace tessera::cluster {
namespace {

namespace fs = std::filesystem;

class LogicalRanksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* bin = std::getenv("TESSERA_BIN_DIR");
    ASSERT_NE(bin, nullptr) << "TESSERA_BIN_DIR must name the build's bin directory";
    program_ = fs::path(bin) / "cluster-ddp-example";
    root_ = fs::temp_directory_path() / ("logical_ranks_test_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(root_);
  }

  // The job's 4 ranks on `processes` processes; the parameters' hash rank 0 wrote.
  std::string Run(int processes, const std::vector<std::string>& flags) {
    const std::string name = std::to_string(processes) + (flags.empty() ? "" : flags[0]);
    const fs::path out = root_ / (name + ".txt");
    const int port = 20000 + (::getpid() * 13 + 101 * runs_++) % 40000;
    std::vector<Process> ranks;
    for (int rank = 0; rank < processes; ++rank) {
      ProcessOptions o;
      o.argv = {program_.string(), "--steps", "60", "--out", out.string()};
      o.argv.insert(o.argv.end(), flags.begin(), flags.end());
      o.env = {{"RANK", std::to_string(rank)},
               {"WORLD_SIZE", std::to_string(processes)},
               {"MASTER_ADDR", "127.0.0.1"},
               {"MASTER_PORT", std::to_string(port)},
               {"OMP_NUM_THREADS", "1"}};
      if (processes != 4) o.env.emplace_back("TESSERA_LOGICAL_WORLD_SIZE", "4");
      o.log_file = root_ / (name + "-rank" + std::to_string(rank) + ".log");
      Result<Process> p = Process::Spawn(o);
      EXPECT_TRUE(p.ok()) << p.status();
      if (!p.ok()) return "(spawn failed)";
      ranks.push_back(std::move(*p));
    }
    for (Process& p : ranks) EXPECT_EQ(p.Wait(), 0) << "see " << root_ << "/" << name << "*.log";
    std::string text = ReadFile(out).value_or("");
    std::smatch m;
    return std::regex_search(text, m, std::regex("params ([0-9a-f]+)")) ? m[1].str()
                                                                        : "(no params)";
  }

  fs::path program_, root_;
  int runs_ = 0;
};

TEST_F(LogicalRanksTest, FourRanksOnFourThreeTwoAndOneProcessesEndBitIdentical) {
  const std::string unspliced = Run(4, {"--logical-ranks"});
  EXPECT_EQ(Run(2, {"--logical-ranks"}), unspliced) << "ranks 0-1 and 2-3 in two processes";
  EXPECT_EQ(Run(3, {"--logical-ranks"}), unspliced) << "ranks 0, 1 and 2-3 (dealt 1, 1, 2)";
  EXPECT_EQ(Run(1, {"--logical-ranks"}), unspliced) << "all four ranks in one process";
  // The same job on gloo's ring allreduce (one rank per process) sums in another order: the
  // ordered sum is what makes the splicing exact, not luck of the data.
  const std::string ring = Run(4, {});
  std::cout << "ordered sum " << unspliced << ", ring allreduce " << ring << "\n";
  EXPECT_NE(ring, unspliced);
}

// A job that does not run logical ranks is refused when the agent gives it several.
TEST_F(LogicalRanksTest, AJobWithoutLogicalRanksRefusesToHoldSeveral) {
  ProcessOptions o;
  o.argv = {program_.string(), "--steps", "2"};
  o.env = {{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"TESSERA_LOGICAL_WORLD_SIZE", "2"}};
  o.log_file = root_ / "refused.log";
  Result<Process> p = Process::Spawn(o);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_NE(p->Wait(), 0);
  EXPECT_NE(ReadFile(o.log_file).value_or("").find("does not run them"), std::string::npos)
      << ReadFile(o.log_file).value_or("");
}

}  // namespace
}  // namespace tessera::cluster
