// The online tuner (lr/tuner.h) on a training run: trials from in-memory snapshots of the run,
// committed steps logged like schedule steps. Internal to the lr trainer (torch header).
#pragma once

#include "core/status.h"
#include "lr/run.h"
#include "lr/trainer.h"

namespace tessera::lr {

// Runs the budget of `run` under the online tuner. Checkpointable: the tuner's state
// (TunerState) travels in the run's checkpoints, and a resumed run continues the search exactly
// where it stopped (stop_after, the stop hook, or a kill after a checkpoint).
Result<TrainResult> RunTuned(Run& run, const TrainConfig& config);

// A range test (lr/range_test.h) sets the peak of config.schedule, then the schedule runs the
// budget. Checkpointable: a run resumed after the sweep takes the recorded peak and sweeps no
// more, so it continues exactly like an uninterrupted one.
Result<TrainResult> RunRangeTuned(Run& run, const TrainConfig& config);

// Annealed trials inside the budget set the peak of config.schedule (TrialTuneOptions): each
// candidate runs the schedule compressed to `trial_steps` updates from the initial state and is
// scored by its validation loss; then the run restarts from the initial state and runs the
// schedule at the best candidate for run.total_steps() (the budget less the trials).
// Checkpointable like RunRangeTuned: a resumed run takes the recorded peak and runs no trials.
Result<TrainResult> RunTrialTuned(Run& run, const TrainConfig& config, int64_t trial_steps);

}  // namespace tessera::lr
