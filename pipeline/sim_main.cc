// pipeline-sim: prints schedules, Varuna's unit-time timeline and bubble table, and simulated
// step times of the three schedules for given per-stage costs and links. Torch-free.
#include <string>

#include "core/cli.h"
#include "fmt/format.h"
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
  bool timeline = false, table = false, tasks = false;
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
  return program.Run(argc, argv, [&]() -> tessera::Status {
    namespace pl = tessera::pipeline;
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
