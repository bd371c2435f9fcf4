// glibc malloc's thresholds, set for how a process uses memory: a trainer keeps what it frees
// (KeepFreedHeap), a server that receives large, short-lived messages gives them back at once
// (MapLargeBlocksAlone).
//
// KeepFreedHeap: keeping freed heap memory in the process while a model trains or is profiled,
// so that a micro-batch does not page-fault its activations in again.
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
//
// MapLargeBlocksAlone: why (issue #12's long-poll memory test, 2026-12-05): a politician
// receives requests of up to 16 MiB (pools), parses and drops them. glibc serves a block that
// large with its own mmap, but freeing one raises the mmap threshold to its size (the
// "dynamic" threshold, up to 32 MiB), so later ones come from the heaps of malloc's per-thread
// arenas and stay there after they are freed, arena by arena. Under a flood of 15 MiB
// long-polls on a CPU-loaded box the server's peak RSS varied from 208 to 454 MiB run to run
// (the requests held at once cost ~64 MiB); with the threshold fixed at 1 MiB, 178-182 MiB.
#pragma once

#include <cstddef>

#include "core/status.h"

namespace tessera {

// INTERNAL when malloc refuses a setting (a non-glibc allocator).
Status KeepFreedHeap();

// Both thresholds back at glibc's defaults (mmap 128 KB, trim 128 KB) and malloc_trim(0).
// glibc's dynamic raising of the thresholds (on freeing a mapped chunk) stays off: any mallopt
// of them turns it off for good, and glibc has no call that turns it back on.
void ReleaseFreedHeap();

// Blocks of at least `bytes` get a mapping of their own, returned to the system when freed,
// and glibc's dynamic raising of the thresholds is off for good (the trim threshold stays at
// what it is, 128 KB unless set). INTERNAL when malloc refuses (a non-glibc allocator, or
// `bytes` above 32 MiB).
Status MapLargeBlocksAlone(size_t bytes);

// Chunks malloc serves with their own mmap right now (mallinfo2's hblks): what the tests read to
// see the mmap threshold in force.
long MmappedChunks();

// Minor page faults of this process so far (getrusage): what the tests count.
long MinorPageFaults();

}  // namespace tessera
