#include "lr/trainer.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>

#include "core/file.h"
#include "lr/data.h"
#include "lr/models.h"
#include "lr/schedule_spec.h"
#include "lr/torch_adapter.h"

namespace tessera::lr {
namespace {

// Fashion-MNIST's training-set mean and standard deviation of the pixel values in [0, 1].
constexpr double kPixelMean = 0.2860;
constexpr double kPixelStd = 0.3530;

// ---- tasks: data, batches, loss and evaluation

struct EvalResult {
  double loss = 0;
  double accuracy = 0;
};

class Task {
 public:
  virtual ~Task() = default;
  virtual int64_t StepsPerEpoch() const = 0;
  // The minibatch of update `step`: a pure function of (seed, step).
  virtual std::pair<torch::Tensor, torch::Tensor> Batch(int64_t step) = 0;
  virtual torch::Tensor Loss(const torch::Tensor& logits, const torch::Tensor& y) const = 0;
  virtual EvalResult Evaluate(Net& net) = 0;
};

torch::Tensor ImagesToTensor(const ImageDataset& d) {
  torch::Tensor x = torch::from_blob(const_cast<uint8_t*>(d.pixels.data()),
                                     {d.count, 1, d.rows, d.cols}, torch::kUInt8)
                        .to(torch::kFloat32)
                        .div_(255.0);
  return x.sub_(kPixelMean).div_(kPixelStd);
}

torch::Tensor LabelsToTensor(const ImageDataset& d) {
  return torch::from_blob(const_cast<uint8_t*>(d.labels.data()), {d.count}, torch::kUInt8)
      .to(torch::kInt64);
}

// Decoded data is cached per process: lr-compare runs dozens of trainings on the same files.
struct FmnistData {
  torch::Tensor train_x, train_y, test_x, test_y;
};
struct LmData {
  torch::Tensor train, val;  // int64 bytes
};
std::mutex cache_mu;
std::map<std::string, FmnistData> fmnist_cache;
std::map<std::string, LmData> lm_cache;

Result<FmnistData> LoadFmnistCached(const std::string& dir, int64_t train_limit,
                                    int64_t test_limit) {
  const std::string key = fmt::format("{}|{}|{}", dir, train_limit, test_limit);
  std::lock_guard lock(cache_mu);
  if (auto it = fmnist_cache.find(key); it != fmnist_cache.end()) return it->second;
  TESSERA_ASSIGN_OR_RETURN(ImageDataset train, LoadFashionMnist(dir, "train", train_limit));
  TESSERA_ASSIGN_OR_RETURN(ImageDataset test, LoadFashionMnist(dir, "t10k", test_limit));
  FmnistData d{ImagesToTensor(train), LabelsToTensor(train), ImagesToTensor(test),
               LabelsToTensor(test)};
  fmnist_cache.emplace(key, d);
  return d;
}

Result<LmData> LoadLmCached(const std::string& dir, int64_t train_limit, int64_t context) {
  const std::string key = fmt::format("{}|{}", dir, train_limit);
  std::lock_guard lock(cache_mu);
  if (auto it = lm_cache.find(key); it != lm_cache.end()) return it->second;
  TESSERA_ASSIGN_OR_RETURN(std::string text, LoadFortunes(dir));
  // The last 10 % is held out for evaluation.
  const int64_t n = static_cast<int64_t>(text.size());
  const int64_t split = n - n / 10;
  int64_t train_n = train_limit > 0 ? std::min(train_limit, split) : split;
  if (train_n < context + 2 || n - split < context + 2) {
    return InvalidArgumentError(
        fmt::format("corpus of {} bytes is too small for context {}", n, context));
  }
  auto bytes = [&](int64_t from, int64_t count) {
    torch::Tensor t = torch::empty({count}, torch::kInt64);
    auto* p = t.data_ptr<int64_t>();
    for (int64_t i = 0; i < count; ++i) p[i] = static_cast<unsigned char>(text[from + i]);
    return t;
  };
  LmData d{bytes(0, train_n), bytes(split, n - split)};
  lm_cache.emplace(key, d);
  return d;
}

class FmnistTask final : public Task {
 public:
  FmnistTask(FmnistData data, int64_t batch, uint64_t seed)
      : d_(std::move(data)), batch_(batch), seed_(seed) {}
  int64_t StepsPerEpoch() const override { return d_.train_x.size(0) / batch_; }
  std::pair<torch::Tensor, torch::Tensor> Batch(int64_t step) override {
    const int64_t epoch = step / StepsPerEpoch();
    if (epoch != perm_epoch_) {
      // A fresh permutation per epoch from a generator seeded with (seed, epoch).
      std::vector<int64_t> order(static_cast<size_t>(d_.train_x.size(0)));
      for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
      std::mt19937_64 rng(seed_ * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(epoch));
      std::shuffle(order.begin(), order.end(), rng);
      perm_ = torch::tensor(order, torch::kInt64);
      perm_epoch_ = epoch;
    }
    const int64_t pos = (step % StepsPerEpoch()) * batch_;
    torch::Tensor idx = perm_.slice(0, pos, pos + batch_);
    return {d_.train_x.index_select(0, idx), d_.train_y.index_select(0, idx)};
  }
  torch::Tensor Loss(const torch::Tensor& logits, const torch::Tensor& y) const override {
    return torch::nn::functional::cross_entropy(logits, y);
  }
  EvalResult Evaluate(Net& net) override {
    torch::NoGradGuard no_grad;
    net.eval();
    double loss = 0;
    int64_t correct = 0;
    const int64_t n = d_.test_x.size(0);
    for (int64_t i = 0; i < n; i += 1000) {
      torch::Tensor x = d_.test_x.slice(0, i, std::min(n, i + 1000));
      torch::Tensor y = d_.test_y.slice(0, i, std::min(n, i + 1000));
      torch::Tensor logits = net.forward(x);
      loss +=
          torch::nn::functional::cross_entropy(
              logits, y, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
              .item<double>();
      correct += logits.argmax(1).eq(y).sum().item<int64_t>();
    }
    net.train();
    return {loss / static_cast<double>(n), static_cast<double>(correct) / static_cast<double>(n)};
  }

 private:
  FmnistData d_;
  int64_t batch_;
  uint64_t seed_;
  torch::Tensor perm_;
  int64_t perm_epoch_ = -1;
};

class LmTask final : public Task {
 public:
  LmTask(LmData data, int64_t batch, int64_t context, uint64_t seed, int64_t eval_windows)
      : d_(std::move(data)),
        batch_(batch),
        context_(context),
        seed_(seed),
        eval_windows_(eval_windows) {}
  int64_t StepsPerEpoch() const override {
    return std::max<int64_t>(d_.train.size(0) / (batch_ * context_), 1);
  }
  std::pair<torch::Tensor, torch::Tensor> Batch(int64_t step) override {
    std::mt19937_64 rng(seed_ * 0x9E3779B97F4A7C15ULL +
                        static_cast<uint64_t>(step) * 0xBF58476D1CE4E5B9ULL);
    return Windows(d_.train, batch_, rng);
  }
  torch::Tensor Loss(const torch::Tensor& logits, const torch::Tensor& y) const override {
    return torch::nn::functional::cross_entropy(logits.reshape({-1, 256}), y.reshape({-1}));
  }
  EvalResult Evaluate(Net& net) override {
    torch::NoGradGuard no_grad;
    net.eval();
    std::mt19937_64 rng(20240601);  // the same held-out windows for every run
    double loss = 0;
    int64_t done = 0;
    while (done < eval_windows_) {
      const int64_t n = std::min<int64_t>(64, eval_windows_ - done);
      auto [x, y] = Windows(d_.val, n, rng);
      loss += Loss(net.forward(x), y).item<double>() * static_cast<double>(n);
      done += n;
    }
    net.train();
    return {loss / static_cast<double>(eval_windows_), 0};
  }

