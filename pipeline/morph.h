// Job morphing: keep training while workers come and go (Varuna's morphing on spot VMs,
// research note §8), by checkpoint, re-configuration and restart.
//
// RunElastic trains to job.steps global steps. It asks AutoConfigure (pipeline/autoconfig.h)
// for the best (P, D, m) for the workers available now, launches that job from the newest
// complete checkpoint (checkpoints are keyed by cut unit, so any P and D can resume any of them),
// with a checkpoint every `checkpoint_every` steps, and watches it:
//   * a lost worker (killed by a signal, exit 255 from an ssh-like wrapper, or a stopped
//     heartbeat: pipeline/launcher.h) stops the others, and the job restarts with one worker
//     fewer from the newest complete checkpoint (the steps since it are repeated);
//   * a preemption notice (take_notices: SIGUSR1 or a notice file in pipeline-launch, the way
//     cloud spot notices arrive) makes every worker checkpoint at the next step boundary and
//     exit; the job restarts with one worker fewer per notice from that checkpoint, losing no
//     step (Varuna's on-demand checkpoint on a preemption warning);
//   * a rewrite of the workers file (a number: how many workers are available now) resets the
//     count to that number; if it differs from the running job's, the job stops the same way
//     at the next step boundary and restarts with a configuration for the new count (growing
//     as well as shrinking);
//   * any other worker failure fails the run (a bug is not a lost machine).
// The global batch stays fixed, so the run continues the trajectory an uninterrupted run from the
// same checkpoint would follow: steps since the last checkpoint are repeated with the same data
// and dropout keys (pipeline/runtime.h); incomplete checkpoints after it are deleted first.
//
// What differs from Varuna: Varuna's manager learns of a preemption ahead of time (Azure's
// scheduled events), asks every worker for an on-demand checkpoint and restarts with the new
// machine list, changing D only (its public code never re-runs auto-config, research note §11);
// we do the same on a notice, and re-run auto-configuration, so P changes too. A loss without
// notice costs the steps since the last periodic checkpoint. One launcher process plays Varuna's
// manager and agents; there is no separate morph server.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "pipeline/autoconfig.h"
#include "pipeline/launcher.h"

namespace tessera::pipeline {

struct ElasticOptions {
  // job.steps is the global step count to reach; job.save_dir (required) holds the
  // checkpoints; stages, replicas, micro_batch, boundaries, resume_dir and first_step are set
  // here per restart. Workers run on this machine or round-robin over launch.hosts.
  LaunchOptions launch;
  // Profiles, link, memory limit and cores for AutoConfigure; workers and global batch are set
  // here.
  AutoConfigRequest autoconfig;
  std::string workers_file;  // holds the number of workers available; "" = `workers`, fixed
  int workers = 0;           // available at the start when there is no workers file
  int checkpoint_every = 1;
  int max_restarts = 20;                           // then give up: something keeps killing workers
  std::function<void(std::string_view)> progress;  // one line per event (may be empty)
  // Polled while a segment runs: the number of preemption notices that arrived since the last
  // call (each announces one worker fewer). May be empty.
  std::function<int()> take_notices;
  // Polled like the notices: true once the job is to end (pipeline-launch: SIGTERM or SIGINT,
  // a scheduler's preemption). The running segment stops at the next step boundary with a
  // checkpoint, as for a notice, and RunElastic returns instead of restarting (also while it
  // waits for workers). May be empty.
  std::function<bool()> terminate;
};

// One launch of the job between two morphs.
struct Segment {
  int workers = 0;  // available when it started
  Candidate config;
  int64_t first_step = 0;  // the checkpoint it resumed (0: the start)
  int64_t checkpoint = 0;  // the newest complete checkpoint when it ended
  int64_t reached = 0;     // steps trained when it ended (lost: reached - checkpoint)
  double wall_s = 0;       // launch to end
  std::string ended;  // "finished", "worker 2 lost", "workers file says 4", "preemption notice"
  std::vector<double> losses;  // global loss per step from first_step (finished or stopped)
};

struct ElasticResult {
  std::vector<Segment> segments;
  RunSummary summary;       // of the finished segment
  int64_t lost_steps = 0;   // trained, then repeated after a restart (sum of reached - checkpoint)
  bool terminated = false;  // ended by `terminate` before the last step
};

// INVALID_ARGUMENT for bad options; the launch's error for a worker that failed on its own.
Result<ElasticResult> RunElastic(const ElasticOptions& options);

// {"segments": [{workers, stages, replicas, micro_batch, first_step, checkpoint, reached,
// wall_s, ended, losses}...], "samples_per_s": of the finished segment, "lost_steps",
// "morphs": segments - 1}.
nlohmann::json ElasticResultToJson(const ElasticResult& result);

// The workers file's number (a positive integer, surrounding whitespace allowed).
Result<int> ReadWorkerCount(const std::string& path);

}  // namespace tessera::pipeline
