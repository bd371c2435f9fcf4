// ledger-agreement-sim: runs the seeded agreement simulation (simulation.h) over many seeds
// and prints how many schedules forked or stalled; exits 1 if any did.
#include <chrono>
#include <iostream>

#include "core/cli.h"
#include "ledger/agreement/simulation.h"

int main(int argc, char** argv) {
  using namespace tessera::ledger::agreement;
  tessera::cli::Program program("ledger-agreement-sim",
                                "Seeded simulation of the ledger's BA* agreement under attack.");
  CLI::App& app = program.app();
  SimOptions o;
  uint64_t schedules = 1000, first_seed = 1;
  bool no_recovery = false, no_journal = false;
  app.add_option("--schedules", schedules, "Seeds to run")->check(CLI::Range(1, 100000000));
  app.add_option("--first-seed", first_seed, "First seed");
  app.add_option("--honest", o.honest, "Honest players")->check(CLI::Range(1, 1000));
  app.add_option("--malicious", o.malicious, "Malicious players")->check(CLI::Range(0, 1000));
  app.add_option("--threshold", o.threshold, "Quorum threshold T")->check(CLI::Range(1, 2000));
  app.add_option("--heights", o.heights, "Heights per schedule")->check(CLI::Range(1, 100));
  app.add_option("--committee", o.committee,
                 "Expected members of each step's committee (0: everyone votes every step)");
  app.add_option("--liveness-ms", o.liveness_ms, "Every height decided by GST + this (virtual ms)");
  app.add_option("--next-repeat-ms", o.next_repeat_ms,
                 "Repeated next rounds every this many ms while committees are drawn (0: off)");
  app.add_flag("--per-height-draw", o.per_height_draw,
               "Draw one committee per height instead of per step (shows stalls)");
  app.add_flag("--no-recovery", no_recovery, "Disable next votes and periods (shows stalls)");
  app.add_flag("--no-journal", no_journal, "Restart players without their vote journal");
  return program.Run(argc, argv, [&]() -> tessera::Status {
    o.recovery = !no_recovery;
    o.restore_journal = !no_journal;
    auto start = std::chrono::steady_clock::now();
    SimSummary s = SimulateMany(o, first_seed, schedules);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << s.schedules << " schedules (seeds " << first_seed << ".."
              << first_seed + schedules - 1 << "), " << o.honest << " honest + " << o.malicious
              << " malicious players, T = " << o.threshold << ", recovery "
              << (o.recovery ? "on" : "OFF") << ", journal " << (o.restore_journal ? "on" : "OFF")
              << ", committee " << o.committee << " expected per "
              << (o.per_height_draw ? "HEIGHT" : "step")
              << "\n  unsafe (fork, invalid decision or double vote): " << s.unsafe
              << "\n  stalled: " << s.stalled << "\n  needed a later period: " << s.recovered
              << " (highest period " << s.max_period
              << ")\n  with a crash and restart: " << s.crashed
              << "\n  replayed proposer tickets rejected: " << s.replayed_tickets_rejected
              << "\n  step committees with fewer than T honest members: " << s.short_committees
              << " (schedules with a short first cert committee: " << s.short_first_draw << ")"
              << "\n  messages delivered: " << s.deliveries << "\n  wall time: " << secs << " s\n";
    if (!s.first_failure.empty()) std::cout << "  first failure: " << s.first_failure << "\n";
    if (s.unsafe || s.stalled) return tessera::InternalError("simulation found violations");
    return tessera::Status::Ok();
  });
}
