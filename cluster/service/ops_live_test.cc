// Issue 15's operations, live: a scheduler with tokens and quotas, two node agents and training
// jobs as real processes on loopback, driven through cluster-ctl's client and binary.
//   * Eviction by cost: a standard job needs 2 slots of a full cluster whose node n0 runs a
//     rigid basic job and node n1 an elastic one. Best fit would preempt the rigid job; the
//     elastic job is shrunk instead and the rigid one keeps training.
//   * A submission beyond the quota is refused: RESOURCE_EXHAUSTED, and cluster-ctl prints why.
//   * A wrong token is refused; another tenant's token cannot cancel a job; a tenant without the
//     premium right cannot submit premium work.
//   * Operator commands: resize, preempt (hold) and requeue, carried out by the agents.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <thread>

#include "cluster/cli/ctl.h"
#include "cluster/job/process.h"
#include "cluster/testing/live_cluster.h"
#include "core/file.h"

namespace tessera::cluster {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// World size 4, a long job (cancelled by the test's end), checkpoints every 50 steps.
const std::vector<std::string> kJobArgs = {
    "--steps", "1000000", "--replica-ms", "5", "--checkpoint-every", "50"};

constexpr char kVision[] = "vision-token-0123456789";
constexpr char kSpeech[] = "speech-token-0123456789";
constexpr char kOps[] = "ops-token-0123456789abcd";

class OpsLiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* bin = std::getenv("TESSERA_BIN_DIR");
    ASSERT_NE(bin, nullptr) << "TESSERA_BIN_DIR must name the build's bin directory";
    bin_ = bin;
    root_ = fs::temp_directory_path() / ("ops_live_test_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    ASSERT_TRUE(WriteFileAtomically(root_ / "tokens", std::string("vision ") + kVision +
                                                          " premium\nspeech " + kSpeech + "\nops " +
                                                          kOps + " admin\n")
                    .ok());
    ASSERT_TRUE(WriteFileAtomically(root_ / "quota", "vision 4 4\nspeech 0 4\n").ok());
    // The shared harness (cluster/testing/live_cluster.h), with tokens and quotas.
    cluster_.emplace(root_);
    cluster_->StartScheduler({"--min-run-s", "3600", "--tokens", (root_ / "tokens").string(),
                              "--quota", (root_ / "quota").string()});
    cluster_->client().SetToken(kOps);  // the harness lists jobs as the operator
    address_ = "127.0.0.1:" + std::to_string(cluster_->port());
  }
  void TearDown() override {
    cluster_.reset();  // kills whatever still runs
    if (!HasFailure()) fs::remove_all(root_);
  }

  ClusterClient Client(const std::string& token) {
    Result<ClusterClient> client = ClusterClient::Connect(address_);
    EXPECT_TRUE(client.ok());
    client->SetToken(token);
    return std::move(*client);
  }

  void StartAgent(const std::string& node, int slots) { cluster_->StartAgent(node, slots); }

  std::string Submit(ClusterClient& client, const std::string& tier, int workers, int min_workers) {
    rpc::SubmitRequest r;
    r.set_tier(tier);
    r.set_requested_workers(workers);
    r.set_min_workers(min_workers);
    for (const auto& a : kJobArgs) r.add_args(a);
    Result<std::string> id = client.Submit(r);
    EXPECT_TRUE(id.ok()) << id.status();
    return id.value_or("");
  }

  std::map<std::string, rpc::JobInfo> Jobs() { return cluster_->Jobs(); }
  template <typename Pred>
  bool WaitUntil(Pred done) {
    return cluster_->WaitUntil([&](auto& jobs) { return done(jobs); });
  }

  // Runs cluster-ctl with `args`; its exit code and what it printed (stdout and stderr).
  std::pair<int, std::string> Ctl(const std::string& args) {
    const std::string cmd =
        (bin_ / "cluster-ctl").string() + " --scheduler " + address_ + " " + args + " 2>&1";
    FILE* pipe = popen(cmd.c_str(), "r");
    if (pipe == nullptr) return {-1, ""};
    std::string out;
    char buf[1024];
    while (fgets(buf, sizeof buf, pipe) != nullptr) out += buf;
    const int status = pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
  }

  fs::path bin_, root_;
  std::string address_;
  std::optional<LiveCluster> cluster_;
};

