#include "lr/schedule_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <cmath>
#include <map>

#include "lr/cyclic_schedules.h"
#include "lr/decay_schedules.h"

namespace tessera::lr {
namespace {

// Key=value pairs of a spec; Take* remove what they read so leftovers can be reported.
class Params {
 public:
  static Result<Params> Parse(std::string_view text) {
    Params p;
    while (!text.empty()) {
      const size_t comma = text.find(',');
      std::string_view item = text.substr(0, comma);
      text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
      const size_t eq = item.find('=');
      if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size()) {
        return InvalidArgumentError(fmt::format("schedule parameter '{}' is not key=value", item));
      }
      if (!p.values_.emplace(std::string(item.substr(0, eq)), std::string(item.substr(eq + 1)))
               .second) {
        return InvalidArgumentError(
            fmt::format("schedule parameter '{}' repeated", item.substr(0, eq)));
      }
    }
    return p;
  }

  Result<double> TakeDouble(const std::string& key, double fallback) {
    auto it = values_.find(key);
    if (it == values_.end()) return fallback;
    const std::string text = it->second;
    values_.erase(it);
    double v = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(v)) {
      return InvalidArgumentError(
          fmt::format("schedule parameter {}='{}' is not a number", key, text));
    }
    return v;
  }

  std::string TakeString(const std::string& key, std::string fallback) {
    auto it = values_.find(key);
    if (it == values_.end()) return fallback;
    std::string v = it->second;
    values_.erase(it);
    return v;
  }

  Result<std::vector<double>> TakeList(const std::string& key, std::vector<double> fallback) {
    auto it = values_.find(key);
    if (it == values_.end()) return fallback;
    std::string_view text = it->second;
    std::vector<double> out;
    while (!text.empty()) {
      const size_t slash = text.find('/');
      std::string_view item = text.substr(0, slash);
      text = slash == std::string_view::npos ? std::string_view() : text.substr(slash + 1);
      double v = 0;
      auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
      if (ec != std::errc() || ptr != item.data() + item.size() || !std::isfinite(v)) {
        return InvalidArgumentError(
            fmt::format("schedule parameter {}: '{}' is not a number", key, item));
      }
      out.push_back(v);
    }
    values_.erase(it);
    return out;
  }

  Status CheckAllUsed(std::string_view schedule) const {
    if (values_.empty()) return Status::Ok();
    return InvalidArgumentError(
        fmt::format("schedule '{}' has no parameter '{}'", schedule, values_.begin()->first));
  }

 private:
  std::map<std::string, std::string> values_;
};

// A budget fraction in [0, 1] turned into a step count.
Result<int64_t> Steps(std::string_view key, double fraction, int64_t total_steps) {
  if (!(fraction >= 0 && fraction <= 1)) {
    return InvalidArgumentError(
        fmt::format("{} is a fraction of the budget in [0, 1], got {}", key, fraction));
  }
  return static_cast<int64_t>(std::llround(fraction * static_cast<double>(total_steps)));
}

}  // namespace

const std::vector<std::string>& ScheduleNames() {
  static const std::vector<std::string> names = {
      "constant", "step", "multistep",   "cosine",     "onecycle", "linear", "wsd",
      "plateau",  "knee", "exponential", "polynomial", "invsqrt",  "cyclic", "restarts"};
  return names;
}

