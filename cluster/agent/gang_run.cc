#include "cluster/agent/gang_run.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>

#include "cluster/job/control.h"
#include "cluster/job/rank_dealing.h"
#include "core/file.h"

namespace tessera::cluster {

namespace {

namespace fs = std::filesystem;

Result<std::string> ResolveProgram(const std::string& name) {
  if (name.empty()) return InvalidArgumentError("empty program name");
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    fs::path candidate = fs::path(dirs.substr(start, end - start)) / name;
    if (end > start && ::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    start = end + 1;
  }
  return NotFoundError("program " + name + " not found on the agent's PATH");
}

std::string RankRange(int first, int count) {
  return count == 1 ? fmt::format("rank {}", first)
                    : fmt::format("ranks {}-{}", first, first + count - 1);
}

}  // namespace

Status CheckPortFree(const std::string& address, int port) {
  if (port < 1 || port > 65535) return InvalidArgumentError(fmt::format("bad port {}", port));
  sockaddr_in where{};
  where.sin_family = AF_INET;
  where.sin_port = htons(static_cast<uint16_t>(port));
  if (::inet_pton(AF_INET, address.c_str(), &where.sin_addr) != 1) {
    where.sin_addr.s_addr = htonl(INADDR_ANY);  // a host name: check every local address
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return InternalError(std::string("socket: ") + std::strerror(errno));
  // As c10d's TCPStore binds: SO_REUSEADDR, so a port in TIME_WAIT counts as free.
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const bool bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&where), sizeof where) == 0;
  const int err = errno;
  ::close(fd);
  if (!bound) {
    return UnavailableError(
        fmt::format("MASTER_PORT {} on {} is not free: {}", port, address, std::strerror(err)));
  }
  return Status::Ok();
}

fs::path GangRun::RunDir(const rpc::Assignment& a) {
  return fs::path(a.job_dir()) / "runs" / std::to_string(a.run());
}

