// End-to-end: real pipeline-worker processes on loopback, checked against single-process
// training on the same global batches.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "pipeline/checkpoint.h"
#include "pipeline/launcher.h"
#include "pipeline/partition.h"
#include "pipeline/runtime.h"

namespace tessera::pipeline {
namespace {

constexpr double kTolerance = 1e-5;
constexpr int kSteps = 20;

std::string WorkerBinary() {
  const char* dir = std::getenv("TESSERA_BIN_DIR");
  return std::string(dir ? dir : "bin") + "/pipeline-worker";
}

std::filesystem::path TempDir(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() /
           ("pipeline_it_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  return p;
}

JobConfig Gpt(ScheduleKind kind, int stages, int replicas) {
  JobConfig job;
  job.model.kind = "gpt";
  job.model.layers = 2;  // 4 units
  job.model.width = 16;
  job.model.heads = 2;
  job.model.vocab = 32;
  job.model.seq_len = 8;
  job.model.dropout = 0.1;  // exercises the recompute's dropout repeat
  job.schedule = kind;
  job.stages = stages;
  job.replicas = replicas;
  job.micro_batch = 2;
  job.global_batch = 16;
  job.steps = kSteps;
  job.lr = 0.05;
  job.momentum = 0.9;
  job.seed = 7;
  job.timeout_ms = 60000;
  job.boundaries = *UniformPartition(NumUnits(job.model), stages);
  return job;
}

JobConfig Cnn(ScheduleKind kind, int stages, int replicas) {
  JobConfig job = Gpt(kind, stages, replicas);
  job.model.kind = "cnn";
  job.model.layers = 2;  // 3 units
  job.model.width = 4;
  job.model.image = 8;
  job.model.dropout = 0.0;
  job.model.dataset_size = 32;  // revisited every two steps, so 20 steps visibly learn
  job.boundaries = *UniformPartition(NumUnits(job.model), stages);
  return job;
}

double RelativeError(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    norm += static_cast<double>(b[i]) * b[i];
  }
  return std::sqrt(diff) / std::max(std::sqrt(norm), 1e-12);
}

Result<LaunchResult> RunPipeline(const JobConfig& job, const std::string& name) {
  LaunchOptions options;
  options.job = job;
  options.worker_binary = WorkerBinary();
  options.run_dir = TempDir(name).string();
  options.timeout = std::chrono::seconds(120);
  auto result = Launch(options);
  std::filesystem::remove_all(options.run_dir);  // the reports are in `result` now
  return result;
}

// Losses step by step, then every parameter and momentum buffer of the saved checkpoint.
void ExpectSameTraining(const JobConfig& job, const LaunchResult& run, const ReferenceRun& ref,
                        size_t first_loss = 0) {
  auto summary = Summarize(run.job, run.reports);
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_EQ(summary->losses.size() + first_loss, ref.losses.size());
  double worst_loss = 0, worst_param = 0;
  for (size_t k = 0; k < summary->losses.size(); ++k) {
    const double want = ref.losses[first_loss + k];
    worst_loss = std::max(worst_loss, std::abs(summary->losses[k] - want) / std::abs(want));
    EXPECT_LT(std::abs(summary->losses[k] - want) / std::abs(want), kTolerance)
        << "step " << first_loss + k << ": pipeline " << summary->losses[k] << " vs " << want;
  }
  EXPECT_LT(ref.losses.back(), ref.losses.front()) << "the model should learn";
  const int64_t done = job.first_step + job.steps;
  auto step = LatestCompleteCheckpoint(job.save_dir);
  ASSERT_TRUE(step.ok()) << step.status();
  ASSERT_EQ(*step, static_cast<int64_t>(ref.losses.size()));
  (void)done;
  for (int u = 0; u < NumUnits(job.model); ++u) {
    auto state = ReadUnitState(job.save_dir, *step, u);
    ASSERT_TRUE(state.ok()) << state.status();
    ASSERT_EQ(state->params.size(), ref.units[u].params.size());
    for (size_t k = 0; k < state->params.size(); ++k) {
      EXPECT_EQ(state->params[k].shape, ref.units[u].params[k].shape);
      const double e = RelativeError(state->params[k].values, ref.units[u].params[k].values);
      worst_param = std::max(worst_param, e);
      EXPECT_LT(e, kTolerance) << "unit " << u << " parameter " << k;
      EXPECT_LT(RelativeError(state->momentum[k].values, ref.units[u].momentum[k].values),
                kTolerance)
          << "unit " << u << " momentum " << k;
    }
  }
  std::cout << "largest relative error: loss " << worst_loss << ", parameters " << worst_param
            << "\n";
}

struct Case {
  std::string name;
  JobConfig job;
  int reference_micro_batch;  // 0: one forward over the global batch
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class PipelineMatchesSingleProcess : public ::testing::TestWithParam<Case> {};

TEST_P(PipelineMatchesSingleProcess, LossesAndParameters) {
  Case c = GetParam();
  c.job.save_dir = TempDir(c.name + "_ckpt").string();
  auto ref = TrainReference(c.job, c.reference_micro_batch);
  ASSERT_TRUE(ref.ok()) << ref.status();
  auto run = RunPipeline(c.job, c.name);
  ASSERT_TRUE(run.ok()) << run.status();
  ExpectSameTraining(c.job, *run, *ref);
  if (c.job.schedule == ScheduleKind::kVaruna && c.job.stages > 1) {
    // Non-last stages front-load forwards: the first step starts with F0 F1.
    EXPECT_EQ(run->reports[0].first_step_order.rfind("F0 F1", 0), 0u)
        << run->reports[0].first_step_order;
  }
  std::filesystem::remove_all(c.job.save_dir);
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, PipelineMatchesSingleProcess,
    ::testing::Values(Case{"varuna_gpt_p2d2", Gpt(ScheduleKind::kVaruna, 2, 2), 2},
                      Case{"gpipe_gpt_p2d2", Gpt(ScheduleKind::kGPipe, 2, 2), 2},
                      Case{"1f1b_gpt_p2d2", Gpt(ScheduleKind::kOneFOneB, 2, 2), 2},
                      Case{"varuna_gpt_p4d1", Gpt(ScheduleKind::kVaruna, 4, 1), 2},
                      Case{"varuna_cnn_p3d1", Cnn(ScheduleKind::kVaruna, 3, 1), 0},
                      Case{"gpipe_cnn_p3d1", Cnn(ScheduleKind::kGPipe, 3, 1), 0},
                      Case{"1f1b_cnn_p2d2", Cnn(ScheduleKind::kOneFOneB, 2, 2), 0}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

// Saved with P=4, D=1 after 10 steps; resumed with P=2, D=2 for 10 more: the same losses and
// parameters as 20 uninterrupted steps.
TEST(Checkpoint, ResumesWithDifferentStagesAndReplicas) {
  JobConfig full = Gpt(ScheduleKind::kVaruna, 4, 1);
  auto ref = TrainReference(full, full.micro_batch);
  ASSERT_TRUE(ref.ok()) << ref.status();

  const std::string dir = TempDir("resume_ckpt").string();
  JobConfig first = full;
  first.steps = kSteps / 2;
  first.save_dir = dir;
  auto run1 = RunPipeline(first, "resume_first");
  ASSERT_TRUE(run1.ok()) << run1.status();
  ASSERT_EQ(*LatestCompleteCheckpoint(dir), kSteps / 2);

  JobConfig second = Gpt(ScheduleKind::kVaruna, 2, 2);
  second.steps = kSteps / 2;
  second.resume_dir = dir;
  second.save_dir = dir;
  auto run2 = RunPipeline(second, "resume_second");
  ASSERT_TRUE(run2.ok()) << run2.status();
  EXPECT_EQ(run2->reports[0].steps.front().step, kSteps / 2);
  ExpectSameTraining(second, *run2, *ref, kSteps / 2);
  std::filesystem::remove_all(dir);
}

TEST(Launch, ResumeFromAnotherModelIsRefused) {
  const std::string dir = TempDir("foreign_ckpt").string();
  JobConfig a = Gpt(ScheduleKind::kVaruna, 2, 1);
  a.steps = 1;
  a.save_dir = dir;
  ASSERT_TRUE(RunPipeline(a, "foreign_a").ok());
  JobConfig b = Cnn(ScheduleKind::kVaruna, 2, 1);
  b.resume_dir = dir;
  b.steps = 1;
  auto run = RunPipeline(b, "foreign_b");
  EXPECT_FALSE(run.ok());
  std::filesystem::remove_all(dir);
}

// Fault: two workers are killed mid-training. The job must fail with an error naming a worker,
// not hang.
TEST(Launch, KilledWorkerFailsTheJob) {
  JobConfig job = Gpt(ScheduleKind::kVaruna, 2, 2);
  job.steps = 1000000;
  job.timeout_ms = 30000;
  LaunchOptions options;
  options.job = job;
  options.worker_binary = WorkerBinary();
  options.run_dir = TempDir("killed").string();
  options.timeout = std::chrono::seconds(100);
  options.hosts = {{"127.0.0.1", {}}, {"127.0.0.1", {"timeout", "-s", "KILL", "2"}}};
  auto run = Launch(options);
  std::filesystem::remove_all(options.run_dir);
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.status().message().find("worker"), std::string::npos) << run.status();
  EXPECT_NE(run.status().code(), StatusCode::kDeadlineExceeded) << run.status();
}

TEST(Launch, BadJobsAreRejectedBeforeStarting) {
  JobConfig job = Gpt(ScheduleKind::kVaruna, 2, 2);
  job.global_batch = 15;
  auto run = RunPipeline(job, "bad");
  EXPECT_EQ(run.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(ParseHosts("# nothing\n").ok());
  EXPECT_FALSE(ParseHosts("10.0.0.1:80\n").ok());
  auto hosts = ParseHosts("10.0.0.1 ip netns exec a  # comment\n10.0.0.2\n");
  ASSERT_TRUE(hosts.ok());
  EXPECT_EQ(hosts->size(), 2u);
  EXPECT_EQ((*hosts)[0].prefix, (std::vector<std::string>{"ip", "netns", "exec", "a"}));
}

}  // namespace
}  // namespace tessera::pipeline
