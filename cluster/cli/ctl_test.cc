#include "cluster/cli/ctl.h"

#include <gtest/gtest.h>

namespace tessera::cluster {
namespace {

TEST(CtlFormatTest, JobTableAlignsColumnsAndFlagsMissedTargets) {
  rpc::JobInfo a;
  a.set_id("j1");
  a.set_tenant("vision");
  a.set_tier("premium");
  a.set_state("running");
  a.set_workers(4);
  a.set_requested_workers(4);
  a.set_step(10);
  a.set_total_steps(300);
  a.set_sla_fraction(0.5);
  a.set_sla_target(0.95);
  a.set_time_to_workers(0.25);
  a.set_placement("n1:4");
  rpc::JobInfo b;
  b.set_id("j12");
  b.set_tenant("nlp");
  b.set_tier("basic");
  b.set_state("pending");
  b.set_requested_workers(2);
  b.set_sla_fraction(1);
  b.set_time_to_workers(-1);
  b.set_placement("-");
  a.set_lost_steps(17);
  a.set_lost_progress_s(1.5);
  std::string table = FormatJobTable({a, b});
  EXPECT_NE(table.find("17 steps (1.5s)"), std::string::npos) << table;
  EXPECT_NE(table.find("50%!"), std::string::npos) << table;
  EXPECT_NE(table.find("best-effort"), std::string::npos);
  EXPECT_NE(table.find("10/300"), std::string::npos);
  EXPECT_NE(table.find("0.25s"), std::string::npos);
  // Columns line up: "TENANT" starts at the same offset in every line.
  size_t header = table.find("TENANT");
  size_t second_line = table.find('\n') + 1;
  EXPECT_EQ(table.substr(second_line + header, 6), "vision");
}

TEST(CtlFormatTest, NodesAndEvents) {
  rpc::NodeInfo n;
  n.set_id("n1");
  n.set_alive(false);
  n.set_slots(4);
  std::string nodes = FormatNodeTable({n});
  EXPECT_NE(nodes.find("dead"), std::string::npos);
  rpc::Event e1, e2;
  e1.set_time(100);
  e1.set_text("first");
  e2.set_time(101.5);
  e2.set_text("second");
  std::string events = FormatEvents({e1, e2});
  EXPECT_NE(events.find("+   1.500s  second"), std::string::npos) << events;
}

TEST(CtlClientTest, BadAddressAndUnreachableSchedulerAreErrors) {
  EXPECT_EQ(ClusterClient::Connect("nonsense").status().code(), StatusCode::kInvalidArgument);
  // Port 1 on loopback: nothing listens there.
  auto client = ClusterClient::Connect("127.0.0.1:1", std::chrono::milliseconds(300));
  ASSERT_TRUE(client.ok());
  auto jobs = client->ListJobs();
  ASSERT_FALSE(jobs.ok());
  EXPECT_NE(jobs.status().message().find("127.0.0.1:1"), std::string::npos);
}

}  // namespace
}  // namespace tessera::cluster
