#include "pipeline/cpu_pin.h"

#include <pthread.h>

#include <cerrno>
#include <cstring>

#include "fmt/format.h"

namespace tessera::pipeline {

Result<std::vector<int>> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) {
    return InternalError(fmt::format("sched_getaffinity: {}", std::strerror(errno)));
  }
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  if (cpus.empty()) return InternalError("sched_getaffinity allows no processor");
  return cpus;
}

Result<int> CpuForWorker(int index, const std::vector<int>& cpus) {
  if (cpus.empty()) return InvalidArgumentError("no processor to pin to");
  if (index < 0) return InvalidArgumentError(fmt::format("negative worker index {}", index));
  return cpus[static_cast<size_t>(index) % cpus.size()];
}

ScopedThreadPin::ScopedThreadPin(int cpu) {
  if (cpu < 0) return;
  cpu_set_t previous;
  CPU_ZERO(&previous);
  if (int e = pthread_getaffinity_np(pthread_self(), sizeof(previous), &previous); e != 0) {
    status_ = InternalError(fmt::format("pthread_getaffinity_np: {}", std::strerror(e)));
    return;
  }
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (int e = pthread_setaffinity_np(pthread_self(), sizeof(one), &one); e != 0) {
    status_ = InternalError(fmt::format("pin to processor {}: {}", cpu, std::strerror(e)));
    return;
  }
  previous_ = previous;
}

ScopedThreadPin::~ScopedThreadPin() {
  if (previous_) pthread_setaffinity_np(pthread_self(), sizeof(*previous_), &*previous_);
}

}  // namespace tessera::pipeline
