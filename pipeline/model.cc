#include "pipeline/model.h"

#include <malloc.h>
#include <torch/script.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "core/file.h"
#include "fmt/format.h"
#include "pipeline/copy_gate.h"
#include "pipeline/cpu_pin.h"
#include "pipeline/median.h"
#include "pipeline/optimizer.h"
#include "pipeline/profile.h"
#include "pipeline/task_clock.h"

namespace tessera::pipeline {
namespace {

namespace nn = torch::nn;

// The token table's gradient is sparse: the rows of the micro-batch's tokens only. A dense one
// is the whole table (GPT-2-small: 50257 x 768, 154 MB) allocated, zeroed, faulted in and added
// into the gradient buffer on every micro-batch: 0.14 s of backward per micro-batch in a
// profile (issue #14, session 13), a cost the plain loop pays once per batch and a pipeline
// once per micro-batch. Sparse, autograd adds the rows into the dense .grad in place.
class Embedding final : public Unit {
 public:
  Embedding(int vocab, int seq, int width, double dropout)
      : tokens_(register_module("tokens",
                                nn::Embedding(nn::EmbeddingOptions(vocab, width).sparse(true)))),
        positions_(register_module("positions", nn::Embedding(seq, width))),
        dropout_(register_module("dropout", nn::Dropout(dropout))) {}
  torch::Tensor Forward(const torch::Tensor& x) override {
    auto pos = torch::arange(x.size(1), torch::kLong);
    return dropout_(tokens_(x) + positions_(pos).unsqueeze(0));
  }

 private:
  nn::Embedding tokens_, positions_;
  nn::Dropout dropout_;
};

// Pre-norm transformer block with causal multi-head self-attention.
class Block final : public Unit {
 public:
  Block(int width, int heads, double dropout)
      : heads_(heads),
        ln1_(register_module("ln1", nn::LayerNorm(nn::LayerNormOptions({width})))),
        ln2_(register_module("ln2", nn::LayerNorm(nn::LayerNormOptions({width})))),
        qkv_(register_module("qkv", nn::Linear(width, 3 * width))),
        proj_(register_module("proj", nn::Linear(width, width))),
        fc1_(register_module("fc1", nn::Linear(width, 4 * width))),
        fc2_(register_module("fc2", nn::Linear(4 * width, width))),
        dropout_(register_module("dropout", nn::Dropout(dropout))) {}
  torch::Tensor Forward(const torch::Tensor& x) override {
    const int64_t n = x.size(0), t = x.size(1), d = x.size(2), hd = d / heads_;
    auto qkv = qkv_(ln1_(x)).view({n, t, 3, heads_, hd}).permute({2, 0, 3, 1, 4});
    auto q = qkv[0], k = qkv[1], v = qkv[2];  // [n, heads, t, hd]
    auto scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(hd));
    auto mask = torch::ones({t, t}, torch::kBool).triu(1);
    scores = scores.masked_fill(mask, -1e9);
    auto att = torch::matmul(torch::softmax(scores, -1), v);  // [n, heads, t, hd]
    auto y = att.transpose(1, 2).reshape({n, t, d});
    auto h = x + dropout_(proj_(y));
    return h + dropout_(fc2_(torch::gelu(fc1_(ln2_(h)))));
  }

 private:
  int64_t heads_;
  nn::LayerNorm ln1_, ln2_;
  nn::Linear qkv_, proj_, fc1_, fc2_;
  nn::Dropout dropout_;
};

class LmHead final : public Unit {
 public:
  LmHead(int width, int vocab)
      : ln_(register_module("ln", nn::LayerNorm(nn::LayerNormOptions({width})))),
        out_(register_module("out", nn::Linear(width, vocab))) {}
  torch::Tensor Forward(const torch::Tensor& x) override { return out_(ln_(x)); }

 private:
  nn::LayerNorm ln_;
  nn::Linear out_;
};

class ConvBlock final : public Unit {
 public:
  ConvBlock(int in, int out)
      : conv_(register_module("conv", nn::Conv2d(nn::Conv2dOptions(in, out, 3).padding(1)))) {}
  torch::Tensor Forward(const torch::Tensor& x) override {
    return torch::max_pool2d(torch::relu(conv_(x)), 2);
  }

