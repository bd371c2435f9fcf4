#include "cluster/job/process.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>

#include "core/file.h"

namespace tessera::cluster {
namespace {

ProcessOptions Options(std::vector<std::string> argv) {
  ProcessOptions options;
  options.argv = std::move(argv);
  return options;
}

TEST(ProcessTest, ReportsExitCodeAndCapturesOutput) {
  auto log =
      std::filesystem::temp_directory_path() / ("process_test_" + std::to_string(::getpid()));
  std::filesystem::remove(log);
  Result<Process> p = Process::Spawn({.argv = {"/bin/sh", "-c", "echo \"hi $GREETING\"; exit 3"},
                                      .env = {{"GREETING", "there"}},
                                      .log_file = log});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->Wait(), 3);
  EXPECT_EQ(*ReadFile(log), "hi there\n");
  std::filesystem::remove(log);
}

TEST(ProcessTest, SignalAndTimeout) {
  Result<Process> p = Process::Spawn(Options({"/bin/sleep", "30"}));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE(p->WaitFor(std::chrono::milliseconds(20)).has_value());
  p->Signal(SIGTERM);
  EXPECT_EQ(p->Wait(), 128 + SIGTERM);
}

TEST(ProcessTest, DestructorKillsARunningChild) {
  pid_t pid;
  {
    Result<Process> p = Process::Spawn(Options({"/bin/sleep", "30"}));
    ASSERT_TRUE(p.ok()) << p.status();
    pid = p->pid();
  }
  EXPECT_NE(::kill(pid, 0), 0);  // reaped and gone
}

TEST(ProcessTest, MissingProgramIsNotFound) {
  EXPECT_EQ(Process::Spawn(Options({"/no/such/program"})).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(Process::Spawn({}).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera::cluster
