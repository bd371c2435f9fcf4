// Starting a pipeline job: P x D worker processes on this machine or on listed hosts, waiting
// for them, and turning their reports into the figures people ask for (samples/s, bubble).
// Torch-free: the workers are separate pipeline-worker processes.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "pipeline/job.h"
#include "pipeline/runtime.h"
#include "pipeline/simulator.h"

namespace tessera::pipeline {

// Where workers run. A hosts file has one host per line: the address its workers listen on,
// then optionally a command prefix that starts a program there, e.g.
//   10.10.0.1 ip netns exec pipe0
//   10.10.0.2 ssh -o BatchMode=yes node2
// Ranks go round-robin over the hosts; '#' starts a comment.
struct Host {
  std::string address;
  std::vector<std::string> prefix;
};
Result<std::vector<Host>> ParseHosts(const std::string& text);

struct LaunchOptions {
  JobConfig job;  // endpoints are filled in by Launch
  std::string worker_binary;
  std::string run_dir;                // job.json and reports go here (created)
  std::vector<Host> hosts;            // empty: every worker on 127.0.0.1
  int base_port = 0;                  // rank r listens on base_port + r; 0: pick free local ports
  std::chrono::seconds timeout{600};  // the whole job
};

struct LaunchResult {
  JobConfig job;                      // as run (with endpoints)
  std::vector<WorkerReport> reports;  // by rank
  double wall_s = 0;                  // process start to last exit
};

// Starts every worker, waits for all of them and reads their reports. If one fails or the
// timeout passes, the others are stopped (SIGTERM, then SIGKILL) and the error names the rank.
// While the workers run, `<run_dir>/pids` lists "rank pid" per line.
Result<LaunchResult> Launch(const LaunchOptions& options);

// How a watched launch ended, for callers that react to lost workers (pipeline/morph.h).
struct LaunchOutcome {
  Status status;                       // OK, or why the job stopped
  std::optional<LaunchResult> result;  // when OK
  // Ranks that died from a signal this launcher did not send (kill -9 of a worker, a machine
  // gone): lost workers rather than failed ones. Empty when OK.
  std::vector<int> lost_ranks;
  bool interrupted = false;  // `interrupt` returned true; the workers were stopped
};

// Launch, polling `interrupt` (if set) every 20 ms while the workers run.
LaunchOutcome LaunchWatched(const LaunchOptions& options, const std::function<bool()>& interrupt);

struct RunSummary {
  std::vector<double> losses;  // global mean loss per step (sum over last-stage replicas)
  double step_s = 0;           // mean step time of stage 0, replica 0, warm-up step excluded
  double samples_per_s = 0;    // global_batch / step_s
  double bubble_stage0 = 0;    // 1 - busy / pipeline time, stage 0 (replica 0), summed steps
  double bubble_mean = 0;      // the same, averaged over all stages of replica 0
  int pulled_ahead = 0;        // Varuna's opportunistic forwards, all workers and steps
};
Result<RunSummary> Summarize(const JobConfig& job, const std::vector<WorkerReport>& reports);

// A simulator configuration from measured per-task times and message sizes of a run.
SimConfig SimConfigFromReports(const JobConfig& job, const std::vector<WorkerReport>& reports,
                               const LinkModel& pipeline_link, const LinkModel& allreduce_link);

}  // namespace tessera::pipeline
