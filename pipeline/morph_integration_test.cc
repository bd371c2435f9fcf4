// End-to-end job morphing: a real `pipeline-launch --elastic` with real pipeline-worker
// processes on loopback. One worker is killed with SIGKILL (directly, or behind an ssh-like
// wrapper that turns the death into exit 255), a spot-style notice file appears, or the workers
// file grows in the middle of the run; the job must restart with a configuration for the new
// worker count, finish every step, and train exactly as an uninterrupted run would. With the
// notice, no step may be trained twice.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "core/file.h"
#include "fmt/format.h"
#include "pipeline/checkpoint.h"
#include "pipeline/runtime.h"
#include "pipeline/test_paths.h"

namespace tessera::pipeline {
namespace {

constexpr double kTolerance = 1e-5;
constexpr int kSteps = 100;
constexpr int kKillAfter = 6;  // act once a checkpoint at this step or later is complete
// The whole model's parameter state (weights, gradients, momentum) is estimated at about
// 0.35 MB, half of it about 0.18 MB: this limit (with --worker-base-mb 0, counting only the
// model) keeps every configuration a pipeline (P >= 2), so a morph changes the pipeline and the
// data parallelism, not only D.
constexpr char kMemoryLimitMb[] = "0.3";

namespace fs = std::filesystem;

std::string Binary(const std::string& name) {
  const char* dir = std::getenv("TESSERA_BIN_DIR");
  return std::string(dir ? dir : "bin") + "/" + name;
}

fs::path TempDir(const std::string& name) {
  auto p = fs::temp_directory_path() / ("pipeline_morph_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

// The model every run here trains. No dropout: the auto-config may pick another micro-batch
// size after a morph, and dropout masks are keyed by micro-batch (runtime.h), so only a model
// without dropout has one trajectory for every configuration.
JobConfig Model() {
  JobConfig job;
  job.model.kind = "gpt";
  job.model.layers = 2;  // 4 units
  job.model.width = 32;
  job.model.heads = 2;
  job.model.vocab = 32;
  job.model.seq_len = 16;
  job.model.dropout = 0.0;
  job.global_batch = 16;
  job.steps = kSteps;
  job.lr = 0.05;
  job.momentum = 0.9;
  job.seed = 11;
  return job;
}

pid_t StartElastic(const fs::path& dir, std::vector<std::string> extra = {},
                   int checkpoint_every = 2, int steps = kSteps) {
  const JobConfig job = Model();
  std::vector<std::string> args = {Binary("pipeline-launch"),
                                   "--elastic",
                                   "--workers-file",
                                   (dir / "workers").string(),
                                   "--auto-micro-batches",
                                   "2,4",
                                   "--cores",
                                   "0",
                                   "--memory-limit-mb",
                                   kMemoryLimitMb,
                                   "--worker-base-mb",
                                   "0",
                                   "--checkpoint-every",
                                   std::to_string(checkpoint_every),
                                   "--save-dir",
                                   (dir / "ckpt").string(),
                                   "--run-dir",
                                   (dir / "run").string(),
                                   "--json",
                                   (dir / "out.json").string(),
                                   "--timeout",
                                   "120",
                                   "--model",
                                   "gpt",
                                   "--layers",
                                   std::to_string(job.model.layers),
                                   "--width",
                                   std::to_string(job.model.width),
                                   "--heads",
                                   std::to_string(job.model.heads),
                                   "--vocab",
                                   std::to_string(job.model.vocab),
                                   "--seq-len",
                                   std::to_string(job.model.seq_len),
                                   "--dropout",
                                   "0",
                                   "--global-batch",
                                   std::to_string(job.global_batch),
                                   "--steps",
                                   std::to_string(steps),
                                   "--lr",
                                   "0.05",
                                   "--momentum",
                                   "0.9",
                                   "--seed",
                                   std::to_string(job.seed)};
  args.insert(args.end(), extra.begin(), extra.end());
  const std::string log = (dir / "launch.log").string();
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

// Waits until the newest complete checkpoint reaches `step`; false if the launcher exits first
// or two minutes pass (a hung job, not a slow one).
bool WaitForCheckpoint(const fs::path& dir, int64_t step, pid_t launcher) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  while (std::chrono::steady_clock::now() < give_up) {
    auto latest = LatestCompleteCheckpoint(dir / "ckpt");
    if (latest.ok() && *latest >= step) return true;
    if (waitpid(launcher, nullptr, WNOHANG) == launcher) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

// Waits until rank 0 of the first segment is in step `step` or later (its heartbeat file).
bool WaitForStep(const fs::path& dir, int64_t step, pid_t launcher) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  while (std::chrono::steady_clock::now() < give_up) {
    auto text = ReadFile(dir / "run" / "segment-0" / "heartbeat-0");
    if (text.ok() && std::atoll(text->c_str()) >= step) return true;
    if (waitpid(launcher, nullptr, WNOHANG) == launcher) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

int WaitExit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string Log(const fs::path& dir) { return ReadFile(dir / "launch.log").value_or(""); }

// The pid the launcher started for `rank` in segment 0 (<run-dir>/segment-0/pids); -1 if absent.
pid_t PidOfRank(const fs::path& dir, int rank) {
  auto pids = ReadFile(dir / "run" / "segment-0" / "pids");
  if (!pids.ok()) return -1;
  std::istringstream lines(*pids);
  int r = -1;
  pid_t pid = -1;
  while (lines >> r >> pid) {
    if (r == rank) return pid;
  }
  return -1;
}

// The highest rank the launcher started in segment 0; -1 if none. The auto-config may leave
// workers idle (P x D below the workers available), so rank 3 of 4 need not exist.
int HighestRank(const fs::path& dir) {
  auto pids = ReadFile(dir / "run" / "segment-0" / "pids");
  if (!pids.ok()) return -1;
  std::istringstream lines(*pids);
  int r = -1, highest = -1;
  pid_t pid = -1;
  while (lines >> r >> pid) highest = std::max(highest, r);
  return highest;
}

// The first child of `pid` (a wrapper's worker); -1 if none.
pid_t ChildOf(pid_t pid) {
  auto children = ReadFile(fmt::format("/proc/{}/task/{}/children", pid, pid));
  return children.ok() && std::atoi(children->c_str()) > 0 ? std::atoi(children->c_str()) : -1;
}

// Alive: exists and is neither a zombie nor dead (a reparented zombie may wait to be reaped).
bool Alive(pid_t pid) {
  auto stat = ReadFile(fmt::format("/proc/{}/stat", pid));
  if (!stat.ok()) return false;
  const size_t paren = stat->rfind(')');
  return paren != std::string::npos && paren + 2 < stat->size() && (*stat)[paren + 2] != 'Z' &&
         (*stat)[paren + 2] != 'X';
}

nlohmann::json ResultJson(const fs::path& dir) {
  auto text = ReadFile(dir / "out.json");
  return text.ok() ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
}

// The launch every loss test shares: an elastic job on 4 workers (launcher flags `extra`);
// once its checkpoint of kKillAfter is complete, `signo` goes to rank `rank` of the first
// launch (kHighestRank: the highest rank it started; to the worker behind it when that rank
// runs behind a wrapper); the launcher must then finish by itself. Returns its --json, and the
// rank signalled in `*lost` when given.
constexpr int kHighestRank = -1;
nlohmann::json LoseAWorker(const fs::path& dir, int rank, int signo,
                           std::vector<std::string> extra = {}, bool behind_wrapper = false,
                           int* lost = nullptr) {
  EXPECT_TRUE(WriteFileAtomically(dir / "workers", "4\n").ok());
  const pid_t launcher = StartElastic(dir, std::move(extra));
  if (launcher <= 0) {
    ADD_FAILURE() << "the launcher did not start";
    return {};
  }
  if (!WaitForCheckpoint(dir, kKillAfter, launcher)) {
    ADD_FAILURE() << "no checkpoint of step " << kKillAfter << "\n" << Log(dir);
    return {};
  }
  if (rank == kHighestRank) rank = HighestRank(dir);
  if (lost) *lost = rank;
  const pid_t victim = behind_wrapper ? ChildOf(PidOfRank(dir, rank)) : PidOfRank(dir, rank);
  if (victim <= 0) {
    // Never kill(-1, ...): as root that signals every process of the machine but this one (a
    // SIGSTOP froze the whole machine once, session 15, when rank 3 had not been started).
    ADD_FAILURE() << "no worker of rank " << rank << " in segment 0\n" << Log(dir);
    kill(launcher, SIGKILL);
    WaitExit(launcher);
    return {};
  }
  EXPECT_EQ(kill(victim, signo), 0);
  EXPECT_EQ(WaitExit(launcher), 0) << Log(dir);
  return ResultJson(dir);
}

double RelativeError(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    norm += static_cast<double>(b[i]) * b[i];
  }
  return std::sqrt(diff) / std::max(std::sqrt(norm), 1e-12);
}

// The finished segment's losses and the final checkpoint must equal single-process training of
// the same global batches from the start (which passes through every checkpoint the job
// resumed from).
void ExpectUninterruptedTrajectory(const fs::path& dir, const nlohmann::json& last) {
  JobConfig job = Model();
  auto reference = TrainReference(job, 0);
  ASSERT_TRUE(reference.ok()) << reference.status();
  const int64_t first = last.at("first_step").get<int64_t>();
  EXPECT_GE(last.at("stages").get<int>(), 2);
  std::cout << "finished as P=" << last.at("stages") << " D=" << last.at("replicas")
            << " m=" << last.at("micro_batch") << " on " << last.at("workers") << " workers\n";
  const auto losses = last.at("losses").get<std::vector<double>>();
  ASSERT_EQ(static_cast<int64_t>(losses.size()), kSteps - first);
  double worst = 0;
  for (size_t k = 0; k < losses.size(); ++k) {
    const double want = reference->losses[first + k];
    const double err = std::abs(losses[k] - want) / std::max(std::abs(want), 1e-12);
    worst = std::max(worst, err);
    EXPECT_LT(err, kTolerance) << "step " << first + k;
  }
  double worst_param = 0;
  for (size_t u = 0; u < reference->units.size(); ++u) {
    auto state = ReadUnitState(dir / "ckpt", kSteps, static_cast<int>(u));
    ASSERT_TRUE(state.ok()) << state.status();
    for (size_t k = 0; k < state->params.size(); ++k) {
      const double e = RelativeError(state->params[k].values, reference->units[u].params[k].values);
      worst_param = std::max(worst_param, e);
      EXPECT_LT(e, kTolerance) << "unit " << u << " tensor " << k;
    }
  }
  std::cout << "resumed at step " << first << ": largest relative error, losses " << worst
            << ", final parameters " << worst_param << "\n";
}

TEST(Morph, ShrinksWhenAWorkerIsKilledAndContinuesTheSameTraining) {
  const fs::path dir = TempDir("shrink");
  // Kill the worker of rank 1 of the first launch, as a machine would vanish.
  const auto json = LoseAWorker(dir, 1, SIGKILL);
  ASSERT_TRUE(json.contains("segments")) << Log(dir);
  const auto& segments = json.at("segments");
  ASSERT_GE(segments.size(), 2u) << json.dump(1);
  EXPECT_EQ(segments[0].at("workers").get<int>(), 4);
  EXPECT_GE(segments[0].at("stages").get<int>(), 2);
  EXPECT_EQ(segments[0].at("ended").get<std::string>(), "worker 1 lost");
  EXPECT_GE(segments[0].at("checkpoint").get<int>(), kKillAfter);
  const auto& last = segments.back();
  EXPECT_EQ(last.at("ended").get<std::string>(), "finished");
  EXPECT_EQ(last.at("workers").get<int>(), 3);
  EXPECT_LE(last.at("stages").get<int>() * last.at("replicas").get<int>(), 3);
  EXPECT_EQ(last.at("first_step").get<int>(), segments[segments.size() - 2].at("checkpoint"));
  ExpectUninterruptedTrajectory(dir, last);
  fs::remove_all(dir);
}

TEST(Morph, GrowsWhenWorkersReturn) {
  const fs::path dir = TempDir("grow");
  ASSERT_TRUE(WriteFileAtomically(dir / "workers", "2\n").ok());
  const pid_t launcher = StartElastic(dir);
  ASSERT_GT(launcher, 0);
  ASSERT_TRUE(WaitForCheckpoint(dir, kKillAfter, launcher)) << Log(dir);
  ASSERT_TRUE(WriteFileAtomically(dir / "workers", "4\n").ok());
  ASSERT_EQ(WaitExit(launcher), 0) << Log(dir);

  const auto json = ResultJson(dir);
  const auto& segments = json.at("segments");
  ASSERT_EQ(segments.size(), 2u) << json.dump(1);
  EXPECT_EQ(segments[0].at("workers").get<int>(), 2);
  EXPECT_LE(segments[0].at("stages").get<int>() * segments[0].at("replicas").get<int>(), 2);
  EXPECT_EQ(segments[0].at("ended").get<std::string>(), "workers file says 4");
  const auto& last = segments[1];
  EXPECT_EQ(last.at("workers").get<int>(), 4);
  EXPECT_GT(last.at("stages").get<int>() * last.at("replicas").get<int>(), 2);
  ExpectUninterruptedTrajectory(dir, last);
  fs::remove_all(dir);
}

// Workers behind an ssh-like wrapper (pipeline/testdata/ssh-like: exit 255 when the command
// dies by a signal, as OpenSSH reports a remote death or a dropped connection). Killing the
// worker itself, not the wrapper, must be reported as that worker lost, and the job morphs.
TEST(Morph, RemoteWorkerKilledBehindSshWrapperIsLost) {
  const fs::path dir = TempDir("ssh");
  const std::string wrapper = SourceDir() + "/pipeline/testdata/ssh-like";
  ASSERT_TRUE(
      WriteFileAtomically(dir / "hosts", "127.0.0.1 " + wrapper + "\n127.0.0.1 " + wrapper + "\n")
          .ok());
  // The worker is the wrapper's child: kill it, not the wrapper.
  const auto json = LoseAWorker(dir, 2, SIGKILL, {"--hosts", (dir / "hosts").string()},
                                /*behind_wrapper=*/true);
  ASSERT_TRUE(json.contains("segments")) << Log(dir);
  const auto& segments = json.at("segments");
  ASSERT_GE(segments.size(), 2u) << json.dump(1);
  EXPECT_EQ(segments[0].at("ended").get<std::string>(), "worker 2 lost") << Log(dir);
  EXPECT_EQ(segments.back().at("workers").get<int>(), 3);
  ExpectUninterruptedTrajectory(dir, segments.back());
  fs::remove_all(dir);
}

// A worker that stops without dying (SIGSTOP: a frozen host) is found by its heartbeat: the
// job reports that worker lost and morphs, instead of waiting for the transport's deadlines.
TEST(Morph, StoppedWorkerIsLostByHeartbeat) {
  const fs::path dir = TempDir("frozen");
  int lost = -1;
  const auto json = LoseAWorker(dir, kHighestRank, SIGSTOP, {"--heartbeat-timeout", "5"},
                                /*behind_wrapper=*/false, &lost);
  ASSERT_TRUE(json.contains("segments")) << Log(dir);
  const auto& segments = json.at("segments");
  ASSERT_GE(segments.size(), 2u) << json.dump(1);
  EXPECT_EQ(segments[0].at("ended").get<std::string>(), fmt::format("worker {} lost", lost))
      << Log(dir);
  EXPECT_NE(Log(dir).find("no heartbeat"), std::string::npos) << Log(dir);
  EXPECT_EQ(segments.back().at("workers").get<int>(), 3);
  ExpectUninterruptedTrajectory(dir, segments.back());
  fs::remove_all(dir);
}

// A spot notice (a file appearing, the way cloud preemption warnings arrive): every worker
// checkpoints at the next step boundary, the job morphs to one worker fewer and resumes there.
// Periodic checkpoints are off (every 1000 steps), so any step trained twice would show.
TEST(Morph, SpotNoticeCheckpointsAtTheNextStepAndLosesNothing) {
  const fs::path dir = TempDir("notice");
  ASSERT_TRUE(WriteFileAtomically(dir / "workers", "4\n").ok());
  const pid_t launcher =
      StartElastic(dir, {"--notice-file", (dir / "notice").string()}, /*checkpoint_every=*/1000);
  ASSERT_GT(launcher, 0);
  ASSERT_TRUE(WaitForStep(dir, kKillAfter, launcher)) << Log(dir);
  ASSERT_TRUE(WriteFileAtomically(dir / "notice", "terminate\n").ok());
  ASSERT_EQ(WaitExit(launcher), 0) << Log(dir);
  EXPECT_FALSE(fs::exists(dir / "notice")) << "the notice is consumed";
  const auto json = ResultJson(dir);
  const auto& segments = json.at("segments");
  ASSERT_EQ(segments.size(), 2u) << json.dump(1);
  EXPECT_EQ(segments[0].at("ended").get<std::string>(), "preemption notice");
  const int64_t stopped = segments[0].at("checkpoint").get<int64_t>();
  EXPECT_GE(stopped, kKillAfter);
  EXPECT_EQ(segments[0].at("reached").get<int64_t>(), stopped) << "no step trained past it";
  EXPECT_EQ(segments[1].at("first_step").get<int64_t>(), stopped);
  EXPECT_EQ(json.at("lost_steps").get<int64_t>(), 0);
  EXPECT_EQ(json.at("morphs").get<int>(), 1);
  EXPECT_EQ(segments[1].at("workers").get<int>(), 3);
  // The first segment's losses and the second's together are one uninterrupted run.
  EXPECT_EQ(static_cast<int64_t>(segments[0].at("losses").size()), stopped);
  ExpectUninterruptedTrajectory(dir, segments[1]);
  fs::remove_all(dir);
}

// Runs a shell command; its exit status.
int Shell(const std::string& cmd) {
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

// "Hosts": network namespaces on a bridge (veth pairs, addresses 10.79.<n>.1, .2, ...), named
// after this process so parallel runs do not collide; removed when the object goes. ok() is
// false where namespaces cannot be made (not root, no ip).
class NamespaceHosts {
 public:
  explicit NamespaceHosts(int count) {
    const int id = static_cast<int>(getpid() % 100000);
    subnet_ = fmt::format("10.79.{}", id % 250);
    bridge_ = fmt::format("plbr{}", id);
    for (int h = 0; h < count; ++h) names_.push_back(fmt::format("pipeline-{}-h{}", id, h));
    if (geteuid() != 0) return;
    std::string cmd = fmt::format("ip link add {0} type bridge && ip link set {0} up", bridge_);
    for (int h = 0; h < count; ++h) {
      const std::string ns = names_[h], in = fmt::format("plv{}h{}", id, h),
                        out = fmt::format("plb{}h{}", id, h);
      cmd += fmt::format(
          " && ip netns add {0} && ip link add {1} type veth peer name {2} && ip link set {1} "
          "netns {0} && ip link set {2} master {3} && ip link set {2} up && ip netns exec {0} "
          "ip addr add {4}.{5}/24 dev {1} && ip netns exec {0} ip link set {1} up && ip netns "
          "exec {0} ip link set lo up",
          ns, in, out, bridge_, subnet_, h + 1);
    }
    ok_ = Shell(cmd + " 2>/dev/null") == 0;
  }
  ~NamespaceHosts() {
    for (const auto& ns : names_) Shell(fmt::format("ip netns del {} 2>/dev/null", ns));
    Shell(fmt::format("ip link del {} 2>/dev/null", bridge_));
  }
  bool ok() const { return ok_; }
  // A hosts file line per host: "address ssh-like ip netns exec NS".
  std::string HostsFile(const std::string& wrapper) const {
    std::string text;
    for (size_t h = 0; h < names_.size(); ++h) {
      text += fmt::format("{}.{} {} ip netns exec {}\n", subnet_, h + 1, wrapper, names_[h]);
    }
    return text;
  }

 private:
  std::string subnet_, bridge_;
  std::vector<std::string> names_;
  bool ok_ = false;
};

// The kill and the notice again, on "real hosts": one worker per network namespace on a
// bridge, launched through the ssh-like wrapper with `ip netns exec` (pipeline activations, the
// transport, gloo's store and all-reduce all cross the veth links). The worker on the third host is
// killed (the job morphs to 3 workers), then a spot notice arrives during the second segment
// (checkpoint at the next step boundary, no step trained twice, morph to 2); the losses of the
// finishing segment and the final parameters equal an uninterrupted single-process run.
TEST(Morph, RemoteHostsInNetworkNamespacesKillAndNotice) {
  NamespaceHosts hosts(4);
  if (!hosts.ok()) GTEST_SKIP() << "network namespaces need root and iproute2";
  const fs::path dir = TempDir("netns");
  ASSERT_TRUE(WriteFileAtomically(dir / "workers", "4\n").ok());
  ASSERT_TRUE(WriteFileAtomically(dir / "hosts",
                                  hosts.HostsFile(SourceDir() + "/pipeline/testdata/ssh-like"))
                  .ok());
  const int base_port = 20000 + static_cast<int>(getpid() % 20000);
  const pid_t launcher =
      StartElastic(dir, {"--hosts", (dir / "hosts").string(), "--base-port",
                         std::to_string(base_port), "--notice-file", (dir / "notice").string()});
  ASSERT_GT(launcher, 0);
  ASSERT_TRUE(WaitForCheckpoint(dir, kKillAfter, launcher)) << Log(dir);
  // Rank 2 is on the third host (ranks go round-robin over the hosts).
  const pid_t worker = ChildOf(PidOfRank(dir, 2));
  ASSERT_GT(worker, 0) << Log(dir);
  ASSERT_EQ(kill(worker, SIGKILL), 0);
  // The second segment: wait until its rank 0 is a few steps past its start, then the notice.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(3);
  int64_t resumed = -1;
  while (std::chrono::steady_clock::now() < give_up) {
    auto text = ReadFile(dir / "run" / "segment-1" / "heartbeat-0");
    if (text.ok() && std::atoll(text->c_str()) >= 0) {
      if (resumed < 0) resumed = std::atoll(text->c_str());
      if (std::atoll(text->c_str()) >= resumed + 3) break;
    }
    ASSERT_NE(waitpid(launcher, nullptr, WNOHANG), launcher) << Log(dir);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(WriteFileAtomically(dir / "notice", "terminate\n").ok());
  ASSERT_EQ(WaitExit(launcher), 0) << Log(dir);
  const auto json = ResultJson(dir);
  const auto& segments = json.at("segments");
  ASSERT_EQ(segments.size(), 3u) << json.dump(1);
  // 4 workers under the memory limit: P=2 D=2, so each stage's gloo group spans two hosts.
  EXPECT_EQ(segments[0].at("replicas").get<int>(), 2) << json.dump(1);
  EXPECT_EQ(segments[0].at("ended").get<std::string>(), "worker 2 lost") << Log(dir);
  EXPECT_EQ(segments[1].at("workers").get<int>(), 3);
  EXPECT_EQ(segments[1].at("ended").get<std::string>(), "preemption notice");
  const int64_t stopped = segments[1].at("checkpoint").get<int64_t>();
  EXPECT_EQ(segments[1].at("reached").get<int64_t>(), stopped) << "no step trained past it";
  EXPECT_EQ(segments[2].at("first_step").get<int64_t>(), stopped);
  EXPECT_EQ(segments[2].at("workers").get<int>(), 2);
  EXPECT_EQ(json.at("morphs").get<int>(), 2);
  // Only the kill may repeat steps (those since its checkpoint), the notice none.
  EXPECT_EQ(json.at("lost_steps").get<int64_t>(),
            segments[0].at("reached").get<int64_t>() - segments[0].at("checkpoint").get<int64_t>());
  ExpectUninterruptedTrajectory(dir, segments[2]);
  fs::remove_all(dir);
}

// A scheduler preempts the launcher with SIGTERM (Kubernetes, Slurm, the cluster's agent): every
// worker stops at the next step boundary with a checkpoint there, the log holds the step line of
// every trained step, --json is written with their exact losses, and the launcher exits 143.
TEST(Morph, TerminateStopsAtAStepBoundaryAndReportsEveryStep) {
  const fs::path dir = TempDir("term");
  ASSERT_TRUE(WriteFileAtomically(dir / "workers", "4\n").ok());
  const pid_t launcher = StartElastic(dir, {}, /*checkpoint_every=*/1000);
  ASSERT_GT(launcher, 0);
  ASSERT_TRUE(WaitForStep(dir, kKillAfter, launcher)) << Log(dir);
  ASSERT_EQ(kill(launcher, SIGTERM), 0);
  EXPECT_EQ(WaitExit(launcher), 143) << Log(dir);
  const auto json = ResultJson(dir);
  ASSERT_TRUE(json.is_object()) << "no --json after SIGTERM\n" << Log(dir);
  EXPECT_TRUE(json.at("terminated").get<bool>());
  const auto& segments = json.at("segments");
  ASSERT_EQ(segments.size(), 1u) << json.dump(1);
  EXPECT_EQ(segments[0].at("ended").get<std::string>(), "terminated");
  const int64_t stopped = segments[0].at("checkpoint").get<int64_t>();
  EXPECT_GE(stopped, kKillAfter);
  EXPECT_LT(stopped, kSteps);
  EXPECT_EQ(segments[0].at("reached").get<int64_t>(), stopped);
  const auto losses = segments[0].at("losses").get<std::vector<double>>();
  ASSERT_EQ(static_cast<int64_t>(losses.size()), stopped);
  const std::string log = Log(dir);
  for (int64_t k = 1; k <= stopped; ++k) {
    EXPECT_NE(log.find(fmt::format("step {}/{} loss ", k, kSteps)), std::string::npos)
        << "step " << k << " is missing from the log:\n"
        << log;
  }
  auto state = ReadUnitState(dir / "ckpt", stopped, 0);
  EXPECT_TRUE(state.ok()) << state.status();
  fs::remove_all(dir);
}

// A launcher killed with -9 takes its workers with it (PR_SET_PDEATHSIG), also behind a
// wrapper: the wrapper dies with the launcher and the worker with the wrapper. Without it they
// would train on until the transport's deadline (--timeout 120 here).
TEST(Morph, WorkersDieWithTheirLauncher) {
  const fs::path dir = TempDir("orphans");
  ASSERT_TRUE(WriteFileAtomically(dir / "workers", "4\n").ok());
  const std::string wrapper = SourceDir() + "/pipeline/testdata/ssh-like";
  ASSERT_TRUE(WriteFileAtomically(dir / "hosts", "127.0.0.1\n127.0.0.1 " + wrapper + "\n").ok());
  // Far more steps than the 20 s below can train, so no worker ends by finishing.
  const pid_t launcher = StartElastic(dir, {"--hosts", (dir / "hosts").string()},
                                      /*checkpoint_every=*/1000, /*steps=*/1000000);
  ASSERT_GT(launcher, 0);
  ASSERT_TRUE(WaitForStep(dir, 2, launcher)) << Log(dir);
  std::vector<pid_t> processes;  // ranks 0 and 2 directly, 1 and 3 as wrapper and worker
  for (int rank = 0; rank < 4; ++rank) {
    const pid_t pid = PidOfRank(dir, rank);
    ASSERT_GT(pid, 0) << Log(dir);
    processes.push_back(pid);
    if (rank % 2 == 1) {
      const pid_t worker = ChildOf(pid);
      ASSERT_GT(worker, 0) << "no worker under the wrapper of rank " << rank;
      processes.push_back(worker);
    }
  }
  ASSERT_EQ(kill(launcher, SIGKILL), 0);
  WaitExit(launcher);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  std::vector<pid_t> alive = processes;
  while (!alive.empty() && std::chrono::steady_clock::now() < give_up) {
    std::erase_if(alive, [](pid_t p) { return !Alive(p); });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(alive.empty()) << alive.size() << " of " << processes.size()
                             << " worker processes outlived their launcher";
  for (pid_t p : alive) kill(p, SIGKILL);
  fs::remove_all(dir);
}

// A workers file that does not hold a number is a clear error before anything starts.
TEST(Morph, BadWorkersFileIsRefused) {
  const fs::path dir = TempDir("bad");
  ASSERT_TRUE(WriteFileAtomically(dir / "workers", "four\n").ok());
  const pid_t launcher = StartElastic(dir);
  ASSERT_GT(launcher, 0);
  EXPECT_NE(WaitExit(launcher), 0);
  EXPECT_NE(Log(dir).find("must hold one non-negative integer"), std::string::npos) << Log(dir);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tessera::pipeline