 private:
  std::pair<torch::Tensor, torch::Tensor> Windows(const torch::Tensor& text, int64_t n,
                                                  std::mt19937_64& rng) const {
    std::uniform_int_distribution<int64_t> start(0, text.size(0) - context_ - 1);
    std::vector<int64_t> offsets(static_cast<size_t>(n));
    for (auto& o : offsets) o = start(rng);
    torch::Tensor idx = torch::tensor(offsets, torch::kInt64).unsqueeze(1) +
                        torch::arange(context_, torch::kInt64).unsqueeze(0);
    return {text.index({idx}), text.index({idx + 1})};
  }

  LmData d_;
  int64_t batch_, context_;
  uint64_t seed_;
  int64_t eval_windows_;
};

// ---- the run: model, optimizer, schedule, logs, checkpoints

std::string Fingerprint(const TrainConfig& c) {
  return fmt::format(
      "task={} model={} opt={} lr={} mom={} wd={} head={} sched={} tune={} epochs={} steps={} "
      "frac={} batch={} seed={} train={} test={} lm={}x{}x{}x{} evals={} metric={}",
      c.task, c.model, c.optimizer, c.lr, c.momentum, c.weight_decay, c.head_lr_ratio,
      c.tune ? "" : c.schedule, c.tune, c.epochs, c.steps, c.budget_fraction, c.batch_size, c.seed,
      c.train_limit, c.test_limit, c.lm_context, c.lm_d_model, c.lm_layers, c.lm_heads, c.evals,
      c.metric_every);
}

Result<std::unique_ptr<torch::optim::Optimizer>> MakeOptimizer(const TrainConfig& c, Net& net) {
  std::vector<torch::optim::OptimizerParamGroup> groups;
  auto group = [&](std::vector<torch::Tensor> params,
                   double lr) -> Result<torch::optim::OptimizerParamGroup> {
    if (c.optimizer == "sgd") {
      return torch::optim::OptimizerParamGroup(
          params,
          std::make_unique<torch::optim::SGDOptions>(
              torch::optim::SGDOptions(lr).momentum(c.momentum).weight_decay(c.weight_decay)));
    }
    if (c.optimizer == "adam") {
      return torch::optim::OptimizerParamGroup(
          params, std::make_unique<torch::optim::AdamOptions>(
                      torch::optim::AdamOptions(lr).weight_decay(c.weight_decay)));
    }
    if (c.optimizer == "adamw") {
      return torch::optim::OptimizerParamGroup(
          params, std::make_unique<torch::optim::AdamWOptions>(
                      torch::optim::AdamWOptions(lr).weight_decay(c.weight_decay)));
    }
    return InvalidArgumentError(
        fmt::format("unknown optimizer '{}' (sgd, adam, adamw)", c.optimizer));
  };
  TESSERA_ASSIGN_OR_RETURN(auto body, group(net.BodyParameters(), c.lr));
  TESSERA_ASSIGN_OR_RETURN(auto head, group(net.HeadParameters(), c.lr * c.head_lr_ratio));
  groups.push_back(std::move(body));
  groups.push_back(std::move(head));
  std::unique_ptr<torch::optim::Optimizer> opt;
  if (c.optimizer == "sgd") {
    opt = std::make_unique<torch::optim::SGD>(groups, torch::optim::SGDOptions(c.lr));
  } else if (c.optimizer == "adam") {
    opt = std::make_unique<torch::optim::Adam>(groups, torch::optim::AdamOptions(c.lr));
  } else {
    opt = std::make_unique<torch::optim::AdamW>(groups, torch::optim::AdamWOptions(c.lr));
  }
  return opt;
}

// FNV-1a over the raw bytes of every parameter and buffer, in the module's order.
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

// Keeps the rows of a CSV whose first field is a step < `before` (and the header), so a
// resumed run's log reads as if it had never stopped.
Status TruncateCsv(const std::string& path, int64_t before) {
  if (!std::filesystem::exists(path)) return Status::Ok();
  TESSERA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  std::istringstream in(text);
  std::string line, kept;
  bool header = true;
  std::ptrdiff_t header_commas = 0;
  while (std::getline(in, line)) {
    if (header) {
      kept += line + "\n";
      header_commas = std::count(line.begin(), line.end(), ',');
      header = false;
      continue;
    }
    // A run killed mid-write can leave a torn last line: keep only complete rows (ended by a
    // newline, with every field of the header).
    if (in.eof()) break;
    if (std::count(line.begin(), line.end(), ',') != header_commas) continue;
    char* end = nullptr;
    const int64_t step = std::strtoll(line.c_str(), &end, 10);
    if (end == line.c_str() || *end != ',') continue;
    if (step < before) kept += line + "\n";
  }
  return WriteFileAtomically(path, kept);
}

class Run {
 public:
  Run(const TrainConfig& c, std::unique_ptr<Task> task, std::shared_ptr<Net> net,
      std::unique_ptr<torch::optim::Optimizer> opt, int64_t total, const ProgressFn& progress)
      : c_(c),
        task_(std::move(task)),
        net_(std::move(net)),
        opt_(std::move(opt)),
        total_(total),
        progress_(progress) {}

