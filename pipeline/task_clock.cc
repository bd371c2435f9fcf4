#include "pipeline/task_clock.h"

#include <ctime>

namespace tessera::pipeline {
namespace {

double ClockSeconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace

double ThreadCpuSeconds() { return ClockSeconds(CLOCK_THREAD_CPUTIME_ID); }

double ProcessCpuSeconds() { return ClockSeconds(CLOCK_PROCESS_CPUTIME_ID); }

TaskTime TaskTimer::Stop() const {
  // CPU first, wall last: a switch away at the CPU read still counts in the wall time.
  const double cpu = ThreadCpuSeconds() - cpu_start_;
  const double wall = std::chrono::duration<double>(Clock::now() - wall_start_).count();
  return {wall, cpu};
}

}  // namespace tessera::pipeline
