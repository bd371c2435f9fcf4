// The speed of this machine's cores, measured by a fixed reference kernel, so that a step-time
// prediction that missed because the machine changed can be told from one the model got wrong.
//
// The auto-config predicts a step from a profile taken seconds before the run
// (pipeline/profile.h). On the shared 2-vCPU VM the same work has cost 1.3-1.6x more CPU time
// in the run than in its profile a minute earlier, at the same share of a core, with nothing
// else in the VM changed (issue #14's seventh session, docs/pipeline.md): the host's core got
// slower underneath. The share of a core is measured already (ContendedTimes::cpu_share against
// RunSummary::busy_cpu_share); this measures the other factor, the CPU time that a fixed piece
// of work costs:
//
//   - the reference kernel is a fixed-size single-precision matrix product (64 x 64 x 64,
//     64 times), single-threaded on the calling thread, as every worker computes on one
//     intra-op thread; its inputs and results are normal numbers, so flushing denormals to zero
//     (MXCSR FTZ/DAZ) neither changes its result nor its time (ReferenceKernel's checksum is
//     the same either way, which cpu_speed_test checks);
//   - a sample is its thread CPU time (and wall time) for one run of 2-3 ms, on one
//     processor: SpeedSampler pins its own thread to each processor this process may use in
//     turn, because the two vCPUs have not always been equally fast;
//   - `pipeline-launch --auto --speed-probe` samples while it profiles and again while the
//     workers run (a thread of the launcher, every --speed-probe-interval-ms), and reports the
//     run's median kernel time over the profile's: the factor by which the machine's cores got
//     slower (> 1) or faster between profile and run.
//
// The speed-normalized prediction is the prediction times that factor: what the profile would
// have predicted on the run's cores. Set next to the raw error (SpeedComparison), a miss that
// the factor explains is the machine's, one it does not is the model's. Measured on a quiet box
// (2026-12-03, docs/pipeline.md): the factor moves with the workload's change of speed
// (correlation 0.66 over 16 runs) but about twice as far, so it tells a machine that kept its
// speed (factor near 1) from one that did not; it is a diagnostic, not a corrected prediction.
//
// The calibrated prediction (ours, issue #14, session 13) is the one use of the kernel that is
// still a prediction: the prediction times (a probe of the kernel taken just before the workers
// start, ProbeNow) / (the profile's median kernel time). It follows a change of the cores' speed
// between the profile and the start of the run, not one during the run; whether it helps at all
// is measured in docs/pipeline.md.
//
// Torch-free (the kernel is a plain loop, so it needs no BLAS and does not depend on which one
// libtorch found).
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"

namespace tessera::pipeline {

// One fixed piece of work: a 64 x 64 x 64 single-precision matrix product, `repeats` times, on
// the calling thread. Returns a checksum of the result (the sum of its entries), the same on
// every call and with or without flush-to-zero: every input and every partial sum is a normal
// number.
double ReferenceKernel(int repeats);

// Repeats that make one ReferenceKernel call a sample (2-3 ms median on this VM's cores).
inline constexpr int kReferenceRepeats = 64;

// Whether the calling thread flushes denormals (MXCSR FTZ or DAZ set): recorded with each
// sample, since a thread that does not would run a kernel with denormals many times slower.
bool FlushesDenormals();

struct SpeedSample {
  double cpu_s = 0;   // the thread's CPU time for one ReferenceKernel(kReferenceRepeats)
  double wall_s = 0;  // its wall time (longer when the processor was shared meanwhile)
  int cpu = -1;       // the processor it ran on (sched_getcpu), -1 if unknown
  bool flush_denormals = false;
};

// Runs the kernel once untimed (warm caches), then once timed, on the calling thread.
SpeedSample SampleSpeed();

// The median reference kernel time of a set of samples, overall and per processor.
struct SpeedSummary {
  int samples = 0;
  double median_cpu_s = 0;   // median of the samples' CPU time: the "reference kernel seconds"
  double median_wall_s = 0;  // median of their wall time
  double min_cpu_s = 0, max_cpu_s = 0;
  std::vector<int> cpus;             // processors seen, ascending
  std::vector<double> cpu_median_s;  // median CPU time per processor, as `cpus`
  bool any_flush_denormals = false;  // some sample ran with FTZ/DAZ set
};
SpeedSummary SummarizeSpeed(const std::vector<SpeedSample>& samples);

// A raw prediction error next to the speed-normalized one.
struct SpeedComparison {
  double predicted_s = 0, measured_s = 0;
  double factor = 0;                  // run's median kernel time / profile's (> 1: slower run)
  double raw_error_pct = 0;           // 100 (predicted / measured - 1)
  double normalized_predicted_s = 0;  // predicted_s * factor
  double normalized_error_pct = 0;    // 100 (predicted * factor / measured - 1)
  // Also normalized by the share of a core (ContendedTimes::cpu_share of the profile,
  // RunSummary::busy_cpu_share of the run), when both are given (> 0): both the speed and the
  // load taken out. 0 shares leave it equal to normalized_error_pct.
  double speed_and_share_error_pct = 0;
};

// INVALID_ARGUMENT unless predicted_s, measured_s and both kernel times are > 0 and the shares
// are >= 0.
Result<SpeedComparison> CompareWithSpeed(double predicted_s, double measured_s,
                                         double profile_kernel_s, double run_kernel_s,
                                         double profile_share = 0, double run_share = 0);

// One line per summary ("reference kernel at profile: 2.104 ms CPU median of 12 samples (cpu0
// 2.100, cpu1 2.110), ...") and one for the comparison, for the launcher's output.
std::string FormatSpeedSummary(const std::string& label, const SpeedSummary& s);
std::string FormatSpeedComparison(const SpeedComparison& c);

// Samples the machine's speed on a thread of its own while work runs elsewhere: on Start() one
// round at once, then one round every `interval_ms`, and one more round on Stop(); a round is
// one sample on each processor this process may run on (the thread pins itself to each in
// turn). Stop() returns the samples since Start(). Not copyable; Start() after Stop() begins a
// new set.
class SpeedSampler {
 public:
  explicit SpeedSampler(int interval_ms) : interval_ms_(interval_ms) {}
  ~SpeedSampler();
  SpeedSampler(const SpeedSampler&) = delete;
  SpeedSampler& operator=(const SpeedSampler&) = delete;
  void Start();
  std::vector<SpeedSample> Stop();

  // `rounds` rounds at once on a thread of their own, joined before returning (about 3 ms per
  // processor per round): the calibration probe `pipeline-launch --speed-probe` takes just
  // before it starts the workers, so a prediction re-scaled by it is still made before running.
  static std::vector<SpeedSample> ProbeNow(int rounds);

 private:
  void Round();
  int interval_ms_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<SpeedSample> samples_;
};

}  // namespace tessera::pipeline
