#include "cluster/job/job_flags.h"

#include <cstdlib>

#include "core/cli.h"

namespace tessera::cluster {

void AddJobFlags(CLI::App& app, JobFlags& flags) {
  app.add_option("--job-id", flags.job_id, std::string("Job id (default: $") + kEnvJobId + ")");
  app.add_option("--job-dir", flags.job_dir,
                 std::string("Job directory (default: $") + kEnvJobDir + ")");
  app.add_option("--workers", flags.workers,
                 std::string("Physical workers (default: $") + kEnvJobWorkers + ")");
}

Result<JobControl> JobControlFromFlags(const JobFlags& flags) {
  // Flags override the environment, so the binary can also be run by hand.
  if (!flags.job_id.empty()) ::setenv(kEnvJobId, flags.job_id.c_str(), 1);
  if (!flags.job_dir.empty()) ::setenv(kEnvJobDir, flags.job_dir.c_str(), 1);
  if (flags.workers != 0) ::setenv(kEnvJobWorkers, std::to_string(flags.workers).c_str(), 1);
  Result<JobControl> control = JobControl::FromEnvironment();
  if (!control.ok()) return cli::UsageError(control.status().message());
  return control;
}

}  // namespace tessera::cluster