Result<GangRun> GangRun::Start(const rpc::Assignment& a, const JobCommand& job,
                               const GangOptions& options) {
  const std::vector<std::string>& command = job.args;
  if (command.empty()) return InvalidArgumentError("a command job needs a command");
  if (a.local_ranks() < 1 || a.world_size() < a.rank_offset() + a.local_ranks()) {
    return InvalidArgumentError(fmt::format("bad rank block {}+{} of world size {}",
                                            a.rank_offset(), a.local_ranks(), a.world_size()));
  }
  // Logical ranks: one process per slot of this node, process p (the job's slot p) holding the
  // slot's ranks as logical ranks; the processes form a group of `workers` (the run's slots).
  int first_slot = -1;
  if (job.logical_ranks) {
    first_slot = a.workers() >= 1 && a.workers() <= a.world_size() && a.local_slots() >= 1
                     ? SlotStartingAt(a.rank_offset(), a.workers(), a.world_size())
                     : -1;
    if (first_slot < 0 || first_slot + a.local_slots() > a.workers() ||
        FirstRankOfSlot(first_slot + a.local_slots(), a.workers(), a.world_size()) !=
            a.rank_offset() + a.local_ranks()) {
      return InvalidArgumentError(fmt::format(
          "ranks {}+{} on {} slot(s) are not whole slots of {} rank(s) on {} slot(s)",
          a.rank_offset(), a.local_ranks(), a.local_slots(), a.world_size(), a.workers()));
    }
  }
  TESSERA_ASSIGN_OR_RETURN(std::string program, ResolveProgram(command[0]));
  if (a.rank_offset() == 0) {
    // Rank 0 serves the rendezvous (c10d's TCPStore) on MASTER_PORT: a port taken on this node
    // fails the run before any rank starts, and the scheduler's next run gets another port.
    TESSERA_RETURN_IF_ERROR(CheckPortFree(a.master_addr(), a.master_port()));
  }
  const fs::path run_dir = RunDir(a);
  std::error_code ec;
  fs::create_directories(run_dir, ec);
  if (ec) return InternalError("creating " + run_dir.string() + ": " + ec.message());
  fs::create_directories(fs::path(a.job_dir()) / "ckpt", ec);
  if (ec) return InternalError("creating the checkpoint directory: " + ec.message());

  GangRun run(a, options);
  std::string python_path = options.python_path.string();
  if (const char* inherited = std::getenv("PYTHONPATH"); inherited != nullptr && *inherited) {
    python_path = python_path.empty() ? inherited : python_path + ":" + inherited;
  }
  const int processes = job.logical_ranks ? a.local_slots() : a.local_ranks();
  const int first = job.logical_ranks ? first_slot : a.rank_offset();
  const int world = job.logical_ranks ? a.workers() : a.world_size();
  for (int local = 0; local < processes; ++local) {
    const int rank = first + local;
    ProcessOptions po;
    po.argv.push_back(program);
    po.argv.insert(po.argv.end(), command.begin() + 1, command.end());
    po.env = {
        {"RANK", std::to_string(rank)},
        {"LOCAL_RANK", std::to_string(local)},
        {"WORLD_SIZE", std::to_string(world)},
        {"LOCAL_WORLD_SIZE", std::to_string(processes)},
        {"GROUP_RANK", std::to_string(a.node_rank())},
        {"GROUP_WORLD_SIZE", std::to_string(a.num_nodes())},
        {"ROLE_RANK", std::to_string(rank)},
        {"ROLE_WORLD_SIZE", std::to_string(world)},
        {"ROLE_NAME", "default"},
        {"MASTER_ADDR", a.master_addr()},
        {"MASTER_PORT", std::to_string(a.master_port())},
        {"TORCHELASTIC_RUN_ID", a.job_id()},
        {"TORCHELASTIC_RESTART_COUNT", std::to_string(a.run() - 1)},
        {"TORCHELASTIC_MAX_RESTARTS", "0"},
        {kEnvJobId, a.job_id()},
        {kEnvJobDir, a.job_dir()},
        {kEnvJobWorkers, std::to_string(a.workers())},
        {"TESSERA_CHECKPOINT_DIR", (fs::path(a.job_dir()) / "ckpt").string()},
        {"TESSERA_RUN", std::to_string(a.run())},
        {"TESSERA_RUN_DIR", run_dir.string()},
        {"TESSERA_LOCAL_SLOTS", std::to_string(a.local_slots())},
    };
    if (job.logical_ranks) {
      const int begin = FirstRankOfSlot(rank, a.workers(), a.world_size());
      const int end = FirstRankOfSlot(rank + 1, a.workers(), a.world_size());
      po.env.emplace_back(kEnvLogicalWorldSize, std::to_string(a.world_size()));
      po.env.emplace_back(kEnvLogicalRanks, fmt::format("{}-{}", begin, end - 1));
    }
    if (std::getenv("OMP_NUM_THREADS") == nullptr) po.env.emplace_back("OMP_NUM_THREADS", "1");
    if (!python_path.empty()) po.env.emplace_back("PYTHONPATH", python_path);
    po.log_file = options.log_dir / fmt::format("{}-run{}-rank{}.log", a.job_id(), a.run(), rank);
    Result<Process> process = Process::Spawn(po);
    if (!process.ok()) {
      run.Kill();
      return process.status().WithContext(fmt::format("rank {}", rank));
    }
    run.ranks_.push_back({.rank = rank, .process = std::move(*process), .status = {}});
  }
  if (job.logical_ranks) {
    spdlog::info(
        "{} run {}: started processes {}-{} of {}, holding logical {} of world size {} "
        "(master {}:{}): {}",
        a.job_id(), a.run(), first, first + processes - 1, world,
        RankRange(a.rank_offset(), a.local_ranks()), a.world_size(), a.master_addr(),
        a.master_port(), program);
  } else {
    spdlog::info("{} run {}: started {} of world size {} ({} slot(s) here, master {}:{}): {}",
                 a.job_id(), a.run(), RankRange(a.rank_offset(), a.local_ranks()), a.world_size(),
                 a.local_slots(), a.master_addr(), a.master_port(), program);
  }
  return run;
}

Status GangRun::OrderStop() {
  if (stop_ordered_at_) return Status::Ok();
  TESSERA_RETURN_IF_ERROR(JobDir(RunDir(assignment_)).OrderCheckpointAndExit("scheduler"));
  stop_ordered_at_ = Clock::now();
  return Status::Ok();
}

bool GangRun::LayerActive() const {
  std::error_code ec;
  for (const Rank& r : ranks_) {
    if (fs::exists(RunDir(assignment_) / fmt::format("rank-{}.layer", r.rank), ec)) return true;
  }
  return false;
}

