// Assigning a model's cut units to pipeline stages. A model with n-1 cut points has n units
// (the pieces between cuts); a partition gives each stage a contiguous run of units, written as
// boundaries b[0] = 0 < b[1] < ... < b[P] = n (stage s owns units [b[s], b[s+1])).
//
// Varuna partitions uniformly by cut count (research note §3, which assumes identical layers).
// BalancedPartition is ours: it minimizes the most expensive stage, so an embedding or a large
// LM head does not leave one stage much slower than the others. Torch-free.
#pragma once

#include <vector>

#include "core/status.h"

namespace tessera::pipeline {

// Varuna's rule: the same number of units per stage, the remainder going to the first stages.
Result<std::vector<int>> UniformPartition(int units, int stages);

// Contiguous partition minimizing max over stages of the summed unit costs (exact dynamic
// program); ties prefer earlier boundaries. INVALID_ARGUMENT if stages > units or a cost < 0.
Result<std::vector<int>> BalancedPartition(const std::vector<double>& unit_costs, int stages);

// Per-stage sums of `unit_costs` under `boundaries`.
std::vector<double> StageCosts(const std::vector<double>& unit_costs,
                               const std::vector<int>& boundaries);

// Checks b[0] = 0, strictly increasing, b.back() = units.
Status ValidatePartition(const std::vector<int>& boundaries, int units);

}  // namespace tessera::pipeline