Result<std::unique_ptr<Schedule>> MakeSchedule(std::string_view spec, double peak_lr,
                                               int64_t total_steps) {
  const size_t colon = spec.find(':');
  const std::string name(spec.substr(0, colon));
  TESSERA_ASSIGN_OR_RETURN(
      Params p, Params::Parse(colon == std::string_view::npos ? "" : spec.substr(colon + 1)));
  if (total_steps < 1) return InvalidArgumentError("total_steps must be >= 1");
  std::unique_ptr<Schedule> out;
  if (name == "constant") {
    TESSERA_ASSIGN_OR_RETURN(out, ConstantSchedule::Create(peak_lr));
  } else if (name == "step") {
    TESSERA_ASSIGN_OR_RETURN(double every, p.TakeDouble("every", 0.33));
    TESSERA_ASSIGN_OR_RETURN(double gamma, p.TakeDouble("gamma", 0.1));
    TESSERA_ASSIGN_OR_RETURN(int64_t size, Steps("every", every, total_steps));
    TESSERA_ASSIGN_OR_RETURN(out, StepSchedule::Create(peak_lr, size, gamma));
  } else if (name == "multistep") {
    TESSERA_ASSIGN_OR_RETURN(auto at, p.TakeList("at", {0.5, 0.75}));
    TESSERA_ASSIGN_OR_RETURN(double gamma, p.TakeDouble("gamma", 0.1));
    std::vector<int64_t> milestones;
    for (double f : at) {
      TESSERA_ASSIGN_OR_RETURN(int64_t m, Steps("at", f, total_steps));
      milestones.push_back(m);
    }
    TESSERA_ASSIGN_OR_RETURN(out, MultiStepSchedule::Create(peak_lr, milestones, gamma));
  } else if (name == "cosine") {
    TESSERA_ASSIGN_OR_RETURN(double warmup, p.TakeDouble("warmup", 0));
    TESSERA_ASSIGN_OR_RETURN(double min_lr, p.TakeDouble("min", 0));
    TESSERA_ASSIGN_OR_RETURN(int64_t w, Steps("warmup", warmup, total_steps));
    TESSERA_ASSIGN_OR_RETURN(
        out,
        CosineSchedule::Create(
            {.peak_lr = peak_lr, .warmup_steps = w, .total_steps = total_steps, .min_lr = min_lr}));
  } else if (name == "onecycle") {
    TESSERA_ASSIGN_OR_RETURN(double pct, p.TakeDouble("pct_start", 0.3));
    TESSERA_ASSIGN_OR_RETURN(double div, p.TakeDouble("div", 25));
    TESSERA_ASSIGN_OR_RETURN(double final_div, p.TakeDouble("final_div", 1e4));
    TESSERA_ASSIGN_OR_RETURN(double momentum, p.TakeDouble("momentum", 1));
    TESSERA_ASSIGN_OR_RETURN(double mom_min, p.TakeDouble("mom_min", 0.85));
    TESSERA_ASSIGN_OR_RETURN(double mom_max, p.TakeDouble("mom_max", 0.95));
    if (momentum != 0 && momentum != 1) {
      return InvalidArgumentError("onecycle momentum is 0 (leave it) or 1 (cycle it)");
    }
    TESSERA_ASSIGN_OR_RETURN(out, OneCycleSchedule::Create({.peak_lr = peak_lr,
                                                            .total_steps = total_steps,
                                                            .pct_start = pct,
                                                            .div_factor = div,
                                                            .final_div_factor = final_div,
                                                            .cycle_momentum = momentum == 1,
                                                            .base_momentum = mom_min,
                                                            .max_momentum = mom_max}));
  } else if (name == "linear") {
    TESSERA_ASSIGN_OR_RETURN(double warmup, p.TakeDouble("warmup", 0));
    TESSERA_ASSIGN_OR_RETURN(int64_t w, Steps("warmup", warmup, total_steps));
    TESSERA_ASSIGN_OR_RETURN(out, LinearDecaySchedule::Create(peak_lr, w, total_steps));
  } else if (name == "wsd") {
    TESSERA_ASSIGN_OR_RETURN(double warmup, p.TakeDouble("warmup", 0));
    TESSERA_ASSIGN_OR_RETURN(double decay, p.TakeDouble("decay", 0.1));
    TESSERA_ASSIGN_OR_RETURN(double final_lr, p.TakeDouble("final", 0));
    TESSERA_ASSIGN_OR_RETURN(int64_t w, Steps("warmup", warmup, total_steps));
    TESSERA_ASSIGN_OR_RETURN(int64_t d, Steps("decay", decay, total_steps));
    TESSERA_ASSIGN_OR_RETURN(out, WsdSchedule::Create({.peak_lr = peak_lr,
                                                       .warmup_steps = w,
                                                       .decay_steps = std::max<int64_t>(d, 1),
                                                       .total_steps = total_steps,
                                                       .final_lr = final_lr}));
  } else if (name == "plateau") {
    PlateauOptions o{.peak_lr = peak_lr};
    TESSERA_ASSIGN_OR_RETURN(o.factor, p.TakeDouble("factor", o.factor));
    TESSERA_ASSIGN_OR_RETURN(double patience, p.TakeDouble("patience", 10));
    TESSERA_ASSIGN_OR_RETURN(o.threshold, p.TakeDouble("threshold", o.threshold));
    TESSERA_ASSIGN_OR_RETURN(double cooldown, p.TakeDouble("cooldown", 0));
    TESSERA_ASSIGN_OR_RETURN(o.min_lr, p.TakeDouble("min", 0));
    if (patience != std::floor(patience) || cooldown != std::floor(cooldown) || patience < 0 ||
        cooldown < 0 || patience > 1e9 || cooldown > 1e9) {
      return InvalidArgumentError("plateau patience and cooldown are whole numbers of evaluations");
    }
    o.patience = static_cast<int64_t>(patience);
    o.cooldown = static_cast<int64_t>(cooldown);
    TESSERA_ASSIGN_OR_RETURN(out, ReduceOnPlateauSchedule::Create(o));
  } else if (name == "knee") {
    TESSERA_ASSIGN_OR_RETURN(double warmup, p.TakeDouble("warmup", 0));
    TESSERA_ASSIGN_OR_RETURN(double explore, p.TakeDouble("explore", 0.5));
    TESSERA_ASSIGN_OR_RETURN(int64_t w, Steps("warmup", warmup, total_steps));
    TESSERA_ASSIGN_OR_RETURN(int64_t e, Steps("explore", explore, total_steps));
    TESSERA_ASSIGN_OR_RETURN(out, KneeSchedule::Create({.peak_lr = peak_lr,
                                                        .warmup_steps = w,
                                                        .explore_steps = e,
                                                        .total_steps = total_steps}));
  } else if (name == "exponential") {
    // gamma from the rate left at the end of the budget: peak * gamma^T = peak * final.
    TESSERA_ASSIGN_OR_RETURN(double final_fraction, p.TakeDouble("final", 0.01));
    if (!(final_fraction > 0 && final_fraction <= 1)) {
      return InvalidArgumentError("exponential final is a fraction of the peak in (0, 1]");
    }
    TESSERA_ASSIGN_OR_RETURN(
        out, ExponentialSchedule::Create(
                 peak_lr, std::pow(final_fraction, 1.0 / static_cast<double>(total_steps))));
  } else if (name == "polynomial") {
    TESSERA_ASSIGN_OR_RETURN(double power, p.TakeDouble("power", 1));
    TESSERA_ASSIGN_OR_RETURN(double min_lr, p.TakeDouble("min", 0));
    TESSERA_ASSIGN_OR_RETURN(
        out,
        PolynomialSchedule::Create(
            {.peak_lr = peak_lr, .total_steps = total_steps, .power = power, .min_lr = min_lr}));
  } else if (name == "invsqrt") {
    TESSERA_ASSIGN_OR_RETURN(double warmup, p.TakeDouble("warmup", 0.05));
    TESSERA_ASSIGN_OR_RETURN(double timescale, p.TakeDouble("timescale", 0));
    TESSERA_ASSIGN_OR_RETURN(int64_t w, Steps("warmup", warmup, total_steps));
    TESSERA_ASSIGN_OR_RETURN(int64_t ts, Steps("timescale", timescale, total_steps));
    TESSERA_ASSIGN_OR_RETURN(
        out, InverseSqrtSchedule::Create({.peak_lr = peak_lr, .warmup_steps = w, .timescale = ts}));
  } else if (name == "cyclic") {
    TESSERA_ASSIGN_OR_RETURN(double up, p.TakeDouble("up", 0.1));
    TESSERA_ASSIGN_OR_RETURN(double down, p.TakeDouble("down", 0.1));
    TESSERA_ASSIGN_OR_RETURN(double base, p.TakeDouble("base", 0.1));
    TESSERA_ASSIGN_OR_RETURN(double gamma, p.TakeDouble("gamma", 1));
    TESSERA_ASSIGN_OR_RETURN(double momentum, p.TakeDouble("momentum", 1));
    const std::string mode = p.TakeString("mode", "triangular");
    CyclicMode m;
    if (mode == "triangular") {
      m = CyclicMode::kTriangular;
    } else if (mode == "triangular2") {
      m = CyclicMode::kTriangular2;
    } else if (mode == "exp_range") {
      m = CyclicMode::kExpRange;
    } else {
      return InvalidArgumentError(
          fmt::format("cyclic mode '{}' (triangular, triangular2, exp_range)", mode));
    }
    if (!(base >= 0 && base <= 1)) {
      return InvalidArgumentError("cyclic base is a fraction of the peak in [0, 1]");
    }
    if (momentum != 0 && momentum != 1) {
      return InvalidArgumentError("cyclic momentum is 0 (leave it) or 1 (cycle it)");
    }
    TESSERA_ASSIGN_OR_RETURN(int64_t u, Steps("up", up, total_steps));
    TESSERA_ASSIGN_OR_RETURN(int64_t d, Steps("down", down, total_steps));
    TESSERA_ASSIGN_OR_RETURN(out, CyclicSchedule::Create({.base_lr = base * peak_lr,
                                                          .max_lr = peak_lr,
                                                          .up_steps = std::max<int64_t>(u, 1),
                                                          .down_steps = std::max<int64_t>(d, 1),
                                                          .mode = m,
                                                          .gamma = gamma,
                                                          .cycle_momentum = momentum == 1}));
  } else if (name == "restarts") {
    TESSERA_ASSIGN_OR_RETURN(double period, p.TakeDouble("period", 0.25));
    TESSERA_ASSIGN_OR_RETURN(double mult, p.TakeDouble("mult", 1));
    TESSERA_ASSIGN_OR_RETURN(double min_lr, p.TakeDouble("min", 0));
    if (mult != std::floor(mult) || mult < 1 || mult > 64) {
      return InvalidArgumentError("restarts mult is a whole number in [1, 64]");
    }
    TESSERA_ASSIGN_OR_RETURN(int64_t t0, Steps("period", period, total_steps));
    TESSERA_ASSIGN_OR_RETURN(
        out, CosineRestartsSchedule::Create({.peak_lr = peak_lr,
                                             .period_steps = std::max<int64_t>(t0, 1),
                                             .period_mult = static_cast<int64_t>(mult),
                                             .min_lr = min_lr}));
  } else {
    return InvalidArgumentError(
        fmt::format("unknown schedule '{}' (known: {})", name, fmt::join(ScheduleNames(), ", ")));
  }
  TESSERA_RETURN_IF_ERROR(p.CheckAllUsed(name));
  return out;
}

}  // namespace tessera::lr
