#include "lr/models.h"

#include <fmt/format.h>

namespace tessera::lr {

std::vector<torch::Tensor> Net::BodyParameters() {
  std::vector<torch::Tensor> head = HeadParameters();
  std::vector<torch::Tensor> body;
  for (const auto& p : parameters()) {
    bool in_head = false;
    for (const auto& h : head) in_head = in_head || h.is_same(p);
    if (!in_head) body.push_back(p);
  }
  return body;
}

namespace {

class Mlp final : public Net {
 public:
  Mlp()
      : fc1_(register_module("fc1", torch::nn::Linear(784, 256))),
        fc2_(register_module("fc2", torch::nn::Linear(256, 128))),
        out_(register_module("out", torch::nn::Linear(128, 10))) {}
  torch::Tensor forward(torch::Tensor x) override {
    x = x.flatten(1);
    x = torch::relu(fc1_(x));
    x = torch::relu(fc2_(x));
    return out_(x);
  }
  std::vector<torch::Tensor> HeadParameters() override { return out_->parameters(); }

 private:
  torch::nn::Linear fc1_, fc2_, out_;
};

// conv-BN-ReLU-conv-BN plus a shortcut (1x1 strided conv when the shape changes).
class ResidualBlock final : public torch::nn::Module {
 public:
  ResidualBlock(int64_t in, int64_t out, int64_t stride)
      : conv1_(register_module(
            "conv1",
            torch::nn::Conv2d(
                torch::nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false)))),
        bn1_(register_module("bn1", torch::nn::BatchNorm2d(out))),
        conv2_(register_module(
            "conv2",
            torch::nn::Conv2d(torch::nn::Conv2dOptions(out, out, 3).padding(1).bias(false)))),
        bn2_(register_module("bn2", torch::nn::BatchNorm2d(out))) {
    if (stride != 1 || in != out) {
      shortcut_ = register_module(
          "shortcut",
          torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 1).stride(stride).bias(false)));
    }
  }
  torch::Tensor forward(torch::Tensor x) {
    torch::Tensor y = torch::relu(bn1_(conv1_(x)));
    y = bn2_(conv2_(y));
    return torch::relu(y + (shortcut_ ? shortcut_(x) : x));
  }

 private:
  torch::nn::Conv2d conv1_;
  torch::nn::BatchNorm2d bn1_;
  torch::nn::Conv2d conv2_;
  torch::nn::BatchNorm2d bn2_;
  torch::nn::Conv2d shortcut_{nullptr};
};

class SmallResNet final : public Net {
 public:
  SmallResNet()
      : stem_(register_module(
            "stem", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 16, 3).padding(1).bias(false)))),
        bn_(register_module("bn", torch::nn::BatchNorm2d(16))),
        block1_(register_module("block1", std::make_shared<ResidualBlock>(16, 16, 1))),
        block2_(register_module("block2", std::make_shared<ResidualBlock>(16, 32, 2))),
        out_(register_module("out", torch::nn::Linear(32, 10))) {}
  torch::Tensor forward(torch::Tensor x) override {
    x = torch::relu(bn_(stem_(x)));
    x = block2_->forward(block1_->forward(x));
    return out_(x.mean({2, 3}));
  }
  std::vector<torch::Tensor> HeadParameters() override { return out_->parameters(); }

 private:
  torch::nn::Conv2d stem_;
  torch::nn::BatchNorm2d bn_;
  std::shared_ptr<ResidualBlock> block1_, block2_;
  torch::nn::Linear out_;
};

// The protocol's small CNN, sized for one shared CPU core: the 28x28 image is average-pooled
// to 14x14, then conv 3x3 (16 channels) - ReLU - max-pool 2 - conv 3x3 (32) - ReLU - max-pool 2
// - linear 32*3*3 -> 10. About 0.26 M multiply-adds per image, like the MLP's 0.24 M.
class SmallCnn final : public Net {
 public:
  SmallCnn()
      : conv1_(register_module("conv1",
                               torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 16, 3).padding(1)))),
        conv2_(register_module("conv2",
                               torch::nn::Conv2d(torch::nn::Conv2dOptions(16, 32, 3).padding(1)))),
        out_(register_module("out", torch::nn::Linear(32 * 3 * 3, 10))) {}
  torch::Tensor forward(torch::Tensor x) override {
    x = torch::avg_pool2d(x, 2);                       // 14x14
    x = torch::max_pool2d(torch::relu(conv1_(x)), 2);  // 7x7
    x = torch::max_pool2d(torch::relu(conv2_(x)), 2);  // 3x3
    return out_(x.flatten(1));
  }
  std::vector<torch::Tensor> HeadParameters() override { return out_->parameters(); }

 private:
  torch::nn::Conv2d conv1_, conv2_;
  torch::nn::Linear out_;
};

