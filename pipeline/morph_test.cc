// The parts of job morphing that need no worker process: the workers file, option checks, the
// JSON of a run. The morphs themselves are in morph_integration_test.cc.
#include "pipeline/morph.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/file.h"

namespace tessera::pipeline {
namespace {

namespace fs = std::filesystem;

fs::path TempFile(const std::string& name, const std::string& contents) {
  const fs::path p =
      fs::temp_directory_path() / ("pipeline_morph_unit_" + name + std::to_string(getpid()));
  EXPECT_TRUE(WriteFileAtomically(p, contents).ok());
  return p;
}

TEST(WorkersFile, HoldsOneCount) {
  EXPECT_EQ(*ReadWorkerCount(TempFile("a", "4\n")), 4);
  EXPECT_EQ(*ReadWorkerCount(TempFile("b", "  3 \t\n")), 3);
  EXPECT_EQ(*ReadWorkerCount(TempFile("c", "0")), 0);  // none now: the run waits
  for (const char* bad : {"", "\n", "four", "-1", "4 5", "4x", "99999999999999999999"}) {
    auto r = ReadWorkerCount(TempFile("d", bad));
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << "'" << bad << "'";
  }
  EXPECT_EQ(ReadWorkerCount("/nonexistent/workers").status().code(), StatusCode::kNotFound);
  for (const char* name : {"a", "b", "c", "d"}) fs::remove(TempFile(name, ""));
}

ElasticOptions Valid() {
  ElasticOptions o;
  o.launch.job.steps = 10;
  o.launch.job.global_batch = 8;
  o.launch.job.save_dir = (fs::temp_directory_path() / "pipeline_morph_unit_ckpt").string();
  o.workers = 2;
  return o;
}

// Bad options are refused before any profile, launch or file is touched.
TEST(RunElastic, RefusesBadOptions) {
  ElasticOptions o = Valid();
  o.launch.job.save_dir.clear();
  EXPECT_EQ(RunElastic(o).status().code(), StatusCode::kInvalidArgument);
  o = Valid();
  o.checkpoint_every = 0;
  EXPECT_EQ(RunElastic(o).status().code(), StatusCode::kInvalidArgument);
  o = Valid();
  o.launch.job.steps = 0;
  EXPECT_EQ(RunElastic(o).status().code(), StatusCode::kInvalidArgument);
  o = Valid();
  o.workers = 0;
  EXPECT_EQ(RunElastic(o).status().code(), StatusCode::kInvalidArgument);
  o = Valid();
  o.workers_file = "/nonexistent/workers";
  EXPECT_EQ(RunElastic(o).status().code(), StatusCode::kNotFound);
}

TEST(ElasticResult, ListsEverySegment) {
  ElasticResult r;
  Segment lost;
  lost.workers = 4;
  lost.config.stages = 2;
  lost.config.replicas = 2;
  lost.config.micro_batch = 4;
  lost.checkpoint = 6;
  lost.ended = "worker 1 lost";
  Segment done = lost;
  done.workers = 3;
  done.config.replicas = 1;
  done.first_step = 6;
  done.checkpoint = 10;
  done.ended = "finished";
  done.losses = {1.5, 1.25, 1.0, 0.75};
  r.segments = {lost, done};
  r.summary.samples_per_s = 123;
  const nlohmann::json j = ElasticResultToJson(r);
  ASSERT_EQ(j.at("segments").size(), 2u);
  EXPECT_EQ(j["segments"][0]["ended"], "worker 1 lost");
  EXPECT_EQ(j["segments"][0]["replicas"], 2);
  EXPECT_EQ(j["segments"][1]["first_step"], 6);
  EXPECT_EQ(j["segments"][1]["losses"].size(), 4u);
  EXPECT_EQ(j["samples_per_s"], 123);
}

}  // namespace
}  // namespace tessera::pipeline
