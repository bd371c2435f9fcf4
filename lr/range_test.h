// The learning-rate range test (Smith, "Cyclical Learning Rates for Training Neural Networks",
// 2017; the smoothing and the stop rule of fastai's lr_find): from a snapshot, train a few
// steps with the rate growing geometrically from min_lr to max_lr, smooth the loss with an
// exponential moving average, stop once the smoothed loss exceeds divergence_factor times its
// minimum, and return to the snapshot. The chosen rate is the rate at the smoothed minimum
// divided by `divisor` (fastai's "minimum / 10"), fixed before any experiment, not tuned.
//
// Used as the tuner of Knee (TrainConfig::tune_method = "range"): the range test sets Knee's
// peak, then Knee runs the whole budget. Unlike the online tuner (lr/tuner.h) it makes one
// decision, at the start, from a curve that spans five decades of rates, so it cannot drift
// down round after round, and its only state afterwards is the chosen peak (checkpointable).
//
// Torch-free: drives a Trainable (lr/tuner.h).
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "lr/tuner.h"

namespace tessera::lr {

struct RangeTestOptions {
  double min_lr = 0;        // first rate of the sweep (> 0)
  double max_lr = 0;        // last rate (> min_lr)
  int64_t steps = 100;      // updates in the sweep (>= 5), all extra compute
  double smoothing = 0.98;  // EMA weight of the past (fastai's beta), bias-corrected
  double divergence_factor = 4;
  double divisor = 10;
};

struct RangeTestReport {
  double chosen_lr = 0;    // min_loss_lr / divisor
  double min_loss_lr = 0;  // the rate at the minimum of the smoothed loss
  int64_t steps_done = 0;  // updates spent (<= steps: the sweep stops at divergence)
  bool diverged = false;
  std::vector<double> lrs;       // per update
  std::vector<double> smoothed;  // per update
};

// INVALID_ARGUMENT for bad options; the Trainable's errors propagate. The trainable is back at
// its snapshot when this returns OK.
Result<RangeTestReport> RunRangeTest(const RangeTestOptions& options, Trainable& trainable);

}  // namespace tessera::lr
