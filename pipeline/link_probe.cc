#include "pipeline/link_probe.h"

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "fmt/format.h"
#include "pipeline/allreduce.h"
#include "pipeline/task_clock.h"
#include "pipeline/transport.h"

namespace tessera::pipeline {
namespace {

using Clock = std::chrono::steady_clock;
constexpr Transport::Duration kTimeout{30000};
constexpr int kMessageRounds = 21;

// Median seconds of `runs` all-reduces of `floats` floats among the threads (rank 0's view),
// and the process's CPU per all-reduce and member over them.
Result<AllreduceTiming> TimeRing(const std::vector<Endpoint>& endpoints, size_t floats, int runs) {
  const int n = static_cast<int>(endpoints.size());
  std::vector<int> group(n);
  for (int r = 0; r < n; ++r) group[r] = r;
  std::vector<Status> status(n);
  std::vector<double> times;
  // All members meet before the first and after the last timed round (as in
  // TimeGlooAllreduce), so the CPU reads enclose exactly the timed rounds.
  std::barrier sync(n);
  double cpu_start = 0, cpu_end = 0;
  std::vector<std::thread> threads;
  for (int rank = 0; rank < n; ++rank) {
    threads.emplace_back([&, rank] {
      int arrivals = 0;
      status[rank] = [&]() -> Status {
        std::vector<int> peers = {(rank + 1) % n};
        if (n > 2) peers.push_back((rank + n - 1) % n);  // with 2, both neighbours are one
        TESSERA_ASSIGN_OR_RETURN(auto transport,
                                 Transport::Connect(rank, endpoints, peers, kTimeout));
        std::vector<float> data(floats, 1.0f);
        for (int k = 0; k <= runs; ++k) {  // round 0 warms the connections up
          if (k == 1) {
            ++arrivals;
            sync.arrive_and_wait();
            if (rank == 0) cpu_start = ProcessCpuSeconds();
          }
          const auto t0 = Clock::now();
          TESSERA_RETURN_IF_ERROR(
              RingAllreduce(*transport, group, static_cast<uint64_t>(k) * 2 * n, data, kTimeout));
          if (rank == 0 && k > 0) {
            times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
          }
        }
        ++arrivals;
        sync.arrive_and_wait();
        if (rank == 0) cpu_end = ProcessCpuSeconds();
        return transport->Flush(kTimeout);
      }();
      if (arrivals < 2) sync.arrive_and_drop();  // this phase, and out of the next
    });
  }
  for (auto& t : threads) t.join();
  for (const Status& s : status) TESSERA_RETURN_IF_ERROR(s);
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return AllreduceTiming{.wall_s = times[times.size() / 2],
                         .cpu_s = (cpu_end - cpu_start) / (static_cast<double>(runs) * n)};
}

struct MessageTiming {
  double cpu_byte_s = 0;  // the process's CPU per payload byte, both ends
  double delay_s = 0;     // one way, from Send to Recv returning (median)
};

// `runs` round trips of a `bytes` message between two threads over our transport (one message
// each way per round, as an activation goes forward and its gradient comes back), with the
// runtime's copies into and out of the message: the process's CPU per payload byte over them,
// and the one-way delay from a Send to the other thread's Recv returning: per round, rank 0's
// time from its Send to its Recv returning less rank 1's from its Recv returning to its Send
// (its copies), halved; the median over the rounds.
Result<MessageTiming> TimeMessages(size_t bytes, int runs) {
  TESSERA_ASSIGN_OR_RETURN(std::vector<int> ports, FreeLocalPorts(2));
  const std::vector<Endpoint> endpoints = {{"127.0.0.1", ports[0]}, {"127.0.0.1", ports[1]}};
  std::vector<Status> status(2);
  std::barrier sync(2);
  double cpu_start = 0, cpu_end = 0;
  // Per round: rank 0's Send to Recv returned, rank 1's Recv returned to Send.
  std::vector<double> round_trip(runs + 1, 0.0), turnaround(runs + 1, 0.0);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank) {
    threads.emplace_back([&, rank] {
      int arrivals = 0;
      status[rank] = [&]() -> Status {
        const int peer = 1 - rank;
        TESSERA_ASSIGN_OR_RETURN(auto transport,
                                 Transport::Connect(rank, endpoints, {peer}, kTimeout));
        std::vector<float> tensor(bytes / sizeof(float) + 1, 1.0f);
        Clock::time_point sent, received;  // this thread's last Send and Recv return
        auto send = [&](uint64_t tag) {
          std::string message(bytes, '\0');
          std::memcpy(message.data(), tensor.data(), bytes);
          sent = Clock::now();
          return transport->Send(peer, tag, std::move(message));
        };
        auto receive = [&](uint64_t tag) -> Status {
          TESSERA_ASSIGN_OR_RETURN(std::string message, transport->Recv(peer, tag, kTimeout));
          received = Clock::now();
          std::memcpy(tensor.data(), message.data(), std::min(bytes, message.size()));
          return Status::Ok();
        };
        auto seconds = [](Clock::time_point a, Clock::time_point b) {
          return std::chrono::duration<double>(b - a).count();
        };
        for (int k = 0; k <= runs; ++k) {  // round 0 warms the connection up
          if (k == 1) {
            ++arrivals;
            sync.arrive_and_wait();
            if (rank == 0) cpu_start = ProcessCpuSeconds();
          }
          if (rank == 0) {
            TESSERA_RETURN_IF_ERROR(send(2 * k));
            TESSERA_RETURN_IF_ERROR(receive(2 * k + 1));
            round_trip[k] = seconds(sent, received);
          } else {
            TESSERA_RETURN_IF_ERROR(receive(2 * k));
            TESSERA_RETURN_IF_ERROR(send(2 * k + 1));
            turnaround[k] = seconds(received, sent);
          }
        }
        TESSERA_RETURN_IF_ERROR(transport->Flush(kTimeout));
        ++arrivals;
        sync.arrive_and_wait();
        if (rank == 0) cpu_end = ProcessCpuSeconds();
        return Status::Ok();
      }();
      if (arrivals < 2) sync.arrive_and_drop();
    });
  }
  for (auto& t : threads) t.join();
  for (const Status& s : status) TESSERA_RETURN_IF_ERROR(s);
  std::vector<double> one_way;
  for (int k = 1; k <= runs; ++k) {
    one_way.push_back(std::max(0.0, round_trip[k] - turnaround[k]) / 2);
  }
  std::nth_element(one_way.begin(), one_way.begin() + one_way.size() / 2, one_way.end());
  return MessageTiming{
      .cpu_byte_s = (cpu_end - cpu_start) / (2.0 * runs * static_cast<double>(bytes)),
      .delay_s = one_way[one_way.size() / 2]};
}

Result<AllreduceTiming> TimeOurRing(size_t floats, int replicas, int runs) {
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
  TESSERA_ASSIGN_OR_RETURN(LoopbackMeasurement m, MeasureLoopback(bytes, 0, replicas, runs, timer));
  return m.allreduce_link;
}

Result<LoopbackMeasurement> MeasureLoopback(double bytes, double message_bytes, int replicas,
                                            int runs, const AllreduceTimer& timer) {
  if (replicas < 2 || runs < 1 || !(bytes >= 64)) {
    return InvalidArgumentError("ring probe: replicas >= 2, runs >= 1 and bytes >= 64");
  }
  if (!(message_bytes >= 0 && message_bytes <= 256.0 * 1024 * 1024)) {
    return InvalidArgumentError("message probe: bytes must be in [0, 256 MiB]");
  }
  const AllreduceTimer time = timer ? timer : AllreduceTimer(TimeOurRing);
  TESSERA_ASSIGN_OR_RETURN(AllreduceTiming small, time(4, replicas, runs));
  TESSERA_ASSIGN_OR_RETURN(AllreduceTiming large,
                           time(static_cast<size_t>(bytes / 4), replicas, runs));
  LoopbackMeasurement m;
  m.allreduce_link = FitRing(small.wall_s, large.wall_s, bytes, replicas);
  m.cpu.allreduce_call_s = small.cpu_s;
  m.cpu.allreduce_byte_s = std::max(0.0, large.cpu_s - small.cpu_s) / bytes;
  if (message_bytes >= 1) {
    // More rounds than the all-reduce's: a round trip of a pipeline message is a fraction of a
    // millisecond, and the delay is a median over the rounds.
    TESSERA_ASSIGN_OR_RETURN(MessageTiming t, TimeMessages(static_cast<size_t>(message_bytes),
                                                           std::max(runs, kMessageRounds)));
    m.cpu.p2p_byte_s = t.cpu_byte_s;
    m.message_delay_s = t.delay_s;
  }
  return m;
}

}  // namespace tessera::pipeline
