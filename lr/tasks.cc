#include "lr/tasks.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "lr/data.h"

namespace tessera::lr {
namespace {

// Fashion-MNIST's training-set mean and standard deviation of the pixel values in [0, 1].
constexpr double kPixelMean = 0.2860;
constexpr double kPixelStd = 0.3530;
constexpr int64_t kFashionMnistTrainImages = 60'000;

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

struct FmnistData {
  torch::Tensor train_x, train_y, val_x, val_y, test_x, test_y;
};
struct LmData {
  torch::Tensor train, val, test;  // int64 bytes; val is empty without validation
};
std::mutex cache_mu;
std::map<std::string, FmnistData> fmnist_cache;
std::map<std::string, LmData> lm_cache;

Result<FmnistData> LoadFmnistCached(const std::string& dir, int64_t train_limit, int64_t test_limit,
                                    int64_t validation) {
  const std::string key = fmt::format("{}|{}|{}|{}", dir, train_limit, test_limit, validation);
  std::lock_guard lock(cache_mu);
  if (auto it = fmnist_cache.find(key); it != fmnist_cache.end()) return it->second;
  if (validation < 0 || validation >= kFashionMnistTrainImages) {
    return InvalidArgumentError(
        fmt::format("validation must be in [0, {}), got {}", kFashionMnistTrainImages, validation));
  }
  // Without validation only the first train_limit images are decoded; with it the held-out
  // images come from the end, so the whole file is read.
  TESSERA_ASSIGN_OR_RETURN(ImageDataset train,
                           LoadFashionMnist(dir, "train", validation > 0 ? 0 : train_limit));
  TESSERA_ASSIGN_OR_RETURN(ImageDataset test, LoadFashionMnist(dir, "t10k", test_limit));
  FmnistData d;
  torch::Tensor x = ImagesToTensor(train), y = LabelsToTensor(train);
  const int64_t n = x.size(0);
  if (validation >= n) {
    return InvalidArgumentError(
        fmt::format("validation {} leaves no training images of {}", validation, n));
  }
  const int64_t train_end = n - validation;
  const int64_t train_n = train_limit > 0 ? std::min(train_limit, train_end) : train_end;
  d.train_x = x.slice(0, 0, train_n).clone();
  d.train_y = y.slice(0, 0, train_n).clone();
  if (validation > 0) {
    d.val_x = x.slice(0, train_end, n).clone();
    d.val_y = y.slice(0, train_end, n).clone();
  }
  d.test_x = ImagesToTensor(test);
  d.test_y = LabelsToTensor(test);
  fmnist_cache.emplace(key, d);
  return d;
}

Result<LmData> LoadLmCached(const std::string& dir, int64_t train_limit, int64_t context,
                            int64_t validation) {
  const std::string key = fmt::format("{}|{}|{}", dir, train_limit, validation);
  std::lock_guard lock(cache_mu);
  if (auto it = lm_cache.find(key); it != lm_cache.end()) return it->second;
  TESSERA_ASSIGN_OR_RETURN(std::string text, LoadFortunes(dir));
  // The last 10 % is the test text; validation bytes come from the end of the rest.
  const int64_t n = static_cast<int64_t>(text.size());
  const int64_t split = n - n / 10;
  const int64_t val_start = split - validation;
  const int64_t train_n = train_limit > 0 ? std::min(train_limit, val_start) : val_start;
  if (validation < 0 || train_n < context + 2 || n - split < context + 2 ||
      (validation > 0 && validation < context + 2)) {
    return InvalidArgumentError(
        fmt::format("corpus of {} bytes is too small for context {} and validation {}", n, context,
                    validation));
  }
  auto bytes = [&](int64_t from, int64_t count) {
    torch::Tensor t = torch::empty({count}, torch::kInt64);
    auto* p = t.data_ptr<int64_t>();
    for (int64_t i = 0; i < count; ++i) p[i] = static_cast<unsigned char>(text[from + i]);
    return t;
  };
  LmData d{bytes(0, train_n), validation > 0 ? bytes(val_start, validation) : torch::Tensor(),
           bytes(split, n - split)};
  lm_cache.emplace(key, d);
  return d;
}

EvalResult EvaluateImages(Net& net, const torch::Tensor& xs, const torch::Tensor& ys) {
  torch::NoGradGuard no_grad;
  net.eval();
  double loss = 0;
  int64_t correct = 0;
  const int64_t n = xs.size(0);
  for (int64_t i = 0; i < n; i += 1000) {
    torch::Tensor x = xs.slice(0, i, std::min(n, i + 1000));
    torch::Tensor y = ys.slice(0, i, std::min(n, i + 1000));
    torch::Tensor logits = net.forward(x);
    loss += torch::nn::functional::cross_entropy(
                logits, y, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                .item<double>();
    correct += logits.argmax(1).eq(y).sum().item<int64_t>();
  }
  net.train();
  return {loss / static_cast<double>(n), static_cast<double>(correct) / static_cast<double>(n)};
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
  EvalResult Evaluate(Net& net) override { return EvaluateImages(net, d_.test_x, d_.test_y); }
  Result<EvalResult> EvaluateValidation(Net& net) override {
    if (!has_validation()) return FailedPreconditionError("no validation set");
    return EvaluateImages(net, d_.val_x, d_.val_y);
  }
  bool has_validation() const override { return d_.val_x.defined(); }

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
  EvalResult Evaluate(Net& net) override { return EvaluateText(net, d_.test); }
  Result<EvalResult> EvaluateValidation(Net& net) override {
    if (!has_validation()) return FailedPreconditionError("no validation text");
    return EvaluateText(net, d_.val);
  }
  bool has_validation() const override { return d_.val.defined(); }

 private:
  EvalResult EvaluateText(Net& net, const torch::Tensor& text) {
    torch::NoGradGuard no_grad;
    net.eval();
    std::mt19937_64 rng(20240601);  // the same held-out windows for every run
    double loss = 0;
    int64_t done = 0;
    while (done < eval_windows_) {
      const int64_t n = std::min<int64_t>(64, eval_windows_ - done);
      auto [x, y] = Windows(text, n, rng);
      loss += Loss(net.forward(x), y).item<double>() * static_cast<double>(n);
      done += n;
    }
    net.train();
    return {loss / static_cast<double>(eval_windows_), 0};
  }

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

}  // namespace

Result<std::unique_ptr<Task>> MakeTask(const TrainConfig& c) {
  if (c.task == "fmnist") {
    const std::string dir = c.data_dir.empty() ? kFashionMnistDir : c.data_dir;
    TESSERA_ASSIGN_OR_RETURN(FmnistData d,
                             LoadFmnistCached(dir, c.train_limit, c.test_limit, c.validation));
    if (d.train_x.size(0) < c.batch_size) {
      return InvalidArgumentError("fewer training examples than one batch");
    }
    return std::unique_ptr<Task>(new FmnistTask(d, c.batch_size, c.seed));
  }
  const std::string dir = c.data_dir.empty() ? kFortunesDir : c.data_dir;
  TESSERA_ASSIGN_OR_RETURN(LmData d, LoadLmCached(dir, c.train_limit, c.lm_context, c.validation));
  return std::unique_ptr<Task>(
      new LmTask(d, c.batch_size, c.lm_context, c.seed, c.test_limit > 0 ? c.test_limit : 256));
}

}  // namespace tessera::lr
