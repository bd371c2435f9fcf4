#include "core/heap.h"

#include <malloc.h>
#include <sys/resource.h>

#include <string>

namespace tessera {
namespace {

// glibc's largest mmap threshold on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX): mallopt refuses more.
constexpr int kLargestMmapThreshold = 32 * 1024 * 1024;
// Far above a step's heap here (GPT-2-small at micro-batch 2 peaks near 2.5 GB), below INT_MAX.
constexpr int kTrimThreshold = 2047 * 1024 * 1024;
// glibc's defaults for both (DEFAULT_MMAP_THRESHOLD_MIN and DEFAULT_TRIM_THRESHOLD).
constexpr int kDefaultMmapThreshold = 128 * 1024;
constexpr int kDefaultTrimThreshold = 128 * 1024;

}  // namespace

Status KeepFreedHeap() {
  if (mallopt(M_MMAP_THRESHOLD, kLargestMmapThreshold) != 1 ||
      mallopt(M_TRIM_THRESHOLD, kTrimThreshold) != 1) {
    return InternalError("malloc refused the mmap or trim threshold (not glibc?)");
  }
  return Status::Ok();
}

Status MapLargeBlocksAlone(size_t bytes) {
  if (bytes > static_cast<size_t>(kLargestMmapThreshold) ||
      mallopt(M_MMAP_THRESHOLD, static_cast<int>(bytes)) != 1) {
    return InternalError("malloc refused an mmap threshold of " + std::to_string(bytes) +
                         " bytes (not glibc, or above 32 MiB?)");
  }
  return Status::Ok();
}

void ReleaseFreedHeap() {
  // Both thresholds back, not only trimming: with the mmap threshold left at 32 MiB the
  // launcher, which lives on beside its workers after profiling, kept serving tensors up to
  // 32 MiB from its heap (session 12's leftover, issue #14).
  mallopt(M_MMAP_THRESHOLD, kDefaultMmapThreshold);
  mallopt(M_TRIM_THRESHOLD, kDefaultTrimThreshold);
  malloc_trim(0);
}

long MmappedChunks() { return static_cast<long>(mallinfo2().hblks); }

long MinorPageFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

}  // namespace tessera
