// The dashboard's data and routes, in process (the page itself is driven in headless Chromium by
// cluster/service/dashboard_browser_test.sh).
#include "cluster/service/dashboard.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cluster/service/server.h"
#include "core/file.h"

namespace tessera::cluster {
namespace {

rpc::JobInfo Job(std::string id, std::string tenant, std::string tier, std::string state,
                 double fraction, double target) {
  rpc::JobInfo j;
  j.set_id(std::move(id));
  j.set_tenant(std::move(tenant));
  j.set_tier(std::move(tier));
  j.set_state(std::move(state));
  j.set_sla_fraction(fraction);
  j.set_sla_target(target);
  j.set_workers(j.state() == "running" ? 2 : 0);
  return j;
}

TEST(DashboardTest, SlaFiguresByTierAndTenant) {
  std::vector<rpc::JobInfo> jobs = {
      Job("j1", "vision", "premium", "finished", 0.99, 0.95),
      Job("j2", "vision", "premium", "finished", 0.90, 0.95),  // missed
      Job("j3", "vision", "premium", "running", 0.50, 0.95),   // below target now
      Job("j4", "speech", "basic", "suspended", 0.10, 0.0),
      Job("<b>j5</b>", "<script>", "standard", "pending", 0, 0.7)};
  jobs[2].set_borrowed(true);
  rpc::NodeInfo node;
  node.set_id("n0");
  node.set_slots(8);
  node.set_used(2);
  node.set_alive(true);
  rpc::Event event;
  event.set_time(10);
  event.set_text("j1 submitted");
  nlohmann::json s = nlohmann::json::parse(DashboardStateJson(jobs, {node}, {event}, 12));
  ASSERT_EQ(s["tiers"].size(), 3u);
  EXPECT_EQ(s["tiers"][0]["tier"], "premium");
  EXPECT_EQ(s["tiers"][0]["finished"], 2);
  EXPECT_EQ(s["tiers"][0]["met"], 1);
  EXPECT_EQ(s["tiers"][0]["below_target"], 1);
  EXPECT_EQ(s["tiers"][0]["running"], 1);
  EXPECT_EQ(s["tiers"][2]["waiting"], 1);
  EXPECT_EQ(s["tenants"].size(), 3u);
  EXPECT_EQ(s["tenants"][2]["tenant"], "vision");
  EXPECT_EQ(s["tenants"][2]["borrowed"], 1);
  EXPECT_EQ(s["tenants"][2]["slots"], 2);
  EXPECT_EQ(s["slots"]["total"], 8);
  EXPECT_EQ(s["jobs"][0]["id"], "<b>j5</b>");  // active jobs first, newest first; raw text
  EXPECT_EQ(s["events"][0]["text"], "j1 submitted");
}

TEST(DashboardTest, ServedWithTheTokenCheck) {
  auto root =
      std::filesystem::temp_directory_path() / ("dashboard_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root);
  ASSERT_TRUE(WriteFileAtomically(root / "tokens", "t tenant-token-0123456789\n").ok());
  ServerOptions options;
  options.state_dir = root / "db";
  options.job_root = root / "jobs";
  options.metrics_listen = "127.0.0.1:0";
  options.tokens_file = root / "tokens";
  auto server = SchedulerServer::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  httplib::Client http("127.0.0.1", (*server)->metrics_port());
  auto page = http.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("<title>Tessera cluster</title>"), std::string::npos);
  auto refused = http.Get("/api/state");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  auto state = http.Get("/api/state", {{"Authorization", "Bearer tenant-token-0123456789"}});
  ASSERT_TRUE(state);
  EXPECT_EQ(state->status, 200);
  EXPECT_EQ(nlohmann::json::parse(state->body)["slots"]["total"], 0);
  (*server)->Shutdown();
  server->reset();
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace tessera::cluster
