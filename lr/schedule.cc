#include "lr/schedule.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <sstream>

#include "lr/schedule_checks.h"

namespace tessera::lr {
namespace internal {

Status CheckRate(std::string_view what, double lr, bool allow_zero) {
  if (!std::isfinite(lr) || lr < 0 || (!allow_zero && lr == 0)) {
    return InvalidArgumentError(
        fmt::format("{} must be {} and finite, got {}", what, allow_zero ? ">= 0" : "> 0", lr));
  }
  return Status::Ok();
}

Status CheckSteps(std::string_view what, int64_t steps, int64_t min) {
  if (steps < min) {
    return InvalidArgumentError(fmt::format("{} must be >= {}, got {}", what, min, steps));
  }
  return Status::Ok();
}

// States are text without newlines (plateau's is numbers and spaces); parts are one per line.
std::string JoinStates(const std::vector<std::string>& states) {
  std::string out;
  for (const std::string& s : states) out += s + "\n";
  return out;
}

Result<std::vector<std::string>> SplitStates(std::string_view joined, size_t count) {
  std::vector<std::string> out;
  while (!joined.empty()) {
    const size_t nl = joined.find('\n');
    if (nl == std::string_view::npos) break;
    out.emplace_back(joined.substr(0, nl));
    joined = joined.substr(nl + 1);
  }
  if (!joined.empty() || out.size() != count) {
    return InvalidArgumentError(
        fmt::format("composite schedule state has {} parts, expected {}", out.size(), count));
  }
  return out;
}

}  // namespace internal

using internal::CheckRate;
using internal::CheckSteps;

double Schedule::GroupLearningRate(int64_t step, double base_lr) const {
  const double base = BaseRate();
  return base > 0 ? LearningRate(step) * (base_lr / base) : LearningRate(step);
}

Status Schedule::RestoreState(std::string_view state) {
  if (!state.empty()) {
    return InvalidArgumentError(
        fmt::format("{} has no state to restore, got '{}'", Describe(), state));
  }
  return Status::Ok();
}

// ---- constant

Result<std::unique_ptr<ConstantSchedule>> ConstantSchedule::Create(double peak_lr) {
  TESSERA_RETURN_IF_ERROR(CheckRate("peak_lr", peak_lr, false));
  return std::unique_ptr<ConstantSchedule>(new ConstantSchedule(peak_lr));
}
double ConstantSchedule::LearningRate(int64_t) const { return peak_lr_; }
std::string ConstantSchedule::Describe() const {
  return fmt::format("constant(peak={})", peak_lr_);
}

// ---- step

Result<std::unique_ptr<StepSchedule>> StepSchedule::Create(double peak_lr, int64_t step_size,
                                                           double gamma) {
  TESSERA_RETURN_IF_ERROR(CheckRate("peak_lr", peak_lr, false));
  TESSERA_RETURN_IF_ERROR(CheckSteps("step_size", step_size, 1));
  TESSERA_RETURN_IF_ERROR(CheckRate("gamma", gamma, true));
  return std::unique_ptr<StepSchedule>(new StepSchedule(peak_lr, step_size, gamma));
}
double StepSchedule::LearningRate(int64_t step) const {
  return peak_lr_ * std::pow(gamma_, static_cast<double>(std::max<int64_t>(step, 0) / step_size_));
}
std::string StepSchedule::Describe() const {
  return fmt::format("step(peak={},step_size={},gamma={})", peak_lr_, step_size_, gamma_);
}

// ---- multi-step

Result<std::unique_ptr<MultiStepSchedule>> MultiStepSchedule::Create(
    double peak_lr, std::vector<int64_t> milestones, double gamma) {
  TESSERA_RETURN_IF_ERROR(CheckRate("peak_lr", peak_lr, false));
  TESSERA_RETURN_IF_ERROR(CheckRate("gamma", gamma, true));
  if (milestones.empty()) return InvalidArgumentError("multistep needs at least one milestone");
  for (size_t i = 0; i < milestones.size(); ++i) {
    if (milestones[i] < 1 || (i > 0 && milestones[i] <= milestones[i - 1])) {
      return InvalidArgumentError("multistep milestones must be positive and strictly increasing");
    }
  }
  return std::unique_ptr<MultiStepSchedule>(
      new MultiStepSchedule(peak_lr, std::move(milestones), gamma));
}
double MultiStepSchedule::LearningRate(int64_t step) const {
  // upper_bound counts the milestones m with m <= step.
  const auto passed =
      std::upper_bound(milestones_.begin(), milestones_.end(), step) - milestones_.begin();
  return peak_lr_ * std::pow(gamma_, static_cast<double>(passed));
}
std::string MultiStepSchedule::Describe() const {
  return fmt::format("multistep(peak={},milestones={},gamma={})", peak_lr_,
                     fmt::join(milestones_, "/"), gamma_);
}

// ---- cosine with warmup

Result<std::unique_ptr<CosineSchedule>> CosineSchedule::Create(const CosineOptions& o) {
  TESSERA_RETURN_IF_ERROR(CheckRate("peak_lr", o.peak_lr, false));
  TESSERA_RETURN_IF_ERROR(CheckRate("min_lr", o.min_lr, true));
  TESSERA_RETURN_IF_ERROR(CheckSteps("warmup_steps", o.warmup_steps, 0));
  if (o.total_steps <= o.warmup_steps) {
    return InvalidArgumentError(fmt::format("cosine total_steps ({}) must exceed warmup_steps ({})",
                                            o.total_steps, o.warmup_steps));
  }
  return std::unique_ptr<CosineSchedule>(new CosineSchedule(o));
}
double CosineSchedule::LearningRate(int64_t step) const {
  return GroupLearningRate(step, o_.peak_lr);
}
double CosineSchedule::GroupLearningRate(int64_t step, double base_lr) const {
  step = std::max<int64_t>(step, 0);
  if (step < o_.warmup_steps) {
    return base_lr * static_cast<double>(step + 1) / static_cast<double>(o_.warmup_steps);
  }
  if (step >= o_.total_steps) return o_.min_lr;
  const double t = static_cast<double>(step - o_.warmup_steps) /
                   static_cast<double>(o_.total_steps - o_.warmup_steps);
  return o_.min_lr + (base_lr - o_.min_lr) * 0.5 * (1.0 + std::cos(std::numbers::pi * t));
}
std::string CosineSchedule::Describe() const {
  return fmt::format("cosine(peak={},warmup={},total={},min={})", o_.peak_lr, o_.warmup_steps,
                     o_.total_steps, o_.min_lr);
}

// ---- one-cycle

Result<std::unique_ptr<OneCycleSchedule>> OneCycleSchedule::Create(const OneCycleOptions& o) {
  TESSERA_RETURN_IF_ERROR(CheckRate("peak_lr", o.peak_lr, false));
  TESSERA_RETURN_IF_ERROR(CheckSteps("total_steps", o.total_steps, 2));
  if (!(o.pct_start > 0 && o.pct_start < 1)) {
    return InvalidArgumentError(
        fmt::format("onecycle pct_start must be in (0, 1), got {}", o.pct_start));
  }
  if (!(o.div_factor >= 1 && o.final_div_factor >= 1) || !std::isfinite(o.div_factor) ||
      !std::isfinite(o.final_div_factor)) {
    return InvalidArgumentError("onecycle div_factor and final_div_factor must be >= 1");
  }
  if (o.cycle_momentum &&
      !(o.base_momentum >= 0 && o.base_momentum <= o.max_momentum && o.max_momentum < 1)) {
    return InvalidArgumentError("onecycle needs 0 <= base_momentum <= max_momentum < 1");
  }
  // PyTorch's phase boundaries; every phase must be non-empty.
  const double t = static_cast<double>(o.total_steps);
  const double up_end = o.pct_start * t - 1;
  const double down_end = o.three_phase ? 2 * o.pct_start * t - 2 : t - 1;
  if (up_end <= 0 || down_end <= up_end || (o.three_phase && down_end >= t - 1) ||
      up_end >= t - 1) {
    return InvalidArgumentError(
        fmt::format("onecycle pct_start {} leaves an empty phase for total_steps {}", o.pct_start,
                    o.total_steps));
  }
  return std::unique_ptr<OneCycleSchedule>(new OneCycleSchedule(o));
}
OneCycleSchedule::Phase OneCycleSchedule::PhaseOf(int64_t step) const {
  // torch.optim.lr_scheduler.OneCycleLR.get_lr: the first phase whose end_step >= step (the
  // last phase takes everything after), pct = (step - start_step) / (end_step - start_step).
  const double t = static_cast<double>(o_.total_steps);
  std::vector<double> ends = {o_.pct_start * t - 1};
  if (o_.three_phase) ends.push_back(2 * o_.pct_start * t - 2);
  ends.push_back(t - 1);
  const double s = static_cast<double>(std::clamp<int64_t>(step, 0, o_.total_steps - 1));
  double start = 0;
  for (size_t i = 0; i < ends.size(); ++i) {
    if (s <= ends[i] || i + 1 == ends.size()) {
      return {static_cast<int>(i), (s - start) / (ends[i] - start)};
    }
    start = ends[i];
  }
  return {0, 0};  // unreachable: the last phase always matches
}
namespace {
double Anneal(bool linear, double start, double end, double pct) {
  if (linear) return (end - start) * pct + start;
  return end + (start - end) / 2.0 * (std::cos(std::numbers::pi * pct) + 1);
}
}  // namespace
double OneCycleSchedule::LearningRate(int64_t step) const {
  const double initial = o_.peak_lr / o_.div_factor;
  const double final_lr = initial / o_.final_div_factor;
  const Phase p = PhaseOf(step);
  if (p.index == 0) return Anneal(o_.linear_anneal, initial, o_.peak_lr, p.pct);
  if (o_.three_phase && p.index == 1) return Anneal(o_.linear_anneal, o_.peak_lr, initial, p.pct);
  return Anneal(o_.linear_anneal, o_.three_phase ? initial : o_.peak_lr, final_lr, p.pct);
}
std::optional<double> OneCycleSchedule::Momentum(int64_t step) const {
  if (!o_.cycle_momentum) return std::nullopt;
  const Phase p = PhaseOf(step);
  const double lo = o_.base_momentum, hi = o_.max_momentum;
  if (p.index == 0) return Anneal(o_.linear_anneal, hi, lo, p.pct);
  if (o_.three_phase && p.index == 2) return Anneal(o_.linear_anneal, hi, hi, p.pct);
  return Anneal(o_.linear_anneal, lo, hi, p.pct);
}
std::string OneCycleSchedule::Describe() const {
  std::string extra;
  if (o_.three_phase) extra += ",three_phase";
  if (o_.linear_anneal) extra += ",linear";
  if (o_.cycle_momentum) {
    extra += fmt::format(",momentum={}..{}", o_.base_momentum, o_.max_momentum);
  }
  return fmt::format("onecycle(peak={},total={},pct_start={},div={},final_div={}{})", o_.peak_lr,
                     o_.total_steps, o_.pct_start, o_.div_factor, o_.final_div_factor, extra);
}

// ---- Knee

Result<std::unique_ptr<KneeSchedule>> KneeSchedule::Create(const KneeOptions& o) {
  TESSERA_RETURN_IF_ERROR(CheckRate("peak_lr", o.peak_lr, false));
  TESSERA_RETURN_IF_ERROR(CheckSteps("warmup_steps", o.warmup_steps, 0));
  TESSERA_RETURN_IF_ERROR(CheckSteps("explore_steps", o.explore_steps, 0));
  TESSERA_RETURN_IF_ERROR(CheckSteps("total_steps", o.total_steps, 1));
  if (o.warmup_steps + o.explore_steps > o.total_steps) {
    return InvalidArgumentError(
        fmt::format("knee warmup_steps + explore_steps ({} + {}) exceed total_steps ({})",
                    o.warmup_steps, o.explore_steps, o.total_steps));
  }
  return std::unique_ptr<KneeSchedule>(new KneeSchedule(o));
}
double KneeSchedule::LearningRate(int64_t step) const {
  const int64_t k = std::max<int64_t>(step, 0) + 1;  // the authors' counter starts at 1
  const int64_t w = o_.warmup_steps;
  const int64_t e = o_.explore_steps;
  if (k <= w) return o_.peak_lr * static_cast<double>(k) / static_cast<double>(w);
  if (k <= w + e) return o_.peak_lr;
  const int64_t d = o_.total_steps - w - e;  // > 0 here: k > w + e and k <= T imply d >= 1
  if (d <= 0) return 0.0;
  return std::max(
      0.0, o_.peak_lr - o_.peak_lr * static_cast<double>(k - w - e) / static_cast<double>(d));
}
std::string KneeSchedule::Describe() const {
  return fmt::format("knee(peak={},warmup={},explore={},total={})", o_.peak_lr, o_.warmup_steps,
                     o_.explore_steps, o_.total_steps);
}

// ---- linear decay

Result<std::unique_ptr<LinearDecaySchedule>> LinearDecaySchedule::Create(double peak_lr,
                                                                         int64_t warmup_steps,
                                                                         int64_t total_steps) {
  TESSERA_ASSIGN_OR_RETURN(auto knee, KneeSchedule::Create({.peak_lr = peak_lr,
                                                            .warmup_steps = warmup_steps,
                                                            .explore_steps = 0,
                                                            .total_steps = total_steps}));
  return std::unique_ptr<LinearDecaySchedule>(new LinearDecaySchedule(std::move(knee)));
}
double LinearDecaySchedule::LearningRate(int64_t step) const { return knee_->LearningRate(step); }
std::string LinearDecaySchedule::Describe() const { return "linear-" + knee_->Describe(); }

// ---- warmup-stable-decay

Result<std::unique_ptr<WsdSchedule>> WsdSchedule::Create(const WsdOptions& o) {
  TESSERA_RETURN_IF_ERROR(CheckRate("peak_lr", o.peak_lr, false));
  TESSERA_RETURN_IF_ERROR(CheckRate("final_lr", o.final_lr, true));
  TESSERA_RETURN_IF_ERROR(CheckSteps("warmup_steps", o.warmup_steps, 0));
  TESSERA_RETURN_IF_ERROR(CheckSteps("decay_steps", o.decay_steps, 1));
  if (o.warmup_steps + o.decay_steps > o.total_steps) {
    return InvalidArgumentError(
        fmt::format("wsd warmup_steps + decay_steps ({} + {}) exceed total_steps ({})",
                    o.warmup_steps, o.decay_steps, o.total_steps));
  }
  return std::unique_ptr<WsdSchedule>(new WsdSchedule(o));
}
double WsdSchedule::LearningRate(int64_t step) const { return GroupLearningRate(step, o_.peak_lr); }
double WsdSchedule::GroupLearningRate(int64_t step, double base_lr) const {
  step = std::max<int64_t>(step, 0);
  if (step < o_.warmup_steps) {
    return base_lr * static_cast<double>(step + 1) / static_cast<double>(o_.warmup_steps);
  }
  const int64_t decay_start = o_.total_steps - o_.decay_steps;
  if (step < decay_start) return base_lr;
  if (step >= o_.total_steps - 1) return o_.final_lr;
  return base_lr + (o_.final_lr - base_lr) * static_cast<double>(step - decay_start + 1) /
                       static_cast<double>(o_.decay_steps);
}
std::string WsdSchedule::Describe() const {
  return fmt::format("wsd(peak={},warmup={},decay={},total={},final={})", o_.peak_lr,
                     o_.warmup_steps, o_.decay_steps, o_.total_steps, o_.final_lr);
}

// ---- reduce on plateau

Result<std::unique_ptr<ReduceOnPlateauSchedule>> ReduceOnPlateauSchedule::Create(
    const PlateauOptions& o) {
  TESSERA_RETURN_IF_ERROR(CheckRate("peak_lr", o.peak_lr, false));
  TESSERA_RETURN_IF_ERROR(CheckRate("min_lr", o.min_lr, true));
  TESSERA_RETURN_IF_ERROR(CheckSteps("patience", o.patience, 0));
  TESSERA_RETURN_IF_ERROR(CheckSteps("cooldown", o.cooldown, 0));
  if (!(o.factor > 0 && o.factor < 1)) {
    return InvalidArgumentError(fmt::format("plateau factor must be in (0, 1), got {}", o.factor));
  }
  if (!(o.threshold >= 0 && o.threshold < 1) || !(o.eps >= 0) || !std::isfinite(o.eps)) {
    return InvalidArgumentError("plateau threshold must be in [0, 1) and eps >= 0");
  }
  return std::unique_ptr<ReduceOnPlateauSchedule>(new ReduceOnPlateauSchedule(o));
}
double ReduceOnPlateauSchedule::LearningRate(int64_t) const { return lr_; }
void ReduceOnPlateauSchedule::ReportMetric(int64_t, double value) {
  if (!std::isfinite(value)) value = std::numeric_limits<double>::infinity();
  if (!has_best_ || value < best_ * (1.0 - o_.threshold)) {
    best_ = value;
    has_best_ = true;
    num_bad_ = 0;
  } else {
    ++num_bad_;
  }
  if (cooldown_left_ > 0) {
    --cooldown_left_;
    num_bad_ = 0;  // PyTorch ignores bad epochs during a cooldown
  }
  if (num_bad_ > o_.patience) {
    const double reduced = std::max(lr_ * o_.factor, o_.min_lr);
    if (lr_ - reduced > o_.eps) {
      lr_ = reduced;
      ++reductions_;
    }
    cooldown_left_ = o_.cooldown;
    num_bad_ = 0;
  }
}
std::string ReduceOnPlateauSchedule::Describe() const {
  return fmt::format("plateau(peak={},factor={},patience={},threshold={},cooldown={},min={})",
                     o_.peak_lr, o_.factor, o_.patience, o_.threshold, o_.cooldown, o_.min_lr);
}
std::string ReduceOnPlateauSchedule::SaveState() const {
  // %a keeps doubles bit-exact through the text round trip.
  return fmt::format("{:a} {:a} {} {} {} {}", lr_, best_, has_best_ ? 1 : 0, num_bad_,
                     cooldown_left_, reductions_);
}
Status ReduceOnPlateauSchedule::RestoreState(std::string_view state) {
  std::istringstream in{std::string(state)};
  std::string lr_text, best_text;
  int has_best = 0;
  int64_t num_bad = 0, cooldown_left = 0, reductions = 0;
  if (!(in >> lr_text >> best_text >> has_best >> num_bad >> cooldown_left >> reductions)) {
    return InvalidArgumentError(fmt::format("plateau state '{}' is malformed", state));
  }
  char* end = nullptr;
  const double lr = std::strtod(lr_text.c_str(), &end);
  if (*end != '\0' || !std::isfinite(lr) || lr < 0) {
    return InvalidArgumentError(fmt::format("plateau state has a bad rate '{}'", lr_text));
  }
  const double best = std::strtod(best_text.c_str(), &end);
  if (*end != '\0' || num_bad < 0 || cooldown_left < 0 || reductions < 0) {
    return InvalidArgumentError(fmt::format("plateau state '{}' is malformed", state));
  }
  lr_ = lr;
  best_ = best;
  has_best_ = has_best != 0;
  num_bad_ = num_bad;
  cooldown_left_ = cooldown_left;
  reductions_ = reductions;
  return Status::Ok();
}

}  // namespace tessera::lr