 private:
  nn::Conv2d conv_;
};

class ConvHead final : public Unit {
 public:
  ConvHead(int features, int classes, double dropout)
      : dropout_(register_module("dropout", nn::Dropout(dropout))),
        fc_(register_module("fc", nn::Linear(features, classes))) {}
  torch::Tensor Forward(const torch::Tensor& x) override { return fc_(dropout_(x.flatten(1))); }

 private:
  nn::Dropout dropout_;
  nn::Linear fc_;
};

// splitmix64: decorrelates nearby (step, micro, unit) triples.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

torch::Tensor DefaultLoss(const torch::Tensor& output, const torch::Tensor& target) {
  if (target.is_floating_point()) return torch::mse_loss(output, target);
  return torch::cross_entropy_loss(output.reshape({-1, output.size(-1)}), target.reshape({-1}));
}

// A top-level child of a TorchScript module as a unit.
class ScriptUnit final : public Unit {
 public:
  explicit ScriptUnit(torch::jit::Module module) : module_(std::move(module)) {}
  torch::Tensor Forward(const torch::Tensor& x) override { return module_.forward({x}).toTensor(); }
  std::vector<torch::Tensor> Parameters() override {
    std::vector<torch::Tensor> out;
    for (const torch::Tensor& p : module_.parameters()) out.push_back(p);
    return out;
  }
  void train(bool on) override {
    Unit::train(on);
    module_.train(on);
  }

 private:
  torch::jit::Module module_;
};

// The module a Build is taking units from: loaded once per Build, released after it so that
// the units this worker does not own are freed.
struct ScriptCache {
  std::mutex mu;
  std::string path;
  std::optional<torch::jit::Module> module;
};
ScriptCache& TheScriptCache() {
  static ScriptCache cache;
  return cache;
}

Result<std::vector<torch::jit::Module>> ScriptChildren(const std::string& path) {
  ScriptCache& cache = TheScriptCache();
  std::lock_guard<std::mutex> lock(cache.mu);
  if (!cache.module || cache.path != path) {
    try {
      cache.module = torch::jit::load(path);
      cache.path = path;
    } catch (const std::exception& e) {
      return InvalidArgumentError(fmt::format("loading TorchScript module {}: {}", path,
                                              std::string(e.what()).substr(0, 300)));
    }
  }
  std::vector<torch::jit::Module> children;
  for (const auto& child : cache.module->named_children()) children.push_back(child.value);
  if (children.empty()) {
    return InvalidArgumentError(fmt::format("{} has no child modules to use as units", path));
  }
  return children;
}

void ReleaseScriptCache() {
  ScriptCache& cache = TheScriptCache();
  std::lock_guard<std::mutex> lock(cache.mu);
  cache.module.reset();
  cache.path.clear();
}

std::map<std::string, ModelDefinition> BuiltInModels() {
  std::map<std::string, ModelDefinition> models;
  ModelDefinition gpt;
  gpt.count_units = [](const ModelSpec& spec) -> Result<int> { return spec.layers + 2; };
  gpt.build_unit = [](const ModelSpec& spec, int u) -> Result<std::shared_ptr<Unit>> {
    if (u == 0) {
      return std::make_shared<Embedding>(spec.vocab, spec.seq_len, spec.width, spec.dropout);
    }
    if (u <= spec.layers) return std::make_shared<Block>(spec.width, spec.heads, spec.dropout);
    return std::make_shared<LmHead>(spec.width, spec.vocab);
  };
  models["gpt"] = std::move(gpt);
  ModelDefinition cnn;
  cnn.count_units = [](const ModelSpec& spec) -> Result<int> { return spec.layers + 1; };
  cnn.build_unit = [](const ModelSpec& spec, int u) -> Result<std::shared_ptr<Unit>> {
    if (u < spec.layers) return std::make_shared<ConvBlock>(u == 0 ? 1 : spec.width, spec.width);
    const int side = spec.image >> spec.layers;
    return std::make_shared<ConvHead>(spec.width * side * side, spec.classes, spec.dropout);
  };
  models["cnn"] = std::move(cnn);
  ModelDefinition script;
  script.count_units = [](const ModelSpec& spec) -> Result<int> {
    TESSERA_ASSIGN_OR_RETURN(auto children, ScriptChildren(spec.script_path));
    return static_cast<int>(children.size());
  };
  script.build_unit = [](const ModelSpec& spec, int u) -> Result<std::shared_ptr<Unit>> {
    TESSERA_ASSIGN_OR_RETURN(auto children, ScriptChildren(spec.script_path));
    if (u >= static_cast<int>(children.size())) return InvalidArgumentError("unit out of range");
    return std::make_shared<ScriptUnit>(children[u]);
  };
  models["torchscript"] = std::move(script);
  return models;
}

struct Registry {
  std::mutex mu;
  std::map<std::string, ModelDefinition> models = BuiltInModels();
};
Registry& TheRegistry() {
  static Registry* registry = new Registry();  // never destroyed: used until exit
  return *registry;
}

// Bytes of heap in use (small allocations plus mmapped chunks, where large tensors live).
double HeapInUse() {
  const struct mallinfo2 info = mallinfo2();
  return static_cast<double>(info.uordblks) + static_cast<double>(info.hblkhd);
}

// Reads a little-endian uint16 token stream and cuts it into [n, seq + 1] windows.
Result<torch::Tensor> TokenWindows(const std::string& path, int seq) {
  TESSERA_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  if (bytes.size() % 2 != 0) {
    return InvalidArgumentError(fmt::format("{}: odd size; want uint16 tokens", path));
  }
  const int64_t tokens = static_cast<int64_t>(bytes.size() / 2);
  const int64_t n = (tokens - 1) / seq;
  if (n < 1) return InvalidArgumentError(fmt::format("{} is shorter than one sequence", path));
  torch::Tensor all = torch::empty({tokens}, torch::kLong);
  auto acc = all.accessor<int64_t, 1>();
  for (int64_t i = 0; i < tokens; ++i) {
    uint16_t t;
    std::memcpy(&t, bytes.data() + 2 * i, 2);
    acc[i] = t;
  }
  torch::Tensor windows = torch::empty({n, seq + 1}, torch::kLong);
  for (int64_t k = 0; k < n; ++k) windows[k].copy_(all.slice(0, k * seq, k * seq + seq + 1));
  return windows;
}

}  // namespace

