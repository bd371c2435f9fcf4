// Workload traces for the replay: loaders for the Philly-derived job CSV, the Pollux workloads
// (data/traces/) and our class CSV (a trace that carries a class per job), and the documented
// deterministic rules that turn a trace row into a job (tier, minimum workers).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/policy/policy.h"
#include "cluster/sim/simulator.h"
#include "core/status.h"

namespace tessera::cluster::sim {

// One job of a trace, before tiers are assigned.
struct TraceJob {
  std::string id;            // "philly-<row>" (1-based data row) or the Pollux job name
  std::string tenant;        // Philly virtual cluster, or the Pollux application
  double submit = 0;         // seconds from the first submission of the trace
  double duration = 0;       // ideal run time on `workers` slots, seconds
  int workers = 1;           // requested gang size (world size)
  std::string job_class;     // the trace's own class of the job (class CSV); empty otherwise
  std::optional<Tier> tier;  // set by ApplyClassMap; otherwise the hash rule decides
};

// Parses philly.csv (`timestamp,duration,num_gpus,gpu_time,cluster`; timestamp
// "YYYY-MM-DD HH:MM:SS", UTC). Rows come back sorted by submission (stable by row).
// INVALID_ARGUMENT naming the line for a malformed row or a non-positive duration or GPU count.
Result<std::vector<TraceJob>> ParsePhillyCsv(std::string_view text);

// Parses a Pollux workload (`name,time,application,num_replicas,batch_size`). The workloads
// carry no durations (Pollux derives them from per-application throughput models); we use a
// fixed GPU time per application, the middle (geometric) of the gpu_time bucket from which the
// Pollux sampler drew that application (simulator/workload.py, see PolluxGpuHours), spread over
// `num_replicas` workers.
Result<std::vector<TraceJob>> ParsePolluxCsv(std::string_view text);

// GPU-hours assumed for a Pollux application; INVALID_ARGUMENT for an unknown one.
Result<double> PolluxGpuHours(std::string_view application);

// Parses a class CSV, our format for traces that carry their own per-job class (a priority or
// QoS class as the source cluster named it):
//   id,submit_s,duration_s,workers,tenant,class
// id unique and non-empty; submit_s >= 0 (seconds; shifted so the first job is at 0);
// duration_s > 0 (ideal run time on `workers` slots); workers > 0; tenant and class non-empty.
// Classes become tiers through a ClassMap (ApplyClassMap). Rows come back sorted by submission.
Result<std::vector<TraceJob>> ParseClassCsv(std::string_view text);

// How trace classes map to tiers: "CLASS=TIER,CLASS=TIER,...", where "*" names the tier of any
// class not listed (without "*", an unlisted class is an error), e.g.
// "prod=premium,batch=standard,*=basic" or "0=premium,1=premium,2=standard,*=basic".
struct ClassMap {
  std::map<std::string, Tier, std::less<>> classes;
  std::optional<Tier> otherwise;
};
Result<ClassMap> ParseClassMap(std::string_view spec);

// Sets every job's tier from its class. INVALID_ARGUMENT naming the job for a job without a class
// (the trace has no class column) or with a class the map does not cover.
Status ApplyClassMap(const ClassMap& map, std::vector<TraceJob>& trace);

// Reads `path` and parses it by its header (Philly, Pollux or class CSV).
Result<std::vector<TraceJob>> LoadTrace(const std::string& path);

// The tier rule: FNV-1a 64 of the job id, modulo 100: [0, premium_pct) premium,
// [premium_pct, premium_pct + standard_pct) standard, the rest basic.
struct TierRule {
  int premium_pct = 20;
  int standard_pct = 30;
};
Tier AssignTier(std::string_view job_id, const TierRule& rule);
uint64_t Fnv1a64(std::string_view text);

// The elasticity rule: a job may be spliced down to the smallest divisor of its world size
// that is at least a quarter of it (so it never runs below 25 % speed); 1-slot jobs are rigid.
int MinWorkers(int workers);

// A trace job as the policy sees it: its tier is `job.tier` when set (ApplyClassMap), else the
// hash rule's.
JobSpec ToJobSpec(const TraceJob& job, const TierRule& rule);

// The first `limit` jobs of `trace` (all when limit <= 0) as simulator jobs.
std::vector<SimJob> ToSimJobs(const std::vector<TraceJob>& trace, const TierRule& rule,
                              int64_t limit = 0);

}  // namespace tessera::cluster::sim
