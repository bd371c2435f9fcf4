#include "pipeline/cpu_speed.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <map>

#include "fmt/format.h"
#include "pipeline/median.h"
#include "pipeline/task_clock.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace tessera::pipeline {
namespace {

constexpr int kN = 64;

// A percentage to one decimal, without the "-0.0" of a tiny negative rounding error.
double Tenths(double pct) { return std::round(pct * 10) / 10 + 0.0; }

}  // namespace

double ReferenceKernel(int repeats) {
  // Inputs in [0.5, 1): every product and partial sum is a normal float well away from the
  // subnormal range, so FTZ/DAZ cannot change a bit of the result.
  std::array<float, kN * kN> a, b, c;
  for (int i = 0; i < kN * kN; ++i) {
    a[i] = 0.5f + static_cast<float>((i * 37) % 64) / 128.0f;
    b[i] = 0.5f + static_cast<float>((i * 11) % 64) / 128.0f;
  }
  double checksum = 0;
  for (int r = 0; r < repeats; ++r) {
    c.fill(0.0f);
    for (int i = 0; i < kN; ++i) {
      for (int k = 0; k < kN; ++k) {
        const float aik = a[i * kN + k];
        for (int j = 0; j < kN; ++j) c[i * kN + j] += aik * b[k * kN + j];
      }
    }
    // Keep the compiler from computing the identical repeats once.
    asm volatile("" : : "r"(c.data()) : "memory");
    double sum = 0;
    for (float x : c) sum += x;
    checksum += sum;
  }
  return checksum;
}

bool FlushesDenormals() {
#if defined(__x86_64__) || defined(__i386__)
  return (_mm_getcsr() & 0x8040u) != 0;  // FTZ (bit 15) or DAZ (bit 6)
#else
  return false;
#endif
}

SpeedSample SampleSpeed() {
  static std::atomic<double> sink{0};
  sink = sink + ReferenceKernel(kReferenceRepeats / 8);  // warm the caches
  SpeedSample s;
  TaskTimer timer;
  sink = sink + ReferenceKernel(kReferenceRepeats);
  const TaskTime t = timer.Stop();
  s.cpu_s = t.cpu_s;
  s.wall_s = t.wall_s;
  s.cpu = sched_getcpu();
  s.flush_denormals = FlushesDenormals();
  return s;
}

SpeedSummary SummarizeSpeed(const std::vector<SpeedSample>& samples) {
  SpeedSummary out;
  out.samples = static_cast<int>(samples.size());
  if (samples.empty()) return out;
  std::vector<double> cpu, wall;
  std::map<int, std::vector<double>> by_cpu;
  for (const SpeedSample& s : samples) {
    cpu.push_back(s.cpu_s);
    wall.push_back(s.wall_s);
    by_cpu[s.cpu].push_back(s.cpu_s);
    out.any_flush_denormals = out.any_flush_denormals || s.flush_denormals;
  }
  out.median_cpu_s = Median(cpu);
  out.median_wall_s = Median(wall);
  out.min_cpu_s = *std::min_element(cpu.begin(), cpu.end());
  out.max_cpu_s = *std::max_element(cpu.begin(), cpu.end());
  for (const auto& [id, times] : by_cpu) {
    out.cpus.push_back(id);
    out.cpu_median_s.push_back(Median(times));
  }
  return out;
}

Result<SpeedComparison> CompareWithSpeed(double predicted_s, double measured_s,
                                         double profile_kernel_s, double run_kernel_s,
                                         double profile_share, double run_share) {
  if (!(predicted_s > 0 && measured_s > 0 && profile_kernel_s > 0 && run_kernel_s > 0)) {
    return InvalidArgumentError(fmt::format(
        "speed comparison needs positive times (predicted {}, measured {}, kernel {} / {})",
        predicted_s, measured_s, profile_kernel_s, run_kernel_s));
  }
  if (!(profile_share >= 0 && run_share >= 0)) {
    return InvalidArgumentError("speed comparison: shares of a core must be >= 0");
  }
  SpeedComparison c;
  c.predicted_s = predicted_s;
  c.measured_s = measured_s;
  c.factor = run_kernel_s / profile_kernel_s;
  c.raw_error_pct = 100 * (predicted_s / measured_s - 1);
  c.normalized_predicted_s = predicted_s * c.factor;
  c.normalized_error_pct = 100 * (c.normalized_predicted_s / measured_s - 1);
  c.speed_and_share_error_pct = c.normalized_error_pct;
  if (profile_share > 0 && run_share > 0) {
    c.speed_and_share_error_pct =
        100 * (c.normalized_predicted_s * profile_share / (measured_s * run_share) - 1);
  }
  return c;
}

std::string FormatSpeedSummary(const std::string& label, const SpeedSummary& s) {
  std::string per_cpu;
  for (size_t i = 0; i < s.cpus.size(); ++i) {
    per_cpu += fmt::format("{}cpu{} {:.3f}", i ? ", " : "", s.cpus[i], 1e3 * s.cpu_median_s[i]);
  }
  return fmt::format(
      "reference kernel {}: {:.3f} ms CPU median of {} samples ({}; range {:.3f}-{:.3f}), "
      "wall {:.3f} ms, denormals {}",
      label, 1e3 * s.median_cpu_s, s.samples, per_cpu, 1e3 * s.min_cpu_s, 1e3 * s.max_cpu_s,
      1e3 * s.median_wall_s, s.any_flush_denormals ? "flushed" : "not flushed");
}

std::string FormatSpeedComparison(const SpeedComparison& c) {
  return fmt::format(
      "speed-normalized: the run's cores took {:.2f}x the profile's time for the reference "
      "kernel; predicted {:.4f} s x {:.2f} = {:.4f} s vs measured {:.4f} s: raw {:+.1f} %, "
      "speed-normalized {:+.1f} %, speed and share normalized {:+.1f} %",
      c.factor, c.predicted_s, c.factor, c.normalized_predicted_s, c.measured_s,
      Tenths(c.raw_error_pct), Tenths(c.normalized_error_pct), Tenths(c.speed_and_share_error_pct));
}

SpeedSampler::~SpeedSampler() {
  if (thread_.joinable()) Stop();
}

void SpeedSampler::Round() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (pthread_getaffinity_np(pthread_self(), sizeof(allowed), &allowed) != 0) {
    SpeedSample s = SampleSpeed();
    std::lock_guard<std::mutex> lock(mu_);
    samples_.push_back(s);
    return;
  }
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
    SpeedSample s = SampleSpeed();
    std::lock_guard<std::mutex> lock(mu_);
    samples_.push_back(s);
  }
  pthread_setaffinity_np(pthread_self(), sizeof(allowed), &allowed);
}

std::vector<SpeedSample> SpeedSampler::ProbeNow(int rounds) {
  SpeedSampler probe(0);
  std::thread worker([&probe, rounds] {
    for (int i = 0; i < rounds; ++i) probe.Round();
  });
  worker.join();
  return probe.samples_;
}

void SpeedSampler::Start() {
  if (thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = false;
    samples_.clear();
  }
  thread_ = std::thread([this] {
    Round();
    std::unique_lock<std::mutex> lock(mu_);
    while (!cv_.wait_for(lock, std::chrono::milliseconds(interval_ms_), [this] { return stop_; })) {
      lock.unlock();
      Round();
      lock.lock();
    }
    lock.unlock();
    Round();  // the machine as the work ended
  });
}

std::vector<SpeedSample> SpeedSampler::Stop() {
  if (!thread_.joinable()) return {};
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  return std::move(samples_);
}

}  // namespace tessera::pipeline
