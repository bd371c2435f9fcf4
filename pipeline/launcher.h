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
#include "pipeline/link_rate.h"
#include "pipeline/profile.h"
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
  // A worker whose heartbeat file (<run_dir>/heartbeat-<rank>, refreshed twice a second) is
  // older than this is lost (SIGSTOP, a frozen host); 0: no heartbeat check. The run directory
  // must be shared with the hosts (it already holds the job description and the reports).
  std::chrono::seconds heartbeat_timeout{0};
  // Local workers only: worker r runs on processor CpuForWorker(r, pin_cpus) (pipeline/cpu_pin.h),
  // where the profile timed its copy r. Empty: wherever the scheduler puts it.
  std::vector<int> pin_cpus;
};

struct LaunchResult {
  JobConfig job;                      // as run (with endpoints)
  std::vector<WorkerReport> reports;  // by rank
  double wall_s = 0;                  // process start to last exit
};

// The unit count of a model registered in a worker binary of the user's own
// (pipeline/worker_cli.h): runs `worker_binary --count-units <spec as JSON>`. NOT_FOUND when the
// binary does not know the model either.
Result<int> CountUnitsWithWorker(const std::string& worker_binary, const ModelSpec& spec);

// ProfileMicroBatches (pipeline/profile.h) run by that worker binary (`--profile`), for the
// auto-configuration and `--partition profiled` of a model registered only there, with
// `profile_seconds` as its min_timed_s.
Result<std::vector<ProfiledMicroBatch>> ProfileWithWorker(
    const std::string& worker_binary, const ModelSpec& spec, const std::vector<int>& sizes,
    uint64_t seed, const std::string& optimizer, int contended_workers,
    double profile_seconds = kDefaultProfileSeconds);

// Measures the link from host `from` to host `to` (pipeline/link_rate.h) with the worker
// binary at both ends, started through the hosts' prefixes as workers are: `worker_binary
// --serve-link-probe <to.address>:<port>` on `to`, then `worker_binary --probe-link ...` on
// `from`, whose JSON is the answer. For the auto-configuration's link model where workers run
// on other hosts. Errors carry what the client printed; both ends are gone when it returns.
Result<LinkMeasurement> ProbeHostLink(const std::string& worker_binary, const Host& from,
                                      const Host& to, int port, std::chrono::seconds timeout);

// Starts every worker, waits for all of them and reads their reports. If one fails or the
// timeout passes, the others are stopped (SIGTERM, then SIGKILL) and the error names the rank.
// While the workers run, `<run_dir>/pids` lists "rank pid" per line.
Result<LaunchResult> Launch(const LaunchOptions& options);

// How a watched launch ended, for callers that react to lost workers (pipeline/morph.h).
struct LaunchOutcome {
  Status status;                       // OK, or why the job stopped
  std::optional<LaunchResult> result;  // when OK
  // Lost workers rather than failed ones: ranks that died from a signal this launcher did not
  // send (kill -9, a machine gone), that exited with 255 (what ssh returns when the remote side
  // dies or the connection drops), or whose heartbeat stopped. Empty when OK.
  std::vector<int> lost_ranks;
  bool interrupted = false;  // `interrupt` returned true; the workers were stopped
  // The step boundary at which a preemption notice stopped the job (checkpoint written there,
  // no step lost); -1 when it ran to the end or failed.
  int64_t stopped_at = -1;
  int64_t reached = -1;  // the step rank 0 was in when the launch ended (its heartbeat)
};

// Launch, polling `interrupt` and `notice` (if set) every 20 ms while the workers run.
// `interrupt` returning true stops the workers at once (steps since the last checkpoint are
// lost); `notice` returning true asks them to checkpoint at the next step boundary and exit
// (a preemption notice: nothing is lost).
LaunchOutcome LaunchWatched(const LaunchOptions& options, const std::function<bool()>& interrupt,
                            const std::function<bool()>& notice = nullptr);

struct RunSummary {
  std::vector<double> losses;  // global mean loss per step (sum over last-stage replicas)
  double step_s = 0;           // mean step time of stage 0, replica 0, warm-up step excluded
  double samples_per_s = 0;    // global_batch / step_s
  double cpu_step_s = 0;       // CPU seconds of all workers together per step, warm-up excluded
  // CPU over wall time of every worker's compute tasks, warm-up excluded: the share of a core
  // the tasks got (0 when the reports carry no CPU times). Compared with the profile's
  // (Candidate::cpu_share) it tells how the machine's load changed between profile and run.
  double busy_cpu_share = 0;
  double bubble_stage0 = 0;  // 1 - busy / pipeline time, stage 0 (replica 0), summed steps
  double bubble_mean = 0;    // the same, averaged over all stages of replica 0
  int pulled_ahead = 0;      // Varuna's opportunistic forwards, all workers and steps
};
Result<RunSummary> Summarize(const JobConfig& job, const std::vector<WorkerReport>& reports);

// A simulator configuration from measured per-task times and message sizes of a run, and the
// delivery delay its workers measured (WorkerReport::message_delay_s, the mean over all their
// waited-for messages) as SimConfig::message_delay_s; with `host_links` (non-empty) messages
// take the links between the workers' hosts.
SimConfig SimConfigFromReports(const JobConfig& job, const std::vector<WorkerReport>& reports,
                               const LinkModel& pipeline_link, const LinkModel& allreduce_link,
                               const HostLinks& host_links = {});

// The hosts of a hosts file as HostLinks::host_of_slot: lines with the same address are one
// host, numbered in order of first appearance; `distinct` receives each host's first line.
std::vector<int> HostSlots(const std::vector<Host>& hosts, std::vector<Host>* distinct);

// Measures the link of every ordered pair of distinct hosts with ProbeHostLink, on `port` of
// each receiving host, in rounds of probes run at once where no host takes part in two (it
// sends one, receives one, or idles): about 2 (n - 1) rounds for n hosts. `progress` gets each
// pair's figures. The first error is returned.
Result<HostLinks> ProbeHostLinks(
    const std::string& worker_binary, const std::vector<Host>& hosts, int port,
    std::chrono::seconds timeout,
    const std::function<void(const Host& from, const Host& to, const LinkMeasurement&)>& progress =
        nullptr);

}  // namespace tessera::pipeline
