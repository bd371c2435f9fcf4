#include "pipeline/worker_cli.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <string>

#include "core/cli.h"
#include "core/file.h"
#include "core/heap.h"
#include "fmt/format.h"
#include "pipeline/autoconfig.h"
#include "pipeline/gloo_collective.h"
#include "pipeline/job.h"
#include "pipeline/link_rate.h"
#include "pipeline/profile.h"
#include "pipeline/runtime.h"

namespace tessera::pipeline {
namespace {

Result<nlohmann::json> ReadJsonFile(const std::string& path) {
  TESSERA_ASSIGN_OR_RETURN(std::string text, tessera::ReadFile(path));
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return tessera::InvalidArgumentError(path + " is not valid JSON");
  return json;
}

// A model description written by pipeline-launch, resolved against the models built in and
// registered in this binary.
Result<ModelSpec> ReadModelSpec(const std::string& path) {
  TESSERA_ASSIGN_OR_RETURN(nlohmann::json json, ReadJsonFile(path));
  TESSERA_ASSIGN_OR_RETURN(ModelSpec spec, ModelSpecFromJson(json));
  TESSERA_RETURN_IF_ERROR(ResolveModel(spec));
  return spec;
}

}  // namespace

int WorkerMain(int argc, char** argv) {
  tessera::cli::Program program("pipeline-worker",
                                "Runs one stage of one replica of a pipeline training job.");
  std::string job_path, report_path, count_units;
  int rank = -1;
  // Checked in the body rather than with ->required(), so that an unknown flag is reported as
  // such instead of as a missing --job.
  program.app().add_option("--job", job_path, "Job description (JSON, from pipeline-launch)");
  program.app().add_option("--rank", rank,
                           "This worker's rank (default: RANK from the environment, as "
                           "torchrun sets it)");
  program.app().add_option("--report", report_path,
                           "Write the worker report (JSON) here; {rank} is replaced by the rank "
                           "(for launchers that give every worker the same arguments: torchrun)");
  program.app().add_option("--count-units", count_units,
                           "Print the number of units of the model described in this JSON "
                           "file (how pipeline-launch learns about models registered here)");
  std::string profile_spec, profile_out, profile_optimizer = "sgd";
  std::vector<int> profile_sizes;
  int profile_workers = 1;
  uint64_t profile_seed = 1;
  double profile_seconds = kDefaultProfileSeconds;
  program.app().add_option("--profile", profile_spec,
                           "Profile the model described in this JSON file (how pipeline-launch "
                           "auto-configures models registered here) and write --profile-out");
  program.app().add_option("--profile-out", profile_out, "Where --profile writes (JSON)");
  program.app()
      .add_option("--profile-micro-batches", profile_sizes, "Micro-batch sizes to profile")
      ->delimiter(',');
  program.app().add_option("--profile-workers", profile_workers,
                           "Also time the units under contention of 2 .. this many workers");
  program.app().add_option("--profile-optimizer", profile_optimizer, "sgd, adam or adamw");
  program.app().add_option("--profile-seed", profile_seed, "The model's seed");
  program.app().add_option("--profile-seconds", profile_seconds,
                           "Timed seconds per profile, at least (at most 500 micro-batches)");
  std::string serve_link_probe, probe_link;
  int link_probe_timeout_s = 30;
  program.app().add_option("--serve-link-probe", serve_link_probe,
                           "Answer one link probe at ADDRESS:PORT, then exit (the other end of "
                           "--probe-link; pipeline/link_rate.h)");
  program.app().add_option("--probe-link", probe_link,
                           "Measure the link to a --serve-link-probe at ADDRESS:PORT and print "
                           "the measurement as JSON (how pipeline-launch measures its hosts)");
  program.app().add_option("--link-probe-timeout", link_probe_timeout_s,
                           "Seconds either end waits for the other (default 30)");
  return program.Run(argc, argv, [&]() -> tessera::Status {
    if (!serve_link_probe.empty() || !probe_link.empty()) {
      if (link_probe_timeout_s < 1) return tessera::cli::UsageError("bad --link-probe-timeout");
      const std::chrono::milliseconds timeout(link_probe_timeout_s * 1000);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // dies with the launcher that started it
      if (!serve_link_probe.empty()) {
        TESSERA_ASSIGN_OR_RETURN(Endpoint at, ParseEndpoint(serve_link_probe));
        return ServeLinkProbe(at, timeout);
      }
      TESSERA_ASSIGN_OR_RETURN(Endpoint to, ParseEndpoint(probe_link));
      ProbeLinkOptions options;
      options.timeout = timeout;
      TESSERA_ASSIGN_OR_RETURN(LinkMeasurement m, ProbeLink(to, options));
      fmt::print("{}\n", LinkMeasurementToJson(m).dump());
      return tessera::Status::Ok();
    }
    if (!profile_spec.empty()) {
      if (profile_out.empty() || profile_sizes.empty() || profile_workers < 1) {
        return tessera::cli::UsageError(
            "--profile needs --profile-out, --profile-micro-batches and --profile-workers >= 1");
      }
      TESSERA_ASSIGN_OR_RETURN(ModelSpec spec, ReadModelSpec(profile_spec));
      TESSERA_ASSIGN_OR_RETURN(
          std::vector<ProfiledMicroBatch> profiles,
          ProfileMicroBatches(spec, profile_sizes, profile_seed, profile_optimizer, profile_workers,
                              {}, profile_seconds));
      return tessera::WriteFileAtomically(profile_out, ProfilesToJson(profiles).dump(1) + "\n");
    }
    if (!count_units.empty()) {
      TESSERA_ASSIGN_OR_RETURN(ModelSpec spec, ReadModelSpec(count_units));
      fmt::print("{}\n", NumUnits(spec));
      return tessera::Status::Ok();
    }
    if (job_path.empty()) return tessera::cli::UsageError("--job is required");
    // A worker dies with whatever started it (pipeline-launch, a wrapper such as ssh or
    // ip netns exec, torchrun): a launcher killed with -9 leaves no worker training alone
    // until its deadline. (pipeline-launch also sets it before exec, where it can check that
    // it is not too late; a parent that is PID 1 may be a container's torchrun, so no check.)
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
      return tessera::InternalError("pipeline-worker: prctl(PR_SET_PDEATHSIG) failed");
    }
    // A peer that vanishes must surface as an error from the write (EPIPE), not kill this
    // worker by SIGPIPE: gloo's TCP pairs write with writev, which cannot pass MSG_NOSIGNAL,
    // and a survivor killed by a signal looks lost itself (behind ssh, exit 255), so the
    // launcher would drop two workers for one. (Python ignores SIGPIPE; a C++ worker must.)
    ::signal(SIGPIPE, SIG_IGN);
    TESSERA_ASSIGN_OR_RETURN(nlohmann::json json, ReadJsonFile(job_path));
    TESSERA_ASSIGN_OR_RETURN(JobConfig job, JobFromJson(json));
    TESSERA_ASSIGN_OR_RETURN(TorchrunEnvironment env, ReadTorchrunEnvironment());
    if (rank < 0) rank = env.rank;
    if (env.world_size >= 0 && env.world_size != WorldSize(job)) {
      return tessera::cli::UsageError(
          fmt::format("WORLD_SIZE={} but the job has {} workers", env.world_size, WorldSize(job)));
    }
    if (rank < 0 || rank >= WorldSize(job)) {
      return tessera::cli::UsageError("--rank must be in [0, stages * replicas)");
    }
    // Freed activations stay mapped for the next micro-batch instead of being faulted in
    // again (core/heap.h), as they do while the profile measures.
    TESSERA_RETURN_IF_ERROR(KeepFreedHeap());
    TESSERA_ASSIGN_OR_RETURN(WorkerReport report, RunWorker(job, rank));
    if (const size_t at = report_path.find("{rank}"); at != std::string::npos) {
      report_path.replace(at, 6, std::to_string(rank));
    }
    if (!report_path.empty()) {
      TESSERA_RETURN_IF_ERROR(
          tessera::WriteFileAtomically(report_path, ReportToJson(report).dump(1) + "\n"));
    }
    return tessera::Status::Ok();
  });
}

}  // namespace tessera::pipeline
