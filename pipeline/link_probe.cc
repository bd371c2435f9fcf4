#include "pipeline/link_probe.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "fmt/format.h"
#include "pipeline/allreduce.h"
#include "pipeline/transport.h"

namespace tessera::pipeline {
namespace {

using Clock = std::chrono::steady_clock;
constexpr Transport::Duration kTimeout{30000};

// Median seconds of `runs` all-reduces of `floats` floats among the threads (rank 0's view).
Result<double> TimeRing(const std::vector<Endpoint>& endpoints, size_t floats, int runs) {
  const int n = static_cast<int>(endpoints.size());
  std::vector<int> group(n);
  for (int r = 0; r < n; ++r) group[r] = r;
  std::vector<Status> status(n);
  std::vector<double> times;
  std::vector<std::thread> threads;
  for (int rank = 0; rank < n; ++rank) {
    threads.emplace_back([&, rank] {
      status[rank] = [&]() -> Status {
        std::vector<int> peers = {(rank + 1) % n};
        if (n > 2) peers.push_back((rank + n - 1) % n);  // with 2, both neighbours are one
        TESSERA_ASSIGN_OR_RETURN(auto transport,
                                 Transport::Connect(rank, endpoints, peers, kTimeout));
        std::vector<float> data(floats, 1.0f);
        for (int k = 0; k <= runs; ++k) {  // round 0 warms the connections up
          const auto t0 = Clock::now();
          TESSERA_RETURN_IF_ERROR(
              RingAllreduce(*transport, group, static_cast<uint64_t>(k) * 2 * n, data, kTimeout));
          if (rank == 0 && k > 0) {
            times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
          }
        }
        return transport->Flush(kTimeout);
      }();
    });
  }
  for (auto& t : threads) t.join();
  for (const Status& s : status) TESSERA_RETURN_IF_ERROR(s);
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

Result<double> TimeOurRing(size_t floats, int replicas, int runs) {
  std::vector<Endpoint> endpoints;
  TESSERA_ASSIGN_OR_RETURN(std::vector<int> ports, FreeLocalPorts(replicas));
  for (int p : ports) endpoints.push_back({"127.0.0.1", p});
  return TimeRing(endpoints, floats, runs);
}

LinkModel FitRing(double small, double large, double bytes, int replicas) {
  // RingAllreduceSeconds = 2 (D - 1) (latency + (bytes / D) / bandwidth).
  const double steps = 2.0 * (replicas - 1);
  LinkModel link;
  link.latency_s = small / steps;
  const double per_step = large / steps - link.latency_s;
  // A large ring no slower than the small one: the bytes cost nothing measurable.
  link.bandwidth_bytes_per_s = per_step > 0 ? (bytes / replicas) / per_step : 0;
  return link;
}

}  // namespace

Result<LinkModel> MeasureLoopbackRing(double bytes, int replicas, int runs,
                                      const AllreduceTimer& timer) {
  if (replicas < 2 || runs < 1 || !(bytes >= 64)) {
    return InvalidArgumentError("ring probe: replicas >= 2, runs >= 1 and bytes >= 64");
  }
  double small = 0, large = 0;
  if (timer) {
    TESSERA_ASSIGN_OR_RETURN(small, timer(4, replicas, runs));
    TESSERA_ASSIGN_OR_RETURN(large, timer(static_cast<size_t>(bytes / 4), replicas, runs));
  } else {
    TESSERA_ASSIGN_OR_RETURN(small, TimeOurRing(4, replicas, runs));
    TESSERA_ASSIGN_OR_RETURN(large, TimeOurRing(static_cast<size_t>(bytes / 4), replicas, runs));
  }
  return FitRing(small, large, bytes, replicas);
}

}  // namespace tessera::pipeline
