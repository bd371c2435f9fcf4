// Applies a Schedule to any libtorch optimizer, every step, across all parameter groups.
//
// Groups keep their ratios: the adapter records each group's learning rate when it is created
// and sets group i to schedule(step) * lr_i / lr_0. A model whose head trains at 10x the body's
// rate keeps that 10x under every schedule.
//
//   auto adapter = ScheduleAdapter::Create(optimizer, *schedule).value();
//   for (int64_t step = 0; step < total; ++step) {
//     adapter.Apply(step);           // before optimizer.step()
//     ... forward, backward, optimizer.step() ...
//   }
//
// libtorch 1.13's torch::load(optimizer) does NOT restore param-group options (learning rates
// included); checkpoints store GroupLearningRates() and put them back with
// SetGroupLearningRates() (see lr/trainer.h).
#pragma once

#include <cstdint>
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

class ScheduleAdapter {
 public:
  // Both must outlive the adapter. FAILED_PRECONDITION if the optimizer has no groups or the
  // first group's rate is not positive (ratios are taken relative to it).
  static Result<ScheduleAdapter> Create(torch::optim::Optimizer& optimizer,
                                        const Schedule& schedule);

  // Sets every group's rate for update `step`; returns the rate of the first group.
  double Apply(int64_t step);

  // Sets every group to `lr` times its ratio (used by the tuner, which picks rates itself).
  void SetRate(double lr);

  const std::vector<double>& ratios() const { return ratios_; }

 private:
  ScheduleAdapter(torch::optim::Optimizer& optimizer, const Schedule& schedule,
                  std::vector<double> ratios)
      : optimizer_(&optimizer), schedule_(&schedule), ratios_(std::move(ratios)) {}
  torch::optim::Optimizer* optimizer_;
  const Schedule* schedule_;
  std::vector<double> ratios_;
};

}  // namespace tessera::lr
