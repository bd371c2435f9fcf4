// End to end on a real local network (ledger-localnet: politician and citizen processes on
// loopback) with the reviews app in genesis, the reviews-issuer daemon and the reviews-net
// command line, each a separate process:
//   * four identities get review keys (request, blind issue, anonymous registration);
//   * a second key request of one identity in one epoch is rejected by the ledger;
//   * items are created and reviewed during their window; a double review by one key is
//     rejected by the politicians even when the client's own check is skipped;
//   * list and verify-tally agree with the committed tallies; a verbatim local copy verifies,
//     a tampered one (text or rating) fails; the localnet audit finds no fork, every block
//     valid and every honest politician's proofs right.
// No timed assertions: waits are bounded (for a hung network) but never measured.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/file.h"
#include "ledger/net/process.h"
#include "reviews/client/client.h"

namespace tessera::reviews {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr uint64_t kEpochBlocks = 12;

// Single-quoted for sh: every ' becomes '\''.
std::string Quote(const std::string& s) {
  std::string out(1, '\'');
  for (char c : s) {
    if (c == '\'') {
      out.append("'\\''");
    } else {
      out.push_back(c);
    }
  }
  out.push_back('\'');
  return out;
}

// prefix + i + suffix (built by appending: GCC 12 warns falsely on "literal" + std::string).
std::string Numbered(const char* prefix, size_t i, const char* suffix) {
  std::string s(prefix);
  s.append(std::to_string(i)).append(suffix);
  return s;
}
std::string KeyFile(size_t i) { return Numbered("key", i, ".json"); }

struct Outcome {
  int code = -1;
  std::string output;
};

class ReviewsNetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* bin = std::getenv("TESSERA_BIN_DIR");
    ASSERT_NE(bin, nullptr) << "TESSERA_BIN_DIR is not set (run through ctest)";
    bin_ = bin;
    dir_ = fs::temp_directory_path() / ("reviews-net-it-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (issuer_) issuer_->Stop();
    if (localnet_) localnet_->Stop(20000);
    if (!HasFailure()) fs::remove_all(dir_);
  }

  // Runs a reviews-net command; its stdout and stderr are returned.
  Outcome Net(const std::string& args, const std::string& checkpoint = "cli.ckpt") {
    static int n = 0;
    fs::path log = dir_ / ("cmd-" + std::to_string(++n) + ".log");
    std::string cmd = Quote((bin_ / "reviews-net").string()) + " --log-level warn --genesis " +
                      Quote((dir_ / "net" / "genesis.toml").string()) + " --checkpoint " +
                      Quote((dir_ / checkpoint).string()) + " --timeout-s 150 " + args + " > " +
                      Quote(log.string()) + " 2>&1";
    int status = std::system(cmd.c_str());
    Outcome o;
    o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    o.output = ReadFile(log).value_or("");
    return o;
  }
  std::string Keys(int i) const {
    return (dir_ / "net" / "keys" / ("citizen-" + std::to_string(i))).string();
  }
  std::string GetKey(int i, uint64_t epoch, const std::string& out) {
    return "get-key --citizen-key " + Quote(Keys(i) + ".key") + " --identity " +
           Quote(Keys(i) + ".id") + " --out " + Quote((dir_ / out).string()) + " --epoch " +
           std::to_string(epoch);
  }
  std::string Review(const std::string& key, const std::string& item, int rating,
                     const std::string& text) {
    return "review --key " + Quote((dir_ / key).string()) + " --item " + Quote(item) +
           " --rating " + std::to_string(rating) + " --text " + Quote(text);
  }

