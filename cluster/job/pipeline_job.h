// The pipeline trainer (Varuna, pipeline-launch --elastic: docs/pipeline.md) as the cluster job
// type "pipeline" (job_type.h), through pipeline-launch's command line only.
//
// An incarnation granted k slots runs one elastic launcher for k workers:
//
//   pipeline-launch <the user's flags> --elastic --workers-file <inc>/workers
//       --save-dir <job dir>/pipeline/ckpt --run-dir <inc>/run --json <inc>/result.json
//
// with <inc> = <job dir>/pipeline/incarnation-<n>, the workers file holding k and the launcher's
// output in <inc>/launch.log (echoed to this process's stdout, i.e. the agent's run log). The
// launcher profiles the model, runs Varuna's auto-configuration for k workers (P stages x D
// replicas, micro-batch m) and resumes from the newest complete checkpoint in the save dir,
// which every incarnation shares. So a resize by the scheduler (a stop, then a new incarnation
// with the new slot count) is a Varuna morph: the global batch is fixed and the training
// continues the same trajectory on a new (P, D, m).
//
// The control interface (control.h), translated:
//   * progress: the launcher's per-step lines "step k/N loss x ..." become progress reports
//     (step k of N; the first marks the restore as done), at most every 100 ms;
//   * a checkpoint-and-exit order: once a segment runs, the adapter rewrites the workers file to
//     0, which makes the launcher stop every worker at the next step boundary with a checkpoint
//     there ("every worker checkpointed at step s": no step is lost, as on a spot notice); the
//     launcher, now waiting for workers, is then terminated and the exit report says
//     "checkpointed step=s". An order that arrives before a segment runs (the launcher is
//     profiling, or restarting after a lost worker) stops the launcher and its workers by
//     SIGTERM to this process group: nothing was trained past the checkpoint it would resume
//     from, and the exit report names the newest step this adapter knows to be checkpointed
//     (<job dir>/pipeline/checkpointed-step, kept across incarnations; the launcher's periodic
//     checkpoints after a crash may be newer, so it is a lower bound);
//   * the launcher finishing the steps: "finished step=N"; failing: the adapter fails with it
//     (the agent reports a crash and the scheduler restarts the job from its checkpoint).
//
// The launcher and its workers run in this process's process group, so an agent that kills the
// run's group kills them all. The launcher dies with this process (PR_SET_PDEATHSIG); its
// workers do not (pipeline-launch does not ask for it), so after a kill -9 of the adapter alone
// they run until their transport's deadline.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cluster/job/control.h"
#include "core/status.h"

namespace tessera::cluster {

// A run whose placement spans several nodes (docs/cluster.md, "Varuna jobs across nodes"):
// every node's agent starts a part; the part on the placement's first node (node rank 0) is the
// adapter above, every other node's is a NodeExecServer (node_exec.h) through which the
// launcher starts that node's share of the workers. The parts meet in
// <job dir>/pipeline/run-<run>: node i's server writes "HOST:PORT SLOTS" to node-<i>/endpoint;
// the adapter waits for all of them, writes the hosts file (one line per slot, dealt round-robin
// over the nodes, so P x D workers take slots on every node) and passes --hosts to the
// launcher; when the launcher is done it writes leader-exit ("finished step=N", "checkpointed
// step=s" or "failed"), on which every server, once its workers have exited, reports the same
// and exits.
struct PipelinePart {
  int64_t run = 0;
  int node_rank = 0;  // position of this node in the placement; 0 runs the launcher
  int num_nodes = 1;
  std::string node_address = "127.0.0.1";  // where this node's workers listen
  int local_slots = 0;                     // slots this node gives the run
};
// From the agent's environment (TESSERA_RUN, TESSERA_NODE_RANK, TESSERA_NUM_NODES,
// TESSERA_NODE_ADDRESS, TESSERA_LOCAL_SLOTS); a single-node part when they are absent.
PipelinePart PipelinePartFromEnvironment();
inline constexpr char kEnvRun[] = "TESSERA_RUN";
inline constexpr char kEnvNodeRank[] = "TESSERA_NODE_RANK";
inline constexpr char kEnvNumNodes[] = "TESSERA_NUM_NODES";
inline constexpr char kEnvNodeAddress[] = "TESSERA_NODE_ADDRESS";
inline constexpr char kEnvLocalSlots[] = "TESSERA_LOCAL_SLOTS";

// <job dir>/pipeline/run-<run>: where a run's parts meet.
std::filesystem::path PipelineRunDir(const std::filesystem::path& job_dir, int64_t run);
// <run dir>/node-<node_rank>: the control directory (control.h) of a node's part, rank >= 1.
std::filesystem::path PipelinePartDir(const std::filesystem::path& job_dir, int64_t run,
                                      int node_rank);

// The hosts file for pipeline-launch --hosts: `nodes` in placement order as (address, slots,
// prefix words; empty for the launcher's own node); one line per slot, round-robin over the
// nodes (a, b, a, b, ... then the larger node's remaining slots).
struct PipelineHost {
  std::string address;
  int slots = 0;
  std::vector<std::string> prefix;
};
std::string PipelineHostsFile(const std::vector<PipelineHost>& nodes);

struct PipelineJobOptions {
  std::filesystem::path launcher;         // pipeline-launch
  std::vector<std::string> launch_flags;  // the user's: model, data, optimizer, --steps, ...
  int32_t world_size = 1;                 // the job's requested workers (reported)
  PipelinePart part;
  // The program whose "--node-exec HOST:PORT" runs a command on another node (this binary).
  std::filesystem::path node_exec;
  // How long the adapter waits for the other nodes' servers before failing the run.
  std::chrono::milliseconds rendezvous_timeout{120000};
};

struct PipelineJobOutcome {
  ExitReport::Kind kind = ExitReport::Kind::kFinished;
  int64_t step = 0;  // steps done: the checkpoint's step when stopped, the total when finished
  int64_t total_steps = 0;
  std::filesystem::path incarnation_dir;
};

// The flags the adapter sets itself. INVALID_ARGUMENT naming the flag if the user's contain
// one (as "--flag" or "--flag=value").
Status CheckPipelineFlags(const std::vector<std::string>& flags);

// INVALID_ARGUMENT naming the first "--flag" in `flags` that `launcher --help` does not list:
// a misspelt flag is refused before the job is queued, not when it first runs. An error if the
// launcher cannot be run.
Status CheckFlagsKnownTo(const std::filesystem::path& launcher,
                         const std::vector<std::string>& flags);

// One progress line of the launcher: "step k/N loss x ..." -> {k, N, x}; nullopt for any other
// line.
struct PipelineStepLine {
  int64_t step = 0;
  int64_t total = 0;
  double loss = 0;
};
std::optional<PipelineStepLine> ParsePipelineStepLine(std::string_view line);
// "elastic: ...: every worker checkpointed at step s" -> s; nullopt for any other line.
std::optional<int64_t> ParseCheckpointedLine(std::string_view line);

// Runs one incarnation. INVALID_ARGUMENT for flags the adapter owns; the launcher's failure as
// UNAVAILABLE with its exit code.
Result<PipelineJobOutcome> RunPipelineJob(const PipelineJobOptions& options, JobControl& control);

// A node's part of a multi-node run (node rank >= 1): serves the launcher's workers on this
// node until the leader's part is done and every worker here has exited, then reports the
// leader's outcome through `control` (whose directory is PipelinePartDir). An error when the
// leader failed.
Result<PipelineJobOutcome> RunPipelineNode(const PipelinePart& part, JobControl& control);

}  // namespace tessera::cluster
