#include "pipeline/autoconfig.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "fmt/format.h"
#include "pipeline/partition.h"

namespace tessera::pipeline {
namespace {

Status ValidateProfile(const ProfiledMicroBatch& p, size_t units) {
  const UnitProfile& u = p.profile;
  if (p.micro_batch < 1) return InvalidArgumentError("profile: micro-batch must be >= 1");
  if (u.forward_s.size() != units || u.backward_s.size() != units ||
      u.output_bytes.size() != units || u.param_bytes.size() != units) {
    return InvalidArgumentError(
        fmt::format("profile of micro-batch {}: every per-unit list must have {} entries",
                    p.micro_batch, units));
  }
  for (size_t k = 0; k < units; ++k) {
    for (double x : {u.forward_s[k], u.backward_s[k], u.output_bytes[k], u.param_bytes[k]}) {
      if (!std::isfinite(x) || x < 0) {
        return InvalidArgumentError(
            fmt::format("profile of micro-batch {}: unit {} has a negative or non-finite entry",
                        p.micro_batch, k));
      }
    }
  }
  if (!std::isfinite(u.input_bytes) || u.input_bytes < 0) {
    return InvalidArgumentError("profile: input bytes must be >= 0");
  }
  if ((!u.optimizer_s.empty() && u.optimizer_s.size() != units) ||
      (!u.activation_bytes.empty() && u.activation_bytes.size() != units)) {
    return InvalidArgumentError(
        "profile: optimizer times and activation bytes must be absent or one per unit");
  }
  for (const auto* list : {&u.optimizer_s, &u.activation_bytes}) {
    for (double x : *list) {
      if (!std::isfinite(x) || x < 0) return InvalidArgumentError("profile: bad entry");
    }
  }
  std::set<int> counts;
  for (const ContendedTimes& c : u.contended) {
    if (c.workers < 1 || !counts.insert(c.workers).second || c.forward_s.size() != units ||
        c.backward_s.size() != units) {
      return InvalidArgumentError(
          "profile: contended times need distinct worker counts >= 1 and one entry per unit");
    }
    for (const auto* list : {&c.forward_s, &c.backward_s}) {
      for (double x : *list) {
        if (!std::isfinite(x) || x < 0) return InvalidArgumentError("profile: bad entry");
      }
    }
  }
  return Status::Ok();
}

Status ValidateRequest(const AutoConfigRequest& r) {
  if (r.workers < 1) return InvalidArgumentError("auto-config: workers must be >= 1");
  if (r.global_batch < 1) return InvalidArgumentError("auto-config: global batch must be >= 1");
  if (r.profiles.empty()) return InvalidArgumentError("auto-config: no profile");
  if (!(r.memory_limit_bytes >= 0)) {
    return InvalidArgumentError("auto-config: memory limit must be >= 0");
  }
  if (r.cores < 0) return InvalidArgumentError("auto-config: cores must be >= 0");
  if (!(r.message_delay_s >= 0 && std::isfinite(r.message_delay_s))) {
    return InvalidArgumentError("auto-config: message delay must be finite and >= 0");
  }
  if (r.steps < 1 || r.steps > 100) {
    return InvalidArgumentError("auto-config: simulated steps must be in [1, 100]");
  }
  const size_t units = r.profiles[0].profile.forward_s.size();
  if (units == 0) return InvalidArgumentError("auto-config: the profile has no unit");
  std::set<int> sizes;
  for (const ProfiledMicroBatch& p : r.profiles) {
    TESSERA_RETURN_IF_ERROR(ValidateProfile(p, units));
    if (!sizes.insert(p.micro_batch).second) {
      return InvalidArgumentError(
          fmt::format("auto-config: micro-batch {} is profiled twice", p.micro_batch));
    }
  }
  return Status::Ok();
}

double Sum(const std::vector<double>& v, int begin, int end) {
  double s = 0;
  for (int k = begin; k < end; ++k) s += v[k];
  return s;
}

const ContendedTimes* ContendedFor(const UnitProfile& profile, int workers) {
  for (const ContendedTimes& c : profile.contended) {
    if (c.workers == workers) return &c;
  }
  return nullptr;
}

// CPU seconds per step of stage `s`'s communication threads in candidate `c`: its share of the
// gradient all-reduce (one call per bucket, and one for the loss on the last stage) at D > 1,
// and half the two ends' cost of every activation and gradient it sends or receives at P > 1.
double StageCommCpu(const AutoConfigRequest& r, const UnitProfile& profile, const Candidate& c,
                    int s, const StageCost& cost) {
  const CommCpuCost& k = r.comm_cpu;
  double cpu = 0;
  if (c.replicas > 1) {
    const int calls = cost.allreduce_buckets + (s + 1 == c.stages ? 1 : 0);
    cpu += calls * k.allreduce_call_s + cost.gradient_bytes * k.allreduce_byte_s;
  }
  double moved = 0;  // bytes per micro-batch this stage sends and receives
  if (s > 0) moved += 2 * profile.output_bytes[c.boundaries[s] - 1];
  if (s + 1 < c.stages) moved += 2 * profile.output_bytes[c.boundaries[s + 1] - 1];
  cpu += 0.5 * k.p2p_byte_s * moved * c.micro_batches;
  return cpu;
}

// Simulates one candidate whose partition is already set.
Result<double> SimulateCandidate(const AutoConfigRequest& r, const UnitProfile& profile,
                                 const Candidate& c) {
  SimConfig sim;
  sim.schedule = r.schedule;
  sim.opportunistic = r.opportunistic;
  sim.micro_batches = c.micro_batches;
  sim.replicas = c.replicas;
  sim.pipeline_link = r.link;
  sim.host_links = r.host_links;
  sim.allreduce_link = r.allreduce_link.value_or(r.link);
  sim.steps = r.steps;
  sim.message_delay_s = r.message_delay_s;
  const int workers = c.stages * c.replicas;
  const ContendedTimes* contended = ContendedFor(profile, workers);
  // Without a contention profile for this many workers: workers beyond the cores take turns,
  // each compute task taking workers / cores as long. With one, the measured times, and the
  // optimizer slowed by the same factor as the whole model's forward and backward.
  double slowdown = r.cores > 0 && workers > r.cores ? static_cast<double>(workers) / r.cores : 1.0;
  const int units = static_cast<int>(profile.forward_s.size());
  if (contended) {
    const double alone = Sum(profile.forward_s, 0, units) + Sum(profile.backward_s, 0, units);
    const double shared =
        Sum(contended->forward_s, 0, units) + Sum(contended->backward_s, 0, units);
    slowdown = alone > 0 ? shared / alone : 1.0;
  }
  sim.cores = r.cores;
  // The share of a core the contended times were measured at: the communication threads will
  // get the same (CommCpuStretch). Without an entry for this many workers, the cores model's.
  if (contended) sim.compute_cpu_share = std::min(1.0, contended->cpu_share);
  for (int s = 0; s < c.stages; ++s) {
    const int b = c.boundaries[s], e = c.boundaries[s + 1];
    StageCost cost;
    cost.forward_s =
        contended ? Sum(contended->forward_s, b, e) : slowdown * Sum(profile.forward_s, b, e);
    cost.recompute_s = cost.forward_s;  // the simulator runs it only where the schedule does
    cost.backward_s =
        contended ? Sum(contended->backward_s, b, e) : slowdown * Sum(profile.backward_s, b, e);
    cost.gradient_bytes = Sum(profile.param_bytes, b, e);
    if (r.bucket_bytes > 0) {
      cost.allreduce_buckets =
          std::max(1, static_cast<int>(std::ceil(cost.gradient_bytes / r.bucket_bytes)));
    }
    if (!profile.optimizer_s.empty()) cost.optimizer_s = slowdown * Sum(profile.optimizer_s, b, e);
    cost.comm_cpu_s = StageCommCpu(r, profile, c, s, cost);
    sim.stages.push_back(cost);
    if (s + 1 < c.stages) sim.boundary_bytes.push_back(profile.output_bytes[e - 1]);
  }
  TESSERA_ASSIGN_OR_RETURN(SimResult result, Simulate(sim));
  return result.step_s;
}

bool Better(const Candidate& a, const Candidate& b) {
  const double scale = std::max(a.step_s, b.step_s);
  if (std::abs(a.step_s - b.step_s) > 1e-9 * scale) return a.step_s < b.step_s;
  if (a.stages * a.replicas != b.stages * b.replicas) {
    return a.stages * a.replicas < b.stages * b.replicas;
  }
  if (a.stages != b.stages) return a.stages < b.stages;
  return a.micro_batch > b.micro_batch;
}

}  // namespace

Result<double> StageMemoryBytes(const UnitProfile& profile, const std::vector<int>& boundaries,
                                ScheduleKind schedule, int micro_batches, int stage,
                                const MemoryModel& memory) {
  const int units = static_cast<int>(profile.forward_s.size());
  TESSERA_RETURN_IF_ERROR(ValidatePartition(boundaries, units));
  const int stages = static_cast<int>(boundaries.size()) - 1;
  if (stage < 0 || stage >= stages) return InvalidArgumentError("stage out of range");
  if (profile.param_bytes.size() != static_cast<size_t>(units) ||
      profile.output_bytes.size() != static_cast<size_t>(units)) {
    return InvalidArgumentError("profile lists differ in length");
  }
  TESSERA_ASSIGN_OR_RETURN(std::vector<Task> tasks,
                           StageTasks(schedule, stages, micro_batches, stage));
  int in_flight = 0, most = 0;
  bool recomputes = false;
  for (const Task& t : tasks) {
    if (t.kind == TaskKind::kForward) most = std::max(most, ++in_flight);
    if (t.kind == TaskKind::kBackward) --in_flight;
    if (t.kind == TaskKind::kRecompute) recomputes = true;
  }
  const int b = boundaries[stage], e = boundaries[stage + 1];
  const double input = b == 0 ? profile.input_bytes : profile.output_bytes[b - 1];
  const bool measured = profile.activation_bytes.size() == static_cast<size_t>(units);
  const double saved = Sum(measured ? profile.activation_bytes : profile.output_bytes, b, e);
  const double stash = recomputes ? most * input + saved : most * (input + saved);
  return memory.base_bytes + (2 + memory.state_copies) * Sum(profile.param_bytes, b, e) + stash;
}

Result<AutoConfigResult> AutoConfigure(const AutoConfigRequest& r) {
  TESSERA_RETURN_IF_ERROR(ValidateRequest(r));
  const int units = static_cast<int>(r.profiles[0].profile.forward_s.size());
  const bool recompute = r.schedule != ScheduleKind::kOneFOneB;
  AutoConfigResult result;
  for (const ProfiledMicroBatch& p : r.profiles) {
    // ProfiledUnitCosts (profile.h) lives with the models; this library stays torch-free.
    std::vector<double> costs;
    for (int u = 0; u < units; ++u) {
      costs.push_back(p.profile.forward_s[u] * (recompute ? 2 : 1) + p.profile.backward_s[u]);
    }
    for (int stages = 1; stages <= std::min(units, r.workers); ++stages) {
      TESSERA_ASSIGN_OR_RETURN(std::vector<int> boundaries, BalancedPartition(costs, stages));
      for (int replicas = 1; stages * replicas <= r.workers; ++replicas) {
        if (r.global_batch % replicas != 0) continue;
        const int per_replica = r.global_batch / replicas;
        if (per_replica % p.micro_batch != 0) continue;
        Candidate c;
        c.stages = stages;
        c.replicas = replicas;
        c.micro_batch = p.micro_batch;
        c.micro_batches = per_replica / p.micro_batch;
        c.boundaries = boundaries;
        for (int s = 0; s < stages; ++s) {
          TESSERA_ASSIGN_OR_RETURN(double bytes, StageMemoryBytes(p.profile, boundaries, r.schedule,
                                                                  c.micro_batches, s, r.memory));
          c.memory_bytes = std::max(c.memory_bytes, bytes);
        }
        c.fits = r.memory_limit_bytes == 0 || c.memory_bytes <= r.memory_limit_bytes;
        if (!c.fits) {
          result.rejected.push_back(std::move(c));
          continue;
        }
        TESSERA_ASSIGN_OR_RETURN(c.step_s, SimulateCandidate(r, p.profile, c));
        const ContendedTimes* measured = ContendedFor(p.profile, stages * replicas);
        if (!measured) measured = ContendedFor(p.profile, 1);
        c.cpu_share = measured ? measured->cpu_share : 0;
        c.samples_per_s = c.step_s > 0 ? r.global_batch / c.step_s : 0;
        result.ranked.push_back(std::move(c));
      }
    }
  }
  std::sort(result.ranked.begin(), result.ranked.end(), Better);
  std::stable_sort(
      result.rejected.begin(), result.rejected.end(),
      [](const Candidate& a, const Candidate& b) { return a.memory_bytes < b.memory_bytes; });
  return result;
}

Result<Candidate> Best(const AutoConfigResult& result, double memory_limit_bytes) {
  if (!result.ranked.empty()) return result.ranked.front();
  if (result.rejected.empty()) {
    return ResourceExhaustedError(
        "auto-config: no (stages, replicas, micro-batch) divides the global batch");
  }
  const Candidate& c = result.rejected.front();
  return ResourceExhaustedError(fmt::format(
      "auto-config: no configuration fits in {:.1f} MB per worker; the smallest (P={} D={} "
      "m={}) needs {:.1f} MB",
      memory_limit_bytes / 1e6, c.stages, c.replicas, c.micro_batch, c.memory_bytes / 1e6));
}

std::string FormatCandidates(const AutoConfigResult& result, int limit) {
  std::string out =
      fmt::format("{:>4} {:>3} {:>3} {:>4} {:>4} {:>11} {:>11} {:>10}  {}\n", "rank", "P", "D", "m",
                  "M", "step ms", "samples/s", "memory MB", "stage units");
  auto row = [&](const std::string& rank, const Candidate& c) {
    std::string cuts;
    for (size_t s = 0; s + 1 < c.boundaries.size(); ++s) {
      cuts += fmt::format("{}[{},{})", s ? " " : "", c.boundaries[s], c.boundaries[s + 1]);
    }
    out += fmt::format(
        "{:>4} {:>3} {:>3} {:>4} {:>4} {:>11} {:>11} {:>10.2f}  {}\n", rank, c.stages, c.replicas,
        c.micro_batch, c.micro_batches, c.fits ? fmt::format("{:.3f}", 1e3 * c.step_s) : "-",
        c.fits ? fmt::format("{:.1f}", c.samples_per_s) : "-", c.memory_bytes / 1e6, cuts);
  };
  for (size_t k = 0; k < result.ranked.size() && (limit == 0 || k < size_t(limit)); ++k) {
    row(std::to_string(k + 1), result.ranked[k]);
  }
  for (size_t k = 0; k < result.rejected.size() && (limit == 0 || k < size_t(limit)); ++k) {
    row("over", result.rejected[k]);
  }
  return out;
}

namespace {

nlohmann::json ContendedToJson(const std::vector<ContendedTimes>& contended) {
  nlohmann::json out = nlohmann::json::array();
  for (const ContendedTimes& c : contended) {
    out.push_back({{"workers", c.workers},
                   {"forward_s", c.forward_s},
                   {"backward_s", c.backward_s},
                   {"cpu_share", c.cpu_share},
                   {"window_cpu_share", c.window_cpu_share}});
  }
  return out;
}

}  // namespace

nlohmann::json ProfilesToJson(const std::vector<ProfiledMicroBatch>& profiles) {
  nlohmann::json out = nlohmann::json::array();
  for (const ProfiledMicroBatch& p : profiles) {
    out.push_back({{"micro_batch", p.micro_batch},
                   {"forward_s", p.profile.forward_s},
                   {"backward_s", p.profile.backward_s},
                   {"output_bytes", p.profile.output_bytes},
                   {"param_bytes", p.profile.param_bytes},
                   {"input_bytes", p.profile.input_bytes},
                   {"optimizer_s", p.profile.optimizer_s},
                   {"activation_bytes", p.profile.activation_bytes},
                   {"contended", ContendedToJson(p.profile.contended)}});
  }
  return out;
}

Result<std::vector<ProfiledMicroBatch>> ProfilesFromJson(const nlohmann::json& json) {
  if (!json.is_array() || json.empty()) {
    return InvalidArgumentError("profile JSON must be a non-empty array");
  }
  std::vector<ProfiledMicroBatch> out;
  try {
    for (const auto& j : json) {
      ProfiledMicroBatch p;
      p.micro_batch = j.at("micro_batch").get<int>();
      p.profile.forward_s = j.at("forward_s").get<std::vector<double>>();
      p.profile.backward_s = j.at("backward_s").get<std::vector<double>>();
      p.profile.output_bytes = j.at("output_bytes").get<std::vector<double>>();
      p.profile.param_bytes = j.at("param_bytes").get<std::vector<double>>();
      p.profile.input_bytes = j.at("input_bytes").get<double>();
      p.profile.optimizer_s = j.value("optimizer_s", std::vector<double>{});
      p.profile.activation_bytes = j.value("activation_bytes", std::vector<double>{});
      for (const auto& c : j.value("contended", nlohmann::json::array())) {
        p.profile.contended.push_back(
            {c.at("workers").get<int>(), c.at("forward_s").get<std::vector<double>>(),
             c.at("backward_s").get<std::vector<double>>(), c.value("cpu_share", 0.0),
             c.value("window_cpu_share", 0.0)});
      }
      out.push_back(std::move(p));
    }
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError(fmt::format("profile JSON: {}", e.what()));
  }
  const size_t units = out[0].profile.forward_s.size();
  if (units == 0) return InvalidArgumentError("profile JSON: no unit");
  for (const ProfiledMicroBatch& p : out) TESSERA_RETURN_IF_ERROR(ValidateProfile(p, units));
  return out;
}

}  // namespace tessera::pipeline
