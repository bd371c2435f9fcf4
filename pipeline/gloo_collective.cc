#define USE_C10D_GLOO 1  // ProcessGroupGloo.hpp declares nothing without it
#include "pipeline/gloo_collective.h"

#include <torch/torch.h>

#include <algorithm>
#include <barrier>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "fmt/format.h"
#include "pipeline/task_clock.h"

namespace tessera::pipeline {
namespace {

using Clock = std::chrono::steady_clock;

Result<int> ParseInt(const char* name, const char* text) {
  int value = 0;
  const char* end = text + std::strlen(text);
  auto [ptr, ec] = std::from_chars(text, end, value);
  if (ec != std::errc() || ptr != end) {
    return InvalidArgumentError(fmt::format("{}='{}' is not a number", name, text));
  }
  return value;
}

std::string Describe(const std::exception_ptr& e) {
  try {
    if (e) std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
  }
  return "unknown error";
}

}  // namespace

Result<TorchrunEnvironment> ReadTorchrunEnvironment(
    const std::function<const char*(const char*)>& get_or_null) {
  auto get = [&](const char* name) -> const char* {
    const char* v = get_or_null ? get_or_null(name) : std::getenv(name);
    return v != nullptr && *v != '\0' ? v : nullptr;
  };
  TorchrunEnvironment env;
  const char* addr = get("MASTER_ADDR");
  const char* port = get("MASTER_PORT");
  if ((addr == nullptr) != (port == nullptr)) {
    return InvalidArgumentError("MASTER_ADDR and MASTER_PORT must be set together");
  }
  if (addr != nullptr) {
    env.master_addr = addr;
    TESSERA_ASSIGN_OR_RETURN(env.master_port, ParseInt("MASTER_PORT", port));
    if (env.master_port <= 0 || env.master_port > 65535) {
      return InvalidArgumentError(fmt::format("MASTER_PORT={} is not a port", port));
    }
  }
  struct Field {
    const char* name;
    int* out;
  };
  for (Field f : {Field{"RANK", &env.rank}, Field{"WORLD_SIZE", &env.world_size},
                  Field{"LOCAL_RANK", &env.local_rank}}) {
    if (const char* v = get(f.name)) {
      TESSERA_ASSIGN_OR_RETURN(*f.out, ParseInt(f.name, v));
      if (*f.out < 0) return InvalidArgumentError(fmt::format("{}={} is negative", f.name, v));
    }
  }
  if (const char* v = get("TORCHELASTIC_USE_AGENT_STORE")) {
    env.agent_store = std::string(v) == "True" || std::string(v) == "true" || std::string(v) == "1";
  }
  return env;
}

struct GlooGroup::Impl {
  GlooGroupOptions options;
  Transport* transport = nullptr;
  c10::intrusive_ptr<c10d::TCPStore> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group;
  std::vector<c10::intrusive_ptr<c10d::Work>> pending;
  bool broken = false;

  // UNAVAILABLE naming the first member whose transport connection is gone, else OK.
  Status DeadMember() {
    for (int member : options.members) {
      if (member == options.rank) continue;
      if (Status s = transport->PeerStatus(member); !s.ok()) {
        return UnavailableError(fmt::format("gloo group {}: replica rank {} is gone ({})",
                                            options.prefix, member, s.message()));
      }
    }
    return Status::Ok();
  }

