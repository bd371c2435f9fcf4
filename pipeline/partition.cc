#include "pipeline/partition.h"

#include <algorithm>
#include <limits>

#include "fmt/format.h"

namespace tessera::pipeline {
namespace {

Status CheckCounts(int units, int stages) {
  if (stages < 1) return InvalidArgumentError("stages must be >= 1");
  if (units < stages) {
    return InvalidArgumentError(fmt::format(
        "{} stages need at least {} cut units, the model has {}", stages, stages, units));
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<int>> UniformPartition(int units, int stages) {
  TESSERA_RETURN_IF_ERROR(CheckCounts(units, stages));
  std::vector<int> b = {0};
  const int base = units / stages, extra = units % stages;
  for (int s = 0; s < stages; ++s) b.push_back(b.back() + base + (s < extra ? 1 : 0));
  return b;
}

Result<std::vector<int>> BalancedPartition(const std::vector<double>& unit_costs, int stages) {
  const int n = static_cast<int>(unit_costs.size());
  TESSERA_RETURN_IF_ERROR(CheckCounts(n, stages));
  for (double c : unit_costs) {
    if (!(c >= 0)) return InvalidArgumentError("unit costs must be >= 0");
  }
  std::vector<double> prefix(n + 1, 0);
  for (int i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + unit_costs[i];
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // best[s][i]: minimal max-cost of splitting units [0, i) into s stages; cut[s][i] its last cut.
  std::vector<std::vector<double>> best(stages + 1, std::vector<double>(n + 1, kInf));
  std::vector<std::vector<int>> cut(stages + 1, std::vector<int>(n + 1, 0));
  best[0][0] = 0;
  for (int s = 1; s <= stages; ++s) {
    for (int i = s; i <= n; ++i) {
      for (int j = s - 1; j < i; ++j) {
        const double v = std::max(best[s - 1][j], prefix[i] - prefix[j]);
        if (v < best[s][i]) {
          best[s][i] = v;
          cut[s][i] = j;
        }
      }
    }
  }
  std::vector<int> b(stages + 1);
  b[stages] = n;
  for (int s = stages; s > 0; --s) b[s - 1] = cut[s][b[s]];
  return b;
}

std::vector<double> StageCosts(const std::vector<double>& unit_costs,
                               const std::vector<int>& boundaries) {
  std::vector<double> out;
  for (size_t s = 0; s + 1 < boundaries.size(); ++s) {
    double sum = 0;
    for (int u = boundaries[s]; u < boundaries[s + 1]; ++u) sum += unit_costs.at(u);
    out.push_back(sum);
  }
  return out;
}

Status ValidatePartition(const std::vector<int>& b, int units) {
  if (b.size() < 2 || b.front() != 0 || b.back() != units) {
    return InvalidArgumentError(
        fmt::format("partition must run from unit 0 to unit {} (the model's unit count)", units));
  }
  for (size_t i = 1; i < b.size(); ++i) {
    if (b[i] <= b[i - 1]) return InvalidArgumentError("every stage needs at least one unit");
  }
  return Status::Ok();
}

}  // namespace tessera::pipeline