  void WaitForHeight(client::ReviewsClient& c, uint64_t height) {
    for (int i = 0; i < 1200; ++i) {  // bounded: a stuck network fails instead of hanging
      if (c.Refresh().ok() && c.height() >= height) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    FAIL() << "the network did not reach height " << height;
  }

  fs::path bin_, dir_;
  std::unique_ptr<ledger::net::ChildProcess> localnet_, issuer_;
};

TEST_F(ReviewsNetTest, KeysReviewsDoubleReviewAndVerifiedTallies) {
  // ---- The network, with an issuer key generated here ----
  auto issuer = blind::SecretKey::Generate(2048);
  ASSERT_TRUE(issuer.ok());
  ASSERT_TRUE(WriteFileAtomically(dir_ / "issuer.pem", *issuer->ToPem(), 0600).ok());
  std::string config =
      "[network]\npoliticians = 3\ncitizens = 6\n"
      "[load]\nrate = 0\nduration_s = 900\n"
      "[apps.reviews]\nissuer_public = \"" +
      *IssuerPublicToHex(issuer->public_key()) +
      "\"\nring_size = 50\nepoch_blocks = " + std::to_string(kEpochBlocks) + "\n";
  ASSERT_TRUE(WriteFileAtomically(dir_ / "net.toml", config).ok());
  localnet_ = std::make_unique<ledger::net::ChildProcess>();
  ASSERT_TRUE(localnet_
                  ->Start(bin_ / "ledger-localnet",
                          {"--config", (dir_ / "net.toml").string(), "--out",
                           (dir_ / "net").string(), "--bin", bin_.string()},
                          dir_ / "localnet.log")
                  .ok());
  for (int i = 0; i < 240 && !fs::exists(dir_ / "net" / "ready"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  ASSERT_TRUE(fs::exists(dir_ / "net" / "ready")) << ReadFile(dir_ / "localnet.log").value_or("");
  issuer_ = std::make_unique<ledger::net::ChildProcess>();
  ASSERT_TRUE(
      issuer_
          ->Start(bin_ / "reviews-issuer",
                  {"--genesis", (dir_ / "net" / "genesis.toml").string(), "--issuer-key",
                   (dir_ / "issuer.pem").string(), "--checkpoint", (dir_ / "issuer.ckpt").string()},
                  dir_ / "issuer.log")
          .ok());
  auto client = client::ReviewsClient::Open(
      {.genesis = dir_ / "net" / "genesis.toml", .checkpoint = dir_ / "test.ckpt"});
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_TRUE((*client)->Refresh().ok());
  // ---- Items, created first, each in its creator's namespace; the keys' epoch is chosen
  // after them, so it is at least two epochs after their creation (its ring comes from a seed
  // drawn after they exist) ----
  auto create = [&](int creator, const std::string& name) {
    return Net("create-item --name " + Quote(name) + " --citizen-key " +
               Quote(Keys(creator) + ".key") + " --identity " + Quote(Keys(creator) + ".id"));
  };
  Outcome tea_created = create(0, "tea");
  ASSERT_EQ(tea_created.code, 0) << tea_created.output;
  const std::string tea_id = tea_created.output.substr(tea_created.output.rfind(' ') + 1, 64);
  ASSERT_EQ(create(1, "coffee").code, 0);
  Outcome dup_item = create(0, "tea");
  EXPECT_EQ(dup_item.code, 1);
  EXPECT_THAT(dup_item.output, HasSubstr("already exists in this identity's namespace"));
  // Another identity's "tea" is its own item: no squatting, but the name alone is ambiguous.
  ASSERT_EQ(create(2, "tea").code, 0);
  Outcome ambiguous = Net("show --item tea");
  EXPECT_EQ(ambiguous.code, 1);
  EXPECT_THAT(ambiguous.output, HasSubstr("several items are named 'tea'"));
  EXPECT_THAT(ambiguous.output, HasSubstr(tea_id));
  ASSERT_TRUE((*client)->Refresh().ok());
  // Room for the issuer's answers and the registrations, which each client schedules at a
  // height it draws up to 4 blocks before the close.
  const uint64_t epoch = (*client)->NextKeyEpoch(/*margin_blocks=*/kEpochBlocks);

  // ---- Four identities get keys for `epoch`, in parallel ----
  std::vector<std::future<Outcome>> gets;
  for (int i = 0; i < 4; ++i) {
    gets.push_back(std::async(std::launch::async, [&, i] {
      // One identity delays its anonymous registration a few blocks after the issue.
      std::string extra = i == 3 ? " --register-delay-blocks 2" : "";
      return Net(GetKey(i, epoch, KeyFile(i)) + extra, Numbered("c", i, ".ckpt"));
    }));
  }
  for (int i = 0; i < 4; ++i) {
    Outcome o = gets[i].get();
    ASSERT_EQ(o.code, 0) << "get-key " << i << ": " << o.output;
    EXPECT_THAT(o.output, HasSubstr("registered review key"));
  }
  // One key request per identity and epoch: the politicians refuse the second.
  Outcome again = Net(GetKey(0, epoch, "key0-again.json"));
  EXPECT_EQ(again.code, 1);
  EXPECT_THAT(again.output, HasSubstr("identity already requested a key for epoch"));
  auto keys = (*client)->RegisteredKeys(epoch);
  ASSERT_TRUE((*client)->Refresh().ok());
  keys = (*client)->RegisteredKeys(epoch);
  ASSERT_TRUE(keys.ok()) << keys.status();
  EXPECT_EQ(keys->size(), 4u);

  // Reviews wait for the window (the first block of `epoch`), in parallel.
  const std::vector<std::tuple<int, std::string, int, std::string>> reviews = {
      {0, tea_id, 5, "lovely"},
      {1, tea_id, 4, "good"},
      {2, tea_id, 2, "too bitter"},
      {3, "coffee", 3, "ok"},
      {0, "coffee", 1, "burnt"}};
  std::vector<std::future<Outcome>> posts;
  for (size_t i = 0; i < reviews.size(); ++i) {
    posts.push_back(std::async(std::launch::async, [&, i] {
      auto [k, item, rating, text] = reviews[i];
      return Net(Review(KeyFile(k), item, rating, text), Numbered("r", i, ".ckpt"));
    }));
  }
  for (size_t i = 0; i < posts.size(); ++i) {
    Outcome o = posts[i].get();
    EXPECT_EQ(o.code, 0) << "review " << i << ": " << o.output;
  }

  // ---- A double review: caught by the client, and by the ledger when the client is bypassed
  Outcome twice = Net(Review("key1.json", tea_id, 1, "changed my mind"));
  EXPECT_EQ(twice.code, 1);
  EXPECT_THAT(twice.output, HasSubstr("already reviewed the item"));
  Outcome forced = Net(Review("key1.json", tea_id, 1, "changed my mind") + " --force");
  EXPECT_EQ(forced.code, 1);
  EXPECT_THAT(forced.output, HasSubstr("rejected"));
  EXPECT_THAT(forced.output, HasSubstr("this key already reviewed the item (tag used)"));

  // ---- Reading back: proved tallies, verified reviews ----
  Outcome list = Net("list --json");
  ASSERT_EQ(list.code, 0) << list.output;
  auto j = nlohmann::json::parse(list.output);
  ASSERT_EQ(j["items"].size(), 3u);
  std::map<std::string, nlohmann::json> items;
  for (const auto& item : j["items"]) {
    items[item["id"] == tea_id ? "tea" : item["name"] == "tea" ? "other tea" : "coffee"] = item;
  }
  EXPECT_EQ(items["other tea"]["count"], 0);
  EXPECT_EQ(items["tea"]["count"], 3);
  EXPECT_EQ(items["tea"]["sum"], 11);
  EXPECT_EQ(items["coffee"]["count"], 2);
  EXPECT_EQ(items["coffee"]["sum"], 4);
  EXPECT_EQ(items["tea"]["registered_keys"], 4);
  EXPECT_TRUE(items["tea"]["hijack"].is_object());

  Outcome verify = Net("verify-tally --item " + tea_id);
  EXPECT_EQ(verify.code, 0) << verify.output;
  EXPECT_THAT(verify.output, HasSubstr("3 reviews summing to 11"));
  Outcome show = Net("show --item " + tea_id + " --json");
  ASSERT_EQ(show.code, 0) << show.output;
  ASSERT_TRUE(WriteFileAtomically(dir_ / "copy.json", show.output).ok());
  EXPECT_EQ(
      Net("verify-tally --item " + tea_id + " --reviews " + Quote((dir_ / "copy.json").string()))
          .code,
      0);
  auto copy = nlohmann::json::parse(show.output);
  ASSERT_EQ(copy["reviews"].size(), 3u);
  EXPECT_TRUE(copy["verified"].get<bool>());
  for (const char* field : {"text", "rating"}) {
    nlohmann::json tampered = copy;
    if (std::string(field) == "text") {
      tampered["reviews"][1]["text"] = "awful";
    } else {
      tampered["reviews"][1]["rating"] = 1;
    }
    ASSERT_TRUE(WriteFileAtomically(dir_ / "tampered.json", tampered.dump()).ok());
    Outcome bad = Net("verify-tally --item " + tea_id + " --reviews " +
                      Quote((dir_ / "tampered.json").string()));
    EXPECT_EQ(bad.code, 1) << field;
    EXPECT_THAT(bad.output, HasSubstr("mismatch")) << field;
  }

  // ---- The network's own audit ----
  issuer_->Stop();
  localnet_->Stop(60000);
  auto report = ReadFile(dir_ / "net" / "report.json");
  ASSERT_TRUE(report.ok()) << ReadFile(dir_ / "localnet.log").value_or("");
  auto r = nlohmann::json::parse(*report);
  EXPECT_EQ(r["forks"], 0);
  EXPECT_EQ(r["invalid_blocks"], 0);
  EXPECT_TRUE(r["politicians_agree"].get<bool>());
  EXPECT_TRUE(r["proofs_ok"].get<bool>());
  EXPECT_TRUE(r["balances_conserved"].get<bool>());  // reviews leaves are not accounts
  // 4 requests + 4 issues + 4 registrations + 3 items + the reviews, which politicians may
  // have coalesced into as few as one batch per item.
  EXPECT_GE(r["app_txs_applied"].get<int>(), 17);
}

}  // namespace
}  // namespace tessera::reviews
