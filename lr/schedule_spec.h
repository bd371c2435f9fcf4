// Builds a Schedule from a short text spec, so binaries and experiment grids can name schedules
// on the command line:  "knee", "knee:explore=0.3", "step:every=0.33,gamma=0.1",
// "multistep:at=0.5/0.75", "cosine:warmup=0.05", "onecycle:pct_start=0.3", "linear",
// "wsd:decay=0.1", "plateau:factor=0.1,patience=2", "constant".
//
// Lengths in a spec are fractions of the budget (total_steps), so the same spec scales to a
// shortened budget, which is how the paper's short-budget comparisons are run. Every key is
// checked: an unknown schedule, an unknown key or a bad value is an INVALID_ARGUMENT error.
//
// Defaults (per schedule): knee explore=0.5 warmup=0 (the authors' advice: 50% explore);
// step every=0.33 gamma=0.1; multistep at=0.5/0.75 gamma=0.1; cosine warmup=0 min=0;
// onecycle pct_start=0.3 div=25 final_div=1e4 (PyTorch); linear warmup=0;
// wsd warmup=0 decay=0.1 final=0; plateau factor=0.1 patience=10 threshold=1e-4 cooldown=0
// min=0 (PyTorch).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "lr/schedule.h"

namespace tessera::lr {

// The names MakeSchedule accepts, in a stable order.
const std::vector<std::string>& ScheduleNames();

Result<std::unique_ptr<Schedule>> MakeSchedule(std::string_view spec, double peak_lr,
                                               int64_t total_steps);

}  // namespace tessera::lr