Result<std::unique_ptr<CutModel>> CutModel::Build(const ModelSpec& spec, uint64_t seed, int begin,
                                                  int end) {
  TESSERA_RETURN_IF_ERROR(ValidateModelSpec(spec));
  TESSERA_ASSIGN_OR_RETURN(const ModelDefinition* definition, FindModel(spec.kind));
  TESSERA_ASSIGN_OR_RETURN(int units, definition->count_units(spec));
  if (end < 0) end = units;
  if (begin < 0 || begin >= end || end > units) {
    return InvalidArgumentError(
        fmt::format("units [{}, {}) are not a range of the model's {}", begin, end, units));
  }
  std::unique_ptr<CutModel> model(new CutModel(spec));
  model->definition_ = definition;
  model->num_units_ = units;
  model->begin_ = begin;
  for (int u = begin; u < end; ++u) {
    // Seeded per unit, so the weights do not depend on which other units this worker builds.
    torch::manual_seed(static_cast<int64_t>(Mix(Mix(seed) ^ Mix(0x1417 + u)) >> 1));
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<Unit> unit, definition->build_unit(spec, u));
    model->units_.push_back(std::move(unit));
  }
  ReleaseScriptCache();
  model->SetTraining(true);
  return model;
}

double CutModel::ParameterBytes() const {
  double bytes = 0;
  for (const auto& unit : units_) {
    for (const torch::Tensor& p : unit->Parameters()) {
      bytes += static_cast<double>(p.numel() * p.element_size());
    }
  }
  return bytes;
}

void CutModel::BindDenseGradients() {
  for (int u = begin(); u < end(); ++u) {
    for (torch::Tensor& p : UnitParameters(u)) {
      if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
    }
  }
}

std::vector<torch::Tensor> CutModel::UnitParameters(int unit) const {
  return units_.at(unit - begin_)->Parameters();
}

