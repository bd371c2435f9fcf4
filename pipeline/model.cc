#include "pipeline/model.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/file.h"
#include "fmt/format.h"
#include "pipeline/profile.h"

namespace tessera::pipeline {
namespace {

namespace nn = torch::nn;

class Embedding final : public Unit {
 public:
  Embedding(int vocab, int seq, int width, double dropout)
      : tokens_(register_module("tokens", nn::Embedding(vocab, width))),
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

}  // namespace

Result<std::unique_ptr<CutModel>> CutModel::Build(const ModelSpec& spec, uint64_t seed) {
  TESSERA_RETURN_IF_ERROR(ValidateModelSpec(spec));
  std::unique_ptr<CutModel> model(new CutModel(spec));
  torch::manual_seed(static_cast<int64_t>(Mix(seed) >> 1));
  if (spec.kind == "gpt") {
    model->units_.push_back(
        std::make_shared<Embedding>(spec.vocab, spec.seq_len, spec.width, spec.dropout));
    for (int i = 0; i < spec.layers; ++i) {
      model->units_.push_back(std::make_shared<Block>(spec.width, spec.heads, spec.dropout));
    }
    model->units_.push_back(std::make_shared<LmHead>(spec.width, spec.vocab));
  } else {
    int in = 1, side = spec.image;
    for (int i = 0; i < spec.layers; ++i) {
      model->units_.push_back(std::make_shared<ConvBlock>(in, spec.width));
      in = spec.width;
      side /= 2;
    }
    model->units_.push_back(
        std::make_shared<ConvHead>(in * side * side, spec.classes, spec.dropout));
  }
  model->SetTraining(true);
  return model;
}

std::vector<torch::Tensor> CutModel::UnitParameters(int unit) const {
  return units_.at(unit)->parameters();
}

torch::Tensor CutModel::ForwardRange(int begin, int end, torch::Tensor x, const RngKey& key) {
  for (int u = begin; u < end; ++u) {
    const uint64_t s = Mix(Mix(Mix(key.seed) ^ static_cast<uint64_t>(key.step)) ^
                           static_cast<uint64_t>(key.global_micro)) ^
                       static_cast<uint64_t>(u);
    torch::manual_seed(static_cast<int64_t>(Mix(s) >> 1));
    x = units_[u]->Forward(x);
  }
  return x;
}

torch::Tensor CutModel::Loss(const torch::Tensor& output, const torch::Tensor& target) const {
  if (spec_.kind == "gpt") {
    return torch::cross_entropy_loss(output.reshape({-1, output.size(-1)}), target.reshape({-1}));
  }
  return torch::cross_entropy_loss(output, target);
}

void CutModel::SetTraining(bool on) {
  for (auto& u : units_) u->train(on);
}

Result<std::unique_ptr<Dataset>> Dataset::Create(const ModelSpec& spec, uint64_t seed) {
  TESSERA_RETURN_IF_ERROR(ValidateModelSpec(spec));
  std::unique_ptr<Dataset> d(new Dataset());
  auto gen = at::make_generator<at::CPUGeneratorImpl>(Mix(seed ^ 0xda7a));
  const int64_t n = spec.dataset_size;
  if (spec.kind == "gpt") {
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
  return d;
}

Batch Dataset::Rows(int64_t step, int global_batch, int first, int count) const {
  const int64_t n = inputs_.size(0);
  auto idx = (torch::arange(count, torch::kLong) + step * global_batch + first).remainder(n);
  return {inputs_.index_select(0, idx), targets_.index_select(0, idx)};
}

Result<UnitProfile> ProfileUnits(const ModelSpec& spec, int micro_batch, int warmup, int timed,
                                 uint64_t seed) {
  TESSERA_RETURN_IF_ERROR(ValidateModelSpec(spec));
  if (micro_batch < 1 || warmup < 0 || timed < 1) {
    return InvalidArgumentError("profile: micro-batch and timed runs must be >= 1, warm-up >= 0");
  }
  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  torch::set_num_threads(1);
  TESSERA_ASSIGN_OR_RETURN(auto model, CutModel::Build(spec, seed));
  TESSERA_ASSIGN_OR_RETURN(auto data, Dataset::Create(spec, seed));
  const int units = model->num_units();
  std::vector<std::vector<double>> fwd(units), bwd(units);
  UnitProfile profile;
  profile.output_bytes.assign(units, 0);
  for (int u = 0; u < units; ++u) {
    double bytes = 0;
    for (const torch::Tensor& t : model->UnitParameters(u)) {
      bytes += static_cast<double>(t.numel() * t.element_size());
    }
    profile.param_bytes.push_back(bytes);
  }
  for (int run = 0; run < warmup + timed; ++run) {
    Batch b = data->Rows(run, micro_batch, 0, micro_batch);
    const RngKey key{seed, run, 0};
    // Forward unit by unit, each on a detached input as a stage boundary would have it.
    std::vector<torch::Tensor> inputs(units), outputs(units);
    torch::Tensor x = b.input;
    profile.input_bytes = static_cast<double>(x.numel() * x.element_size());
    for (int u = 0; u < units; ++u) {
      inputs[u] = u == 0 ? x : x.detach().requires_grad_(true);
      const auto t0 = Clock::now();
      outputs[u] = model->ForwardRange(u, u + 1, inputs[u], key);
      if (run >= warmup) fwd[u].push_back(seconds(t0, Clock::now()));
      profile.output_bytes[u] = static_cast<double>(outputs[u].numel() * outputs[u].element_size());
      x = outputs[u];
    }
    // Backward from the loss, unit by unit, passing each input's gradient down.
    torch::Tensor grad;
    for (int u = units - 1; u >= 0; --u) {
      const auto t0 = Clock::now();
      if (u == units - 1) {
        model->Loss(outputs[u], b.target).backward();
      } else {
        outputs[u].backward(grad);
      }
      if (run >= warmup) bwd[u].push_back(seconds(t0, Clock::now()));
      if (u > 0) grad = inputs[u].grad();
    }
  }
  auto median = [](std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  for (int u = 0; u < units; ++u) {
    profile.forward_s.push_back(median(fwd[u]));
    profile.backward_s.push_back(median(bwd[u]));
  }
  return profile;
}

std::vector<double> ProfiledUnitCosts(const UnitProfile& profile, bool recompute) {
  std::vector<double> costs;
  for (size_t u = 0; u < profile.forward_s.size(); ++u) {
    costs.push_back(profile.forward_s[u] * (recompute ? 2 : 1) + profile.backward_s[u]);
  }
  return costs;
}

}  // namespace tessera::pipeline