  Status Init() {
    const int64_t evals =
        c_.evals > 0 ? c_.evals : std::max<int64_t>(total_ / task_->StepsPerEpoch(), 1);
    eval_every_ = std::max<int64_t>((total_ + evals - 1) / evals, 1);
    metric_every_ = c_.metric_every > 0 ? c_.metric_every : std::max<int64_t>(total_ / 20, 1);
    if (!c_.tune) {
      TESSERA_ASSIGN_OR_RETURN(schedule_, MakeSchedule(c_.schedule, c_.lr, total_));
    } else {
      TESSERA_ASSIGN_OR_RETURN(schedule_, MakeSchedule("constant", c_.lr, total_));
    }
    TESSERA_ASSIGN_OR_RETURN(ScheduleAdapter a, ScheduleAdapter::Create(*opt_, *schedule_));
    adapter_.emplace(std::move(a));
    if (!c_.checkpoint_dir.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(c_.checkpoint_dir, ec);
      if (ec)
        return InternalError(fmt::format("cannot create {}: {}", c_.checkpoint_dir, ec.message()));
      if (c_.resume && std::filesystem::exists(CheckpointPath())) {
        TESSERA_RETURN_IF_ERROR(LoadCheckpoint());
      }
    }
    if (!c_.log_csv.empty()) {
      const std::string eval_csv = EvalCsvPath();
      const auto parent = std::filesystem::path(c_.log_csv).parent_path();
      std::error_code ec;
      if (!parent.empty()) std::filesystem::create_directories(parent, ec);
      if (step_ > 0) {
        TESSERA_RETURN_IF_ERROR(TruncateCsv(c_.log_csv, step_));
        TESSERA_RETURN_IF_ERROR(TruncateCsv(eval_csv, step_));
      }
      const bool fresh = step_ == 0 || !std::filesystem::exists(c_.log_csv);
      log_.open(c_.log_csv, fresh ? std::ios::trunc : std::ios::app);
      eval_log_.open(eval_csv, fresh ? std::ios::trunc : std::ios::app);
      if (!log_ || !eval_log_) return InternalError(fmt::format("cannot write {}", c_.log_csv));
      if (fresh) {
        log_ << "step,lr,loss,phase\n";
        eval_log_ << "step,epoch,test_loss,test_acc\n";
      }
    }
    return Status::Ok();
  }