torch::Tensor CutModel::ForwardRange(int begin, int end, torch::Tensor x, const RngKey& key) {
  for (int u = begin; u < end; ++u) {
    const uint64_t s = Mix(Mix(Mix(key.seed) ^ static_cast<uint64_t>(key.step)) ^
                           static_cast<uint64_t>(key.global_micro)) ^
                       static_cast<uint64_t>(u);
    torch::manual_seed(static_cast<int64_t>(Mix(s) >> 1));
    x = units_.at(u - begin_)->Forward(x);
  }
  return x;
}

torch::Tensor CutModel::Loss(const torch::Tensor& output, const torch::Tensor& target) const {
  if (definition_->loss) return definition_->loss(output, target);
  return DefaultLoss(output, target);
}

void CutModel::SetTraining(bool on) {
  for (auto& u : units_) u->train(on);
}

Status RegisterModel(const std::string& name, ModelDefinition definition) {
  if (!definition.count_units || !definition.build_unit) {
    return InvalidArgumentError(fmt::format("model '{}' needs count_units and build_unit", name));
  }
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (!r.models.emplace(name, std::move(definition)).second) {
    return AlreadyExistsError(fmt::format("a model named '{}' is already registered", name));
  }
  return Status::Ok();
}

Result<const ModelDefinition*> FindModel(const std::string& name) {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.models.find(name);
  if (it != r.models.end()) return &it->second;
  std::string names;
  for (const auto& [n, d] : r.models) names += (names.empty() ? "" : ", ") + n;
  return NotFoundError(fmt::format("unknown model '{}' (registered: {})", name, names));
}

Status ResolveModel(ModelSpec& spec) {
  if (spec.kind == "gpt" || spec.kind == "cnn") return Status::Ok();
  if (spec.kind == "torchscript" && spec.script_path.empty()) {
    return InvalidArgumentError("--model torchscript needs --script");
  }
  TESSERA_ASSIGN_OR_RETURN(const ModelDefinition* definition, FindModel(spec.kind));
  auto units = definition->count_units(spec);
  ReleaseScriptCache();
  if (!units.ok()) return units.status();
  if (*units < 1) return InvalidArgumentError(fmt::format("model '{}' has no units", spec.kind));
  spec.units = *units;
  return Status::Ok();
}

