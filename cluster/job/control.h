// The job-side control interface: how a training job and its node agent talk, both ends.
//
// Every job incarnation gets a job directory on storage that outlives nodes (on this
// single-host testbed a local directory; Singularity uses blob storage), named by the
// environment the agent starts it with:
//
//   TESSERA_JOB_ID       the job's id, e.g. "j7"
//   TESSERA_JOB_DIR      the job directory
//   TESSERA_JOB_WORKERS  physical workers (slots) granted to this incarnation
//
// Inside the job directory:
//
//   order        written by the agent: "checkpoint-exit <reason>". Absent = continue.
//   progress     written by the job every few steps: "step=.. total=.. world=.. workers=.. loss=.."
//   exit         written by the job just before it exits: "finished step=.." or
//                "checkpointed step=..", so the agent can tell an obeyed order from a crash.
//   ckpt/        the CheckpointStore (checkpoint.h)
//
// All files are written atomically. The job polls `order` at every step boundary (one stat
// call), so an order takes effect within one step: the consistent cut Singularity gets from its
// distributed barrier, which a single-process job gets for free at its step loop.
//
// Job side:
//   TESSERA_ASSIGN_OR_RETURN(JobControl control, JobControl::FromEnvironment());
//   ... resume from control.checkpoints().LoadLatest() ...
//   for (...) { Step(); if (control.PollOrder() == Order::kCheckpointAndExit) {save; exit;} }
//
// Agent side:
//   JobDir dir(path);  dir.Prepare();  start the process;  dir.OrderCheckpointAndExit("preempt");
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "cluster/job/checkpoint.h"
#include "core/status.h"

namespace tessera::cluster {

inline constexpr char kEnvJobId[] = "TESSERA_JOB_ID";
inline constexpr char kEnvJobDir[] = "TESSERA_JOB_DIR";
inline constexpr char kEnvJobWorkers[] = "TESSERA_JOB_WORKERS";
// Command jobs with logical ranks (cluster/agent/gang_run.h): the job's world size and the
// process's block of ranks, "first-last".
inline constexpr char kEnvLogicalWorldSize[] = "TESSERA_LOGICAL_WORLD_SIZE";
inline constexpr char kEnvLogicalRanks[] = "TESSERA_LOGICAL_RANKS";

enum class Order { kContinue, kCheckpointAndExit };

struct Progress {
  int64_t step = 0;         // steps completed
  int64_t total_steps = 0;  // steps of the whole job
  int32_t world_size = 0;   // logical replicas (constant for the job's life)
  int32_t workers = 0;      // physical workers of this incarnation
  double loss = 0;          // last training loss, for people watching

  friend bool operator==(const Progress&, const Progress&) = default;
};

struct ExitReport {
  enum class Kind { kFinished, kCheckpointed };
  Kind kind = Kind::kFinished;
  int64_t step = 0;

  friend bool operator==(const ExitReport&, const ExitReport&) = default;
};

std::string FormatProgress(const Progress& progress);
Result<Progress> ParseProgress(std::string_view text);
std::string FormatExitReport(const ExitReport& report);
Result<ExitReport> ParseExitReport(std::string_view text);

// The job's end.
class JobControl {
 public:
  // INVALID_ARGUMENT naming the variable when one is missing or malformed.
  static Result<JobControl> FromEnvironment();

  JobControl(std::string job_id, std::filesystem::path dir, int workers);

  const std::string& job_id() const { return job_id_; }
  const std::filesystem::path& dir() const { return dir_; }
  int workers() const { return workers_; }
  CheckpointStore& checkpoints() { return checkpoints_; }

  // Whether the agent asked this incarnation to checkpoint and exit. Cheap: call every step.
  Order PollOrder() const;
  Status ReportProgress(const Progress& progress);
  Status ReportExit(const ExitReport& report);

 private:
  std::string job_id_;
  std::filesystem::path dir_;
  int workers_;
  CheckpointStore checkpoints_;
};

// The agent's end of one job directory.
class JobDir {
 public:
  explicit JobDir(std::filesystem::path dir);

  const std::filesystem::path& path() const { return dir_; }

  // Creates the directory and removes the order, progress and exit files of an earlier
  // incarnation, so a restarted job does not obey a stale order and its first progress report
  // marks its restore as done. Checkpoints are kept: they are the point.
  Status Prepare();
  Status OrderCheckpointAndExit(std::string_view reason);
  bool HasPendingOrder() const;
  // nullopt while the job has not written the file yet.
  Result<std::optional<Progress>> ReadProgress() const;
  Result<std::optional<ExitReport>> ReadExit() const;
  CheckpointStore checkpoints() const { return CheckpointStore(dir_ / "ckpt"); }

 private:
  std::filesystem::path dir_;
};

}  // namespace tessera::cluster
