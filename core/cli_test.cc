#include "core/cli.h"

#include <gtest/gtest.h>

#include <vector>

namespace tessera::cli {
namespace {

int RunWith(std::vector<const char*> args, const std::function<Status()>& body,
            int* parsed_count = nullptr) {
  Program program("tool", "A test tool.");
  int count = 0;
  program.app().add_option("--count", count, "How many")->check(CLI::PositiveNumber);
  args.insert(args.begin(), "tool");
  int code = program.Run(static_cast<int>(args.size()), args.data(), body);
  if (parsed_count) *parsed_count = count;
  return code;
}

const auto kOkBody = [] { return Status::Ok(); };

TEST(CliTest, HelpAndVersionExitZero) {
  testing::internal::CaptureStdout();
  EXPECT_EQ(RunWith({"--help"}, kOkBody), kExitOk);
  std::string help = testing::internal::GetCapturedStdout();
  EXPECT_NE(help.find("--count"), std::string::npos);
  EXPECT_NE(help.find("--log-level"), std::string::npos);
  testing::internal::CaptureStdout();
  EXPECT_EQ(RunWith({"--version"}, kOkBody), kExitOk);
  EXPECT_NE(testing::internal::GetCapturedStdout().find("tool "), std::string::npos);
}

TEST(CliTest, UnknownFlagAndBadValueExitTwo) {
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunWith({"--no-such-flag"}, kOkBody), kExitUsage);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("--no-such-flag"), std::string::npos);
  EXPECT_NE(err.find("--help"), std::string::npos);
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunWith({"--count", "-3"}, kOkBody), kExitUsage);
  testing::internal::GetCapturedStderr();
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunWith({"--log-level", "loud"}, kOkBody), kExitUsage);
  testing::internal::GetCapturedStderr();
}

TEST(CliTest, UnknownFlagIsReportedBeforeMissingRequiredOption) {
  Program program("tool", "A test tool.");
  std::string db;
  program.app().add_option("--db", db, "State directory")->required();
  CLI::App* serve = program.app().add_subcommand("serve", "Serve");
  int port = 0;
  serve->add_option("--port", port, "Port");
  std::vector<const char*> typo = {"tool", "serve", "--prot", "80"};
  testing::internal::CaptureStderr();
  EXPECT_EQ(program.Run(4, typo.data(), kOkBody), kExitUsage);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("unknown flag --prot"), std::string::npos) << err;

  Program program2("tool", "A test tool.");
  program2.app().add_option("--db", db, "State directory")->required();
  CLI::App* serve2 = program2.app().add_subcommand("serve", "Serve");
  serve2->add_option("--port", port, "Port");
  std::vector<const char*> missing = {"tool", "serve", "--port=80"};
  testing::internal::CaptureStderr();
  EXPECT_EQ(program2.Run(3, missing.data(), kOkBody), kExitUsage);
  err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("--db"), std::string::npos) << err;
  EXPECT_EQ(err.find("unknown flag"), std::string::npos) << err;
}

TEST(CliTest, BodyOutcomeMapsToExitCode) {
  int count = 0;
  EXPECT_EQ(RunWith({"--count", "4"}, kOkBody, &count), kExitOk);
  EXPECT_EQ(count, 4);
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunWith({}, [] { return UnavailableError("peer down"); }), kExitFailure);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("UNAVAILABLE: peer down"),
            std::string::npos);
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunWith({}, [] { return UsageError("--to is required with --amount"); }), kExitUsage);
  testing::internal::GetCapturedStderr();
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunWith({}, []() -> Status { throw std::runtime_error("boom"); }), kExitFailure);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("boom"), std::string::npos);
}

}  // namespace
}  // namespace tessera::cli
