// A test fixture for the scheduler's tests: a scheduler over a fresh RocksDB store in a
// directory of its own per test, and the heartbeat and job lookup every such test drives it
// with. Header-only; used by scheduler_test.cc, gang_test.cc and relocation_test.cc.
#ifndef TESSERA_CLUSTER_SERVICE_SCHEDULER_FIXTURE_H_
#define TESSERA_CLUSTER_SERVICE_SCHEDULER_FIXTURE_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cluster/service/scheduler.h"

namespace tessera::cluster {

class SchedulerFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("scheduler_fixture_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
  }
  void TearDown() override {
    scheduler_.reset();
    std::filesystem::remove_all(root_);
  }

  // (Re)opens the scheduler on root_/db at time `now`; the state a previous one stored is
  // kept. Fails the test (ASSERT) when the store or the scheduler cannot be opened.
  void OpenScheduler(SchedulerOptions options, std::unique_ptr<Policy> policy, double now) {
    scheduler_.reset();  // releases the RocksDB lock
    auto store = StateStore::Open(root_ / "db");
    ASSERT_TRUE(store.ok()) << store.status();
    auto scheduler =
        Scheduler::Create(std::move(options), std::move(policy), std::move(*store), now);
    ASSERT_TRUE(scheduler.ok()) << scheduler.status();
    scheduler_ = std::move(*scheduler);
  }

  // One heartbeat of node `node` reporting `runs`; returns the assignments.
  std::vector<rpc::Assignment> Beat(const std::string& node, std::vector<rpc::RunReport> runs,
                                    double now) {
    rpc::HeartbeatRequest request;
    request.set_node_id(node);
    for (auto& r : runs) *request.add_runs() = r;
    auto reply = scheduler_->Heartbeat(request, now);
    EXPECT_TRUE(reply.ok()) << reply.status();
    if (!reply.ok()) return {};
    EXPECT_FALSE(reply->unknown_node());
    return {reply->assignments().begin(), reply->assignments().end()};
  }

  // Job `id` as ListJobs shows it at `now`; an empty JobInfo and a test failure if absent.
  rpc::JobInfo Job(const std::string& id, double now) {
    for (const auto& info : scheduler_->ListJobs(now)) {
      if (info.id() == id) return info;
    }
    ADD_FAILURE() << "no job " << id;
    return {};
  }

  std::filesystem::path root_;
  std::unique_ptr<Scheduler> scheduler_;
};

}  // namespace tessera::cluster

#endif  // TESSERA_CLUSTER_SERVICE_SCHEDULER_FIXTURE_H_
