#include "pipeline/profile.h"

#include "core/heap.h"

namespace tessera::pipeline {

Result<std::vector<ProfiledMicroBatch>> ProfileMicroBatches(
    const ModelSpec& spec, const std::vector<int>& sizes, uint64_t seed,
    const std::string& optimizer, int contended_workers, const std::vector<int>& pin_cpus,
    double min_timed_s) {
  if (sizes.empty()) return InvalidArgumentError("no micro-batch size to profile");
  // At least enough micro-batches of a small model to sample a shared machine's load; at most
  // ten minutes per profile.
  if (!(min_timed_s >= 0 && min_timed_s <= 600)) {
    return InvalidArgumentError("profile seconds must be in [0, 600]");
  }
  // Measure with the heap the workers will have (core/heap.h: no page faults per
  // micro-batch), and give the peak back afterwards: the launcher lives on beside its workers.
  TESSERA_RETURN_IF_ERROR(KeepFreedHeap());
  struct Release {
    ~Release() { ReleaseFreedHeap(); }
  } release;
  std::vector<ProfiledMicroBatch> out;
  for (int m : sizes) {
    TESSERA_ASSIGN_OR_RETURN(UnitProfile p,
                             ProfileUnits(spec, m, 2, 5, seed, optimizer, min_timed_s, pin_cpus));
    if (contended_workers > 1) {
      TESSERA_RETURN_IF_ERROR(
          ProfileContention(spec, m, contended_workers, 2, 5, min_timed_s, seed, p, pin_cpus));
    }
    out.push_back({m, std::move(p)});
  }
  return out;
}

}  // namespace tessera::pipeline
