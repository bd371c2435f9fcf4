#include "pipeline/morph.h"

#include <charconv>
#include <filesystem>
#include <thread>

#include "core/file.h"
#include "fmt/format.h"
#include "pipeline/checkpoint.h"
#include "pipeline/profile.h"

namespace tessera::pipeline {
namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

// What the workers file said when last read, and when it was written: a rewrite (even of the
// same number) is news, because it resets the count of lost workers.
struct FileStamp {
  int count = 0;
  std::filesystem::file_time_type written{};
  friend bool operator==(const FileStamp&, const FileStamp&) = default;
};

Result<FileStamp> Stamp(const std::string& path) {
  std::error_code ec;
  auto written = std::filesystem::last_write_time(path, ec);
  if (ec) return NotFoundError(fmt::format("workers file {}: {}", path, ec.message()));
  TESSERA_ASSIGN_OR_RETURN(int count, ReadWorkerCount(path));
  return FileStamp{count, written};
}

// The newest complete checkpoint's step, 0 when there is none yet.
int64_t CheckpointStep(const std::string& root) {
  auto step = LatestCompleteCheckpoint(root);
  return step.ok() ? *step : 0;
}

// Removes the incomplete checkpoints after `done` that a stopped job left behind, so that the
// restarted job never completes one with unit files of two different runs.
Status RemoveCheckpointsAfter(const std::string& root, int64_t done) {
  std::error_code ec;
  std::vector<fs::path> stale;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    int64_t step = 0;
    if (name.rfind("ckpt-", 0) != 0) continue;
    auto [ptr, err] = std::from_chars(name.data() + 5, name.data() + name.size(), step);
    if (err == std::errc() && ptr == name.data() + name.size() && step > done) {
      stale.push_back(entry.path());
    }
  }
  for (const fs::path& p : stale) {
    fs::remove_all(p, ec);
    if (ec) return UnavailableError(fmt::format("removing {}: {}", p.string(), ec.message()));
  }
  return Status::Ok();
}

void Say(const ElasticOptions& o, const std::string& line) {
  if (o.progress) o.progress(line);
}

}  // namespace

Result<int> ReadWorkerCount(const std::string& path) {
  TESSERA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  const size_t b = text.find_first_not_of(" \t\r\n");
  const size_t e = text.find_last_not_of(" \t\r\n");
  int count = 0;
  if (b != std::string::npos) {
    const char* first = text.data() + b;
    const char* last = text.data() + e + 1;
    auto [ptr, err] = std::from_chars(first, last, count);
    if (err == std::errc() && ptr == last && count >= 0) return count;
  }
  return InvalidArgumentError(
      fmt::format("workers file {} must hold one non-negative integer", path));
}