Result<std::unique_ptr<Dataset>> Dataset::Create(const ModelSpec& spec, uint64_t seed) {
  TESSERA_RETURN_IF_ERROR(ValidateModelSpec(spec));
  std::unique_ptr<Dataset> d(new Dataset());
  auto gen = at::make_generator<at::CPUGeneratorImpl>(Mix(seed ^ 0xda7a));
  const int64_t n = spec.dataset_size;
  if (!spec.data_path.empty() && spec.data_path.size() > 4 &&
      spec.data_path.substr(spec.data_path.size() - 4) == ".bin") {
    TESSERA_ASSIGN_OR_RETURN(torch::Tensor windows, TokenWindows(spec.data_path, spec.seq_len));
    d->inputs_ = windows.slice(1, 0, spec.seq_len).contiguous();
    d->targets_ = windows.slice(1, 1, spec.seq_len + 1).contiguous();
  } else if (!spec.data_path.empty()) {
    TESSERA_ASSIGN_OR_RETURN(std::string bytes, ReadFile(spec.data_path));
    try {
      c10::IValue v = torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end()));
      std::vector<c10::IValue> items;
      if (v.isTuple()) {
        for (const auto& e : v.toTupleRef().elements()) items.push_back(e);
      } else if (v.isList()) {
        for (const auto& e : v.toListRef()) items.push_back(e);
      }
      if (items.size() != 2 || !items[0].isTensor() || !items[1].isTensor()) {
        return InvalidArgumentError(
            fmt::format("{}: want a torch.save'd tuple (inputs, targets)", spec.data_path));
      }
      d->inputs_ = items[0].toTensor().contiguous();
      d->targets_ = items[1].toTensor().contiguous();
    } catch (const std::exception& e) {
      return InvalidArgumentError(
          fmt::format("{}: {}", spec.data_path, std::string(e.what()).substr(0, 300)));
    }
    if (d->inputs_.dim() < 1 || d->targets_.dim() < 1 ||
        d->inputs_.size(0) != d->targets_.size(0)) {
      return InvalidArgumentError(
          fmt::format("{}: inputs and targets differ in sample count", spec.data_path));
    }
    if (d->inputs_.is_floating_point()) d->inputs_ = d->inputs_.to(torch::kFloat);
    if (d->targets_.is_floating_point()) {
      d->targets_ = d->targets_.to(torch::kFloat);
    } else {
      d->targets_ = d->targets_.to(torch::kLong);
    }
  } else if (spec.kind != "gpt" && spec.kind != "cnn") {
    return InvalidArgumentError(fmt::format("model '{}' needs --data", spec.kind));
  } else if (spec.kind == "gpt") {
    const int64_t t = spec.seq_len;
    torch::Tensor seqs = torch::empty({n, t + 1}, torch::kLong);
    if (!spec.text_path.empty()) {
      TESSERA_ASSIGN_OR_RETURN(std::string text, ReadFile(spec.text_path));
      if (spec.vocab < 96) return InvalidArgumentError("a text model needs vocab >= 96");
      if (static_cast<int64_t>(text.size()) < t + 2) {
        return InvalidArgumentError(fmt::format("{} is shorter than one sequence", spec.text_path));
      }
      auto acc = seqs.accessor<int64_t, 2>();
      const int64_t span = static_cast<int64_t>(text.size()) - t - 1;
      for (int64_t k = 0; k < n; ++k) {
        const int64_t start = (k * 7919) % span;  // spread samples over the whole text
        for (int64_t j = 0; j <= t; ++j) {
          const unsigned char c = static_cast<unsigned char>(text[start + j]);
          acc[k][j] = (c >= 32 && c < 127) ? c - 32 : 95;  // printable ASCII, else 95
        }
      }
    } else {
      // Learnable synthetic language: each token is an affine function of the previous one,
      // with 10 % noise.
      auto first = torch::randint(spec.vocab, {n}, gen, torch::kLong);
      auto noise = torch::rand({n, t + 1}, gen);
      auto random = torch::randint(spec.vocab, {n, t + 1}, gen, torch::kLong);
      auto acc = seqs.accessor<int64_t, 2>();
      auto f = first.accessor<int64_t, 1>();
      auto no = noise.accessor<float, 2>();
      auto ra = random.accessor<int64_t, 2>();
      for (int64_t k = 0; k < n; ++k) {
        acc[k][0] = f[k];
        for (int64_t j = 1; j <= t; ++j) {
          acc[k][j] = no[k][j] < 0.1f ? ra[k][j] : (5 * acc[k][j - 1] + 3) % spec.vocab;
        }
      }
    }
    d->inputs_ = seqs.slice(1, 0, t).contiguous();
    d->targets_ = seqs.slice(1, 1, t + 1).contiguous();
  } else {
    // Images labelled by a fixed random linear teacher: learnable, and no download needed.
    d->inputs_ = torch::randn({n, 1, spec.image, spec.image}, gen);
    auto teacher = torch::randn({spec.image * spec.image, spec.classes}, gen);
    d->targets_ = torch::matmul(d->inputs_.flatten(1), teacher).argmax(1);
  }
  d->train_size_ = d->inputs_.size(0) - spec.eval_samples;
  if (d->train_size_ < 1) {
    return InvalidArgumentError(fmt::format(
        "the data holds {} samples: none left to train after {} held out for evaluation",
        d->inputs_.size(0), spec.eval_samples));
  }
  return d;
}

Batch Dataset::EvalRows(int first, int count) const {
  const int64_t begin = train_size_ + first;
  const int64_t end = std::min<int64_t>(begin + count, inputs_.size(0));
  return {inputs_.slice(0, begin, end), targets_.slice(0, begin, end)};
}

Batch Dataset::Rows(int64_t step, int global_batch, int first, int count) const {
  const int64_t n = train_size_;
  auto idx = (torch::arange(count, torch::kLong) + step * global_batch + first).remainder(n);
  return {inputs_.index_select(0, idx), targets_.index_select(0, idx)};
}

