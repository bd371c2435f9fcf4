// Tokens per tenant (auth.h), and the scheduler server enforcing them and the quotas end to end
// over gRPC in-process.
#include "cluster/service/auth.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "cluster/agent/cluster.grpc.pb.h"
#include "cluster/cli/ctl.h"
#include "cluster/service/server.h"
#include "core/file.h"

namespace tessera::cluster {
namespace {

constexpr char kTokens[] =
    "# tenant token rights\n"
    "vision vision-token-0123456789 premium\n"
    "speech speech-token-0123456789\n"
    "ops ops-token-0123456789abc admin\n";

TEST(TokenTableTest, ParsesAndAuthenticates) {
  Result<TokenTable> table = TokenTable::Parse(kTokens);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->size(), 3u);
  Result<Principal> vision = table->Authenticate("Bearer vision-token-0123456789");
  ASSERT_TRUE(vision.ok());
  EXPECT_EQ(vision->tenant, "vision");
  EXPECT_TRUE(vision->premium);
  EXPECT_FALSE(vision->admin);
  EXPECT_TRUE(table->Authenticate("Bearer ops-token-0123456789abc")->admin);
  EXPECT_FALSE(table->Authenticate("Bearer vision-token-012345678").ok());  // a prefix
  EXPECT_FALSE(table->Authenticate("Bearer vision-token-01234567890").ok());
  EXPECT_FALSE(table->Authenticate("vision-token-0123456789").ok());  // no scheme
  EXPECT_FALSE(table->Authenticate("").ok());
  EXPECT_FALSE(TokenTable::Parse("vision short\n").ok());
  EXPECT_FALSE(TokenTable::Parse("vision\n").ok());
  EXPECT_FALSE(TokenTable::Parse("a aaaaaaaaaaaaaaaaaaaa gold\n").ok());
  EXPECT_NE(TokenTable::Parse("a aaaaaaaaaaaaaaaaaaaa\nb aaaaaaaaaaaaaaaaaaaa\n")
                .status()
                .message()
                .find("line 2"),
            std::string::npos);
}

TEST(TokenTableTest, AuthorizesByTenantAndRight) {
  const Principal speech{"speech", false, false};
  rpc::SubmitRequest r;
  r.set_tier("standard");
  EXPECT_TRUE(AuthorizeSubmit(speech, r).ok());
  EXPECT_EQ(r.tenant(), "speech");  // filled in from the token
  r.set_tier("premium");
  EXPECT_EQ(AuthorizeSubmit(speech, r).code(), StatusCode::kPermissionDenied);
  r.set_tier("basic");
  r.set_tenant("vision");
  EXPECT_EQ(AuthorizeSubmit(speech, r).code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(AuthorizeSubmit({"ops", false, true}, r).ok());
  EXPECT_TRUE(AuthorizeJobCommand(speech, "j1", "speech").ok());
  EXPECT_EQ(AuthorizeJobCommand(speech, "j2", "vision").code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(AuthorizeJobCommand({"ops", false, true}, "j2", "vision").ok());
}

class AuthServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ =
        std::filesystem::temp_directory_path() / ("auth_server_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
    ASSERT_TRUE(WriteFileAtomically(root_ / "tokens", kTokens).ok());
    ASSERT_TRUE(WriteFileAtomically(root_ / "quota", "vision 4 4\nspeech 0 2\n").ok());
    ServerOptions options;
    options.state_dir = root_ / "db";
    options.job_root = root_ / "jobs";
    options.tokens_file = root_ / "tokens";
    options.quota_file = root_ / "quota";
    options.heartbeat_timeout_s = 3600;  // the node below never heartbeats
    auto server = SchedulerServer::Start(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    // One 8-slot node (agent RPCs need no token): admission counts live slots.
    auto stub = rpc::Scheduler::NewStub(grpc::CreateChannel(
        "127.0.0.1:" + std::to_string(server_->port()), grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    rpc::RegisterNodeRequest request;
    request.set_node_id("n0");
    request.set_slots(8);
    rpc::RegisterNodeReply reply;
    ASSERT_TRUE(stub->RegisterNode(&context, request, &reply).ok());
  }
  void TearDown() override {
    server_->Shutdown();
    server_.reset();
    std::filesystem::remove_all(root_);
  }
  ClusterClient Client(const std::string& token) {
    auto client = ClusterClient::Connect("127.0.0.1:" + std::to_string(server_->port()));
    EXPECT_TRUE(client.ok());
    client->SetToken(token);
    return std::move(*client);
  }
  static rpc::SubmitRequest Job(const std::string& tier, int workers) {
    rpc::SubmitRequest r;
    r.set_tier(tier);
    r.set_requested_workers(workers);
    return r;
  }

  std::filesystem::path root_;
  std::unique_ptr<SchedulerServer> server_;
};

TEST_F(AuthServerTest, WrongTokenIsRefused) {
  for (const char* token : {"", "vision-token-0123456780", "not-a-token"}) {
    Status s = Client(token).ListJobs().status();
    EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << token;
    EXPECT_NE(s.message().find("unauthenticated"), std::string::npos) << s;
    EXPECT_EQ(Client(token).Submit(Job("basic", 1)).status().code(), StatusCode::kPermissionDenied);
  }
  EXPECT_TRUE(Client("vision-token-0123456789").ListJobs().ok());
}

TEST_F(AuthServerTest, OnlyTheTenantsTokenActsOnItsJobs) {
  ClusterClient vision = Client("vision-token-0123456789");
  ClusterClient speech = Client("speech-token-0123456789");
  Result<std::string> premium_id = vision.Submit(Job("premium", 1));
  ASSERT_TRUE(premium_id.ok()) << premium_id.status();
  // 16 workers on an 8-slot cluster: it waits, so that it can be held and released.
  Result<std::string> id = vision.Submit(Job("basic", 16));
  ASSERT_TRUE(id.ok()) << id.status();
  auto state_of = [&](const std::string& job) {
    Result<std::vector<rpc::JobInfo>> jobs = vision.ListJobs();
    for (const rpc::JobInfo& j : *jobs) {
      if (j.id() == job) return j.tenant() + " " + j.state();
    }
    return std::string("none");
  };
  EXPECT_EQ(state_of(*premium_id), "vision running");
  EXPECT_EQ(state_of(*id), "vision pending");
  // Another tenant's token may not cancel, preempt, requeue or resize it.
  EXPECT_EQ(speech.Cancel(*id).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(speech.Preempt(*id).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(speech.Requeue(*id).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(speech.Resize(*premium_id, 1).code(), StatusCode::kPermissionDenied);
  // Premium needs the right; submitting for another tenant is refused.
  Status premium = speech.Submit(Job("premium", 1)).status();
  EXPECT_EQ(premium.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(premium.message().find("not allowed to submit premium"), std::string::npos);
  rpc::SubmitRequest other = Job("basic", 1);
  other.set_tenant("vision");
  EXPECT_EQ(speech.Submit(other).status().code(), StatusCode::kPermissionDenied);
  // The owner may; so may an operator.
  EXPECT_TRUE(Client("ops-token-0123456789abc").Preempt(*id).ok());
  EXPECT_EQ(state_of(*id), "vision held");
  EXPECT_EQ(vision.Preempt(*id).code(), StatusCode::kFailedPrecondition);  // already held
  EXPECT_TRUE(vision.Requeue(*id).ok());
  EXPECT_EQ(state_of(*id), "vision pending");
  EXPECT_TRUE(vision.Cancel(*id).ok());
  EXPECT_EQ(state_of(*id), "vision cancelled");
  EXPECT_EQ(vision.Cancel("j999").code(), StatusCode::kNotFound);
}

// Admission control through the server: the refusal is RESOURCE_EXHAUSTED with a message that
// names the quota.
TEST_F(AuthServerTest, QuotaExceededIsAClearRefusal) {
  ClusterClient speech = Client("speech-token-0123456789");
  Result<std::string> in_quota = speech.Submit(Job("standard", 2));
  ASSERT_TRUE(in_quota.ok()) << in_quota.status();
  // 8 more: speech's 2 are in use and only 4 of vision's standard slots are idle.
  Status s = speech.Submit(Job("standard", 8)).status();
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s;
  EXPECT_NE(s.message().find("admission refused: standard quota exceeded: tenant 'speech' has 2 "
                             "standard slots of quota, 2 in use; the job needs 8"),
            std::string::npos)
      << s;
  // 4 fit vision's idle quota: borrowed.
  Result<std::string> borrowed = speech.Submit(Job("standard", 4));
  ASSERT_TRUE(borrowed.ok()) << borrowed.status();
  Result<std::vector<rpc::JobInfo>> jobs = speech.ListJobs();
  ASSERT_TRUE(jobs.ok());
  for (const rpc::JobInfo& j : *jobs) {
    EXPECT_EQ(j.borrowed(), j.id() == *borrowed) << j.id();
  }
  // Basic work needs no quota.
  EXPECT_TRUE(speech.Submit(Job("basic", 4)).ok());
}

}  // namespace
}  // namespace tessera::cluster
