#include "cluster/service/store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>

namespace tessera::cluster {
namespace {

TEST(StateStoreTest, RoundTripsEveryRecordKind) {
  auto dir = std::filesystem::temp_directory_path() / ("store_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  JobRecord job;
  job.view.spec = {.id = "j1",
                   .tenant = "vc1",
                   .tier = Tier::kPremium,
                   .requested_workers = 4,
                   .min_workers = 2,
                   .submit_time = 12.5};
  job.view.state = JobState::kRunning;
  job.view.placement = {{.node = 0, .slots = 2}, {.node = 1, .slots = 2}};
  job.view.stalled_until = std::numeric_limits<double>::infinity();
  job.view.preemptions = 3;
  job.args = {"--steps", "9"};
  job.run = 4;
  job.run_node = 1;
  job.run_placement = {{.node = 1, .slots = 4}};
  job.relocating = true;
  job.step = 77;
  {
    auto store = StateStore::Open(dir);
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE((*store)->PutJob(1, job).ok());
    ASSERT_TRUE((*store)->PutNode(0, {.id = "a", .slots = 4}).ok());
    ASSERT_TRUE((*store)->PutNode(1, {.id = "b", .slots = 8}).ok());
    rpc::Event e;
    e.set_time(3);
    e.set_text("hello");
    ASSERT_TRUE((*store)->AppendEvent(1, e).ok());
    ASSERT_TRUE((*store)->PutNextJob(2).ok());
  }
  auto store = StateStore::Open(dir);
  ASSERT_TRUE(store.ok()) << store.status();
  auto contents = (*store)->Load();
  ASSERT_TRUE(contents.ok()) << contents.status();
  ASSERT_EQ(contents->jobs.size(), 1u);
  const JobRecord& j = contents->jobs[0];
  EXPECT_EQ(j.view.spec.id, "j1");
  EXPECT_EQ(j.view.spec.tier, Tier::kPremium);
  EXPECT_EQ(j.view.spec.min_workers, 2);
  EXPECT_EQ(j.view.state, JobState::kRunning);
  EXPECT_EQ(j.view.placement, job.view.placement);
  EXPECT_EQ(j.run_placement, job.run_placement);
  EXPECT_TRUE(std::isinf(j.view.stalled_until));
  EXPECT_EQ(j.view.preemptions, 3);
  EXPECT_EQ(j.args, job.args);
  EXPECT_EQ(j.run, 4);
  EXPECT_TRUE(j.relocating);
  EXPECT_EQ(j.step, 77);
  ASSERT_EQ(contents->nodes.size(), 2u);
  EXPECT_EQ(contents->nodes[1].id, "b");
  EXPECT_EQ(contents->nodes[1].slots, 8);
  ASSERT_EQ(contents->events.size(), 1u);
  EXPECT_EQ(contents->events[0].text(), "hello");
  EXPECT_EQ(contents->next_job, 2);
  store->reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessera::cluster
