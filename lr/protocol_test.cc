// The protocol's logic with a fake trainer whose metrics are known functions of the run: peaks
// are chosen on validation only, runs are paired by seed, intervals are right, and a grid that
// is interrupted resumes with exactly the runs it lacks. Plus the statistics and the results
// store on their own.
#include "lr/protocol.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>

#include "core/file.h"
#include "lr/paired_stats.h"
#include "lr/results_store.h"

namespace tessera::lr {
namespace {

std::string TempDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("lr_protocol_test_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir.string();
}

TEST(PairedStats, StudentQuantilesAndIntervals) {
  EXPECT_NEAR(StudentT975(1), 12.706205, 1e-6);
  EXPECT_NEAR(StudentT975(9), 2.262157, 1e-6);
  EXPECT_NEAR(StudentT975(40), 2.021075, 1e-4);   // table value
  EXPECT_NEAR(StudentT975(120), 1.979930, 1e-4);  // table value
  // Sample 1..5: mean 3, sd sqrt(2.5), half-width t(4) * sd / sqrt(5) = 2.776445 * 0.7071068.
  auto i = MeanInterval({1, 2, 3, 4, 5}).value();
  EXPECT_DOUBLE_EQ(i.mean, 3);
  EXPECT_NEAR(i.hi - i.mean, 2.776445 * std::sqrt(2.5) / std::sqrt(5.0), 1e-9);
  EXPECT_TRUE(i.Excludes(0));
  EXPECT_FALSE(i.Excludes(3));
  // Pairing removes a per-seed offset shared by both samples.
  auto d = PairedDifference({10.1, 20.1, 30.1}, {10, 20, 30}).value();
  EXPECT_NEAR(d.mean, 0.1, 1e-12);
  EXPECT_NEAR(d.hi - d.lo, 0, 1e-9);
  EXPECT_FALSE(PairedDifference({1, 2}, {1}).ok());
  EXPECT_FALSE(MeanInterval({}).ok());
  EXPECT_FALSE(MeanInterval({1, NAN}).ok());
}

TEST(ResultsStore, AppendsReopensAndDropsTornRows) {
  const std::string dir = TempDir("store");
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/r.csv";
  {
    auto s = ResultsStore::Open(path, {"key", "v"}).value();
    ASSERT_TRUE(s.Append({"a", "1"}).ok());
    ASSERT_TRUE(s.Append({"b", "2"}).ok());
    EXPECT_FALSE(s.Append({"a", "3"}).ok());    // key present
    EXPECT_FALSE(s.Append({"c", "1,2"}).ok());  // comma in a field
    EXPECT_FALSE(s.Append({"c"}).ok());         // field count
  }
  // A kill mid-write leaves a row without its newline.
  ASSERT_TRUE(WriteFileAtomically(path, ReadFile(path).value() + "c,3").ok());
  auto s = ResultsStore::Open(path, {"key", "v"}).value();
  EXPECT_EQ(s.size(), 2u);
  ASSERT_NE(s.Find("b"), nullptr);
  EXPECT_EQ((*s.Find("b"))[1], "2");
  EXPECT_EQ(s.Find("c"), nullptr);
  EXPECT_FALSE(ResultsStore::Open(path, {"key", "other"}).ok());  // another grid's file
  std::filesystem::remove_all(dir);
}

// A fake trainer: validation accuracy peaks at lr 0.1 for every schedule, the test accuracy at
// 0.2 (so a choice made on test data would show); knee is 0.5 points better than cosine on every
// seed; a per-seed offset is shared by all schedules (what pairing removes).
struct FakeTrainer {
  int calls = 0;
  int fail_after = -1;  // simulate a kill: fail from this call on
  Result<TrainResult> operator()(const TrainConfig& c) {
    if (fail_after >= 0 && calls >= fail_after) return InternalError("killed");
    ++calls;
    const double seed_offset = 0.01 * static_cast<double>(c.seed % 7);
    const double bonus = c.schedule == "knee" ? 0.005 : 0.0;
    const double x = std::log2(c.lr);
    TrainResult r;
    r.total_steps = static_cast<int64_t>(100 * c.budget_fraction);
    r.val_accuracy = 0.8 + bonus + seed_offset - 0.01 * std::pow(x - std::log2(0.1), 2);
    r.test_accuracy = 0.8 + bonus + seed_offset - 0.01 * std::pow(x - std::log2(0.2), 2) +
                      0.001 * std::sin(static_cast<double>(c.seed));
    r.has_validation = true;
    if (c.tune) {
      r.tuner_trial_steps = 25;
      r.tuner_lr = 0.07;
    }
    if (c.tune && c.tune_method == "trials") {
      // Like lr::Train: the trials come out of the budget, which at 50 % is too short for them.
      if (c.budget_fraction < 1) return InvalidArgumentError("too short for trials");
      r.total_steps -= r.tuner_trial_steps;
    }
    return r;
  }
};

ProtocolOptions Options(const std::string& dir) {
  ProtocolOptions o;
  o.out_dir = dir;
  ProtocolTask t = StandardTask("mlp", true).value();
  t.peaks = {0.05, 0.1, 0.2, 0.4};
  o.tasks = {t};
  o.schedules = {"knee", "cosine", "tuner"};
  o.budgets = {1.0, 0.5};
  o.seeds = 4;
  o.tune_seeds = 1;
  o.plots = false;
  return o;
}

TEST(Protocol, TunesOnValidationPairsSeedsAndReportsDifferences) {
  const std::string dir = TempDir("grid");
  FakeTrainer fake;
  auto report = RunProtocol(Options(dir), std::ref(fake), {}).value();
  // 2 budgets x (2 schedules x 4 peaks tuning + 3 schedules x 4 seeds).
  EXPECT_EQ(report.runs_trained, 2 * (2 * 4 + 3 * 4));
  EXPECT_EQ(fake.calls, report.runs_trained);
  const std::string& md = report.markdown;
  // The peak chosen on validation (0.1), not the one the test set prefers (0.2).
  EXPECT_NE(md.find("| cosine | 0.1 |"), std::string::npos) << md;
  // knee − cosine is exactly 0.5 points on every seed: cosine − knee = −0.50 [−0.50, −0.50].
  EXPECT_NE(md.find("-0.50 [-0.50, -0.50] | **knee better**"), std::string::npos) << md;
  EXPECT_NE(md.find("25 trial (25 %)"), std::string::npos) << md;
  std::filesystem::remove_all(dir);
}

// The trials tuner runs as Knee with tune_method "trials"; its rows show equal compute, and a
// budget too short for its trials gives a "not run" row instead of failing the grid.
TEST(Protocol, TrialsRowsShowEqualComputeOrWhyTheyDidNotRun) {
  const std::string dir = TempDir("trials");
  ProtocolOptions o = Options(dir);
  o.schedules = {"knee", "trials"};
  std::vector<TrainConfig> seen;
  FakeTrainer fake;
  auto report = RunProtocol(o,
                            [&](const TrainConfig& c) {
                              seen.push_back(c);
                              return fake(c);
                            },
                            {})
                    .value();
  const std::string& md = report.markdown;
  EXPECT_NE(md.find("75 + 25 trial = 100 (equal compute)"), std::string::npos) << md;
  EXPECT_NE(
      md.find("| trials | — | not run: mlp/eval/trials/b0.5/p0.141421/s1: too short for trials |"),
      std::string::npos)
      << md;
  for (const auto& c : seen) {
    if (!c.tune) continue;
    EXPECT_EQ(c.tune_method, "trials");
    EXPECT_EQ(c.schedule, "knee");
  }
  std::filesystem::remove_all(dir);
}

TEST(Protocol, ResumesAnInterruptedGridWithOnlyTheMissingRuns) {
  const std::string dir = TempDir("resume");
  FakeTrainer uninterrupted;
  const std::string dir_full = dir + "_full";
  auto full = RunProtocol(Options(dir_full), std::ref(uninterrupted), {}).value();

  FakeTrainer killed;
  killed.fail_after = 13;
  EXPECT_FALSE(RunProtocol(Options(dir), std::ref(killed), {}).ok());
  FakeTrainer resumed;
  auto rest = RunProtocol(Options(dir), std::ref(resumed), {}).value();
  EXPECT_EQ(rest.runs_reused, 13);
  EXPECT_EQ(resumed.calls, full.runs_trained - 13);
  EXPECT_EQ(rest.markdown, full.markdown);
  // A third invocation trains nothing.
  FakeTrainer again;
  auto done = RunProtocol(Options(dir), std::ref(again), {}).value();
  EXPECT_EQ(again.calls, 0);
  EXPECT_EQ(done.markdown, full.markdown);
  std::filesystem::remove_all(dir);
  std::filesystem::remove_all(dir_full);
}

TEST(Protocol, RefusesResultsOfAnotherTaskConfiguration) {
  const std::string dir = TempDir("config");
  FakeTrainer fake;
  ASSERT_TRUE(RunProtocol(Options(dir), std::ref(fake), {}).ok());
  ProtocolOptions other = Options(dir);
  other.tasks[0].base.epochs += 1;  // same keys, different runs: must not be reused
  EXPECT_EQ(RunProtocol(other, std::ref(fake), {}).status().code(),
            StatusCode::kFailedPrecondition);
  std::filesystem::remove_all(dir);
}

TEST(Protocol, RejectsBadOptions) {
  FakeTrainer fake;
  ProtocolOptions o = Options(TempDir("bad"));
  o.seeds = 1;
  EXPECT_FALSE(RunProtocol(o, std::ref(fake), {}).ok());
  o = Options(TempDir("bad"));
  o.reference = "onecycle";
  EXPECT_FALSE(RunProtocol(o, std::ref(fake), {}).ok());
  EXPECT_FALSE(StandardTask("vit", false).ok());
  EXPECT_EQ(fake.calls, 0);
}

TEST(Protocol, CountsTheGrid) {
  ProtocolOptions o;
  ProtocolTask t = StandardTask("mlp", false).value();
  o.tasks = {t};
  // 10 schedules, 7 tuned on 5 peaks (tuner, rangetest and trials tune themselves), 10 seeds,
  // budgets 1 / 0.5 / 0.25 of 1000 steps.
  const GridSize g = CountGrid(o, t, 1000);
  EXPECT_EQ(g.runs, 3 * (7 * 5 + 10 * 10));
  EXPECT_EQ(g.steps, (7 * 5 + 10 * 10) * (1000 + 500 + 250));
}

}  // namespace
}  // namespace tessera::lr
