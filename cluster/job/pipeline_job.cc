#include "cluster/job/pipeline_job.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "cluster/job/node_exec.h"
#include "cluster/job/process.h"
#include "core/file.h"
#include "fmt/format.h"
#include "spdlog/spdlog.h"

namespace tessera::cluster {

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::array<std::string_view, 10> kOwnedFlags = {
    "--elastic", "--workers-file", "--workers", "--save-dir",    "--resume-dir",
    "--run-dir", "--json",         "--auto",    "--notice-file", "--hosts"};

template <typename T>
std::optional<T> Number(std::string_view text) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The first free <dir>/incarnation-<n>, n >= 1.
std::filesystem::path NextIncarnation(const std::filesystem::path& dir) {
  for (int n = 1;; ++n) {
    std::filesystem::path p = dir / fmt::format("incarnation-{}", n);
    std::error_code ec;
    if (!std::filesystem::exists(p, ec)) return p;
  }
}

// Reads whole lines appended to a file since the last call.
class LineTail {
 public:
  explicit LineTail(std::filesystem::path path) : path_(std::move(path)) {}
  template <typename F>
  void Drain(F on_line) {
    std::ifstream in(path_, std::ios::binary);
    if (!in) return;
    in.seekg(offset_);
    std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t start = 0;
    for (size_t nl; (nl = chunk.find('\n', start)) != std::string::npos; start = nl + 1) {
      on_line(std::string_view(chunk).substr(start, nl - start));
    }
    offset_ += static_cast<std::streamoff>(start);
  }

 private:
  std::filesystem::path path_;
  std::streamoff offset_ = 0;
};

void IgnoreTerm(int) {}

int EnvInt(const char* name, int fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr) return fallback;
  return Number<int>(value).value_or(fallback);
}

// What the leader's part tells the other nodes' parts when the launcher is done.
std::string LeaderExitLine(ExitReport::Kind kind, int64_t step) {
  return fmt::format("{} step={}\n",
                     kind == ExitReport::Kind::kFinished ? "finished" : "checkpointed", step);
}

}  // namespace

PipelinePart PipelinePartFromEnvironment() {
  PipelinePart part;
  part.run = EnvInt(kEnvRun, 0);
  part.node_rank = EnvInt(kEnvNodeRank, 0);
  part.num_nodes = std::max(1, EnvInt(kEnvNumNodes, 1));
  if (const char* address = std::getenv(kEnvNodeAddress); address && *address) {
    part.node_address = address;
  }
  part.local_slots = EnvInt(kEnvLocalSlots, 0);
  return part;
}

std::filesystem::path PipelineRunDir(const std::filesystem::path& job_dir, int64_t run) {
  return job_dir / "pipeline" / fmt::format("run-{}", run);
}

std::filesystem::path PipelinePartDir(const std::filesystem::path& job_dir, int64_t run,
                                      int node_rank) {
  return PipelineRunDir(job_dir, run) / fmt::format("node-{}", node_rank);
}

std::string PipelineHostsFile(const std::vector<PipelineHost>& nodes) {
  std::string text;
  int most = 0;
  for (const PipelineHost& n : nodes) most = std::max(most, n.slots);
  for (int round = 0; round < most; ++round) {
    for (const PipelineHost& n : nodes) {
      if (round >= n.slots) continue;
      text += n.address;
      for (const std::string& word : n.prefix) text += " " + word;
      text += "\n";
    }
  }
  return text;
}

Status CheckPipelineFlags(const std::vector<std::string>& flags) {
  for (const std::string& flag : flags) {
    for (std::string_view owned : kOwnedFlags) {
      if (flag == owned || flag.starts_with(std::string(owned) + "=")) {
        return InvalidArgumentError(
            fmt::format("{} is set by the cluster (the job directory holds the checkpoints and the "
                        "scheduler the worker count); drop it",
                        owned));
      }
    }
  }
  return Status::Ok();
}

Status CheckFlagsKnownTo(const std::filesystem::path& launcher,
                         const std::vector<std::string>& flags) {
  const std::string command = fmt::format("'{}' --help 2>/dev/null", launcher.string());
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return InternalError(fmt::format("cannot run {}", launcher.string()));
  std::string help;
  std::array<char, 4096> buffer{};
  while (size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe))
    help.append(buffer.data(), n);
  if (::pclose(pipe) != 0 || help.empty()) {
    return FailedPreconditionError(fmt::format("{} --help failed", launcher.string()));
  }
  std::set<std::string> known;
  for (size_t at = help.find("--"); at != std::string::npos; at = help.find("--", at + 2)) {
    size_t end = at + 2;
    while (end < help.size() && (std::isalnum(static_cast<unsigned char>(help[end])) ||
                                 help[end] == '-' || help[end] == '_')) {
      ++end;
    }
    known.insert(help.substr(at, end - at));
  }
  for (const std::string& flag : flags) {
    if (!flag.starts_with("--") || flag == "--") continue;
    const std::string name = flag.substr(0, flag.find('='));
    if (!known.count(name)) {
      return InvalidArgumentError(
          fmt::format("{} is not a flag of {}", name, launcher.filename().string()));
    }
  }
  return Status::Ok();
}

