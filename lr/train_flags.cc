// lr-train's flags, shared by every program that runs lr::Train().
#include <CLI/CLI.hpp>

#include "lr/trainer.h"

namespace tessera::lr {

void AddTrainFlags(CLI::App& app, TrainConfig& c) {
  app.add_option("--task", c.task, "fmnist or lm")->capture_default_str();
  app.add_option("--model", c.model, "mlp (default), resnet or cnn for fmnist, transformer for lm");
  app.add_option("--optimizer", c.optimizer, "sgd (momentum), adam or adamw")
      ->capture_default_str();
  app.add_option("--lr", c.lr, "peak learning rate (the tuner's initial guess)")
      ->capture_default_str();
  app.add_option("--momentum", c.momentum, "SGD momentum")->capture_default_str();
  app.add_option("--weight-decay", c.weight_decay, "weight decay")->capture_default_str();
  app.add_option("--head-lr-ratio", c.head_lr_ratio, "output layer rate / body rate")
      ->capture_default_str();
  app.add_option("--schedule", c.schedule, "schedule spec, e.g. knee:explore=0.5, cosine, step")
      ->capture_default_str();
  app.add_flag("--tune", c.tune, "tune the rate (see --tune-method)");
  app.add_option("--tune-method", c.tune_method,
                 "online (the online tuner replaces the schedule), range (a range test sets "
                 "the schedule's peak) or trials (annealed trials inside the budget set it)")
      ->capture_default_str();
  app.add_option("--epochs", c.epochs, "budget in epochs")->capture_default_str();
  app.add_option("--steps", c.steps, "budget in steps (overrides --epochs)")->capture_default_str();
  app.add_option("--budget-fraction", c.budget_fraction, "scale the budget (shortened budgets)")
      ->capture_default_str();
  app.add_option("--batch-size", c.batch_size, "minibatch size")->capture_default_str();
  app.add_option("--seed", c.seed, "seed of initialisation and data order")->capture_default_str();
  app.add_option("--data-dir", c.data_dir, "data directory (default: the Debian package's)");
  app.add_option("--train-limit", c.train_limit, "first N training examples / bytes (0: all)")
      ->capture_default_str();
  app.add_option("--validation", c.validation,
                 "hold out N training images / bytes as a validation set (0: none)")
      ->capture_default_str();
  app.add_option("--test-limit", c.test_limit, "first N test examples / LM windows (0: all / 256)")
      ->capture_default_str();
  app.add_option("--lm-context", c.lm_context, "LM context length")->capture_default_str();
  app.add_option("--lm-d-model", c.lm_d_model, "LM width")->capture_default_str();
  app.add_option("--lm-layers", c.lm_layers, "LM layers")->capture_default_str();
  app.add_option("--lm-heads", c.lm_heads, "LM attention heads")->capture_default_str();
  app.add_option("--evals", c.evals, "evaluations over the run (0: once per epoch)")
      ->capture_default_str();
  app.add_option("--log-csv", c.log_csv, "per-step CSV log (evaluations go to *.eval.csv)");
  app.add_option("--checkpoint-dir", c.checkpoint_dir, "write checkpoint.pt here");
  app.add_option("--checkpoint-every", c.checkpoint_every,
                 "checkpoint every N steps (0: at stop and end)")
      ->capture_default_str();
  app.add_flag("--resume", c.resume, "continue from --checkpoint-dir if a checkpoint exists");
  app.add_option("--stop-after", c.stop_after, "stop after N steps (checkpointed), as if preempted")
      ->capture_default_str();
  app.add_option("--threads", c.threads, "torch threads")->capture_default_str();
}

}  // namespace tessera::lr