class DecoderBlock final : public torch::nn::Module {
 public:
  DecoderBlock(int64_t d, int64_t heads)
      : ln1_(register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})))),
        attn_(register_module(
            "attn", torch::nn::MultiheadAttention(torch::nn::MultiheadAttentionOptions(d, heads)))),
        ln2_(register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})))),
        fc1_(register_module("fc1", torch::nn::Linear(d, 4 * d))),
        fc2_(register_module("fc2", torch::nn::Linear(4 * d, d))) {}
  // x: [T, N, d] (MultiheadAttention's layout in libtorch 1.13); mask: [T, T] additive.
  torch::Tensor forward(torch::Tensor x, const torch::Tensor& mask) {
    torch::Tensor h = ln1_(x);
    x = x + std::get<0>(attn_->forward(h, h, h, /*key_padding_mask=*/torch::Tensor(),
                                       /*need_weights=*/false, mask));
    return x + fc2_(torch::gelu(fc1_(ln2_(x))));
  }

 private:
  torch::nn::LayerNorm ln1_;
  torch::nn::MultiheadAttention attn_;
  torch::nn::LayerNorm ln2_;
  torch::nn::Linear fc1_, fc2_;
};

class TinyTransformer final : public Net {
 public:
  explicit TinyTransformer(const LmShape& s)
      : shape_(s),
        tokens_(register_module("tokens", torch::nn::Embedding(256, s.d_model))),
        positions_(register_module("positions", torch::nn::Embedding(s.context, s.d_model))),
        ln_(register_module("ln", torch::nn::LayerNorm(torch::nn::LayerNormOptions({s.d_model})))),
        out_(register_module("out", torch::nn::Linear(s.d_model, 256))) {
    for (int64_t i = 0; i < s.layers; ++i) {
      blocks_.push_back(register_module(fmt::format("block{}", i),
                                        std::make_shared<DecoderBlock>(s.d_model, s.heads)));
    }
  }
  torch::Tensor forward(torch::Tensor x) override {
    const int64_t t = x.size(1);
    torch::Tensor h = tokens_(x) + positions_(torch::arange(t, torch::kLong)).unsqueeze(0);
    h = h.transpose(0, 1);  // [T, N, d]
    const torch::Tensor mask = torch::full({t, t}, -std::numeric_limits<float>::infinity()).triu(1);
    for (auto& b : blocks_) h = b->forward(h, mask);
    return out_(ln_(h)).transpose(0, 1);  // [N, T, 256]
  }
  std::vector<torch::Tensor> HeadParameters() override { return out_->parameters(); }

 private:
  LmShape shape_;
  torch::nn::Embedding tokens_, positions_;
  std::vector<std::shared_ptr<DecoderBlock>> blocks_;
  torch::nn::LayerNorm ln_;
  torch::nn::Linear out_;
};

}  // namespace

Result<std::shared_ptr<Net>> MakeNet(const std::string& name, const LmShape& lm) {
  if (name == "mlp") return std::shared_ptr<Net>(std::make_shared<Mlp>());
  if (name == "resnet") return std::shared_ptr<Net>(std::make_shared<SmallResNet>());
  if (name == "cnn") return std::shared_ptr<Net>(std::make_shared<SmallCnn>());
  if (name == "transformer") {
    if (lm.context < 2 || lm.d_model < 1 || lm.layers < 1 || lm.heads < 1 ||
        lm.d_model % lm.heads != 0) {
      return InvalidArgumentError(
          "transformer needs context >= 2, layers >= 1 and heads dividing d_model");
    }
    return std::shared_ptr<Net>(std::make_shared<TinyTransformer>(lm));
  }
  return InvalidArgumentError(
      fmt::format("unknown model '{}' (mlp, resnet, cnn, transformer)", name));
}

}  // namespace tessera::lr