std::optional<PipelineStepLine> ParsePipelineStepLine(std::string_view line) {
  // "step 12/200 loss 3.4567 lr 0.05 (0.031 s)"
  if (!line.starts_with("step ")) return std::nullopt;
  line.remove_prefix(5);
  const size_t slash = line.find('/');
  const size_t space = line.find(' ');
  if (slash == std::string_view::npos || space == std::string_view::npos || slash > space) {
    return std::nullopt;
  }
  auto step = Number<int64_t>(line.substr(0, slash));
  auto total = Number<int64_t>(line.substr(slash + 1, space - slash - 1));
  std::string_view rest = line.substr(space + 1);
  if (!step || !total || !rest.starts_with("loss ")) return std::nullopt;
  rest.remove_prefix(5);
  auto loss = Number<double>(rest.substr(0, rest.find(' ')));
  if (!loss) return std::nullopt;
  return PipelineStepLine{*step, *total, *loss};
}

std::optional<int64_t> ParseCheckpointedLine(std::string_view line) {
  constexpr std::string_view kMarker = "every worker checkpointed at step ";
  if (!line.starts_with("elastic: ")) return std::nullopt;
  const size_t at = line.find(kMarker);
  if (at == std::string_view::npos) return std::nullopt;
  return Number<int64_t>(line.substr(at + kMarker.size()));
}

