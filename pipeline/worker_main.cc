// pipeline-worker: one (stage, replica) worker of a pipeline job. Started by pipeline-launch;
// reads the job description, trains, and writes its report as JSON.
#include <string>

#include "core/cli.h"
#include "core/file.h"
#include "pipeline/job.h"
#include "pipeline/runtime.h"

int main(int argc, char** argv) {
  tessera::cli::Program program("pipeline-worker",
                                "Runs one stage of one replica of a pipeline training job.");
  std::string job_path, report_path;
  int rank = -1;
  // Checked in the body rather than with ->required(), so that an unknown flag is reported as
  // such instead of as a missing --job.
  program.app().add_option("--job", job_path, "Job description (JSON, from pipeline-launch)");
  program.app().add_option("--rank", rank, "This worker's rank");
  program.app().add_option("--report", report_path, "Write the worker report (JSON) here");
  return program.Run(argc, argv, [&]() -> tessera::Status {
    using namespace tessera::pipeline;
    if (job_path.empty()) return tessera::cli::UsageError("--job is required");
    TESSERA_ASSIGN_OR_RETURN(std::string text, tessera::ReadFile(job_path));
    nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded()) {
      return tessera::InvalidArgumentError(job_path + " is not valid JSON");
    }
    TESSERA_ASSIGN_OR_RETURN(JobConfig job, JobFromJson(json));
    if (rank < 0 || rank >= WorldSize(job)) {
      return tessera::cli::UsageError("--rank must be in [0, stages * replicas)");
    }
    TESSERA_ASSIGN_OR_RETURN(WorkerReport report, RunWorker(job, rank));
    if (!report_path.empty()) {
      TESSERA_RETURN_IF_ERROR(
          tessera::WriteFileAtomically(report_path, ReportToJson(report).dump(1) + "\n"));
    }
    return tessera::Status::Ok();
  });
}
