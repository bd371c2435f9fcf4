// Placing workers on processors, and the profile's timed copies on the same ones.
//
// Why: on this project's 2-vCPU virtual machine the two processors do not run the toy GPT's
// small tasks at the same speed at a given moment (the reference kernel's per-processor medians
// differ by up to 1.4x within one phase, docs/pipeline.md), and the scheduler places an
// unpinned thread on either. A single-threaded profile timed on one processor then predicts a
// one-worker run that lands on the other. With pinning (`pipeline-launch --pin-workers`), the
// launcher starts worker r on processor CpuForWorker(r), and the profile times its copy w
// (ProfileUnits is copy 0, ProfileContention's copies 0..W-1) on CpuForWorker(w): the profile
// measures the processors the workers will use. (The contended times are still pooled over the
// copies, so a stage is simulated at the processors' mean speed, not at its own processor's.)
//
// Torch-free. Linux only (sched_setaffinity); on a machine where the calls fail the pinning is
// reported as an error, not skipped silently.
#pragma once

#include <sched.h>

#include <optional>
#include <vector>

#include "core/status.h"

namespace tessera::pipeline {

// The processors this process may run on, ascending (sched_getaffinity). INTERNAL if the
// call fails or allows none.
Result<std::vector<int>> AllowedCpus();

// The processor of worker (or profile copy) `index` when pinning over `cpus`: round-robin,
// cpus[index % cpus.size()], so W <= cpus.size() workers get one processor each and the
// profile's copy w the processor of rank w. INVALID_ARGUMENT for an empty list or a negative
// index.
Result<int> CpuForWorker(int index, const std::vector<int>& cpus);

// Pins the calling thread to one processor for its lifetime and restores the thread's
// previous mask on destruction. `cpu` < 0: does nothing (no pinning asked for).
class ScopedThreadPin {
 public:
  explicit ScopedThreadPin(int cpu);
  ~ScopedThreadPin();
  ScopedThreadPin(const ScopedThreadPin&) = delete;
  ScopedThreadPin& operator=(const ScopedThreadPin&) = delete;
  // OK when pinned (or nothing was asked); INTERNAL when the kernel refused.
  const Status& status() const { return status_; }

 private:
  std::optional<cpu_set_t> previous_;
  Status status_;
};

}  // namespace tessera::pipeline
