// Runs the real reviews-tool binary as a separate process and checks its exit codes and
// output: 0 on success, 1 when the work fails (a refused second issuance, an ineligible key),
// 2 on a usage error.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace {

namespace fs = std::filesystem;

struct ProcessRun {
  int code;
  std::string output;
};

ProcessRun Tool(const std::string& args) {
  const char* bin_dir = std::getenv("TESSERA_BIN_DIR");
  std::string cmd = std::string(bin_dir ? bin_dir : "bin") + "/reviews-tool " + args + " 2>&1";
  ProcessRun run{-1, ""};
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return run;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) run.output.append(buf.data(), n);
  int status = pclose(pipe);
  run.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

TEST(ReviewsToolProcess, IssueRingSignVerifyAndExitCodes) {
  fs::path dir = fs::temp_directory_path() / ("reviews_tool_it_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto p = [&](const std::string& f) { return (dir / f).string(); };
  ASSERT_EQ(Tool("issuer-keygen --secret-out " + p("i.pem") + " --public-out " + p("i.pub")).code,
            0);
  for (int i = 0; i < 3; ++i) {
    std::string s = std::to_string(i);
    ASSERT_EQ(Tool("review-keygen --epoch 2 --out " + p("k" + s)).code, 0);
    ASSERT_EQ(Tool("blind --issuer-public " + p("i.pub") + " --key " + p("k" + s) +
                   " --request-out " + p("q" + s) + " --state-out " + p("s" + s))
                  .code,
              0);
    ASSERT_EQ(
        Tool("blind-sign --issuer-secret " + p("i.pem") + " --request " + p("q" + s) +
             " --identity id" + s + " --issued-log " + p("log") + " --response-out " + p("r" + s))
            .code,
        0);
    ASSERT_EQ(Tool("finalize --issuer-public " + p("i.pub") + " --state " + p("s" + s) +
                   " --response " + p("r" + s) + " --credential-out " + p("c" + s))
                  .code,
              0);
    ASSERT_EQ(Tool("register --issuer-public " + p("i.pub") + " --credential " + p("c" + s) +
                   " --registry " + p("reg"))
                  .code,
              0);
  }
  // A second issuance to id0 fails with exit 1 and a clear message.
  ProcessRun again = Tool("blind-sign --issuer-secret " + p("i.pem") + " --request " + p("q1") +
                          " --identity id0 --issued-log " + p("log") + " --response-out " + p("x"));
  EXPECT_EQ(again.code, 1);
  EXPECT_NE(again.output.find("already obtained"), std::string::npos) << again.output;

  ASSERT_EQ(Tool("ring --issuer-public " + p("i.pub") + " --registry " + p("reg") +
                 " --item pizza --seed " + std::string(64, '0') + " --k 3 --out " + p("ring"))
                .code,
            0);
  ASSERT_EQ(Tool("sign --key " + p("k0") + " --ring " + p("ring") +
                 " --rating 5 --text tasty --out " + p("rv0"))
                .code,
            0);
  ASSERT_EQ(Tool("sign --key " + p("k0") + " --ring " + p("ring") +
                 " --rating 2 --text meh --out " + p("rv1"))
                .code,
            0);
  ProcessRun verify = Tool("verify --ring " + p("ring") + " --review " + p("rv0") + " --registry " +
                           p("reg") + " --issuer-public " + p("i.pub"));
  EXPECT_EQ(verify.code, 0) << verify.output;
  EXPECT_NE(verify.output.find("VALID"), std::string::npos);
  ProcessRun dup = Tool("duplicates --fail-on-duplicate " + p("rv0") + " " + p("rv1"));
  EXPECT_EQ(dup.code, 1);
  EXPECT_NE(dup.output.find("DOUBLE REVIEW"), std::string::npos) << dup.output;
  // Usage errors exit 2.
  EXPECT_EQ(Tool("").code, 2);
  EXPECT_EQ(Tool("verify --ring " + p("ring") + " --review " + p("rv0") + " --registry x").code, 2);
  EXPECT_EQ(Tool("sign --key " + p("k0")).code, 2);
  fs::remove_all(dir);
}

}  // namespace
