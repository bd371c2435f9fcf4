// lr-train: one training run (Fashion-MNIST or the fortunes character LM) with a learning-rate
// schedule or the online tuner; per-step CSV log; preemptible through --checkpoint-dir/--resume.
#include <fmt/format.h>

#include <iostream>

#include "core/cli.h"
#include "lr/trainer.h"

int main(int argc, char** argv) {
  tessera::cli::Program program("lr-train",
                                "Trains one model with a learning-rate schedule or the online "
                                "tuner (see docs/lr.md).");
  tessera::lr::TrainConfig c;
  tessera::lr::AddTrainFlags(program.app(), c);
  return program.Run(argc, argv, [&]() -> tessera::Status {
    TESSERA_ASSIGN_OR_RETURN(
        auto r, tessera::lr::Train(c, [](const std::string& line) { std::cerr << line << "\n"; }));
    if (r.resumed_from > 0) std::cout << fmt::format("resumed_from={}\n", r.resumed_from);
    std::cout << fmt::format(
        "steps={}/{} finished={} final_lr={:.6g} last_loss={:.6f} test_loss={:.6f}", r.steps_done,
        r.total_steps, r.finished ? "yes" : "no", r.final_lr, r.last_loss, r.test_loss);
    if (c.task == "fmnist") std::cout << fmt::format(" test_acc={:.4f}", r.test_accuracy);
    std::cout << fmt::format(" params={:016x} seconds={:.2f}\n", r.parameters_fingerprint,
                             r.seconds);
    if (c.tune && c.tune_method == "trials") {
      std::cout << fmt::format(
          "tuner_lr={:.6g} trial_steps={} optimizer_steps={} (trials inside the budget)\n",
          r.tuner_lr, r.tuner_trial_steps, r.optimizer_steps);
    } else if (c.tune) {
      std::cout << fmt::format(
          "tuner_lr={:.6g} explore_steps={} trial_steps={} extra={:.1f}% end={}\n", r.tuner_lr,
          r.tuner_explore_steps, r.tuner_trial_steps, 100.0 * r.tuner_trial_steps / r.total_steps,
          r.tuner_end_reason);
    }
    return tessera::Status::Ok();
  });
}
