#include "pipeline/profile.h"

#include "pipeline/heap.h"

namespace tessera::pipeline {
namespace {

// Timed seconds per profile, at least: enough micro-batches of a small model to sample a
// shared machine's load (a few seconds' run of the toy GPT is 10-20 steps).
constexpr double kMinProfileSeconds = 1.0;

}  // namespace

Result<std::vector<ProfiledMicroBatch>> ProfileMicroBatches(
    const ModelSpec& spec, const std::vector<int>& sizes, uint64_t seed,
    const std::string& optimizer, int contended_workers, const std::vector<int>& pin_cpus) {
  if (sizes.empty()) return InvalidArgumentError("no micro-batch size to profile");
  // Measure with the heap the workers will have (pipeline/heap.h: no page faults per
  // micro-batch), and give the peak back afterwards: the launcher lives on beside its workers.
  TESSERA_RETURN_IF_ERROR(KeepFreedHeap());
  struct Release {
    ~Release() { ReleaseFreedHeap(); }
  } release;
  std::vector<ProfiledMicroBatch> out;
  for (int m : sizes) {
    TESSERA_ASSIGN_OR_RETURN(
        UnitProfile p, ProfileUnits(spec, m, 2, 5, seed, optimizer, kMinProfileSeconds, pin_cpus));
    if (contended_workers > 1) {
      TESSERA_RETURN_IF_ERROR(ProfileContention(spec, m, contended_workers, 2, 5,
                                                kMinProfileSeconds, seed, p, pin_cpus));
    }
    out.push_back({m, std::move(p)});
  }
  return out;
}

}  // namespace tessera::pipeline