  int64_t step() const { return step_; }
  int64_t resumed_from() const { return resumed_from_; }

  // One update on the minibatch of the current step, at whatever rates the groups hold.
  double TrainStep() {
    auto [x, y] = task_->Batch(step_);
    opt_->zero_grad();
    torch::Tensor loss = task_->Loss(net_->forward(x), y);
    loss.backward();
    if (c_.task == "lm") torch::nn::utils::clip_grad_norm_(net_->parameters(), 1.0);
    opt_->step();
    ++step_;
    return loss.item<double>();
  }

  // After a committed step: log, feed the schedule, evaluate, checkpoint.
  Status AfterStep(double lr, double loss, const char* phase) {
    const int64_t done = step_;  // steps completed; the row is for update done - 1
    last_lr_ = lr;
    last_loss_ = loss;
    if (log_.is_open()) log_ << fmt::format("{},{:.9g},{:.9g},{}\n", done - 1, lr, loss, phase);
    window_sum_ += loss;
    ++window_count_;
    if (window_count_ == metric_every_) {
      schedule_->ReportMetric(done - 1, window_sum_ / static_cast<double>(window_count_));
      window_sum_ = 0;
      window_count_ = 0;
    }
    if (done % eval_every_ == 0 || done == total_) Evaluate();
    const bool stopping = c_.stop_after > 0 && done >= c_.stop_after && done < total_;
    if (!c_.checkpoint_dir.empty() &&
        ((c_.checkpoint_every > 0 && done % c_.checkpoint_every == 0) || stopping ||
         done == total_)) {
      TESSERA_RETURN_IF_ERROR(SaveCheckpoint());
    }
    return Status::Ok();
  }

  // At a step boundary before the end: whether stop_after or the stop hook ends the run here.
  bool ShouldStop() {
    if (c_.stop_after > 0 && step_ >= c_.stop_after) return true;
    if (c_.should_stop && c_.should_stop({.step = step_,
                                          .total_steps = total_,
                                          .resumed_from = resumed_from_,
                                          .lr = last_lr_,
                                          .loss = last_loss_})) {
      hook_stopped_ = true;
      return true;
    }
    return false;
  }