void GangRun::SignalLive(int signal) {
  for (Rank& r : ranks_) {
    if (!r.status) r.process.SignalGroup(signal);
  }
}

int GangRun::live_ranks() const {
  int n = 0;
  for (const Rank& r : ranks_) n += r.status ? 0 : 1;
  return n;
}

void GangRun::Kill() {
  SignalLive(SIGKILL);
  for (Rank& r : ranks_) {
    if (!r.status) r.status = r.process.Wait();
  }
}

bool GangRun::Poll(rpc::RunReport& report) {
  const auto now = Clock::now();
  for (Rank& r : ranks_) {
    if (r.status) continue;
    r.status = r.process.Poll();
    if (r.status && *r.status != 0 && !stop_ordered_at_ && failed_rank_ < 0) {
      failed_rank_ = r.rank;
      failed_code_ = *r.status;
      spdlog::warn("{} run {}: rank {} exited with code {}, killing the other ranks",
                   assignment_.job_id(), assignment_.run(), r.rank, *r.status);
      SignalLive(SIGKILL);
    }
  }
  if (stop_ordered_at_ && live_ranks() > 0) {
    if (!term_sent_at_ && (!LayerActive() || now - *stop_ordered_at_ > options_.barrier_timeout)) {
      SignalLive(SIGTERM);
      term_sent_at_ = now;
    } else if (term_sent_at_ && !kill_sent_ && now - *term_sent_at_ > options_.term_grace) {
      spdlog::warn("{} run {}: {} rank(s) ignored SIGTERM for {} ms, sending SIGKILL",
                   assignment_.job_id(), assignment_.run(), live_ranks(),
                   options_.term_grace.count());
      SignalLive(SIGKILL);
      kill_sent_ = true;
    }
  }
  if (live_ranks() > 0) return false;
  report.set_failed_rank(failed_rank_);
  if (stop_ordered_at_) {
    report.set_exit(rpc::RunReport::CHECKPOINTED);
    report.set_exit_code(0);
    report.set_checkpoint_seconds(std::chrono::duration<double>(now - *stop_ordered_at_).count());
  } else if (failed_rank_ >= 0) {
    report.set_exit(rpc::RunReport::CRASHED);
    report.set_exit_code(failed_code_);
  } else {
    report.set_exit(rpc::RunReport::FINISHED);
    report.set_exit_code(0);
  }
  report.set_detail(Describe());
  return true;
}

std::string GangRun::Describe() const {
  const std::string ranks = RankRange(assignment_.rank_offset(), assignment_.local_ranks());
  if (!stop_ordered_at_) {
    if (failed_rank_ >= 0) {
      return fmt::format("rank {} exited with code {}{}", failed_rank_, failed_code_,
                         failed_code_ > 128 ? fmt::format(" (signal {})", failed_code_ - 128) : "");
    }
    return ranks + " exited with code 0";
  }
  // Did every rank take the barrier checkpoint, and at which step?
  std::set<int64_t> steps;
  bool all_checkpointed = true;
  for (const Rank& r : ranks_) {
    auto text = ReadFile(RunDir(assignment_) / fmt::format("rank-{}.exit", r.rank));
    auto exit = text.ok() ? ParseExitReport(*text) : Result<ExitReport>(text.status());
    if (exit.ok() && exit->kind == ExitReport::Kind::kCheckpointed && r.status == 0) {
      steps.insert(exit->step);
    } else {
      all_checkpointed = false;
    }
  }
  if (all_checkpointed && steps.size() == 1) {
    return fmt::format("{} took the barrier checkpoint at step {}", ranks, *steps.begin());
  }
  if (all_checkpointed) {
    return fmt::format("{} checkpointed at DIFFERENT steps {}..{}", ranks, *steps.begin(),
                       *steps.rbegin());
  }
  if (kill_sent_) {
    return fmt::format("{} killed with SIGKILL after ignoring SIGTERM for {:.1f} s", ranks,
                       std::chrono::duration<double>(options_.term_grace).count());
  }
  if (term_sent_at_) {
    std::string codes;
    for (const Rank& r : ranks_) {
      codes += fmt::format("{}{}", codes.empty() ? "" : ",", r.status.value_or(-1));
    }
    return fmt::format("{} exited after SIGTERM (exit codes {})", ranks, codes);
  }
  return ranks + " exited on the stop order without a checkpoint";
}

}  // namespace tessera::cluster
