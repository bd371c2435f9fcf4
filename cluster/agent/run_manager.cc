#include "cluster/agent/run_manager.h"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <set>
#include <thread>

#include "cluster/job/job_type.h"
#include "cluster/job/pipeline_job.h"

namespace tessera::cluster {

namespace {

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

RunManager::RunManager(RunManagerOptions options) : options_(std::move(options)) {}

std::filesystem::path RunManager::ControlDir(const rpc::Assignment& a) {
  if (a.gang()) return GangRun::RunDir(a);
  if (a.num_nodes() > 1 && a.node_rank() > 0) {
    return PipelinePartDir(a.job_dir(), a.run(), a.node_rank());
  }
  return a.job_dir();
}

int RunManager::live_runs() const {
  int n = 0;
  for (const auto& [id, run] : runs_) {
    if (run.alive()) ++n;
  }
  return n;
}

void RunManager::Kill(Run& run) {
  if (run.process) {
    // The whole group: a job type's program may run children of its own (the pipeline job's
    // launcher and workers).
    run.process->SignalGroup(SIGKILL);
    run.process->Wait();
  }
  if (run.gang) run.gang->Kill();
}

void RunManager::StartGang(Run& run, const JobCommand& command) {
  const rpc::Assignment& a = run.assignment;
  GangOptions options{.log_dir = options_.log_dir,
                      .python_path = options_.python_path,
                      .barrier_timeout = options_.stop_timeout,
                      .term_grace = options_.term_grace};
  Result<GangRun> gang = GangRun::Start(a, command, options);
  if (!gang.ok()) {
    spdlog::error("{} run {}: {}", a.job_id(), a.run(), gang.status().ToString());
    run.report.set_exit(rpc::RunReport::CRASHED);
    run.report.set_exit_code(127);
    run.report.set_failed_rank(a.rank_offset());
    run.report.set_detail(gang.status().ToString());
    run.exited_at = Clock::now();
    return;
  }
  run.gang.emplace(std::move(*gang));
  // A program that knows nothing of the scheduler never reports progress: its part counts as
  // started (restored) once its processes run. The layer's progress reports add the steps.
  run.first_progress_at = Clock::now();
  run.report.set_started(true);
  run.report.set_restore_seconds(0);
}

void RunManager::Start(Run& run) {
  const rpc::Assignment& a = run.assignment;
  run.report.set_job_id(a.job_id());
  run.report.set_run(a.run());
  run.report.set_workers(a.workers());
  run.started_at = Clock::now();
  if (a.gang()) {
    // Every node of the gang starts its part; the run directory is per run, so nothing of
    // an earlier incarnation needs removing (and another node's ranks may already write).
    Result<JobCommand> command =
        SplitJobType(std::vector<std::string>(a.args().begin(), a.args().end()));
    if (!command.ok() || command->type != kCommandJobType) {
      spdlog::error("{} run {}: a gang assignment for a job that is not a command", a.job_id(),
                    a.run());
      run.report.set_exit(rpc::RunReport::CRASHED);
      run.report.set_exit_code(127);
      run.exited_at = Clock::now();
      return;
    }
    return StartGang(run, *command);
  }
  if (Status s = run.dir.Prepare(); !s.ok()) {
    spdlog::error("{} run {}: {}", a.job_id(), a.run(), s.ToString());
    run.report.set_exit(rpc::RunReport::CRASHED);
    run.report.set_exit_code(127);
    run.exited_at = Clock::now();
    return;
  }
  auto fail = [&](const Status& s) {
    spdlog::error("{} run {}: {}", a.job_id(), a.run(), s.ToString());
    run.report.set_exit(rpc::RunReport::CRASHED);
    run.report.set_exit_code(127);
    run.exited_at = Clock::now();
  };
  Result<JobCommand> command =
      SplitJobType(std::vector<std::string>(a.args().begin(), a.args().end()));
  if (!command.ok()) return fail(command.status());
  std::filesystem::path program = options_.job_binary;
  if (command->type != kDefaultJobType) {
    auto it = options_.job_programs.find(command->type);
    if (it == options_.job_programs.end()) {
      return fail(NotFoundError("no program for job type " + command->type + " on this node"));
    }
    program = it->second;
  }
  ProcessOptions po;
  po.argv.push_back(program.string());
  for (const std::string& arg : command->args) po.argv.push_back(arg);
  po.argv.push_back("--world-size");
  po.argv.push_back(std::to_string(a.world_size()));
  po.env = {{kEnvJobId, a.job_id()},
            {kEnvJobDir, run.dir.path().string()},
            {kEnvJobWorkers, std::to_string(a.workers())},
            {kEnvRun, std::to_string(a.run())},
            {kEnvNodeRank, std::to_string(a.node_rank())},
            {kEnvNumNodes, std::to_string(std::max(1, a.num_nodes()))},
            {kEnvNodeAddress, a.node_address().empty() ? "127.0.0.1" : a.node_address()},
            {kEnvLocalSlots, std::to_string(a.local_slots() > 0 ? a.local_slots() : a.workers())}};
  po.log_file = options_.log_dir / (a.job_id() + "-run" + std::to_string(a.run()) + ".log");
  Result<Process> process = Process::Spawn(po);
  if (!process.ok()) return fail(process.status());
  spdlog::info("{} run {}: started {} job pid {} with {} worker(s), world size {}", a.job_id(),
               a.run(), command->type, process->pid(), a.workers(), a.world_size());
  run.process.emplace(std::move(*process));
}

bool RunManager::ReconcileList(const std::vector<rpc::Assignment>& assignments) {
  bool changed = false;
  std::set<std::string> wanted;
  for (const rpc::Assignment& a : assignments) {
    wanted.insert(a.job_id());
    auto it = runs_.find(a.job_id());
    if (it != runs_.end() && it->second.assignment.run() != a.run()) {
      // A newer run of the same job replaces one the scheduler gave up on: never two writers.
      if (it->second.alive()) {
        spdlog::warn("{} run {}: replaced by run {}, killing it", a.job_id(),
                     it->second.assignment.run(), a.run());
        Kill(it->second);
      }
      runs_.erase(it);
      it = runs_.end();
    }
    if (it == runs_.end()) {
      Run& run = runs_.emplace(a.job_id(), Run(a)).first->second;
      if (a.stop()) {
        // Asked to stop a run that never started here: nothing to checkpoint.
        run.report.set_job_id(a.job_id());
        run.report.set_run(a.run());
        run.report.set_exit(rpc::RunReport::CHECKPOINTED);
        run.started_at = run.exited_at.emplace(Clock::now());
      } else {
        Start(run);
      }
      changed = true;
      continue;
    }
    Run& run = it->second;
    if (a.stop() && !run.stop_ordered_at && run.alive()) {
      Status s = run.gang ? run.gang->OrderStop() : run.dir.OrderCheckpointAndExit("scheduler");
      if (!s.ok()) {
        spdlog::error("{} run {}: cannot order a checkpoint: {}", a.job_id(), a.run(),
                      s.ToString());
        continue;  // retried at the next heartbeat
      }
      run.stop_ordered_at = Clock::now();
      spdlog::info("{} run {}: checkpoint-and-exit ordered", a.job_id(), a.run());
      changed = true;
    }
  }
  for (auto it = runs_.begin(); it != runs_.end();) {
    if (wanted.contains(it->first)) {
      ++it;
      continue;
    }
    if (it->second.alive()) {
      spdlog::warn("{} run {}: no longer assigned to this node, killing it", it->first,
                   it->second.assignment.run());
      Kill(it->second);
      changed = true;
    }
    it = runs_.erase(it);
  }
  return changed;
}

void RunManager::Update(Run& run, bool* changed) {
  if (!run.alive()) return;
  auto progress = run.dir.ReadProgress();
  if (progress.ok() && progress->has_value()) {
    const Progress& p = **progress;
    run.report.set_step_reported(true);
    run.report.set_step(p.step);
    run.report.set_total_steps(p.total_steps);
    run.report.set_loss(p.loss);
    if (!run.first_progress_at) {
      run.first_progress_at = Clock::now();
      run.report.set_started(true);
      run.report.set_restore_seconds(Seconds(*run.first_progress_at - run.started_at));
      if (changed) *changed = true;
    }
  }
  if (run.gang) {
    if (!run.gang->Poll(run.report)) return;
    run.exited_at = Clock::now();
    if (changed) *changed = true;
    spdlog::info("{} run {}: part exited ({}): {}", run.assignment.job_id(), run.assignment.run(),
                 rpc::RunReport::Exit_Name(run.report.exit()), run.report.detail());
    return;
  }
  std::optional<int> status = run.process->Poll();
  if (!status && run.stop_ordered_at &&
      Clock::now() - *run.stop_ordered_at > options_.stop_timeout) {
    spdlog::warn("{} run {}: ignored the checkpoint order for {} ms, killing it",
                 run.assignment.job_id(), run.assignment.run(), options_.stop_timeout.count());
    run.process->Signal(SIGKILL);
    status = run.process->Wait();
  }
  if (!status) return;
  run.exited_at = Clock::now();
  if (changed) *changed = true;
  run.report.set_exit_code(*status);
  auto exit = run.dir.ReadExit();
  if (*status == 0 && exit.ok() && exit->has_value()) {
    run.report.set_step((*exit)->step);
    run.report.set_exit((*exit)->kind == ExitReport::Kind::kFinished
                            ? rpc::RunReport::FINISHED
                            : rpc::RunReport::CHECKPOINTED);
    if (run.stop_ordered_at) {
      run.report.set_checkpoint_seconds(Seconds(*run.exited_at - *run.stop_ordered_at));
    }
  } else {
    run.report.set_exit(rpc::RunReport::CRASHED);
  }
  spdlog::info("{} run {}: exited with status {} ({}) at step {}", run.assignment.job_id(),
               run.assignment.run(), *status, rpc::RunReport::Exit_Name(run.report.exit()),
               run.report.step());
}

std::vector<rpc::RunReport> RunManager::Collect(bool* changed) {
  std::vector<rpc::RunReport> reports;
  for (auto& [id, run] : runs_) {
    Update(run, changed);
    reports.push_back(run.report);
  }
  return reports;
}

void RunManager::StopAll(std::chrono::milliseconds grace) {
  for (auto& [id, run] : runs_) {
    if (run.gang && run.alive()) run.gang->OrderStop().ok();
    if (run.process && !run.exited_at) run.dir.OrderCheckpointAndExit("agent shutdown").ok();
  }
  auto deadline = Clock::now() + grace;
  for (auto& [id, run] : runs_) {
    if (run.gang && run.alive()) {
      rpc::RunReport ignored;
      while (!run.gang->Poll(ignored) && Clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      run.gang->Kill();
      continue;
    }
    if (!run.process || run.exited_at) continue;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (!run.process->WaitFor(std::max(left, std::chrono::milliseconds(0)))) {
      spdlog::warn("{} run {}: did not checkpoint within the grace period, killing it", id,
                   run.assignment.run());
    }
  }
  runs_.clear();  // ~Process kills and reaps whatever is left
}

}  // namespace tessera::cluster
