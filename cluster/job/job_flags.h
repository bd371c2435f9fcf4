// Command-line flags that override a job's TESSERA_JOB_* environment (control.h), so every job
// type's binary can also be run by hand with the same three flags.
//
//   JobFlags job_flags;
//   AddJobFlags(program.app(), job_flags);
//   ... in the body: TESSERA_ASSIGN_OR_RETURN(JobControl control, JobControlFromFlags(job_flags));
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cluster/job/control.h"
#include "core/status.h"

namespace tessera::cluster {

struct JobFlags {
  std::string job_id;   // --job-id, else $TESSERA_JOB_ID
  std::string job_dir;  // --job-dir, else $TESSERA_JOB_DIR
  int workers = 0;      // --workers, else $TESSERA_JOB_WORKERS
};

void AddJobFlags(CLI::App& app, JobFlags& flags);

// The job's control end from the flags given, the environment for the rest. A missing or
// malformed value is a usage error (cli::UsageError), naming the variable.
Result<JobControl> JobControlFromFlags(const JobFlags& flags);

}  // namespace tessera::cluster
