// The online tuner (lr/tuner.h) on a training run: trials from in-memory snapshots of the run,
// committed steps logged like schedule steps. Internal to the lr trainer (torch header).
#pragma once

#include "core/status.h"
#include "lr/run.h"
#include "lr/trainer.h"

namespace tessera::lr {

// Runs the whole budget of `run` under the tuner. INVALID_ARGUMENT for a configuration that
// asks for checkpoints or early stops: the tuner's search state is not checkpointed.
Result<TrainResult> RunTuned(Run& run, const TrainConfig& config);

// A range test (lr/range_test.h) sets the peak of config.schedule, then the schedule runs the
// budget. Checkpointable: a run resumed after the sweep takes the recorded peak and sweeps no
// more, so it continues exactly like an uninterrupted one.
Result<TrainResult> RunRangeTuned(Run& run, const TrainConfig& config);

}  // namespace tessera::lr
