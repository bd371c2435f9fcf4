// Keeping freed heap memory in the process while a model trains or is profiled, so that a
// micro-batch does not page-fault its activations in again.
//
// Why (issue #14, 2026-12-03): a micro-batch's forward allocates its saved activations (about
// 1.2 MB per block of the toy GPT at micro-batch 8), the backward frees them, and glibc's
// malloc then hands the freed top of the heap back to the kernel (trim threshold 128 KB,
// raised only dynamically) and serves tensors from 128 KB up with mmap/munmap. The next
// micro-batch faults the same pages in again, zeroed by the kernel: measured (perf stat, the
// toy GPT at micro-batch 8, one worker) 356 minor faults per micro-batch in a worker, 193 in
// the profile's unit loop, whose allocation pattern differs (no optimizer step, units timed
// one at a time). That cost is in the run's task times in a different amount than in the
// profile's, so the prediction could not see it, and it is paid on every micro-batch.
//
// KeepFreedHeap sets malloc's mmap threshold to its largest value (32 MiB: smaller tensors
// come from the heap) and the trim threshold far above any step's heap, so freed memory stays
// mapped and is reused. Peak RSS is unchanged (the heap reaches the step's peak either way);
// the process simply does not shrink between micro-batches. ReleaseFreedHeap restores
// both thresholds and gives back what is free now (the launcher, after profiling, so it does not
// hold a profile's peak while its workers run). Torch-free (glibc's mallopt).
#pragma once

#include "core/status.h"

namespace tessera::pipeline {

// INTERNAL when malloc refuses a setting (a non-glibc allocator).
Status KeepFreedHeap();

// Both thresholds back at glibc's defaults (mmap 128 KB, trim 128 KB) and malloc_trim(0).
// glibc's dynamic raising of the thresholds (on freeing a mapped chunk) stays off: any mallopt
// of them turns it off for good, and glibc has no call that turns it back on.
void ReleaseFreedHeap();

// Chunks malloc serves with their own mmap right now (mallinfo2's hblks): what the tests read to
// see the mmap threshold in force.
long MmappedChunks();

// Minor page faults of this process so far (getrusage): what the tests count.
long MinorPageFaults();

}  // namespace tessera::pipeline