  Result<TrainResult> RunSchedule() {
    const auto start = std::chrono::steady_clock::now();
    while (step_ < total_ && !ShouldStop()) {
      const double lr = adapter_->Apply(step_);
      const double loss = TrainStep();
      TESSERA_RETURN_IF_ERROR(AfterStep(lr, loss, "schedule"));
    }
    // stop_after checkpoints in AfterStep; a stop by the hook can come at any boundary.
    if (hook_stopped_ && !c_.checkpoint_dir.empty()) TESSERA_RETURN_IF_ERROR(SaveCheckpoint());
    return Finish(start);
  }

  Result<TrainResult> RunTuned();

  TrainResult Finish(std::chrono::steady_clock::time_point start) {
    TrainResult r;
    r.total_steps = total_;
    r.steps_done = step_;
    r.resumed_from = resumed_from_;
    r.finished = step_ >= total_;
    r.stopped = !r.finished;
    r.final_lr = last_lr_;
    r.last_loss = last_loss_;
    r.test_loss = last_eval_.loss;
    r.test_accuracy = last_eval_.accuracy;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.parameters_fingerprint = ParametersFingerprint(*net_);
    if (log_.is_open()) log_.flush();
    if (eval_log_.is_open()) eval_log_.flush();
    return r;
  }

  void Evaluate() {
    last_eval_ = task_->Evaluate(*net_);
    const double epoch = static_cast<double>(step_) / static_cast<double>(task_->StepsPerEpoch());
    if (eval_log_.is_open()) {
      eval_log_ << fmt::format("{},{:.4f},{:.6f},{:.6f}\n", step_ - 1, epoch, last_eval_.loss,
                               last_eval_.accuracy);
    }
    if (progress_) {
      progress_(fmt::format(
          "step {}/{} epoch {:.2f} lr {:.4g} loss {:.4f} test_loss {:.4f}{}", step_, total_, epoch,
          last_lr_, last_loss_, last_eval_.loss,
          c_.task == "fmnist" ? fmt::format(" test_acc {:.4f}", last_eval_.accuracy) : ""));
    }
  }

  // ---- in-memory snapshots (tuner) and checkpoints share one archive format

  void WriteArchive(torch::serialize::OutputArchive& archive) {
    torch::serialize::OutputArchive model, optimizer;
    net_->save(model);
    opt_->save(optimizer);
    archive.write("model", model);
    archive.write("optimizer", optimizer);
    archive.write("step", torch::tensor(step_, torch::kInt64));
    archive.write("lrs", torch::tensor(GroupLearningRates(*opt_), torch::kFloat64));
    archive.write("window", torch::tensor({window_sum_, static_cast<double>(window_count_)},
                                          torch::kFloat64));
    archive.write("schedule_state", c10::IValue(schedule_->SaveState()));
    archive.write("fingerprint", c10::IValue(Fingerprint(c_)));
  }

  Status ReadArchive(torch::serialize::InputArchive& archive) {
    try {
      c10::IValue fingerprint, schedule_state;
      archive.read("fingerprint", fingerprint);
      if (!fingerprint.isString() || fingerprint.toStringRef() != Fingerprint(c_)) {
        return FailedPreconditionError(
            "checkpoint was written by a run with a different configuration; refusing to resume");
      }
      torch::serialize::InputArchive model, optimizer;
      archive.read("model", model);
      archive.read("optimizer", optimizer);
      net_->load(model);
      // Optimizer::load only adds the per-parameter states the archive has; a snapshot taken
      // before the first step has none, and the momentum / Adam moments left by a trial (NaN
      // after a diverged one) would survive the restore. Start from an empty state.
      opt_->state().clear();
      opt_->load(optimizer);
      torch::Tensor step, lrs, window;
      archive.read("step", step);
      archive.read("lrs", lrs);
      archive.read("window", window);
      archive.read("schedule_state", schedule_state);
      step_ = step.item<int64_t>();
      std::vector<double> rates(lrs.data_ptr<double>(), lrs.data_ptr<double>() + lrs.numel());
      // libtorch 1.13 restores the optimizer's state but not its groups' learning rates.
      TESSERA_RETURN_IF_ERROR(SetGroupLearningRates(*opt_, rates));
      window_sum_ = window[0].item<double>();
      window_count_ = static_cast<int64_t>(window[1].item<double>());
      if (!schedule_state.isString()) return DataLossError("checkpoint: schedule state missing");
      TESSERA_RETURN_IF_ERROR(schedule_->RestoreState(schedule_state.toStringRef()));
      if (step_ < 0 || step_ > total_) return DataLossError("checkpoint: step out of range");
      if (!rates.empty()) last_lr_ = rates[0];
    } catch (const std::exception& e) {
      return DataLossError(fmt::format("checkpoint unreadable: {}", e.what()));
    }
    return Status::Ok();
  }

