// pipeline-sim: prints schedules, Varuna's unit-time timeline and bubble table, and simulated
// step times of the three schedules for given per-stage costs and links, and with --auto the
// auto-configuration's ranked candidates for a profile. Torch-free.
#include <sstream>
#include <string>
#include <vector>

#include "core/cli.h"
#include "core/file.h"
#include "fmt/format.h"
#include "pipeline/autoconfig.h"
#include "pipeline/schedule.h"
#include "pipeline/simulator.h"

int main(int argc, char** argv) {
  tessera::cli::Program program("pipeline-sim",
                                "Prints pipeline schedules and simulates training steps of each.");
  auto& app = program.app();
  int stages = 4, micro = 8, replicas = 1, steps = 1;
  double forward_ms = 10, backward_ms = 20, recompute_ms = -1, activation_kb = 0, link_mbps = 0,
         latency_ms = 0, burst_kb = 0, gradient_mb = 0, jitter = 0;
  std::string framing = "payload";
  uint64_t seed = 1;
  bool timeline = false, table = false, tasks = false, auto_config = false;
  int workers = 4, global_batch = 32, units = 8, cores = 0, top = 20;
  double memory_limit_mb = 0, param_mb = 1, allreduce_mbps = 0, allreduce_latency_ms = 0;
  std::string profile_path, micro_batch_list = "1,2,4,8", schedule = "varuna";
  app.add_option("--stages", stages, "Pipeline stages (P)")->capture_default_str();
  app.add_option("--micro-batches", micro, "Micro-batches per replica (M)")->capture_default_str();
  app.add_option("--replicas", replicas, "Data-parallel replicas (D)")->capture_default_str();
  app.add_option("--forward-ms", forward_ms, "Forward time per stage and micro-batch")
      ->capture_default_str();
  app.add_option("--backward-ms", backward_ms, "Backward time")->capture_default_str();
  app.add_option("--recompute-ms", recompute_ms, "Recompute time (default: the forward's)");
  app.add_option("--activation-kb", activation_kb, "Activation size per micro-batch")
      ->capture_default_str();
  app.add_option("--link-mbps", link_mbps, "Link bandwidth (0: unlimited)")->capture_default_str();
  app.add_option("--latency-ms", latency_ms, "Link latency")->capture_default_str();
  app.add_option("--burst-kb", burst_kb, "Token-bucket burst of each egress")
      ->capture_default_str();
  app.add_option("--framing", framing, "What the rate limit meters: payload or tcp frames")
      ->capture_default_str();
  app.add_option("--steps", steps, "Steps back to back (the step time is the steady state)")
      ->capture_default_str();
  app.add_option("--gradient-mb", gradient_mb, "Gradient size per stage (all-reduce)")
      ->capture_default_str();
  app.add_option("--jitter", jitter, "Relative compute jitter (sd)")->capture_default_str();
  app.add_option("--seed", seed, "Jitter seed")->capture_default_str();
  app.add_flag("--tasks", tasks, "Print every stage's task list");
  app.add_flag("--timeline", timeline, "Print Varuna's unit-slot timeline");
  app.add_flag("--bubble-table", table, "Print the unit-time bubble table (P = 5, 10, 20)");
  app.add_flag("--auto", auto_config,
               "Rank every (P, D, m) for --workers by simulation (auto-config) instead; the "
               "profile comes from --profile, or is synthetic: --units identical units costing "
               "--forward-ms and --backward-ms per sample, --activation-kb per sample, "
               "--param-mb each");
  app.add_option("--workers", workers, "Auto: workers available")->capture_default_str();
  app.add_option("--global-batch", global_batch, "Auto: samples per step")->capture_default_str();
  app.add_option("--profile", profile_path, "Auto: profile JSON (pipeline-launch --profile-out)");
  app.add_option("--units", units, "Auto, synthetic profile: cut units")->capture_default_str();
  app.add_option("--param-mb", param_mb, "Auto, synthetic profile: parameters per unit")
      ->capture_default_str();
  app.add_option("--auto-micro-batches", micro_batch_list,
                 "Auto, synthetic profile: micro-batch sizes")
      ->capture_default_str();
  app.add_option("--memory-limit-mb", memory_limit_mb, "Auto: memory per worker (0: no limit)")
      ->capture_default_str();
  app.add_option("--allreduce-mbps", allreduce_mbps,
                 "Auto: the all-reduce ring's link where --link-mbps is 0 (e.g. what "
                 "pipeline-launch --auto measured on loopback; 0: free)")
      ->capture_default_str();
  app.add_option("--allreduce-latency-ms", allreduce_latency_ms, "Auto: its latency per message")
      ->capture_default_str();
  double call_cpu_ms = 0, allreduce_cpu_ms_per_mb = 0, p2p_cpu_ms_per_mb = 0;
  app.add_option("--allreduce-cpu-call-ms", call_cpu_ms,
                 "Auto: CPU per all-reduce call and member (pipeline-launch --auto prints the "
                 "measured figures), charged on --cores");
  app.add_option("--allreduce-cpu-ms-per-mb", allreduce_cpu_ms_per_mb,
                 "Auto: CPU per MB all-reduced, per member");
  app.add_option("--p2p-cpu-ms-per-mb", p2p_cpu_ms_per_mb,
                 "Auto: CPU per MB sent from one worker to another, both ends");
  app.add_option("--cores", cores, "Auto: processors the workers share (0: one each)")
      ->capture_default_str();
  app.add_option("--schedule", schedule, "Auto: varuna, gpipe or 1f1b")->capture_default_str();
  app.add_option("--top", top, "Auto: rows to print (0: all)")->capture_default_str();
  return program.Run(argc, argv, [&]() -> tessera::Status {
    namespace pl = tessera::pipeline;
    if (auto_config) {
      pl::AutoConfigRequest r;
      auto kind = pl::ParseScheduleKind(schedule);
      if (!kind.ok()) return tessera::cli::UsageError(kind.status().message());
      r.schedule = *kind;
      r.workers = workers;
      r.global_batch = global_batch;
      r.memory_limit_bytes = memory_limit_mb * 1e6;
      r.cores = cores;
      if (call_cpu_ms < 0 || allreduce_cpu_ms_per_mb < 0 || p2p_cpu_ms_per_mb < 0) {
        return tessera::cli::UsageError("communication CPU figures must be >= 0");
      }
      r.comm_cpu = {.allreduce_call_s = call_cpu_ms / 1e3,
                    .allreduce_byte_s = allreduce_cpu_ms_per_mb / 1e9,
                    .p2p_byte_s = p2p_cpu_ms_per_mb / 1e9};
      r.steps = steps < 2 ? 3 : steps;
      if (framing != "payload" && framing != "tcp") {
        return tessera::cli::UsageError("--framing must be payload or tcp");
      }
      r.link = {link_mbps * 1e6 / 8, latency_ms / 1e3, burst_kb * 1024};
      if (framing == "tcp") r.link = pl::WithTcpFraming(r.link);
      if (allreduce_mbps < 0 || allreduce_latency_ms < 0) {
        return tessera::cli::UsageError("--allreduce-mbps and its latency must be >= 0");
      }
      if (allreduce_mbps > 0 || allreduce_latency_ms > 0) {
        r.allreduce_link = pl::LinkModel{allreduce_mbps * 1e6 / 8, allreduce_latency_ms / 1e3};
      }
      if (!profile_path.empty()) {
        TESSERA_ASSIGN_OR_RETURN(std::string text, tessera::ReadFile(profile_path));
        auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
        if (json.is_discarded()) return tessera::cli::UsageError(profile_path + " is not JSON");
        TESSERA_ASSIGN_OR_RETURN(r.profiles, pl::ProfilesFromJson(json));
      } else {
        if (units < 1 || units > 1000) return tessera::cli::UsageError("--units in [1, 1000]");
        std::stringstream in(micro_batch_list);
        for (std::string item; std::getline(in, item, ',');) {
          int m = 0;
          try {
            size_t used = 0;
            m = std::stoi(item, &used);
            if (used != item.size()) m = 0;
          } catch (const std::exception&) {
          }
          if (m < 1) return tessera::cli::UsageError("--auto-micro-batches: a list like 1,2,4");
          pl::ProfiledMicroBatch p;
          p.micro_batch = m;
          p.profile.forward_s.assign(units, m * forward_ms / 1e3);
          p.profile.backward_s.assign(units, m * backward_ms / 1e3);
          p.profile.output_bytes.assign(units, m * activation_kb * 1e3);
          p.profile.param_bytes.assign(units, param_mb * 1e6);
          r.profiles.push_back(std::move(p));
        }
      }
      auto result = pl::AutoConfigure(r);
      if (!result.ok() && result.status().code() == tessera::StatusCode::kInvalidArgument) {
        return tessera::cli::UsageError(result.status().message());
      }
      TESSERA_RETURN_IF_ERROR(result.status());
      fmt::print(
          "auto-config: {} workers, global batch {}, {} schedule, {} candidates ({} over "
          "the memory limit), best first:\n{}",
          workers, global_batch, schedule, result->ranked.size() + result->rejected.size(),
          result->rejected.size(), pl::FormatCandidates(*result, top));
      TESSERA_ASSIGN_OR_RETURN(pl::Candidate best, pl::Best(*result, r.memory_limit_bytes));
      fmt::print("chosen: P={} D={} m={} ({:.1f} samples/s simulated)\n", best.stages,
                 best.replicas, best.micro_batch, best.samples_per_s);
      return tessera::Status::Ok();
    }
    if (table) {
      fmt::print(
          "Varuna unit-time bubble (stage-0 idle / makespan)\n  P   M=2P    M=4P    M=6P    "
          "M=10P   | GPipe (P-1)/(M+P-1) at M=2P\n");
      for (int p : {5, 10, 20}) {
        fmt::print("{:3}", p);
        for (int k : {2, 4, 6, 10}) {
          TESSERA_ASSIGN_OR_RETURN(auto t, pl::VarunaUnitTimeline(p, k * p));
          fmt::print("  {:5.1f} %", 100 * pl::UnitBubbleFraction(t));
        }
        fmt::print("   | {:5.1f} %\n", 100.0 * (p - 1) / (3 * p - 1));
      }
    }
    if (timeline) {
      TESSERA_ASSIGN_OR_RETURN(auto t, pl::VarunaUnitTimeline(stages, micro));
      fmt::print(
          "Varuna unit timeline P={} M={} (F 1 slot, R 1, B 2 = B+b), makespan {} slots, "
          "stage-0 bubble {:.1f} %\n",
          stages, micro, t.makespan, 100 * pl::UnitBubbleFraction(t));
      for (int s = 0; s < stages; ++s) fmt::print("s{}: {}\n", s, t.rows[s]);
    }
    pl::SimConfig c;
    c.micro_batches = micro;
    c.replicas = replicas;
    c.jitter = jitter;
    c.seed = seed;
    if (stages < 1) return tessera::cli::UsageError("--stages must be >= 1");
    c.stages.assign(stages, pl::StageCost{forward_ms / 1e3,
                                          (recompute_ms < 0 ? forward_ms : recompute_ms) / 1e3,
                                          backward_ms / 1e3, gradient_mb * 1e6});
    c.boundary_bytes.assign(stages - 1, activation_kb * 1e3);
    if (framing != "payload" && framing != "tcp") {
      return tessera::cli::UsageError("--framing must be payload or tcp");
    }
    if (steps < 1 || steps > 10000)
      return tessera::cli::UsageError("--steps must be in [1, 10000]");
    c.steps = steps;
    c.pipeline_link = {link_mbps * 1e6 / 8, latency_ms / 1e3, burst_kb * 1024};
    if (framing == "tcp") c.pipeline_link = pl::WithTcpFraming(c.pipeline_link);
    c.allreduce_link = c.pipeline_link;
    fmt::print("simulated step, P={} M={} D={}:\n", stages, micro, replicas);
    for (pl::ScheduleKind kind : pl::kAllSchedules) {
      c.schedule = kind;
      TESSERA_ASSIGN_OR_RETURN(pl::SimResult r, pl::Simulate(c));
      fmt::print(
          "  {:7} step {:9.3f} ms  pipeline {:9.3f} ms  bubble stage 0 {:5.1f} %  mean "
          "{:5.1f} %\n",
          pl::ScheduleName(kind), 1e3 * r.step_s, 1e3 * r.pipeline_s, 100 * r.bubble_stage0,
          100 * r.bubble_mean);
      if (tasks) {
        for (int s = 0; s < stages; ++s) {
          TESSERA_ASSIGN_OR_RETURN(auto list, pl::StageTasks(kind, stages, micro, s));
          fmt::print("    s{}: {}\n", s, pl::FormatTasks(list));
        }
      }
    }
    return tessera::Status::Ok();
  });
}
