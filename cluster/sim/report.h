// Summaries of replays: per-tier SLA attainment, completion times, queueing delays,
// preemptions and migrations, cluster utilization; as a text table, CSV and a gnuplot figure.
#pragma once

#include <string>
#include <vector>

#include "cluster/sim/simulator.h"
#include "core/status.h"

namespace tessera::cluster::sim {

// Figures for one tier (or all jobs) of one replay.
struct TierSummary {
  std::string tier;  // "premium", "standard", "basic" or "all"
  int jobs = 0;
  double sla_attainment = 0;  // share of jobs whose fraction met the tier's target
  double jct_mean = 0, jct_median = 0, jct_p99 = 0;        // seconds
  double queue_mean = 0, queue_median = 0, queue_p99 = 0;  // seconds
  double preemptions_per_job = 0;
  double migrations_per_job = 0;
  double resizes_per_job = 0;
  double fraction_p1 = 0;  // the 1st percentile of the achieved fraction of ideal speed
  // Tier-independent figures, comparable across tiers and policies:
  double share_95 = 0;  // share of jobs that ran at >= 95 % of their ideal speed
  double slowdown_mean = 0, slowdown_median = 0, slowdown_p99 = 0;  // T_real / T_ideal
  // The tier's allocated slot-seconds over capacity x makespan (the "all" row sums the tiers).
  double utilization = 0;
  double lost_slot_h = 0;  // slot-hours lost to checkpoint/restore (JobOutcome::lost_slot_s)
};

struct ReplaySummary {
  std::string policy;
  std::vector<TierSummary> tiers;  // premium, standard, basic, all
  double utilization = 0;
  double backlog_utilization = 0;
  double useful_share = 0;  // useful / allocated slot-seconds
  double makespan_s = 0;
  double wall_s = 0;
  int64_t decisions = 0;
  int rejected = 0;
};

ReplaySummary Summarize(const SimResult& result);

// Nearest-rank percentile (p in [0, 100]) of `values` (sorted in place); 0 when empty.
double Percentile(std::vector<double>& values, double p);

// A fixed-width table, one block per policy, one row per tier.
std::string FormatTable(const std::vector<ReplaySummary>& summaries);

// The same figures as CSV (one row per policy and tier), for scripts.
std::string FormatCsv(const std::vector<ReplaySummary>& summaries);

// One row per job: policy, id, tenant, tier, workers, submit, first start, finish, duration,
// fraction, SLA met, preemptions, migrations, resizes.
std::string FormatJobsCsv(const std::vector<SimResult>& results);

// Writes `<prefix>-util.dat`, `<prefix>-frac.dat`, `<prefix>.gp` and runs gnuplot to draw
// `<prefix>.png`: utilization over time for each policy, and the distribution of the achieved
// fraction of ideal speed of premium and standard jobs. UNAVAILABLE if gnuplot fails.
Status WritePlot(const std::vector<SimResult>& results, const std::string& prefix,
                 const std::string& title);

}  // namespace tessera::cluster::sim
