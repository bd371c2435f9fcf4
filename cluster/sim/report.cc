#include "cluster/sim/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/file.h"

namespace tessera::cluster::sim {

double Percentile(std::vector<double>& values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(p / 100.0 * values.size());
  const size_t index = static_cast<size_t>(std::clamp(rank, 1.0, double(values.size()))) - 1;
  return values[index];
}

namespace {

// `slot_s_capacity`: capacity x makespan, the denominator of the tier's utilization.
TierSummary SummarizeJobs(const std::string& name, const std::vector<const JobOutcome*>& jobs,
                          double slot_s_capacity) {
  TierSummary s;
  s.tier = name;
  s.jobs = static_cast<int>(jobs.size());
  if (jobs.empty()) return s;
  std::vector<double> jct, queue, fraction, slowdown;
  int met = 0, fast = 0, guaranteed = 0;
  double preemptions = 0, migrations = 0, resizes = 0, jct_sum = 0, queue_sum = 0;
  double slowdown_sum = 0, allocated = 0, lost = 0;
  for (const JobOutcome* j : jobs) {
    slowdown.push_back(j->slowdown());
    slowdown_sum += j->slowdown();
    fast += j->fraction() >= TierTarget(Tier::kPremium) ? 1 : 0;
    allocated += j->allocated_slot_s;
    lost += j->lost_slot_s;
    jct.push_back(j->jct());
    queue.push_back(j->queueing_delay());
    fraction.push_back(j->fraction());
    jct_sum += j->jct();
    queue_sum += j->queueing_delay();
    // Basic jobs "meet" their best-effort SLA by definition: counting them would inflate the
    // all-jobs row, so SLA attainment is over guaranteed jobs (basic's own row says 100 %).
    if (j->spec.tier != Tier::kBasic) {
      ++guaranteed;
      met += j->sla_met() ? 1 : 0;
    }
    preemptions += j->preemptions;
    migrations += j->migrations;
    resizes += j->resizes;
  }
  const double n = static_cast<double>(jobs.size());
  s.sla_attainment = guaranteed > 0 ? double(met) / guaranteed : 1.0;
  s.jct_mean = jct_sum / n;
  s.jct_median = Percentile(jct, 50);
  s.jct_p99 = Percentile(jct, 99);
  s.queue_mean = queue_sum / n;
  s.queue_median = Percentile(queue, 50);
  s.queue_p99 = Percentile(queue, 99);
  s.preemptions_per_job = preemptions / n;
  s.migrations_per_job = migrations / n;
  s.resizes_per_job = resizes / n;
  s.fraction_p1 = Percentile(fraction, 1);
  s.share_95 = fast / n;
  s.slowdown_mean = slowdown_sum / n;
  s.slowdown_median = Percentile(slowdown, 50);
  s.slowdown_p99 = Percentile(slowdown, 99);
  s.utilization = slot_s_capacity > 0 ? allocated / slot_s_capacity : 0;
  s.lost_slot_h = lost / 3600.0;
  return s;
}

std::string Hours(double s) { return fmt::format("{:.2f}", s / 3600.0); }

}  // namespace

ReplaySummary Summarize(const SimResult& result) {
  ReplaySummary out;
  out.policy = result.policy;
  std::vector<const JobOutcome*> by_tier[kNumTiers], all;
  for (const JobOutcome& j : result.jobs) {
    by_tier[static_cast<int>(j.spec.tier)].push_back(&j);
    all.push_back(&j);
  }
  const double slot_s = double(result.capacity()) * (result.end - result.start);
  for (int t = 0; t < kNumTiers; ++t) {
    out.tiers.push_back(
        SummarizeJobs(std::string(TierName(static_cast<Tier>(t))), by_tier[t], slot_s));
  }
  out.tiers.push_back(SummarizeJobs("all", all, slot_s));
  out.utilization = result.utilization();
  out.backlog_utilization = result.backlog_utilization();
  out.useful_share =
      result.allocated_slot_s > 0 ? result.useful_slot_s / result.allocated_slot_s : 0;
  out.makespan_s = result.end - result.start;
  out.wall_s = result.wall_s;
  out.decisions = result.decisions;
  out.rejected = result.rejected;
  return out;
}

std::string FormatTable(const std::vector<ReplaySummary>& summaries) {
  size_t width = 12;  // the policy column fits the longest name
  for (const ReplaySummary& s : summaries) width = std::max(width, s.policy.size());
  std::string out;
  out += fmt::format(
      "{:<{}} {:<9} {:>6} {:>7} {:>7} {:>7} {:>8} {:>8} {:>9} {:>8} {:>8} {:>7} {:>7} {:>7} "
      "{:>7} {:>8} {:>6} {:>8}\n",
      "policy", width, "tier", "jobs", "SLA%", "frac1%", ">=95%", "JCTmean", "JCTmed", "JCTp99",
      "Qmean", "Qp99", "pre/j", "mig/j", "rsz/j", "slow", "slowp99", "util%", "lostSh");
  for (const ReplaySummary& s : summaries) {
    for (const TierSummary& t : s.tiers) {
      out += fmt::format(
          "{:<{}} {:<9} {:>6} {:>7.2f} {:>7.3f} {:>7.2f} {:>8} {:>8} {:>9} {:>8} {:>8} {:>7.3f} "
          "{:>7.3f} {:>7.3f} {:>7.1f} {:>8.1f} {:>6.1f} {:>8.0f}\n",
          s.policy, width, t.tier, t.jobs, 100 * t.sla_attainment, t.fraction_p1, 100 * t.share_95,
          Hours(t.jct_mean), Hours(t.jct_median), Hours(t.jct_p99), Hours(t.queue_mean),
          Hours(t.queue_p99), t.preemptions_per_job, t.migrations_per_job, t.resizes_per_job,
          t.slowdown_mean, t.slowdown_p99, 100 * t.utilization, t.lost_slot_h);
    }
    out += fmt::format(
        "{:<{}} utilization {:.1f}% over the submission window (while jobs wait: {:.1f}%), useful "
        "{:.1f}% of allocated, "
        "makespan {} h, {} decisions, replay {:.2f} s wall{}\n",
        s.policy, width, 100 * s.utilization, 100 * s.backlog_utilization, 100 * s.useful_share,
        Hours(s.makespan_s), s.decisions, s.wall_s,
        s.rejected > 0 ? fmt::format(", {} jobs larger than the cluster skipped", s.rejected) : "");
  }
  out +=
      "(times in hours; SLA% = share of jobs meeting the tier's fraction of ideal speed (basic: "
      "best effort, always met; the all row counts guaranteed jobs only); frac1% = 1st percentile "
      "of that fraction; >=95% = share of jobs "
      "at >= 95% of ideal speed, whatever the tier; slow = mean slowdown T_real/T_ideal; util% = "
      "the tier's slot-seconds over capacity x makespan; lostSh = slot-hours lost to "
      "checkpoint/restore)\n";
  return out;
}

std::string FormatCsv(const std::vector<ReplaySummary>& summaries) {
  std::string out =
      "policy,tier,jobs,sla_attainment,fraction_p1,jct_mean_s,jct_median_s,jct_p99_s,"
      "queue_mean_s,queue_median_s,queue_p99_s,preemptions_per_job,migrations_per_job,"
      "resizes_per_job,utilization,backlog_utilization,useful_share,makespan_s,wall_s,share_95,"
      "slowdown_mean,slowdown_median,slowdown_p99,tier_utilization,lost_slot_h\n";
  for (const ReplaySummary& s : summaries) {
    for (const TierSummary& t : s.tiers) {
      out += fmt::format(
          "{},{},{},{:.6f},{:.6f},{:.1f},{:.1f},{:.1f},{:.1f},{:.1f},{:.1f},{:.6f},"
          "{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.1f},{:.3f},{:.6f},{:.4f},{:.4f},{:.4f},{:.6f},"
          "{:.3f}\n",
          s.policy, t.tier, t.jobs, t.sla_attainment, t.fraction_p1, t.jct_mean, t.jct_median,
          t.jct_p99, t.queue_mean, t.queue_median, t.queue_p99, t.preemptions_per_job,
          t.migrations_per_job, t.resizes_per_job, s.utilization, s.backlog_utilization,
          s.useful_share, s.makespan_s, s.wall_s, t.share_95, t.slowdown_mean, t.slowdown_median,
          t.slowdown_p99, t.utilization, t.lost_slot_h);
    }
  }
  return out;
}

std::string FormatJobsCsv(const std::vector<SimResult>& results) {
  std::string out =
      "policy,id,tenant,tier,workers,submit_s,first_start_s,finish_s,duration_s,fraction,sla_met,"
      "preemptions,migrations,resizes,slowdown,allocated_slot_s,lost_slot_s\n";
  for (const SimResult& r : results) {
    for (const JobOutcome& j : r.jobs) {
      out += fmt::format(
          "{},{},{},{},{},{:.1f},{:.1f},{:.1f},{:.1f},{:.5f},{},{},{},{},{:.4f},{:.1f},"
          "{:.1f}\n",
          r.policy, j.spec.id, j.spec.tenant, TierName(j.spec.tier), j.spec.requested_workers,
          j.spec.submit_time, j.first_start, j.finish, j.duration, j.fraction(),
          j.sla_met() ? 1 : 0, j.preemptions, j.migrations, j.resizes, j.slowdown(),
          j.allocated_slot_s, j.lost_slot_s);
    }
  }
  return out;
}

Status WritePlot(const std::vector<SimResult>& results, const std::string& prefix,
                 const std::string& title) {
  if (results.empty()) return InvalidArgumentError("nothing to plot");
  if (prefix.find('\'') != std::string::npos) {
    return InvalidArgumentError("plot path must not contain a single quote: " + prefix);
  }
  // Utilization: one column per policy, per bucket (daily means for long traces).
  const double bucket_h = results[0].options.series_bucket_s / 3600.0;
  size_t buckets = 0;
  for (const SimResult& r : results) buckets = std::max(buckets, r.busy_series.size());
  const size_t group = buckets > 400 ? 24 : 1;  // hourly buckets -> days on long traces
  std::string util = "# time_h";
  for (const SimResult& r : results) util += " " + r.policy;
  util += "\n";
  for (size_t b = 0; b < buckets; b += group) {
    util += fmt::format("{:.3f}", b * bucket_h);
    for (const SimResult& r : results) {
      double sum = 0;
      for (size_t k = b; k < b + group; ++k) sum += k < r.busy_series.size() ? r.busy_series[k] : 0;
      util += fmt::format(" {:.4f}", sum / group / r.capacity());
    }
    util += "\n";
  }
  // Achieved fraction of ideal speed, sorted, per policy and guaranteed tier (a CDF).
  std::string frac;
  for (const SimResult& r : results) {
    for (Tier tier : {Tier::kPremium, Tier::kStandard}) {
      std::vector<double> f;
      for (const JobOutcome& j : r.jobs) {
        if (j.spec.tier == tier) f.push_back(j.fraction());
      }
      std::sort(f.begin(), f.end());
      frac += fmt::format("# {} {}\n", r.policy, TierName(tier));
      const size_t step = std::max<size_t>(1, f.size() / 2000);
      for (size_t i = 0; i < f.size(); i += step) {
        frac += fmt::format("{:.5f} {:.5f}\n", f[i], double(i + 1) / f.size());
      }
      if (!f.empty()) frac += fmt::format("{:.5f} 1.0\n", f.back());
      frac += "\n\n";
    }
  }
  TESSERA_RETURN_IF_ERROR(WriteFileAtomically(prefix + "-util.dat", util));
  TESSERA_RETURN_IF_ERROR(WriteFileAtomically(prefix + "-frac.dat", frac));
  std::string gp = fmt::format(
      "set terminal pngcairo size 1200,900 font 'sans,10'\n"
      "set output '{0}.png'\n"
      "set multiplot layout 2,1 title '{1}'\n"
      "set title 'Allocated slots ({2} means)'\n"
      "set xlabel 'time (hours from the first submission)'\nset ylabel 'utilization'\n"
      "set yrange [0:1.05]\nset key bottom right\nset grid\n",
      prefix, title, group == 24 ? "daily" : "hourly");
  gp += "plot ";
  for (size_t i = 0; i < results.size(); ++i) {
    gp += fmt::format("{}'{}-util.dat' using 1:{} with lines lw 1.5 title '{}'", i ? ", " : "",
                      prefix, i + 2, results[i].policy);
  }
  gp +=
      "\nset title 'Achieved fraction of ideal speed (CDF); SLA targets 0.95 and 0.70'\n"
      "set xlabel 'fraction of ideal speed (T_{ideal} / T_{real})'\nset ylabel 'share of jobs'\n"
      "set xrange [0:1.0]\nset yrange [0:1.0]\nset key top left\n"
      "set arrow 1 from 0.95,0 to 0.95,1 nohead dt 2\nset arrow 2 from 0.7,0 to 0.7,1 nohead dt 2\n"
      "plot ";
  int index = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    for (Tier tier : {Tier::kPremium, Tier::kStandard}) {
      gp += fmt::format(
          "{}'{}-frac.dat' index {} using 1:2 with steps lw 1.5 lc {} dt {} "
          "title '{} {}'",
          index ? ", " : "", prefix, index, i + 1, tier == Tier::kPremium ? 1 : 2,
          results[i].policy, TierName(tier));
      ++index;
    }
  }
  gp += "\nunset multiplot\n";
  TESSERA_RETURN_IF_ERROR(WriteFileAtomically(prefix + ".gp", gp));
  const std::string cmd = "gnuplot '" + prefix + ".gp' 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return UnavailableError("cannot run gnuplot");
  std::string output;
  char buf[512];
  while (fgets(buf, sizeof buf, pipe) != nullptr) output += buf;
  const int rc = pclose(pipe);
  if (rc != 0) return UnavailableError("gnuplot failed: " + output);
  return Status::Ok();
}

}  // namespace tessera::cluster::sim