Result<PipelineJobOutcome> RunPipelineJob(const PipelineJobOptions& options, JobControl& control) {
  TESSERA_RETURN_IF_ERROR(CheckPipelineFlags(options.launch_flags));
  if (options.world_size < 1) return InvalidArgumentError("world size must be >= 1");
  const std::filesystem::path root = control.dir() / "pipeline";
  PipelineJobOutcome outcome;
  outcome.incarnation_dir = NextIncarnation(root);
  const std::filesystem::path inc = outcome.incarnation_dir;
  std::error_code ec;
  std::filesystem::create_directories(inc, ec);
  if (ec) return InternalError(fmt::format("creating {}: {}", inc.string(), ec.message()));
  const std::filesystem::path workers_file = inc / "workers";
  TESSERA_RETURN_IF_ERROR(
      WriteFileAtomically(workers_file, fmt::format("{}\n", control.workers())));

  // The step the job's checkpoints have reached, as far as this adapter has seen (its stops, the
  // launcher's resume and restart lines): what a stop before the first segment reports.
  const std::filesystem::path known_file = root / "checkpointed-step";
  int64_t known = 0;
  if (auto text = ReadFile(known_file); text.ok()) {
    known = Number<int64_t>(std::string_view(*text).substr(0, text->find('\n'))).value_or(0);
  }

  // A placement over several nodes: the other nodes' parts serve this run's workers there.
  const PipelinePart& part = options.part;
  const bool multi_node = part.num_nodes > 1;
  const std::filesystem::path leader_exit = PipelineRunDir(control.dir(), part.run) / "leader-exit";
  struct TellNodes {  // the other nodes' parts end with this one, whatever its outcome
    std::filesystem::path path;
    std::string line = "failed\n";
    ~TellNodes() {
      if (!path.empty()) WriteFileAtomically(path, line).ok();
    }
  } tell{multi_node ? leader_exit : std::filesystem::path()};
  std::vector<std::string> hosts_flags;
  if (multi_node) {
    std::vector<PipelineHost> nodes = {
        {.address = part.node_address, .slots = part.local_slots, .prefix = {}}};
    const Clock::time_point deadline = Clock::now() + options.rendezvous_timeout;
    for (int i = 1; i < part.num_nodes; ++i) {
      const std::filesystem::path endpoint_file =
          PipelinePartDir(control.dir(), part.run, i) / "endpoint";
      Result<std::string> text = ReadFile(endpoint_file);
      for (; !text.ok(); text = ReadFile(endpoint_file)) {
        if (control.PollOrder() == Order::kCheckpointAndExit) {
          // Stopped before anything started: the job is where its checkpoints are.
          spdlog::info("job {}: stop ordered while waiting for node {}", control.job_id(), i);
          tell.line = LeaderExitLine(ExitReport::Kind::kCheckpointed, known);
          TESSERA_RETURN_IF_ERROR(
              control.ReportExit({.kind = ExitReport::Kind::kCheckpointed, .step = known}));
          return PipelineJobOutcome{.kind = ExitReport::Kind::kCheckpointed,
                                    .step = known,
                                    .total_steps = 0,
                                    .incarnation_dir = inc};
        }
        if (Clock::now() > deadline) {
          return UnavailableError(
              fmt::format("node {} of the placement did not start its part "
                          "(no {})",
                          i, endpoint_file.string()));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      // "HOST:PORT SLOTS"
      std::istringstream words(*text);
      std::string endpoint;
      int slots = 0;
      if (!(words >> endpoint >> slots) || endpoint.rfind(':') == std::string::npos || slots < 1) {
        return InternalError(fmt::format("{}: malformed ('{}')", endpoint_file.string(), *text));
      }
      nodes.push_back({.address = endpoint.substr(0, endpoint.rfind(':')),
                       .slots = slots,
                       .prefix = {options.node_exec.string(), "--node-exec", endpoint}});
    }
    TESSERA_RETURN_IF_ERROR(WriteFileAtomically(inc / "hosts", PipelineHostsFile(nodes)));
    hosts_flags = {"--hosts", (inc / "hosts").string()};
    spdlog::info("job {}: workers on {} nodes (hosts file {})", control.job_id(), nodes.size(),
                 (inc / "hosts").string());
  }

  ProcessOptions po;
  po.argv.push_back(options.launcher.string());
  po.argv.insert(po.argv.end(), options.launch_flags.begin(), options.launch_flags.end());
  po.argv.insert(po.argv.end(), hosts_flags.begin(), hosts_flags.end());
  for (const std::string& flag :
       {std::string("--elastic"), std::string("--workers-file"), workers_file.string(),
        std::string("--save-dir"), (root / "ckpt").string(), std::string("--run-dir"),
        (inc / "run").string(), std::string("--json"), (inc / "result.json").string()}) {
    po.argv.push_back(flag);
  }
  po.log_file = inc / "launch.log";
  // The launcher and its workers join this process's group, which this process leads (agents
  // start every run as a group leader; run by hand, it becomes one here): the agent's kill of
  // the run's group takes them all, and kill(0, ...) below reaches nothing else.
  if (::getpgrp() != ::getpid()) ::setpgid(0, 0);
  po.new_process_group = false;
  // A stop before the first segment signals this group; this process only takes note. (A
  // handler, not SIG_IGN: handlers are reset by exec, so the launcher and workers keep the
  // default action.)
  ::signal(SIGTERM, IgnoreTerm);
  spdlog::info("job {}: pipeline-launch for {} worker(s) in {}", control.job_id(),
               control.workers(), inc.string());
  TESSERA_ASSIGN_OR_RETURN(Process launcher, Process::Spawn(po));

  LineTail tail(po.log_file);
  bool segment_started = false;  // a segment is training: the workers file can stop it
  bool ordered = false;
  bool terminated = false;  // the launcher was told to go (the stop is done or pre-empted)
  std::optional<int64_t> checkpointed;
  int64_t step = 0;
  bool reported = false;
  Clock::time_point last_report;
  std::optional<PipelineStepLine> pending;  // the newest step line not yet reported
  auto on_line = [&](std::string_view line) {
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fputc('\n', stdout);
    if (line.starts_with("elastic: ") &&
        line.find(" workers available;") != std::string_view::npos) {
      segment_started = true;
      if (auto at = line.find("at step "); at != std::string_view::npos) {
        std::string_view rest = line.substr(at + 8);
        if (auto s = Number<int64_t>(rest.substr(0, rest.find(' ')))) {
          known = std::max(known, *s);
        }
      }
    }
    if (auto s = ParsePipelineStepLine(line)) {
      pending = *s;
      step = s->step;
      outcome.total_steps = s->total;
    }
    if (auto s = ParseCheckpointedLine(line); s && ordered) checkpointed = *s;
    // A segment ended by a lost worker: the launcher restarts from this checkpoint.
    constexpr std::string_view kRestart = "; newest complete checkpoint: step ";
    if (auto at = line.find(kRestart);
        line.starts_with("elastic: ") && at != std::string_view::npos) {
      segment_started = false;
      if (auto s = Number<int64_t>(line.substr(at + kRestart.size()))) known = std::max(known, *s);
    }
  };
  auto report = [&]() -> Status {
    if (!pending) return Status::Ok();
    const Clock::time_point now = Clock::now();
    if (reported && now - last_report < std::chrono::milliseconds(100)) return Status::Ok();
    TESSERA_RETURN_IF_ERROR(control.ReportProgress({.step = pending->step,
                                                    .total_steps = pending->total,
                                                    .world_size = options.world_size,
                                                    .workers = control.workers(),
                                                    .loss = pending->loss}));
    reported = true;
    last_report = now;
    pending.reset();
    return Status::Ok();
  };

  std::optional<int> code;
  Clock::time_point terminate_at;
  while (!(code = launcher.Poll())) {
    tail.Drain(on_line);
    std::fflush(stdout);
    TESSERA_RETURN_IF_ERROR(report());
    if (!ordered && control.PollOrder() == Order::kCheckpointAndExit) {
      ordered = true;
      if (segment_started) {
        spdlog::info("job {}: stop ordered at step {}: the workers file says 0", control.job_id(),
                     step);
        TESSERA_RETURN_IF_ERROR(WriteFileAtomically(workers_file, "0\n"));
      } else {
        // Still profiling or configuring, or restarting after a lost worker: nothing trained
        // past the checkpoint the next segment would resume from.
        spdlog::info("job {}: stop ordered before the first segment: stopping the launcher",
                     control.job_id());
        ::kill(0, SIGTERM);
        terminated = true;
        terminate_at = Clock::now();
        checkpointed = known;
      }
    }
    if (checkpointed && !terminated) {
      // The launcher now waits for workers that will not come.
      launcher.Signal(SIGTERM);
      terminated = true;
      terminate_at = Clock::now();
    }
    if (terminated && Clock::now() - terminate_at > std::chrono::seconds(10)) {
      ::kill(0, SIGKILL);  // takes this process too: the agent sees a crash, not a stop
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  tail.Drain(on_line);
  std::fflush(stdout);
  if (*code == 0 && (!checkpointed || *checkpointed >= outcome.total_steps)) {
    // Finished: all steps trained (also when a stop raced with the last step).
    outcome.kind = ExitReport::Kind::kFinished;
    outcome.step = outcome.total_steps > 0 ? outcome.total_steps : step;
  } else if (checkpointed) {
    outcome.kind = ExitReport::Kind::kCheckpointed;
    outcome.step = *checkpointed;
  } else {
    return UnavailableError(
        fmt::format("pipeline-launch exited with code {} (see {})", *code, po.log_file.string()));
  }
  if (outcome.kind == ExitReport::Kind::kFinished && pending) {
    pending->step = outcome.step;
    reported = false;
    TESSERA_RETURN_IF_ERROR(report());
  }
  TESSERA_RETURN_IF_ERROR(WriteFileAtomically(known_file, fmt::format("{}\n", outcome.step)));
  tell.line = LeaderExitLine(outcome.kind, outcome.step);
  TESSERA_RETURN_IF_ERROR(control.ReportExit({.kind = outcome.kind, .step = outcome.step}));
  return outcome;
}

Result<PipelineJobOutcome> RunPipelineNode(const PipelinePart& part, JobControl& control) {
  TESSERA_ASSIGN_OR_RETURN(NodeExecServer server, NodeExecServer::Listen(part.node_address));
  std::error_code ec;
  std::filesystem::create_directories(control.dir(), ec);
  TESSERA_RETURN_IF_ERROR(WriteFileAtomically(
      control.dir() / "endpoint", fmt::format("{} {}\n", server.endpoint(), part.local_slots)));
  spdlog::info("job {}: node {} of {} serves the launcher's workers on {} ({} slot(s))",
               control.job_id(), part.node_rank, part.num_nodes, server.endpoint(),
               part.local_slots);
  const std::filesystem::path leader_exit = control.dir().parent_path() / "leader-exit";
  // Until the leader is done and every worker here has exited (a stop order needs no action:
  // the launcher stops the workers, which checkpoint first).
  while (!(server.active() == 0 && std::filesystem::exists(leader_exit, ec))) {
    server.AcceptFor(50);
  }
  server.WaitIdle();
  const std::string line = ReadFile(leader_exit).value_or("failed");
  std::fputs(
      fmt::format("node {}: ran {} worker(s); leader: {}", part.node_rank, server.started(), line)
          .c_str(),
      stdout);
  std::fflush(stdout);
  PipelineJobOutcome outcome;
  const bool finished = line.starts_with("finished step=");
  if (!finished && !line.starts_with("checkpointed step=")) {
    return UnavailableError("the launcher's node failed: " + line);
  }
  outcome.kind = finished ? ExitReport::Kind::kFinished : ExitReport::Kind::kCheckpointed;
  std::string_view rest = std::string_view(line).substr(line.find('=') + 1);
  outcome.step = Number<int64_t>(rest.substr(0, rest.find('\n'))).value_or(0);
  outcome.incarnation_dir = control.dir();
  TESSERA_RETURN_IF_ERROR(control.ReportExit({.kind = outcome.kind, .step = outcome.step}));
  return outcome;
}

}  // namespace tessera::cluster
