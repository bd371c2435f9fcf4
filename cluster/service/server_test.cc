// The scheduler daemon in-process: gRPC round trips and the HTTP metrics endpoint.
#include "cluster/service/server.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <filesystem>

#include "cluster/cli/ctl.h"

namespace tessera::cluster {
namespace {

TEST(SchedulerServerTest, ServesRpcsAndPrometheusMetrics) {
  auto root =
      std::filesystem::temp_directory_path() / ("server_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  ServerOptions options;
  options.state_dir = root / "db";
  options.job_root = root / "jobs";
  options.metrics_listen = "127.0.0.1:0";
  auto server = SchedulerServer::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_GT((*server)->port(), 0);
  ASSERT_GT((*server)->metrics_port(), 0);

  auto client = ClusterClient::Connect("127.0.0.1:" + std::to_string((*server)->port()));
  ASSERT_TRUE(client.ok());
  rpc::SubmitRequest request;
  request.set_tier("gold");
  request.set_requested_workers(2);
  auto bad = client->Submit(request);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument) << "codes cross gRPC unchanged";
  request.set_tier("standard");
  auto id = client->Submit(request);
  ASSERT_TRUE(id.ok()) << id.status();
  auto jobs = client->ListJobs();
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].id(), *id);
  EXPECT_EQ((*jobs)[0].state(), "pending");  // no node registered

  httplib::Client http("127.0.0.1", (*server)->metrics_port());
  auto response = http.Get("/metrics");
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_NE(response->body.find("cluster_jobs{tier=\"standard\",state=\"pending\"} 1"),
            std::string::npos)
      << response->body;
  auto metrics = client->Metrics();
  ASSERT_TRUE(metrics.ok());
  EXPECT_NE(metrics->find("cluster_policy_decisions_total"), std::string::npos);

  (*server)->Shutdown();
  server->reset();
  std::filesystem::remove_all(root);
}

// A second scheduler (its own state) on a served gRPC or metrics port fails to start instead of
// sharing the port: gRPC and httplib set SO_REUSEPORT by default, and the kernel would then hand
// each server part of the connections.
TEST(SchedulerServerTest, ASecondServerOnAServedPortFailsToStart) {
  auto root =
      std::filesystem::temp_directory_path() / ("server_test_port_" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  auto options_in = [&](const std::string& name) {
    ServerOptions options;
    options.state_dir = root / name / "db";
    options.job_root = root / name / "jobs";
    options.metrics_listen = "127.0.0.1:0";
    return options;
  };
  auto first = SchedulerServer::Start(options_in("first"));
  ASSERT_TRUE(first.ok()) << first.status();
  ServerOptions same_rpc_port = options_in("second");
  same_rpc_port.listen = "127.0.0.1:" + std::to_string((*first)->port());
  EXPECT_FALSE(SchedulerServer::Start(same_rpc_port).ok());
  ServerOptions same_metrics_port = options_in("third");
  same_metrics_port.metrics_listen = "127.0.0.1:" + std::to_string((*first)->metrics_port());
  auto third = SchedulerServer::Start(same_metrics_port);
  EXPECT_FALSE(third.ok());
  if (third.ok()) (*third)->Shutdown();
  (*first)->Shutdown();
  first->reset();
  std::filesystem::remove_all(root);
}

TEST(SchedulerServerTest, BadOptionsAreErrors) {
  ServerOptions options;
  EXPECT_EQ(SchedulerServer::Start(options).status().code(), StatusCode::kInvalidArgument);
  options.state_dir =
      std::filesystem::temp_directory_path() / ("server_test_bad_" + std::to_string(::getpid()));
  options.job_root = options.state_dir / "jobs";
  options.policy = "lottery";
  EXPECT_EQ(SchedulerServer::Start(options).status().code(), StatusCode::kInvalidArgument);
  options.policy = "fifo";
  options.metrics_listen = "nonsense";
  EXPECT_EQ(SchedulerServer::Start(options).status().code(), StatusCode::kInvalidArgument);
  std::filesystem::remove_all(options.state_dir);
}

}  // namespace
}  // namespace tessera::cluster
