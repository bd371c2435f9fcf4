#include "pipeline/gradient_buckets.h"

#include <torch/csrc/autograd/utils/lambda_post_hook.h>

namespace tessera::pipeline {

GradientBuckets::GradientBuckets(const std::vector<torch::Tensor>& params, torch::Tensor flat,
                                 int64_t bucket_bytes, StartFn start)
    : start_(std::move(start)), flat_(std::move(flat)) {
  const int64_t cap = std::max<int64_t>(1, bucket_bytes / static_cast<int64_t>(sizeof(float)));
  std::vector<int> bucket_of;
  int64_t offset = 0;
  for (const torch::Tensor& p : params) {
    if (ranges_.empty() || ranges_.back().second >= cap) {
      ranges_.push_back({offset, 0});
      params_in_bucket_.push_back(0);
    }
    ranges_.back().second += p.numel();
    ++params_in_bucket_.back();
    bucket_of.push_back(static_cast<int>(ranges_.size()) - 1);
    offset += p.numel();
  }
  remaining_ = params_in_bucket_;
  for (size_t k = 0; k < params.size(); ++k) {
    if (!params[k].requires_grad()) continue;  // never accumulated: Finish() starts its bucket
    std::shared_ptr<torch::autograd::Node> acc = torch::autograd::impl::grad_accumulator(params[k]);
    if (!acc) continue;
    const int b = bucket_of[k];
    acc->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
        [this, b](const torch::autograd::variable_list& outputs,
                  const torch::autograd::variable_list&) {
          OnAccumulated(b);
          return outputs;
        }));
    accumulators_.push_back(std::move(acc));
  }
}

GradientBuckets::~GradientBuckets() {
  // The accumulators outlive this object if the parameters do: drop our hooks' target.
  for (auto& acc : accumulators_) acc->post_hooks().clear();
}

void GradientBuckets::Arm() {
  armed_ = true;
  remaining_ = params_in_bucket_;
  next_ = num_buckets() - 1;
  started_in_backward_ = 0;
  status_ = Status::Ok();
}

void GradientBuckets::OnAccumulated(int bucket) {
  if (!armed_) return;
  --remaining_[bucket];
  StartReady(/*from_hook=*/true);
}

void GradientBuckets::StartReady(bool from_hook) {
  while (next_ >= 0 && (!from_hook || remaining_[next_] <= 0)) {
    const auto [offset, count] = ranges_[next_];
    if (status_.ok()) {
      status_ = start_(std::span<float>(flat_.data_ptr<float>() + offset, count));
    }
    if (from_hook) ++started_in_backward_;
    --next_;
  }
}

Status GradientBuckets::Finish() {
  if (!armed_) return Status::Ok();
  StartReady(/*from_hook=*/false);
  armed_ = false;
  return status_;
}

}  // namespace tessera::pipeline
