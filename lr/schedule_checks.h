// Argument checks shared by the schedule factories (internal to lr/).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tessera::lr::internal {

// OK if `lr` is finite and > 0 (>= 0 with allow_zero).
Status CheckRate(std::string_view what, double lr, bool allow_zero);
// OK if steps >= min.
Status CheckSteps(std::string_view what, int64_t steps, int64_t min);
// Joins states with one separator that no state contains, and splits them back.
std::string JoinStates(const std::vector<std::string>& states);
Result<std::vector<std::string>> SplitStates(std::string_view joined, size_t count);

}  // namespace tessera::lr::internal