namespace {

using ProfileClock = std::chrono::steady_clock;

double SecondsBetween(ProfileClock::time_point a, ProfileClock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Per unit, the durations of its forwards and backwards over the timed micro-batches.
struct UnitSamples {
  std::vector<std::vector<double>> forward, backward;
  double cpu_s = 0, wall_s = 0;  // thread CPU and wall time of the timed tasks (TaskTimer)
  // The thread's CPU and wall time over the timed micro-batches, the untimed work between the
  // tasks included.
  double window_cpu_s = 0, window_wall_s = 0;
};

// Runs `warmup` + `timed` micro-batches through `model` unit by unit, each unit on a detached
// input as a stage boundary would give it, and backward from the loss unit by unit (the last
// unit's backward includes its loss). Micro-batch k is step `first_run` + k's first rows, so
// concurrent copies train on different data. With `sizes`, also records output, input and
// saved-activation bytes there (single-threaded only: the heap counter is per process). Tasks
// are timed by TaskTimer (pipeline/task_clock.h), whose wall window encloses its CPU reads.
//
// At least `timed` micro-batches are timed, and more (up to kMaxTimedRuns) until the timed ones
// have taken `min_timed_s`: on a shared machine a few micro-batches of a small model sample the
// other processes' load too briefly for a mean that predicts a whole run. With a `gate` the
// copy runs on until every copy has that minimum, and drops the micro-batch that was under way
// when the last one got it (part of it ran with fewer copies).
constexpr int kMaxTimedRuns = 500;
//
// With `optimizers` (one per unit, their state allocated), the first `timed` timed micro-batches
// are each followed by one update of every unit, timed into `optimizer_times`: right after a
// backward, as the runtime's step does, so the parameters, gradients and optimizer state come
// from memory the backward has evicted them to, not from the cache a loop of updates keeps them
// in (the toy's updates took about 2x longer in its runs than in such a loop, issue #14 session
// 14, under load). The optimizers must not move the parameters (learning rate 0).
UnitSamples TimeUnitLoop(
    CutModel& model, const Dataset& data, int micro_batch, int warmup, int timed,
    double min_timed_s, uint64_t seed, int64_t first_run, UnitProfile* sizes,
    CopyGate* gate = nullptr,
    std::vector<std::unique_ptr<torch::optim::Optimizer>>* optimizers = nullptr,
    std::vector<std::vector<double>>* optimizer_times = nullptr) {
  const int units = model.num_units();
  UnitSamples samples{std::vector<std::vector<double>>(units),
                      std::vector<std::vector<double>>(units)};
  CopyGate::Copy copy(gate);
  std::optional<TaskTimer> window;  // from the end of the warm-up
  for (int run = 0;; ++run) {
    if (run == warmup) {
      copy.Start();
      window.emplace();
    }
    if (run >= warmup + timed && !copy.reached() &&
        (run >= warmup + kMaxTimedRuns || window->Stop().wall_s >= min_timed_s)) {
      copy.ReachedMinimum();
    }
    if (copy.stopped()) break;
    Batch b = data.Rows(first_run + run, micro_batch, 0, micro_batch);
    const RngKey key{seed, first_run + run, 0};
    std::vector<torch::Tensor> inputs(units), outputs(units);
    std::vector<TaskTime> forward(units), backward(units);
    torch::Tensor x = b.input;
    if (sizes) sizes->input_bytes = static_cast<double>(x.numel() * x.element_size());
    if (sizes && run == warmup) sizes->activation_bytes.assign(units, 0);
    for (int u = 0; u < units; ++u) {
      inputs[u] = u == 0 ? x : x.detach().requires_grad_(true);
      const double heap_before = sizes ? HeapInUse() : 0;
      const TaskTimer task;
      outputs[u] = model.ForwardRange(u, u + 1, inputs[u], key);
      forward[u] = task.Stop();
      if (sizes && run == warmup) {
        sizes->activation_bytes[u] = std::max(0.0, HeapInUse() - heap_before);
      }
      if (sizes) {
        sizes->output_bytes[u] =
            static_cast<double>(outputs[u].numel() * outputs[u].element_size());
      }
      x = outputs[u];
    }
    torch::Tensor grad;
    for (int u = units - 1; u >= 0; --u) {
      const TaskTimer task;
      if (u == units - 1) {
        model.Loss(outputs[u], b.target).backward();
      } else {
        outputs[u].backward(grad);
      }
      backward[u] = task.Stop();
      if (u > 0) grad = inputs[u].grad();
    }
    if (run < warmup) continue;
    if (optimizers != nullptr && run < warmup + timed) {
      for (int u = 0; u < units; ++u) {
        const auto t0 = ProfileClock::now();
        (*optimizers)[u]->step();
        (*optimizer_times)[u].push_back(SecondsBetween(t0, ProfileClock::now()));
      }
    }
    if (gate != nullptr && copy.stopped()) break;  // ended after the others began to stop
    for (int u = 0; u < units; ++u) {
      for (const TaskTime& t : {forward[u], backward[u]}) {
        samples.wall_s += t.wall_s;
        samples.cpu_s += t.cpu_s;
      }
      samples.forward[u].push_back(forward[u].wall_s);
      samples.backward[u].push_back(backward[u].wall_s);
    }
    const TaskTime so_far = window->Stop();
    samples.window_cpu_s = so_far.cpu_s;
    samples.window_wall_s = so_far.wall_s;
  }
  return samples;
}

double MeanOf(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0.0 : sum / v.size();
}

// The per-unit means of samples pooled over concurrent copies.
ContendedTimes MeansOf(int workers, const std::vector<UnitSamples>& copies) {
  ContendedTimes out;
  out.workers = workers;
  double cpu = 0, wall = 0, window_cpu = 0, window_wall = 0;
  for (const UnitSamples& c : copies) {
    cpu += c.cpu_s;
    wall += c.wall_s;
    window_cpu += c.window_cpu_s;
    window_wall += c.window_wall_s;
  }
  out.cpu_share = wall > 0 ? cpu / wall : 0;
  out.window_cpu_share = window_wall > 0 ? window_cpu / window_wall : 0;
  const size_t units = copies.front().forward.size();
  for (size_t u = 0; u < units; ++u) {
    std::vector<double> f, b;
    for (const UnitSamples& c : copies) {
      f.insert(f.end(), c.forward[u].begin(), c.forward[u].end());
      b.insert(b.end(), c.backward[u].begin(), c.backward[u].end());
    }
    out.forward_s.push_back(MeanOf(f));
    out.backward_s.push_back(MeanOf(b));
  }
  return out;
}

}  // namespace

Result<UnitProfile> ProfileUnits(const ModelSpec& spec, int micro_batch, int warmup, int timed,
                                 uint64_t seed, const std::string& optimizer, double min_timed_s,
                                 const std::vector<int>& pin_cpus) {
  TESSERA_RETURN_IF_ERROR(ValidateModelSpec(spec));
  if (micro_batch < 1 || warmup < 0 || timed < 1) {
    return InvalidArgumentError("profile: micro-batch and timed runs must be >= 1, warm-up >= 0");
  }
  torch::set_num_threads(1);
  int cpu = -1;  // worker 0's processor when pinned
  if (!pin_cpus.empty()) {
    TESSERA_ASSIGN_OR_RETURN(cpu, CpuForWorker(0, pin_cpus));
  }
  const ScopedThreadPin pin(cpu);
  TESSERA_RETURN_IF_ERROR(pin.status());
  TESSERA_ASSIGN_OR_RETURN(auto model, CutModel::Build(spec, seed));
  model->BindDenseGradients();  // as the runtime's flat buffer: sparse rows add in place
  TESSERA_ASSIGN_OR_RETURN(auto data, Dataset::Create(spec, seed));
  const int units = model->num_units();
  UnitProfile profile;
  profile.output_bytes.assign(units, 0);
  for (int u = 0; u < units; ++u) {
    double bytes = 0;
    for (const torch::Tensor& t : model->UnitParameters(u)) {
      bytes += static_cast<double>(t.numel() * t.element_size());
    }
    profile.param_bytes.push_back(bytes);
  }
  // One update per unit with the job's optimizer after each of the first timed backwards
  // (TimeUnitLoop), at learning rate 0 so the timed micro-batches train nothing.
  JobConfig job;
  job.optimizer = optimizer;
  job.lr = 0;
  std::vector<std::unique_ptr<torch::optim::Optimizer>> optimizers;
  for (int u = 0; u < units; ++u) {
    TESSERA_ASSIGN_OR_RETURN(auto opt, MakeOptimizer(job, model->UnitParameters(u)));
    opt->step();  // allocates its state (momentum, moments), untimed as in the runtime's 1st step
    optimizers.push_back(std::move(opt));
  }
  std::vector<std::vector<double>> optimizer_times(units);
  const UnitSamples samples =
      TimeUnitLoop(*model, *data, micro_batch, warmup, timed, min_timed_s, seed, 0, &profile,
                   nullptr, &optimizers, &optimizer_times);
  for (int u = 0; u < units; ++u) {
    profile.forward_s.push_back(Median(samples.forward[u]));
    profile.backward_s.push_back(Median(samples.backward[u]));
    profile.optimizer_s.push_back(Median(optimizer_times[u]));
  }
  profile.contended.push_back(MeansOf(1, {samples}));
  return profile;
}

Status ProfileContention(const ModelSpec& spec, int micro_batch, int max_workers, int warmup,
                         int timed, double min_timed_s, uint64_t seed, UnitProfile& profile,
                         const std::vector<int>& pin_cpus) {
  TESSERA_RETURN_IF_ERROR(ValidateModelSpec(spec));
  if (micro_batch < 1 || warmup < 0 || timed < 1 || max_workers < 1) {
    return InvalidArgumentError("contention profile: counts must be >= 1, warm-up >= 0");
  }
  torch::set_num_threads(1);  // each copy computes on its own thread, as a worker does
  TESSERA_ASSIGN_OR_RETURN(auto model, CutModel::Build(spec, seed));
  model->BindDenseGradients();
  TESSERA_ASSIGN_OR_RETURN(auto data, Dataset::Create(spec, seed));
  std::erase_if(profile.contended, [](const ContendedTimes& c) { return c.workers > 1; });
  for (int workers = 2; workers <= max_workers; ++workers) {
    // The copies share the parameters (autograd serializes their gradient accumulation), so
    // the probe holds one model plus a micro-batch's activations per copy. They time their
    // tasks only while all of them run (CopyGate).
    std::vector<UnitSamples> copies(workers);
    std::vector<std::string> errors(workers);
    std::vector<std::thread> threads;
    CopyGate gate(workers);
    std::vector<int> cpus(workers, -1);  // copy w where worker w would be pinned
    if (!pin_cpus.empty()) {
      for (int w = 0; w < workers; ++w) {
        TESSERA_ASSIGN_OR_RETURN(cpus[w], CpuForWorker(w, pin_cpus));
      }
    }
    for (int w = 0; w < workers; ++w) {
      threads.emplace_back([&, w] {
        try {
          const ScopedThreadPin pin(cpus[w]);
          if (!pin.status().ok()) {
            errors[w] = pin.status().ToString();
            CopyGate::Copy gone(&gate);  // releases the other copies as it ends
            return;
          }
          copies[w] = TimeUnitLoop(*model, *data, micro_batch, warmup, timed, min_timed_s, seed,
                                   1000 * (w + 1), nullptr, &gate);
        } catch (const std::exception& e) {
          errors[w] = e.what();
        }
      });
    }
    for (std::thread& t : threads) t.join();
    for (const std::string& e : errors) {
      if (!e.empty()) return InternalError(fmt::format("contention profile: {}", e));
    }
    profile.contended.push_back(MeansOf(workers, copies));
  }
  return Status::Ok();
}

std::vector<double> ProfiledUnitCosts(const UnitProfile& profile, bool recompute) {
  std::vector<double> costs;
  for (size_t u = 0; u < profile.forward_s.size(); ++u) {
    costs.push_back(profile.forward_s[u] * (recompute ? 2 : 1) + profile.backward_s[u]);
  }
  return costs;
}

}  // namespace tessera::pipeline
