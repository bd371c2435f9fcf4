// cluster-replay: replays a trace under several scheduling policies side by side and prints,
// per tier, SLA attainment, completion times, queueing delays, preemptions and migrations, and
// the cluster's utilization; optionally writes CSV and a gnuplot figure.
#include <fmt/format.h>

#include <sstream>

#include "cluster/policy/policy.h"
#include "cluster/sim/policy_spec.h"
#include "cluster/sim/report.h"
#include "cluster/sim/simulator.h"
#include "cluster/sim/trace.h"
#include "core/cli.h"
#include "core/file.h"

namespace {

using namespace tessera;
using namespace tessera::cluster;

struct Flags {
  std::string trace;
  std::string policies = "fifo,tiresias,strict,singularity";
  std::string class_map;
  std::string quota;
  int64_t limit = 0;
  sim::TierRule tiers;
  sim::SimOptions sim;
  std::string csv;
  std::string jobs_csv;
  std::string plot;
  std::string title;
  cluster::SingularityOptions singularity;
};

Status Replay(const Flags& flags) {
  if (flags.trace.empty()) return cli::UsageError("usage: --trace FILE is required");
  if (flags.tiers.premium_pct < 0 || flags.tiers.standard_pct < 0 ||
      flags.tiers.premium_pct + flags.tiers.standard_pct > 100) {
    return cli::UsageError("usage: --premium-pct and --standard-pct must be >= 0, sum <= 100");
  }
  std::vector<std::unique_ptr<Policy>> policies;
  std::stringstream names(flags.policies);
  // The policy's cost estimates are the simulated costs.
  SingularityOptions singularity = flags.singularity;
  singularity.checkpoint_s = flags.sim.checkpoint_s;
  singularity.restore_s = flags.sim.restore_s;
  for (std::string name; std::getline(names, name, ',');) {
    Result<std::unique_ptr<Policy>> p = sim::MakePolicy(name, singularity);
    if (!p.ok()) return cli::UsageError("usage: " + p.status().message());
    policies.push_back(std::move(*p));
  }
  if (policies.empty()) return cli::UsageError("usage: --policies lists no policy");
  TESSERA_ASSIGN_OR_RETURN(std::vector<sim::TraceJob> trace, sim::LoadTrace(flags.trace));
  if (!flags.class_map.empty()) {
    Result<sim::ClassMap> map = sim::ParseClassMap(flags.class_map);
    if (!map.ok()) return cli::UsageError("usage: --class-map: " + map.status().message());
    TESSERA_RETURN_IF_ERROR(sim::ApplyClassMap(*map, trace));
  } else if (!trace.empty() && !trace.front().job_class.empty()) {
    return cli::UsageError(
        "usage: this trace has a class column: map its classes to tiers with --class-map");
  }
  sim::SimOptions sim_options = flags.sim;
  if (!flags.quota.empty()) {
    TESSERA_ASSIGN_OR_RETURN(std::string text, ReadFile(flags.quota));
    Result<QuotaConfig> quota = ParseQuotaConfig(text);
    if (!quota.ok()) return quota.status().WithContext(flags.quota);
    sim_options.quota = std::move(*quota);
  }
  const std::vector<sim::SimJob> jobs = sim::ToSimJobs(trace, flags.tiers, flags.limit);
  fmt::print("trace {}: {} jobs, cluster {} nodes x {} slots, checkpoint {} s, restore {} s\n",
             flags.trace, jobs.size(), flags.sim.nodes, flags.sim.slots_per_node,
             flags.sim.checkpoint_s, flags.sim.restore_s);
  std::vector<sim::SimResult> results;
  std::vector<sim::ReplaySummary> summaries;
  for (auto& policy : policies) {
    sim::SimOptions options = sim_options;
    const std::string name(policy->name());
    options.progress = [&name](double now, int64_t decisions) {
      fmt::print(stderr, "  {}: {} decisions, simulated day {:.1f}\n", name, decisions,
                 now / 86400.0);
    };
    TESSERA_ASSIGN_OR_RETURN(sim::SimResult r, sim::Simulate(jobs, *policy, options));
    fmt::print("  {}: replayed in {:.2f} s wall ({} decisions, {} actions, {:.0f} jobs per view)\n",
               name, r.wall_s, r.decisions, r.actions,
               r.decisions > 0 ? double(r.viewed_jobs) / r.decisions : 0.0);
    if (options.quota) {
      fmt::print(
          "  {}: admission: {} guaranteed jobs on borrowed quota, {} refused (run as basic)\n",
          name, r.quota_borrowing, r.quota_refused);
    }
    summaries.push_back(sim::Summarize(r));
    results.push_back(std::move(r));
  }
  fmt::print("\n{}", sim::FormatTable(summaries));
  if (!flags.csv.empty()) {
    TESSERA_RETURN_IF_ERROR(WriteFileAtomically(flags.csv, sim::FormatCsv(summaries)));
    fmt::print("wrote {}\n", flags.csv);
  }
  if (!flags.jobs_csv.empty()) {
    TESSERA_RETURN_IF_ERROR(WriteFileAtomically(flags.jobs_csv, sim::FormatJobsCsv(results)));
    fmt::print("wrote {}\n", flags.jobs_csv);
  }
  if (!flags.plot.empty()) {
    std::string prefix = flags.plot;
    if (prefix.size() > 4 && prefix.ends_with(".png")) prefix.resize(prefix.size() - 4);
    const std::string title = flags.title.empty() ? flags.trace : flags.title;
    TESSERA_RETURN_IF_ERROR(sim::WritePlot(results, prefix, title));
    fmt::print("wrote {}.png\n", prefix);
  }
  return Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  tessera::cli::Program program(
      "cluster-replay",
      "Replays a cluster trace (philly.csv, a Pollux workload or a class CSV) under scheduling "
      "policies side "
      "by side and reports per-tier SLA attainment, JCT, queueing, preemptions, migrations and "
      "utilization.");
  Flags f;
  CLI::App& app = program.app();
  // Checked in Replay rather than with ->required(), so that CLI11 reports an unknown flag as
  // such instead of the missing --trace.
  app.add_option("--trace", f.trace, "Trace CSV (Philly or Pollux format); required");
  app.add_option("--policies", f.policies,
                 "Comma-separated: fifo, tiresias, strict, singularity, and the variants "
                 "singularity:no-elastic, singularity:no-defragment, singularity:no-headroom, "
                 "singularity:best-fit (eviction by best fit instead of cost)")
      ->capture_default_str();
  app.add_option("--limit", f.limit, "Replay only the first N jobs by submission (0: all)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--nodes", f.sim.nodes, "Nodes in the cluster")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--slots", f.sim.slots_per_node, "Slots (accelerators) per node")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--checkpoint-s", f.sim.checkpoint_s, "Seconds to write a checkpoint")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--restore-s", f.sim.restore_s, "Seconds to restore a checkpoint")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--premium-pct", f.tiers.premium_pct, "Share of jobs made premium (hash rule)")
      ->capture_default_str();
  app.add_option("--standard-pct", f.tiers.standard_pct, "Share of jobs made standard")
      ->capture_default_str();
  app.add_option("--premium-headroom", f.singularity.premium_headroom_slots,
                 "Singularity policy: slots kept free for arriving premium jobs")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--min-run-s", f.singularity.min_run_s,
                 "Singularity policy: seconds before a basic job is disturbed again")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--class-map", f.class_map,
                 "For a trace with a class column: CLASS=TIER,...,*=TIER (tiers from the trace's "
                 "own classes instead of the hash rule)");
  app.add_option("--quota", f.quota,
                 "Quota file (lines: TENANT PREMIUM_SLOTS STANDARD_SLOTS): admission control as in "
                 "the live scheduler; refused guaranteed jobs run as basic");
  app.add_flag("--validate", f.sim.validate, "Check every decision with ValidateActions");
  app.add_option("--csv", f.csv, "Write the summary as CSV to this file");
  app.add_option("--jobs-csv", f.jobs_csv, "Write every job's outcome as CSV to this file");
  app.add_option("--plot", f.plot, "Write a gnuplot figure to this PNG (and .dat/.gp beside)");
  app.add_option("--title", f.title, "Title of the figure");
  return program.Run(argc, argv, [&] { return Replay(f); });
}