  // A failed or timed-out collective may leave gloo's worker thread blocked; destroying the
  // group would join it (up to gloo's own timeout). The worker exits after reporting the error,
  // so the group is left to the process's end.
  Status Abandon(Status why) {
    broken = true;
    pending.clear();
    (void)group.release();
    return why;
  }
};

GlooGroup::GlooGroup(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

namespace {

// The group index of global rank `member`, or -1.
int IndexOf(const std::vector<int>& members, int member) {
  auto it = std::find(members.begin(), members.end(), member);
  return it == members.end() ? -1 : static_cast<int>(it - members.begin());
}

}  // namespace

Status GlooGroup::PointToPoint(bool send, int member, int tag, std::span<float> data,
                               Transport::Duration timeout) {
  if (impl_->broken) return FailedPreconditionError("the gloo group failed earlier");
  const int index = IndexOf(impl_->options.members, member);
  if (index < 0 || member == impl_->options.rank) {
    return InvalidArgumentError(
        fmt::format("gloo group {}: rank {} is not another member", impl_->options.prefix, member));
  }
  const char* what = send ? "send to" : "receive from";
  std::vector<at::Tensor> tensors{
      torch::from_blob(data.data(), {static_cast<int64_t>(data.size())}, torch::kFloat)};
  const auto start = Clock::now();
  try {
    auto work =
        send ? impl_->group->send(tensors, index, tag) : impl_->group->recv(tensors, index, tag);
    work->wait(timeout);
    return Status::Ok();
  } catch (const std::exception& e) {
    const std::string why = e.what();
    const bool timed_out = Clock::now() - start >= timeout;
    // Gloo sees the closed socket before our transport's reader may: give it a moment to name
    // the rank, as Wait does.
    const auto grace = Clock::now() + std::chrono::milliseconds(500);
    while (Clock::now() < grace) {
      if (Status dead = impl_->DeadMember(); !dead.ok()) {
        return impl_->Abandon(UnavailableError(fmt::format("{} (gloo: {})", dead.message(), why)));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (timed_out) {
      return impl_->Abandon(DeadlineExceededError(
          fmt::format("gloo group {}: {} rank {} did not finish in {} ms ({})",
                      impl_->options.prefix, what, member, timeout.count(), why)));
    }
    return impl_->Abandon(UnavailableError(
        fmt::format("gloo group {}: {} rank {}: {}", impl_->options.prefix, what, member, why)));
  }
}

Status GlooGroup::SendTo(int member, int tag, std::span<const float> data,
                         Transport::Duration timeout) {
  // c10d takes a mutable tensor; a send only reads it.
  return PointToPoint(true, member, tag,
                      std::span<float>(const_cast<float*>(data.data()), data.size()), timeout);
}

Status GlooGroup::RecvFrom(int member, int tag, std::span<float> data,
                           Transport::Duration timeout) {
  return PointToPoint(false, member, tag, data, timeout);
}

GlooGroup::~GlooGroup() {
  if (impl_ && !impl_->broken && !impl_->pending.empty()) {
    (void)Wait(impl_->options.timeout);
  }
}

Result<std::unique_ptr<GlooGroup>> GlooGroup::Join(const GlooGroupOptions& options,
                                                   Transport& transport) {
  auto it = std::find(options.members.begin(), options.members.end(), options.rank);
  if (it == options.members.end()) {
    return InvalidArgumentError(fmt::format("rank {} is not in its gloo group", options.rank));
  }
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->transport = &transport;
  try {
    c10d::TCPStoreOptions store_options;
    store_options.port = static_cast<uint16_t>(options.store.port);
    store_options.isServer = options.serve_store;
    store_options.waitWorkers = false;
    store_options.timeout = options.timeout;
    impl->store = c10::make_intrusive<c10d::TCPStore>(options.store.host, store_options);
    auto prefixed = c10::make_intrusive<c10d::PrefixStore>(options.prefix, impl->store);
    auto gloo = c10d::ProcessGroupGloo::Options::create(options.timeout);
    gloo->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(options.bind_host));
    gloo->threads = 1;  // one collective at a time, in the order started; the cores compute
    impl->group = c10::make_intrusive<c10d::ProcessGroupGloo>(
        prefixed, static_cast<int>(it - options.members.begin()),
        static_cast<int>(options.members.size()), gloo);
  } catch (const std::exception& e) {
    return UnavailableError(fmt::format("joining gloo group {} (store {}:{}): {}", options.prefix,
                                        options.store.host, options.store.port, e.what()));
  }
  return std::unique_ptr<GlooGroup>(new GlooGroup(std::move(impl)));
}

Status GlooGroup::Start(std::span<float> data) {
  if (impl_->broken) return FailedPreconditionError("the gloo group failed earlier");
  std::vector<at::Tensor> tensors{
      torch::from_blob(data.data(), {static_cast<int64_t>(data.size())}, torch::kFloat)};
  try {
    impl_->pending.push_back(impl_->group->allreduce(tensors));
  } catch (const std::exception& e) {
    return impl_->Abandon(UnavailableError(
        fmt::format("gloo group {}: starting an all-reduce: {}", impl_->options.prefix, e.what())));
  }
  return Status::Ok();
}

Status GlooGroup::Wait(Transport::Duration timeout) {
  if (impl_->broken) return FailedPreconditionError("the gloo group failed earlier");
  const auto deadline = Clock::now() + timeout;
  for (auto& work : impl_->pending) {
    auto pause = std::chrono::microseconds(20);
    while (!work->isCompleted()) {
      if (Status dead = impl_->DeadMember(); !dead.ok()) return impl_->Abandon(dead);
      if (Clock::now() > deadline) {
        return impl_->Abandon(DeadlineExceededError(fmt::format(
            "gloo group {}: an all-reduce with ranks {} did not finish in {} ms",
            impl_->options.prefix, fmt::join(impl_->options.members, ","), timeout.count())));
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(1000));
    }
    if (!work->isSuccess()) {
      const std::string why = Describe(work->exception());
      // Gloo often sees the closed socket before our transport's reader does: give it a moment
      // to name the rank.
      const auto grace = Clock::now() + std::chrono::milliseconds(500);
      while (Clock::now() < grace) {
        if (Status dead = impl_->DeadMember(); !dead.ok()) {
          return impl_->Abandon(
              UnavailableError(fmt::format("{} (gloo: {})", dead.message(), why)));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      return impl_->Abandon(
          UnavailableError(fmt::format("gloo group {} (ranks {}): {}", impl_->options.prefix,
                                       fmt::join(impl_->options.members, ","), why)));
    }
  }
  impl_->pending.clear();
  return Status::Ok();
}

int GlooGroup::pending() const { return static_cast<int>(impl_->pending.size()); }

Result<AllreduceTiming> TimeGlooAllreduce(size_t floats, int members, int runs) {
  if (members < 2 || runs < 1 || floats < 1) {
    return InvalidArgumentError("gloo probe: members >= 2, runs >= 1, floats >= 1");
  }
  const Transport::Duration timeout(30000);
  TESSERA_ASSIGN_OR_RETURN(std::vector<int> ports, FreeLocalPorts(members + 1));
  std::vector<Endpoint> endpoints;
  std::vector<int> all;
  for (int r = 0; r < members; ++r) {
    endpoints.push_back({"127.0.0.1", ports[r]});
    all.push_back(r);
  }
  std::vector<Status> status(members, Status::Ok());
  std::vector<double> times;
  // Every member waits here before the first and after the last timed round, so rank 0's
  // process CPU reads enclose exactly the timed rounds of all members. A member that failed
  // still arrives (and then leaves the barrier), so no thread waits forever.
  std::barrier sync(members);
  double cpu_start = 0, cpu_end = 0;
  std::vector<std::thread> threads;
  for (int r = 0; r < members; ++r) {
    threads.emplace_back([&, r] {
      int arrivals = 0;  // at `sync`: 2 when the rounds ran
      status[r] = [&]() -> Status {
        std::vector<int> peers;
        for (int p : all) {
          if (p != r) peers.push_back(p);
        }
        TESSERA_ASSIGN_OR_RETURN(auto transport, Transport::Connect(r, endpoints, peers, timeout));
        TESSERA_ASSIGN_OR_RETURN(auto group,
                                 GlooGroup::Join({.store = {"127.0.0.1", ports[members]},
                                                  .serve_store = r == 0,
                                                  .prefix = "probe",
                                                  .members = all,
                                                  .rank = r,
                                                  .bind_host = "127.0.0.1",
                                                  .timeout = timeout},
                                                 *transport));
        std::vector<float> data(floats, 1.0f);
        for (int k = 0; k <= runs; ++k) {  // round 0 warms the pairs up
          if (k == 1) {
            ++arrivals;
            sync.arrive_and_wait();
            if (r == 0) cpu_start = ProcessCpuSeconds();
          }
          const auto t0 = Clock::now();
          TESSERA_RETURN_IF_ERROR(group->Start(data));
          TESSERA_RETURN_IF_ERROR(group->Wait(timeout));
          if (r == 0 && k > 0) {
            times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
          }
          std::fill(data.begin(), data.end(), 1.0f);
        }
        ++arrivals;
        sync.arrive_and_wait();
        if (r == 0) cpu_end = ProcessCpuSeconds();
        return transport->Flush(timeout);
      }();
      if (arrivals < 2) sync.arrive_and_drop();  // this phase, and out of the next
    });
  }
  for (auto& t : threads) t.join();
  for (const Status& s : status) TESSERA_RETURN_IF_ERROR(s);
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return AllreduceTiming{.wall_s = times[times.size() / 2],
                         .cpu_s = (cpu_end - cpu_start) / (static_cast<double>(runs) * members)};
}

}  // namespace tessera::pipeline