  std::string CheckpointPath() const {
    return (std::filesystem::path(c_.checkpoint_dir) / "checkpoint.pt").string();
  }
  std::string EvalCsvPath() const {
    std::string base = c_.log_csv;
    if (base.size() > 4 && base.ends_with(".csv")) base.resize(base.size() - 4);
    return base + ".eval.csv";
  }

  Status SaveCheckpoint() {
    // The logs must hold every row up to the checkpoint before it exists: a run killed after
    // this point resumes from here and would otherwise lose rows still in the buffers.
    if (log_.is_open()) log_.flush();
    if (eval_log_.is_open()) eval_log_.flush();
    std::ostringstream out;
    try {
      torch::serialize::OutputArchive archive;
      WriteArchive(archive);
      archive.save_to(out);
    } catch (const std::exception& e) {
      return InternalError(fmt::format("serializing checkpoint: {}", e.what()));
    }
    return WriteFileAtomically(CheckpointPath(), out.str());
  }

  Status LoadCheckpoint() {
    TESSERA_ASSIGN_OR_RETURN(std::string bytes, ReadFile(CheckpointPath()));
    std::istringstream in(bytes);
    torch::serialize::InputArchive archive;
    try {
      archive.load_from(in);
    } catch (const std::exception& e) {
      return DataLossError(fmt::format("checkpoint {} unreadable: {}", CheckpointPath(), e.what()));
    }
    TESSERA_RETURN_IF_ERROR(ReadArchive(archive).WithContext(CheckpointPath()));
    resumed_from_ = step_;
    return Status::Ok();
  }

  const TrainConfig& c_;
  std::unique_ptr<Task> task_;
  std::shared_ptr<Net> net_;
  std::unique_ptr<torch::optim::Optimizer> opt_;
  int64_t total_;
  ProgressFn progress_;
  std::unique_ptr<Schedule> schedule_;
  std::optional<ScheduleAdapter> adapter_;
  int64_t step_ = 0;
  int64_t resumed_from_ = 0;
  bool hook_stopped_ = false;
  int64_t eval_every_ = 1;
  int64_t metric_every_ = 1;
  double window_sum_ = 0;
  int64_t window_count_ = 0;
  double last_lr_ = 0;
  double last_loss_ = 0;
  EvalResult last_eval_;
  std::ofstream log_, eval_log_;
};

// The tuner's view of a run: snapshots in memory, committed steps logged like schedule steps.
class TorchTrainable final : public Trainable {
 public:
  explicit TorchTrainable(Run& run) : run_(run) {}
  Status Snapshot() override {
    std::ostringstream out;
    try {
      torch::serialize::OutputArchive archive;
      run_.WriteArchive(archive);
      archive.save_to(out);
    } catch (const std::exception& e) {
      return InternalError(fmt::format("snapshot: {}", e.what()));
    }
    snapshot_ = out.str();
    return Status::Ok();
  }
  Status Restore() override {
    if (snapshot_.empty()) return FailedPreconditionError("restore before any snapshot");
    std::istringstream in(snapshot_);
    torch::serialize::InputArchive archive;
    try {
      archive.load_from(in);
    } catch (const std::exception& e) {
      return InternalError(fmt::format("restore: {}", e.what()));
    }
    return run_.ReadArchive(archive);
  }
  Result<double> Step(double lr) override {
    run_.adapter_->SetRate(lr);
    return run_.TrainStep();
  }
  void Committed(int64_t, double lr, double loss, TunerPhase phase) override {
    Status s = run_.AfterStep(lr, loss, TunerPhaseName(phase));
    if (!s.ok() && status_.ok()) status_ = s;
  }
  Status status() const { return status_; }

