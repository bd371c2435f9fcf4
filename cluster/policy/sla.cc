#include "cluster/policy/sla.h"

#include <algorithm>
#include <limits>

namespace tessera::cluster {

double SpeedFraction(int workers, int world_size) {
  if (workers <= 0 || world_size <= 0) return 0;
  return std::min(1.0, static_cast<double>(workers) / world_size);
}

double ProgressRate(const JobView& job, double t) {
  if (job.state != JobState::kRunning || t < job.stalled_until) return 0;
  return SpeedFraction(job.workers(), job.spec.requested_workers);
}

void AccrueProgress(JobView& job, double from, double to) {
  if (job.state != JobState::kRunning) return;
  const double start = std::max(from, job.stalled_until);
  if (to <= start) return;
  job.progress += (to - start) * SpeedFraction(job.workers(), job.spec.requested_workers);
}

double AchievedFraction(const JobView& job, double now) {
  const double elapsed = now - job.spec.submit_time;
  if (elapsed <= 0) return 1;
  return std::min(1.0, job.progress / elapsed);
}

double SlaSlack(const JobView& job, double now) {
  const double target = TierTarget(job.spec.tier);
  if (target <= 0) return std::numeric_limits<double>::infinity();
  return job.progress / target - (now - job.spec.submit_time);
}

bool MeetsSla(Tier tier, double fraction) {
  // A hair of tolerance so that a job that ran exactly at its target is not failed by rounding.
  return fraction + 1e-9 >= TierTarget(tier);
}

}  // namespace tessera::cluster
