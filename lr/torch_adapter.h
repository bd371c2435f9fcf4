// Applies a Schedule to any libtorch optimizer, every step, across all parameter groups.
//
// Base rates come from the optimizer: each group's learning rate when the adapter first sees it
// (at Create, or at the first Apply after a group was added with add_param_group) is that
// group's base rate, PyTorch's `initial_lr`. Two ways to turn a schedule into group rates:
//
//   * GroupRates::kRatioToFirstGroup (the default, and the only behaviour before it had a name):
//     group i gets LearningRate(step) * base_i / base_0. The schedule's own peak is the first
//     group's rate and the optimizer's rates only set the ratios: a head at 10x the body stays
//     at 10x under every schedule.
//   * GroupRates::kFromOptimizer (PyTorch's lr_scheduler): group i gets
//     GroupLearningRate(step, base_i), the schedule run from that group's own base rate, with
//     absolute floors (cosine's min_lr = PyTorch's eta_min) the same for every group.
//
// Schedules that cycle momentum (one-cycle, cyclic) also set every group's momentum (SGD,
// RMSprop) or beta1 (Adam, AdamW); Create refuses other optimizers for them, as PyTorch does.
//
//   auto adapter = ScheduleAdapter::Create(optimizer, *schedule).value();
//   for (int64_t step = 0; step < total; ++step) {
//     adapter.Apply(step);           // before optimizer.step()
//     ... forward, backward, optimizer.step() ...
//   }
//
// State: SaveState()/RestoreState() carry the adapter's own state (the mode, each group's base
// rate, the last step applied) as text, apart from the model and the optimizer, like PyTorch's
// scheduler.state_dict(). A schedule with state of its own (reduce-on-plateau) saves it with
// Schedule::SaveState(). libtorch 1.13's torch::load(optimizer) does NOT restore param-group
// options (learning rates included): after loading an optimizer, restore the adapter (whose base
// rates are then right whatever rates the optimizer came back with) and Apply the next step, or
// put the rates back with SetGroupLearningRates().
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "lr/schedule.h"

namespace torch::optim {
class Optimizer;
}

namespace tessera::lr {

// The learning rate of every parameter group, in group order.
std::vector<double> GroupLearningRates(const torch::optim::Optimizer& optimizer);

// Sets every group's learning rate; INVALID_ARGUMENT if the count does not match.
Status SetGroupLearningRates(torch::optim::Optimizer& optimizer, const std::vector<double>& lrs);

// The momentum (SGD, RMSprop) or beta1 (Adam, AdamW) of every group; FAILED_PRECONDITION for an
// optimizer that has none (Adagrad, LBFGS).
Result<std::vector<double>> GroupMomenta(const torch::optim::Optimizer& optimizer);

enum class GroupRates { kRatioToFirstGroup, kFromOptimizer };

struct AdapterOptions {
  GroupRates group_rates = GroupRates::kRatioToFirstGroup;
};

class ScheduleAdapter {
 public:
  // Both must outlive the adapter. FAILED_PRECONDITION if the optimizer has no groups, the
  // first group's rate is not positive (ratios are taken relative to it), or the schedule
  // cycles momentum and the optimizer has none.
  static Result<ScheduleAdapter> Create(torch::optim::Optimizer& optimizer,
                                        const Schedule& schedule, AdapterOptions options = {});

  // Sets every group's rate (and momentum, for schedules that cycle it) for update `step`;
  // returns the rate of the first group.
  double Apply(int64_t step);

  // Sets every group to `lr` times its ratio to the first group (used by the tuner, which picks
  // rates itself).
  void SetRate(double lr);

  // Each group's rate relative to the first group's (base_i / base_0).
  const std::vector<double>& ratios() const { return ratios_; }
  // Each group's base rate, in group order.
  const std::vector<double>& base_rates() const { return base_rates_; }
  // The last step Apply() set, -1 before any.
  int64_t last_step() const { return last_step_; }

  std::string SaveState() const;
  // INVALID_ARGUMENT for malformed text, a different mode, or more groups than the optimizer has.
  Status RestoreState(std::string_view state);

 private:
  ScheduleAdapter(torch::optim::Optimizer& optimizer, const Schedule& schedule,
                  AdapterOptions options)
      : optimizer_(&optimizer), schedule_(&schedule), options_(options) {}
  // Records the base rate of groups added to the optimizer since the last call.
  void AdoptNewGroups();
  torch::optim::Optimizer* optimizer_;
  const Schedule* schedule_;
  AdapterOptions options_;
  std::vector<double> base_rates_;
  std::vector<double> ratios_;
  int64_t last_step_ = -1;
};

}  // namespace tessera::lr
