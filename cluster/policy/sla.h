// SLA accounting shared by the simulator and the live service: how fast a job runs on a given
// number of slots, how its progress accrues, and what fraction of its ideal speed it achieved.
//
// Definitions (see policy.h for the model):
//   speed(k)          = k / n for a job of world size n on k slots (replica splicing), 0 if k = 0
//   progress          = ideal seconds of work done: integral of speed over running, unstalled time
//   achieved fraction = progress / (now - submit_time)    (T_ideal / T_real at completion)
//   SLA met           = achieved fraction at completion >= TierTarget(tier)
#pragma once

#include "cluster/policy/policy.h"

namespace tessera::cluster {

// Fraction of ideal speed of a job of world size `world_size` on `workers` slots.
double SpeedFraction(int workers, int world_size);

// The job's progress rate (ideal seconds per second) at time `t`: 0 unless kRunning and past
// its restore stall.
double ProgressRate(const JobView& job, double t);

// Advances job.progress over [from, to] assuming its state and placement did not change in that
// interval; the part before job.stalled_until earns nothing. No-op when to <= from.
void AccrueProgress(JobView& job, double from, double to);

// progress / (now - submit_time); 1 when no time has passed yet (nothing has been promised).
double AchievedFraction(const JobView& job, double now);

// How long the job could still be kept from progressing (from `now`) before its achieved
// fraction falls below its tier's target: progress / target - (now - submit). Negative when it
// is already below. +infinity for basic jobs (no target).
double SlaSlack(const JobView& job, double now);

// True when `fraction` meets the promise of `tier` (basic: always).
bool MeetsSla(Tier tier, double fraction);

}  // namespace tessera::cluster
