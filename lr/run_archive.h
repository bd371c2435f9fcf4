// The one archive format of a training run, used for checkpoints on disk and for the tuner's
// in-memory snapshots: the model (parameters and buffers, BatchNorm statistics included), the
// optimizer state, every group's learning rate (libtorch 1.13's optimizer load drops them), the
// loop's own state, and a fingerprint of the configuration so that resuming with a different
// one is refused. Internal to the lr trainer (torch header).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "lr/models.h"
#include "lr/trainer.h"

namespace tessera::lr {

struct LoopState {
  int64_t step = 0;       // updates done
  double window_sum = 0;  // the plateau metric window: sum and count of training losses
  int64_t window_count = 0;
  std::vector<double> lrs;     // every group's rate (filled by SerializeRun)
  std::string schedule_state;  // Schedule::SaveState()
  double tuned_peak = 0;       // the peak a range test chose (0: none)
  std::string tuner_state;     // the online tuner's TunerState::Save() (empty: none)
};

// The configuration as text: every field that changes the run's arithmetic.
std::string ConfigFingerprint(const TrainConfig& config);

// FNV-1a (64 bit) over the bytes of every parameter and buffer, in the module's order.
uint64_t ParametersFingerprint(Net& net);

// The archive's bytes.
Result<std::string> SerializeRun(Net& net, torch::optim::Optimizer& optimizer, LoopState state,
                                 const std::string& fingerprint);

// Restores `net` and `optimizer` (state emptied first, rates put back) from the bytes and
// returns the loop state. FAILED_PRECONDITION for another fingerprint, DATA_LOSS for unreadable
// bytes or a step outside [0, total_steps].
Result<LoopState> DeserializeRun(std::string_view bytes, Net& net,
                                 torch::optim::Optimizer& optimizer, const std::string& fingerprint,
                                 int64_t total_steps);

}  // namespace tessera::lr