TEST_F(OpsLiveTest, EvictionByCostQuotasTokensAndOperatorCommands) {
  // Nodes join in order, so that n0 has index 0 (best fit's tie-break would pick it).
  StartAgent("n0", 4);
  ASSERT_TRUE(WaitUntil([&](auto) { return Client(kOps).ListNodes()->size() == 1; }));
  StartAgent("n1", 4);
  ASSERT_TRUE(WaitUntil([&](auto) { return Client(kOps).ListNodes()->size() == 2; }));

  ClusterClient speech = Client(kSpeech);
  ClusterClient vision = Client(kVision);
  const std::string rigid = Submit(speech, "basic", 4, 4);
  ASSERT_TRUE(WaitUntil([&](auto jobs) { return jobs[rigid].step() > 0; }));
  const std::string elastic = Submit(speech, "basic", 4, 1);
  ASSERT_TRUE(WaitUntil([&](auto jobs) { return jobs[elastic].step() > 0; }));
  auto jobs = Jobs();
  ASSERT_EQ(jobs[rigid].placement(), "n0:4");
  ASSERT_EQ(jobs[elastic].placement(), "n1:4");

  // 1. Eviction by cost: the standard job gets n1; the elastic job is shrunk to 2 workers.
  const std::string standard = Submit(vision, "standard", 2, 2);
  ASSERT_TRUE(WaitUntil([&](auto jobs) {
    return jobs[standard].state() == "running" && jobs[elastic].state() == "running" &&
           jobs[elastic].workers() == 2;
  }));
  jobs = Jobs();
  EXPECT_EQ(jobs[standard].placement(), "n1:2");
  EXPECT_EQ(jobs[elastic].resizes(), 1);
  EXPECT_EQ(jobs[elastic].preemptions(), 0);
  EXPECT_EQ(jobs[rigid].preemptions(), 0) << "the rigid basic job was evicted";
  EXPECT_EQ(jobs[rigid].state(), "running");
  const int64_t rigid_step = jobs[rigid].step();
  ASSERT_TRUE(WaitUntil([&](auto jobs) { return jobs[rigid].step() > rigid_step; }))
      << "the rigid job keeps training";

  // 2. Quota: vision has 4 standard slots, 2 in use; 8 more exceed it and what can be borrowed.
  auto [quota_code, quota_out] =
      Ctl(std::string("--token ") + kVision + " submit --tier standard --workers 8 -- --steps 10");
  EXPECT_NE(quota_code, 0) << quota_out;
  EXPECT_NE(quota_out.find("RESOURCE_EXHAUSTED: admission refused: standard quota exceeded: "
                           "tenant 'vision' has 4 standard slots of quota, 2 in use; the job "
                           "needs 8"),
            std::string::npos)
      << quota_out;

  // 3. Tokens.
  auto [wrong_code, wrong_out] = Ctl("--token wrong-token-0123456789 list");
  EXPECT_NE(wrong_code, 0) << wrong_out;
  EXPECT_NE(wrong_out.find("unauthenticated: unknown token"), std::string::npos) << wrong_out;
  auto [none_code, none_out] = Ctl("list");
  EXPECT_NE(none_code, 0) << none_out;
  auto [premium_code, premium_out] =
      Ctl(std::string("--token ") + kSpeech + " submit --tier premium -- --steps 10");
  EXPECT_NE(premium_code, 0) << premium_out;
  EXPECT_NE(premium_out.find("not allowed to submit premium"), std::string::npos) << premium_out;
  Status cancel = speech.Cancel(standard);
  EXPECT_EQ(cancel.code(), StatusCode::kPermissionDenied) << cancel;
  auto [list_code, list_out] = Ctl(std::string("--token ") + kSpeech + " list");
  EXPECT_EQ(list_code, 0) << list_out;
  EXPECT_NE(list_out.find(standard), std::string::npos) << list_out;

  // 4. Operator commands, carried out by the agents.
  auto [resize_code, resize_out] =
      Ctl(std::string("--token ") + kOps + " resize " + elastic + " 1");
  EXPECT_EQ(resize_code, 0) << resize_out;
  ASSERT_TRUE(WaitUntil([&](auto jobs) {
    return jobs[elastic].state() == "running" && jobs[elastic].workers() == 1 &&
           jobs[elastic].placement() == "n1:1";
  }));
  EXPECT_EQ(Ctl(std::string("--token ") + kSpeech + " resize " + rigid + " 2").first, 1)
      << "a rigid job cannot run on 2 of its 4 workers";
  auto [preempt_code, preempt_out] = Ctl(std::string("--token ") + kSpeech + " preempt " + rigid);
  EXPECT_EQ(preempt_code, 0) << preempt_out;
  ASSERT_TRUE(WaitUntil([&](auto jobs) { return jobs[rigid].state() == "held"; }));
  // Held: n0 stays free although the rigid job could run there.
  std::this_thread::sleep_for(milliseconds(500));
  EXPECT_EQ(Jobs()[rigid].state(), "held");
  auto [requeue_code, requeue_out] = Ctl(std::string("--token ") + kSpeech + " requeue " + rigid);
  EXPECT_EQ(requeue_code, 0) << requeue_out;
  const int64_t held_at = Jobs()[rigid].step();
  ASSERT_TRUE(WaitUntil(
      [&](auto jobs) { return jobs[rigid].state() == "running" && jobs[rigid].step() > held_at; }));
  EXPECT_TRUE(vision.Cancel(standard).ok());
}

}  // namespace
}  // namespace tessera::cluster