 private:
  Run& run_;
  std::string snapshot_;
  Status status_;
};

Result<TrainResult> Run::RunTuned() {
  if (!c_.checkpoint_dir.empty() || c_.stop_after > 0 || c_.should_stop) {
    return InvalidArgumentError(
        "tuner runs cannot be checkpointed or stopped early (their search state is not saved)");
  }
  const auto start = std::chrono::steady_clock::now();
  TunerOptions o = c_.tuner;
  o.initial_lr = c_.lr;
  o.total_steps = total_;
  TorchTrainable trainable(*this);
  TESSERA_ASSIGN_OR_RETURN(TunerReport report, RunTuner(o, trainable));
  TESSERA_RETURN_IF_ERROR(trainable.status());
  TrainResult r = Finish(start);
  r.tuner_lr = report.chosen_lr;
  r.tuner_explore_steps = report.explore_steps;
  r.tuner_trial_steps = report.trial_steps;
  r.tuner_end_reason = report.explore_end_reason;
  if (progress_) {
    for (const TunerRound& round : report.rounds) {
      std::string cands;
      for (size_t i = 0; i < round.candidates.size(); ++i) {
        cands += fmt::format(" {:.3g}->{:.4g}", round.candidates[i], round.forecasts[i]);
      }
      progress_(fmt::format("tuner round at step {}: lr {:.4g}, round loss {:.4f}{}", round.step,
                            round.chosen_lr, round.round_mean_loss,
                            cands.empty() ? "" : ";" + cands));
    }
    progress_(fmt::format(
        "tuner: explore at {:.4g} for {} steps (ended: {}), {} trial steps = {:.1f}% extra",
        report.chosen_lr, report.explore_steps, report.explore_end_reason, report.trial_steps,
        100 * report.ExtraComputeFraction()));
  }
  return r;
}

Status Validate(const TrainConfig& c) {
  if (c.task != "fmnist" && c.task != "lm") {
    return InvalidArgumentError(fmt::format("unknown task '{}' (fmnist, lm)", c.task));
  }
  if (c.task == "fmnist" && c.model != "mlp" && c.model != "resnet") {
    return InvalidArgumentError("fmnist models: mlp, resnet");
  }
  if (c.task == "lm" && c.model != "transformer")
    return InvalidArgumentError("lm model: transformer");
  if (!(c.lr > 0) || !std::isfinite(c.lr)) return InvalidArgumentError("lr must be > 0");
  if (!(c.head_lr_ratio > 0) || !std::isfinite(c.head_lr_ratio)) {
    return InvalidArgumentError("head_lr_ratio must be > 0");
  }
  if (!(c.budget_fraction > 0 && c.budget_fraction <= 1)) {
    return InvalidArgumentError("budget_fraction must be in (0, 1]");
  }
  if (c.batch_size < 1 || c.epochs < 0 || c.steps < 0 || (c.epochs == 0 && c.steps == 0)) {
    return InvalidArgumentError("need batch_size >= 1 and a budget (epochs or steps)");
  }
  if (c.train_limit < 0 || c.test_limit < 0 || c.evals < 0 || c.metric_every < 0 ||
      c.checkpoint_every < 0 || c.stop_after < 0 || c.threads < 1) {
    return InvalidArgumentError(
        "limits, evals, metric_every, checkpoint_every, stop_after must be >= 0 and threads >= 1");
  }
  if (c.resume && c.checkpoint_dir.empty())
    return InvalidArgumentError("resume needs a checkpoint_dir");
  return Status::Ok();
}

}  // namespace

Result<TrainResult> Train(const TrainConfig& config, const ProgressFn& progress) {
  TrainConfig c = config;
  if (c.model.empty()) c.model = c.task == "lm" ? "transformer" : "mlp";
  TESSERA_RETURN_IF_ERROR(Validate(c));
  torch::set_num_threads(c.threads);
  torch::manual_seed(c.seed);
  std::unique_ptr<Task> task;
  LmShape shape{c.lm_context, c.lm_d_model, c.lm_layers, c.lm_heads};
  if (c.task == "fmnist") {
    const std::string dir = c.data_dir.empty() ? kFashionMnistDir : c.data_dir;
    TESSERA_ASSIGN_OR_RETURN(FmnistData d, LoadFmnistCached(dir, c.train_limit, c.test_limit));
    if (d.train_x.size(0) < c.batch_size)
      return InvalidArgumentError("fewer training examples than one batch");
    task = std::make_unique<FmnistTask>(d, c.batch_size, c.seed);
  } else {
    const std::string dir = c.data_dir.empty() ? kFortunesDir : c.data_dir;
    TESSERA_ASSIGN_OR_RETURN(LmData d, LoadLmCached(dir, c.train_limit, c.lm_context));
    task = std::make_unique<LmTask>(d, c.batch_size, c.lm_context, c.seed,
                                    c.test_limit > 0 ? c.test_limit : 256);
  }
  const int64_t full = c.steps > 0 ? c.steps : c.epochs * task->StepsPerEpoch();
  const auto total = std::max<int64_t>(
      static_cast<int64_t>(std::llround(c.budget_fraction * static_cast<double>(full))), 2);
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Net> net, MakeNet(c.model, shape));
  TESSERA_ASSIGN_OR_RETURN(auto opt, MakeOptimizer(c, *net));
  Run run(c, std::move(task), std::move(net), std::move(opt), total, progress);
  TESSERA_RETURN_IF_ERROR(run.Init());
  try {
    return c.tune ? run.RunTuned() : run.RunSchedule();
  } catch (const std::exception& e) {
    return InternalError(fmt::format("training failed: {}", e.what()));
  }
}

void AddTrainFlags(CLI::App& app, TrainConfig& c) {
  app.add_option("--task", c.task, "fmnist or lm")->capture_default_str();
  app.add_option("--model", c.model, "mlp (default) or resnet for fmnist, transformer for lm");
  app.add_option("--optimizer", c.optimizer, "sgd (momentum), adam or adamw")
      ->capture_default_str();
  app.add_option("--lr", c.lr, "peak learning rate (the tuner's initial guess)")
      ->capture_default_str();
  app.add_option("--momentum", c.momentum, "SGD momentum")->capture_default_str();
  app.add_option("--weight-decay", c.weight_decay, "weight decay")->capture_default_str();
  app.add_option("--head-lr-ratio", c.head_lr_ratio, "output layer rate / body rate")
      ->capture_default_str();
  app.add_option("--schedule", c.schedule, "schedule spec, e.g. knee:explore=0.5, cosine, step")
      ->capture_default_str();
  app.add_flag("--tune", c.tune, "use the online tuner instead of a schedule");
  app.add_option("--epochs", c.epochs, "budget in epochs")->capture_default_str();
  app.add_option("--steps", c.steps, "budget in steps (overrides --epochs)")->capture_default_str();
  app.add_option("--budget-fraction", c.budget_fraction, "scale the budget (shortened budgets)")
      ->capture_default_str();
  app.add_option("--batch-size", c.batch_size, "minibatch size")->capture_default_str();
  app.add_option("--seed", c.seed, "seed of initialisation and data order")->capture_default_str();
  app.add_option("--data-dir", c.data_dir, "data directory (default: the Debian package's)");
  app.add_option("--train-limit", c.train_limit, "first N training examples / bytes (0: all)")
      ->capture_default_str();
  app.add_option("--test-limit", c.test_limit, "first N test examples / LM windows (0: all / 256)")
      ->capture_default_str();
  app.add_option("--lm-context", c.lm_context, "LM context length")->capture_default_str();
  app.add_option("--lm-d-model", c.lm_d_model, "LM width")->capture_default_str();
  app.add_option("--lm-layers", c.lm_layers, "LM layers")->capture_default_str();
  app.add_option("--lm-heads", c.lm_heads, "LM attention heads")->capture_default_str();
  app.add_option("--evals", c.evals, "evaluations over the run (0: once per epoch)")
      ->capture_default_str();
  app.add_option("--log-csv", c.log_csv, "per-step CSV log (evaluations go to *.eval.csv)");
  app.add_option("--checkpoint-dir", c.checkpoint_dir, "write checkpoint.pt here");
  app.add_option("--checkpoint-every", c.checkpoint_every,
                 "checkpoint every N steps (0: at stop and end)")
      ->capture_default_str();
  app.add_flag("--resume", c.resume, "continue from --checkpoint-dir if a checkpoint exists");
  app.add_option("--stop-after", c.stop_after, "stop after N steps (checkpointed), as if preempted")
      ->capture_default_str();
  app.add_option("--threads", c.threads, "torch threads")->capture_default_str();
}

}  // namespace tessera::lr
