// The replicas' all-reduce alone: c10d/gloo (pipeline/gloo_collective.h) against our ring over
// the transport (pipeline/allreduce.h), between N threads of this process over loopback (each
// with its own transport connections and gloo pairs, as separate workers would have), for a
// range of buffer sizes, alternating the two engines round by round so that changes of the
// shared machine's load fall on both alike. Prints the median seconds per all-reduce and the
// ratio ring / gloo for each size.
//
// With --p2p, point-to-point instead, what a pipeline's activations and gradients are: a round
// trip of one message between ranks 0 and 1 (0 sends, 1 receives and sends it back), through
// gloo's send/recv (GlooGroup::SendTo/RecvFrom) against our transport (Transport::Send/Recv,
// with the copies of a float buffer into and out of the message string that the runtime makes),
// alternating round by round. Prints the median round trip of each and the ratio.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/cli.h"
#include "fmt/format.h"
#include "pipeline/allreduce.h"
#include "pipeline/gloo_collective.h"
#include "pipeline/transport.h"

namespace pl = tessera::pipeline;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  tessera::cli::Program program("pipeline-collective-bench",
                                "Median all-reduce time: gloo against our ring, same run.");
  int members = 2, rounds = 7;
  std::vector<double> sizes_mb{0.0625, 1, 16, 64};
  bool p2p = false;
  program.app().add_option("--members", members)->capture_default_str();
  program.app().add_flag("--p2p", p2p, "Round trips of one message between ranks 0 and 1");
  program.app().add_option("--rounds", rounds)->capture_default_str();
  program.app().add_option("--sizes-mb", sizes_mb)->capture_default_str();
  return program.Run(argc, argv, [&]() -> tessera::Status {
    if (members < 2 || rounds < 1) return tessera::cli::UsageError("--members >= 2, --rounds >= 1");
    TESSERA_ASSIGN_OR_RETURN(std::vector<int> ports, pl::FreeLocalPorts(members + 1));
    std::vector<pl::Endpoint> endpoints;
    std::vector<int> all;
    for (int r = 0; r < members; ++r) {
      endpoints.push_back({"127.0.0.1", ports[r]});
      all.push_back(r);
    }
    std::vector<std::unique_ptr<pl::Transport>> transports(members);
    std::vector<std::unique_ptr<pl::GlooGroup>> groups(members);
    std::vector<tessera::Status> status(members, tessera::Status::Ok());
    const auto timeout = pl::Transport::Duration(120000);
    {
      std::vector<std::thread> threads;
      for (int r = 0; r < members; ++r) {
        threads.emplace_back([&, r] {
          std::vector<int> peers;
          for (int p : all) {
            if (p != r) peers.push_back(p);
          }
          auto t = pl::Transport::Connect(r, endpoints, peers, timeout);
          if (!t.ok()) {
            status[r] = t.status();
            return;
          }
          transports[r] = std::move(*t);
          auto g = pl::GlooGroup::Join({.store = {"127.0.0.1", ports[members]},
                                        .serve_store = r == 0,
                                        .prefix = "bench",
                                        .members = all,
                                        .rank = r,
                                        .bind_host = "127.0.0.1",
                                        .timeout = timeout},
                                       *transports[r]);
          if (!g.ok())
            status[r] = g.status();
          else
            groups[r] = std::move(*g);
        });
      }
      for (auto& t : threads) t.join();
    }
    for (const auto& s : status) TESSERA_RETURN_IF_ERROR(s);
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    if (p2p) {
      fmt::print(
          "size_mb,gloo_round_trip_median_s,transport_round_trip_median_s,"
          "transport_over_gloo\n");
      int tag = 0;
      for (double mb : sizes_mb) {
        const size_t n = std::max<size_t>(1, static_cast<size_t>(mb * (1 << 20) / sizeof(float)));
        std::vector<std::vector<float>> data(2, std::vector<float>(n, 1.0f));
        std::vector<double> gloo_s, own_s;
        for (int round = 0; round <= rounds; ++round) {  // round 0: warm-up, not counted
          for (int engine = 0; engine < 2; ++engine) {
            ++tag;
            // One side of the round trip: rank 0 sends first, rank 1 echoes.
            auto side = [&](int r) -> tessera::Status {
              const int peer = 1 - r;
              std::span<float> buffer(data[r]);
              for (int leg = 0; leg < 2; ++leg) {
                const bool sending = (leg == 0) == (r == 0);
                if (engine == 0) {
                  TESSERA_RETURN_IF_ERROR(sending
                                              ? groups[r]->SendTo(peer, tag, buffer, timeout)
                                              : groups[r]->RecvFrom(peer, tag, buffer, timeout));
                } else if (sending) {
                  TESSERA_RETURN_IF_ERROR(
                      transports[r]->Send(peer, tag,
                                          std::string(reinterpret_cast<const char*>(buffer.data()),
                                                      buffer.size_bytes())));
                } else {
                  TESSERA_ASSIGN_OR_RETURN(std::string m, transports[r]->Recv(peer, tag, timeout));
                  if (m.size() != buffer.size_bytes()) {
                    return tessera::InternalError("p2p bench: a message of the wrong size");
                  }
                  std::memcpy(buffer.data(), m.data(), m.size());
                }
              }
              return tessera::Status::Ok();
            };
            const auto start = Clock::now();
            std::thread echo([&] { status[1] = side(1); });
            status[0] = side(0);
            echo.join();
            const double s = std::chrono::duration<double>(Clock::now() - start).count();
            TESSERA_RETURN_IF_ERROR(status[0]);
            TESSERA_RETURN_IF_ERROR(status[1]);
            if (round > 0) (engine == 0 ? gloo_s : own_s).push_back(s);
          }
        }
        fmt::print("{},{:.6f},{:.6f},{:.2f}\n", mb, median(gloo_s), median(own_s),
                   median(own_s) / median(gloo_s));
      }
      return tessera::Status::Ok();
    }
    fmt::print("size_mb,gloo_median_s,ring_median_s,ring_over_gloo\n");
    uint64_t tag = 0;
    for (double mb : sizes_mb) {
      const size_t n = std::max<size_t>(1, static_cast<size_t>(mb * (1 << 20) / sizeof(float)));
      std::vector<std::vector<float>> data(members, std::vector<float>(n, 1.0f));
      std::vector<double> gloo_s, ring_s;
      for (int round = 0; round <= rounds; ++round) {  // round 0: warm-up, not counted
        for (int engine = 0; engine < 2; ++engine) {
          std::vector<std::thread> threads;
          const auto start = Clock::now();
          for (int r = 0; r < members; ++r) {
            threads.emplace_back([&, r] {
              std::span<float> buffer(data[r]);
              if (engine == 0) {
                status[r] = groups[r]->Start(buffer);
                if (status[r].ok()) status[r] = groups[r]->Wait(timeout);
              } else {
                status[r] = pl::RingAllreduce(*transports[r], all, tag, buffer, timeout);
              }
            });
          }
          for (auto& t : threads) t.join();
          const double s = std::chrono::duration<double>(Clock::now() - start).count();
          for (const auto& st : status) TESSERA_RETURN_IF_ERROR(st);
          tag += 2 * members;
          if (round > 0) (engine == 0 ? gloo_s : ring_s).push_back(s);
          for (auto& d : data) std::fill(d.begin(), d.end(), 1.0f);  // keep values finite
        }
      }
      fmt::print("{},{:.5f},{:.5f},{:.2f}\n", mb, median(gloo_s), median(ring_s),
                 median(ring_s) / median(gloo_s));
    }
    return tessera::Status::Ok();
  });
}