Result<ElasticResult> RunElastic(const ElasticOptions& o) {
  const JobConfig& base = o.launch.job;
  if (base.save_dir.empty()) return InvalidArgumentError("an elastic run needs a save dir");
  if (base.steps < 1) return InvalidArgumentError("an elastic run needs --steps >= 1");
  if (o.checkpoint_every < 1) return InvalidArgumentError("--checkpoint-every must be >= 1");
  if (o.workers_file.empty() && o.workers < 1) {
    return InvalidArgumentError("--workers must be >= 1 without a workers file");
  }
  FileStamp stamp;
  if (!o.workers_file.empty()) {
    TESSERA_ASSIGN_OR_RETURN(stamp, Stamp(o.workers_file));
  } else {
    stamp.count = o.workers;
  }
  int lost = 0;  // workers lost since the count was last given
  ElasticResult result;
  for (int restarts = 0;; ++restarts) {
    const int64_t done = CheckpointStep(base.save_dir);
    if (done >= base.steps && !result.segments.empty()) {
      // Stopped for a morph just as it wrote its final checkpoint: nothing is left to train.
      Say(o, fmt::format("elastic: finished {} steps in {} segment(s)", base.steps,
                         result.segments.size()));
      return result;
    }
    if (done >= base.steps) {
      return FailedPreconditionError(
          fmt::format("{} already holds a checkpoint at step {}, not before the requested {} steps",
                      base.save_dir, done, base.steps));
    }
    if (o.terminate && o.terminate()) {
      result.terminated = true;
      Say(o, fmt::format("elastic: terminated; newest complete checkpoint: step {}", done));
      return result;
    }
    if (restarts > o.max_restarts) {
      return AbortedError(fmt::format("gave up after {} restarts", o.max_restarts));
    }
    int available = stamp.count - lost;
    // No worker left: wait for the workers file to announce some (or the timeout).
    const auto wait_start = Clock::now();
    while (available < 1) {
      if (o.terminate && o.terminate()) {
        result.terminated = true;
        Say(o, fmt::format("elastic: terminated; newest complete checkpoint: step {}", done));
        return result;
      }
      if (o.workers_file.empty() || Clock::now() - wait_start > o.launch.timeout) {
        return UnavailableError(fmt::format("no worker available to continue from step {}", done));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      auto now = Stamp(o.workers_file);
      if (now.ok() && !(*now == stamp)) {
        stamp = *now;
        lost = 0;
        available = stamp.count;
      }
    }
    AutoConfigRequest request = o.autoconfig;
    request.workers = available;
    request.global_batch = base.global_batch;
    request.schedule = base.schedule;
    request.opportunistic = base.opportunistic;
    TESSERA_RETURN_IF_ERROR(RemoveCheckpointsAfter(base.save_dir, done));
    TESSERA_ASSIGN_OR_RETURN(AutoConfigResult ranked, AutoConfigure(request));
    TESSERA_ASSIGN_OR_RETURN(Candidate best, Best(ranked, request.memory_limit_bytes));

    Segment segment;
    segment.workers = available;
    segment.config = best;
    segment.first_step = done;
    LaunchOptions launch = o.launch;
    JobConfig& job = launch.job;
    job.stages = best.stages;
    job.replicas = best.replicas;
    job.micro_batch = best.micro_batch;
    job.boundaries = best.boundaries;
    job.first_step = 0;
    job.steps = static_cast<int>(base.steps - done);
    job.resume_dir = done > 0 ? base.save_dir : "";
    job.checkpoint_every = o.checkpoint_every;
    // The learning-rate schedule spans the whole run, whatever segment trains which steps.
    if (job.schedule_steps == 0) job.schedule_steps = static_cast<int>(base.steps);
    launch.run_dir = fmt::format("{}/segment-{}", o.launch.run_dir, result.segments.size());
    Say(o, fmt::format("elastic: {} workers available; P={} D={} m={} (simulated {:.1f} "
                       "samples/s); {} at step {} of {}",
                       available, best.stages, best.replicas, best.micro_batch, best.samples_per_s,
                       done > 0 ? "resuming" : "starting", done, base.steps));

    // Poll the workers file and the notices at most every 100 ms while the job runs; either
    // stops the job at the next step boundary, with a checkpoint there.
    auto last_poll = Clock::now();
    std::string change;
    auto notice = [&]() -> bool {
      if (Clock::now() - last_poll < std::chrono::milliseconds(100)) return false;
      last_poll = Clock::now();
      if (o.terminate && o.terminate()) {
        change = "terminated";
        return true;
      }
      if (o.take_notices) {
        if (const int n = o.take_notices(); n > 0) {
          lost += n;
          change = n == 1 ? "preemption notice" : fmt::format("{} preemption notices", n);
          return true;
        }
      }
      if (o.workers_file.empty()) return false;
      auto now = Stamp(o.workers_file);
      if (!now.ok() || *now == stamp) return false;  // unreadable mid-write: look again later
      stamp = *now;
      lost = 0;
      if (stamp.count == available) return false;  // what this job was configured for
      change = fmt::format("workers file says {}", stamp.count);
      return true;
    };
    const auto launched = Clock::now();
    LaunchOutcome outcome = LaunchWatched(launch, nullptr, notice);
    segment.wall_s = std::chrono::duration<double>(Clock::now() - launched).count();
    segment.checkpoint = CheckpointStep(base.save_dir);
    // Heartbeats carry global step indices: the step in progress when the launch ended.
    segment.reached = std::max(segment.checkpoint, outcome.reached);
    if (outcome.status.ok() && outcome.stopped_at >= 0) {
      segment.reached = outcome.stopped_at;
      segment.ended = change.empty() ? "stopped" : change;
      auto summary = Summarize(outcome.result->job, outcome.result->reports);
      if (summary.ok()) segment.losses = summary->losses;
      Say(o, fmt::format("elastic: {}: every worker checkpointed at step {}", segment.ended,
                         segment.checkpoint));
      result.segments.push_back(std::move(segment));
      continue;
    }
    if (outcome.status.ok()) {
      TESSERA_ASSIGN_OR_RETURN(result.summary,
                               Summarize(outcome.result->job, outcome.result->reports));
      segment.ended = "finished";
      segment.reached = base.steps;
      segment.losses = result.summary.losses;
      result.segments.push_back(std::move(segment));
      Say(o, fmt::format("elastic: finished {} steps in {} segment(s)", base.steps,
                         result.segments.size()));
      return result;
    }
    if (outcome.interrupted) {
      segment.ended = change;
    } else if (!outcome.lost_ranks.empty()) {
      lost += static_cast<int>(outcome.lost_ranks.size());
      segment.ended = fmt::format("worker {} lost", outcome.lost_ranks.front());
      result.lost_steps += std::max<int64_t>(0, segment.reached - segment.checkpoint);
    } else {
      return outcome.status;
    }
    Say(o, fmt::format("elastic: {} ({}); newest complete checkpoint: step {}", segment.ended,
                       outcome.status.message(), segment.checkpoint));
    result.segments.push_back(std::move(segment));
  }
}

nlohmann::json ElasticResultToJson(const ElasticResult& result) {
  nlohmann::json segments = nlohmann::json::array();
  for (const Segment& seg : result.segments) {
    segments.push_back({{"workers", seg.workers},
                        {"stages", seg.config.stages},
                        {"replicas", seg.config.replicas},
                        {"micro_batch", seg.config.micro_batch},
                        {"first_step", seg.first_step},
                        {"checkpoint", seg.checkpoint},
                        {"reached", seg.reached},
                        {"wall_s", seg.wall_s},
                        {"ended", seg.ended},
                        {"losses", seg.losses}});
  }
  return {{"segments", segments},
          {"samples_per_s", result.summary.samples_per_s},
          {"lost_steps", result.lost_steps},
          {"terminated", result.terminated},
          {"morphs", std::max<int>(0, static_cast<int>(result.segments.size()) - 1)}};
}

}  // namespace tessera::pipeline
