#include "lr/run_archive.h"

#include <fmt/format.h>

#include <sstream>

#include "lr/torch_adapter.h"

namespace tessera::lr {

std::string ConfigFingerprint(const TrainConfig& c) {
  std::string text = fmt::format(
      "task={} model={} opt={} lr={} mom={} wd={} head={} sched={} tune={} epochs={} steps={} "
      "frac={} batch={} seed={} train={} test={} lm={}x{}x{}x{} evals={} metric={}",
      c.task, c.model, c.optimizer, c.lr, c.momentum, c.weight_decay, c.head_lr_ratio,
      c.tune ? "" : c.schedule, c.tune, c.epochs, c.steps, c.budget_fraction, c.batch_size, c.seed,
      c.train_limit, c.test_limit, c.lm_context, c.lm_d_model, c.lm_layers, c.lm_heads, c.evals,
      c.metric_every);
  // Appended only when set, so checkpoints written before these options existed still resume.
  if (c.validation > 0) text += fmt::format(" val={}", c.validation);
  if (c.tune && c.tune_method != "online") {
    text += fmt::format(" tune_method={} sched={} range={}/{}/{}", c.tune_method, c.schedule,
                        c.range_test.min_lr, c.range_test.max_lr, c.range_test.steps);
  }
  if (c.tune && c.tune_method == "trials") {
    text += fmt::format(" trials={}/{}/{}/{}", c.trials.candidates, c.trials.spacing,
                        c.trials.budget_share, c.trials.min_trial_steps);
  }
  return text;
}

uint64_t ParametersFingerprint(Net& net) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  auto add = [&](const torch::Tensor& t) {
    torch::Tensor c = t.detach().contiguous();
    const auto* p = static_cast<const unsigned char*>(c.data_ptr());
    const size_t n = static_cast<size_t>(c.numel()) * c.element_size();
    for (size_t i = 0; i < n; ++i) {
      hash ^= p[i];
      hash *= 0x100000001b3ULL;
    }
  };
  for (const torch::Tensor& t : net.parameters()) add(t);
  for (const torch::Tensor& t : net.buffers()) add(t);
  return hash;
}

Result<std::string> SerializeRun(Net& net, torch::optim::Optimizer& optimizer, LoopState state,
                                 const std::string& fingerprint) {
  std::ostringstream out;
  try {
    torch::serialize::OutputArchive archive, model, opt;
    net.save(model);
    optimizer.save(opt);
    archive.write("model", model);
    archive.write("optimizer", opt);
    archive.write("step", torch::tensor(state.step, torch::kInt64));
    archive.write("lrs", torch::tensor(GroupLearningRates(optimizer), torch::kFloat64));
    archive.write("window",
                  torch::tensor({state.window_sum, static_cast<double>(state.window_count)},
                                torch::kFloat64));
    archive.write("schedule_state", c10::IValue(state.schedule_state));
    archive.write("tuned_peak", torch::tensor(state.tuned_peak, torch::kFloat64));
    archive.write("tuner_state", c10::IValue(state.tuner_state));
    archive.write("fingerprint", c10::IValue(fingerprint));
    archive.save_to(out);
  } catch (const std::exception& e) {
    return InternalError(fmt::format("serializing run: {}", e.what()));
  }
  return out.str();
}

Result<LoopState> DeserializeRun(std::string_view bytes, Net& net,
                                 torch::optim::Optimizer& optimizer, const std::string& fingerprint,
                                 int64_t total_steps) {
  LoopState s;
  try {
    std::istringstream in{std::string(bytes)};
    torch::serialize::InputArchive archive;
    archive.load_from(in);
    c10::IValue stored_fingerprint, schedule_state;
    archive.read("fingerprint", stored_fingerprint);
    if (!stored_fingerprint.isString() || stored_fingerprint.toStringRef() != fingerprint) {
      return FailedPreconditionError(
          "checkpoint was written by a run with a different configuration; refusing to resume");
    }
    torch::serialize::InputArchive model, opt;
    archive.read("model", model);
    archive.read("optimizer", opt);
    net.load(model);
    // Optimizer::load only adds the per-parameter states the archive has; a snapshot taken
    // before the first step has none, and the momentum / Adam moments left by a trial (NaN
    // after a diverged one) would survive the restore. Start from an empty state.
    optimizer.state().clear();
    optimizer.load(opt);
    torch::Tensor step, lrs, window;
    archive.read("step", step);
    archive.read("lrs", lrs);
    archive.read("window", window);
    archive.read("schedule_state", schedule_state);
    s.step = step.item<int64_t>();
    s.lrs.assign(lrs.data_ptr<double>(), lrs.data_ptr<double>() + lrs.numel());
    // libtorch 1.13 restores the optimizer's state but not its groups' learning rates.
    TESSERA_RETURN_IF_ERROR(SetGroupLearningRates(optimizer, s.lrs));
    s.window_sum = window[0].item<double>();
    s.window_count = static_cast<int64_t>(window[1].item<double>());
    if (!schedule_state.isString()) return DataLossError("checkpoint: schedule state missing");
    s.schedule_state = schedule_state.toStringRef();
    torch::Tensor tuned_peak;
    if (archive.try_read("tuned_peak", tuned_peak)) s.tuned_peak = tuned_peak.item<double>();
    c10::IValue tuner_state;
    if (archive.try_read("tuner_state", tuner_state) && tuner_state.isString()) {
      s.tuner_state = tuner_state.toStringRef();
    }
  } catch (const std::exception& e) {
    return DataLossError(fmt::format("checkpoint unreadable: {}", e.what()));
  }
  if (s.step < 0 || s.step > total_steps) return DataLossError("checkpoint: step out of range");
  return s;
}

}  // namespace tessera::lr
