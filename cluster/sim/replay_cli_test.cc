// End-to-end: the cluster-replay binary on a small generated trace, and its exit codes.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/file.h"

namespace {

namespace fs = std::filesystem;

struct Outcome {
  int code;
  std::string output;
};

Outcome RunReplay(const std::string& args) {
  const char* bin_dir = std::getenv("TESSERA_BIN_DIR");
  const std::string bin = std::string(bin_dir ? bin_dir : "bin") + "/cluster-replay";
  FILE* pipe = popen((bin + " " + args + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return {-1, ""};
  std::string out;
  char buf[4096];
  while (fgets(buf, sizeof buf, pipe) != nullptr) out += buf;
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

class ReplayCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("replay_cli_test_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    // 300 jobs over ~5 hours: mostly 1-slot, some gangs, durations from a minute to hours.
    std::string trace = "timestamp,duration,num_gpus,gpu_time,cluster\n";
    const int sizes[] = {1, 1, 1, 2, 4, 8, 16};
    for (int i = 0; i < 300; ++i) {
      const int s = i * 61;
      const int workers = sizes[(i * 3) % 7];
      const int duration = 60 + (i * 977) % 7200;
      char row[128];
      snprintf(row, sizeof row, "2017-10-09 %02d:%02d:%02d,%d.0,%d,%d.0,vc%d\n", s / 3600,
               (s / 60) % 60, s % 60, duration, workers, duration * workers, i % 3);
      trace += row;
    }
    ASSERT_TRUE(tessera::WriteFileAtomically(dir_ / "trace.csv", trace).ok());
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ReplayCliTest, ReplaysFourPoliciesAndWritesCsv) {
  const std::string csv = (dir_ / "summary.csv").string();
  Outcome r = RunReplay("--trace " + (dir_ / "trace.csv").string() +
                        " --nodes 4 --slots 8 --validate --csv " + csv);
  ASSERT_EQ(r.code, 0) << r.output;
  for (const char* policy : {"fifo", "tiresias", "strict", "singularity"}) {
    EXPECT_NE(r.output.find(std::string(policy) + " "), std::string::npos) << r.output;
  }
  EXPECT_NE(r.output.find("premium"), std::string::npos);
  tessera::Result<std::string> text = tessera::ReadFile(csv);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(std::count(text->begin(), text->end(), '\n'), 17);  // header + 4 policies x 4 rows
}

TEST_F(ReplayCliTest, ClearErrorsForBadInput) {
  Outcome missing = RunReplay("--trace " + (dir_ / "nope.csv").string());
  EXPECT_EQ(missing.code, 1) << missing.output;
  EXPECT_NE(missing.output.find("nope.csv"), std::string::npos) << missing.output;
  Outcome policy =
      RunReplay("--trace " + (dir_ / "trace.csv").string() + " --policies fifo,lottery");
  EXPECT_EQ(policy.code, 2) << policy.output;
  EXPECT_NE(policy.output.find("lottery"), std::string::npos) << policy.output;
  Outcome tiers =
      RunReplay("--trace " + (dir_ / "trace.csv").string() + " --premium-pct 80 --standard-pct 30");
  EXPECT_EQ(tiers.code, 2) << tiers.output;
  ASSERT_TRUE(tessera::WriteFileAtomically(dir_ / "bad.csv",
                                           "timestamp,duration,num_gpus,gpu_time,cluster\n"
                                           "2017-10-09 00:00:00,abc,1,1,vc\n")
                  .ok());
  Outcome bad = RunReplay("--trace " + (dir_ / "bad.csv").string());
  EXPECT_EQ(bad.code, 1) << bad.output;
  EXPECT_NE(bad.output.find("line 2"), std::string::npos) << bad.output;
}

// The class CSV fixture of data/traces, its classes mapped to tiers by a flag, with quotas.
TEST_F(ReplayCliTest, ClassTraceWithClassMapAndQuota) {
  const std::string fixture = std::string(TESSERA_SOURCE_ROOT) + "/data/traces/class-fixture.csv";
  const std::string csv = (dir_ / "class.csv").string();
  ASSERT_TRUE(tessera::WriteFileAtomically(dir_ / "quota.txt",
                                           "# tenant premium standard\n"
                                           "vision 8 4\nspeech 4 4\nsearch 0 4\n")
                  .ok());
  Outcome r = RunReplay("--trace " + fixture + " --nodes 4 --slots 8 --validate --csv " + csv +
                        " --class-map prod=premium,batch=standard,best-effort=basic --quota " +
                        (dir_ / "quota.txt").string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("60 jobs"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("admission:"), std::string::npos) << r.output;
  tessera::Result<std::string> text = tessera::ReadFile(csv);
  ASSERT_TRUE(text.ok());
  // 9 prod jobs in the fixture: the premium row counts those admitted as premium (some may be
  // refused by quota and run as basic), never more.
  EXPECT_NE(text->find("singularity,premium,"), std::string::npos) << *text;

  Outcome no_map = RunReplay("--trace " + fixture);
  EXPECT_EQ(no_map.code, 2) << no_map.output;
  EXPECT_NE(no_map.output.find("--class-map"), std::string::npos) << no_map.output;
  Outcome bad_map = RunReplay("--trace " + fixture + " --class-map prod=gold");
  EXPECT_EQ(bad_map.code, 2) << bad_map.output;
  Outcome unmapped = RunReplay("--trace " + fixture + " --class-map prod=premium");
  EXPECT_EQ(unmapped.code, 1) << unmapped.output;
  EXPECT_NE(unmapped.output.find("class 'batch'"), std::string::npos) << unmapped.output;
  ASSERT_TRUE(tessera::WriteFileAtomically(dir_ / "oversold.txt", "vision 40 0\n").ok());
  Outcome oversold = RunReplay("--trace " + fixture + " --nodes 4 --slots 8 --class-map '*=basic'" +
                               " --quota " + (dir_ / "oversold.txt").string());
  EXPECT_EQ(oversold.code, 1) << oversold.output;
  EXPECT_NE(oversold.output.find("oversold"), std::string::npos) << oversold.output;
}

}  // namespace
