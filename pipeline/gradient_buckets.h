// Starts the replicas' gradient all-reduce bucket by bucket while the backward still runs (the
// overlap of PyTorch's DDP reducer).
//
// The stage's gradients live in one flat buffer (parameter order). GradientBuckets cuts it into
// buckets of whole parameters of about `bucket_bytes` and puts a post hook on every
// parameter's gradient accumulator (autograd's AccumulateGrad node: the hook runs once the
// gradient has been added into the buffer). Before the stage's last backward of a step the
// runtime calls Arm(); from then on a bucket whose parameters have all been accumulated is
// started, highest bucket first (the backward produces the last parameters first), and only in
// descending order so that every replica starts the same collectives in the same order. Finish()
// after that backward starts what is left (parameters the graph did not reach).
//
// Hooks run on the thread that calls backward() (CPU autograd runs on the caller's thread).
#pragma once

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "core/status.h"

namespace tessera::pipeline {

class GradientBuckets {
 public:
  using StartFn = std::function<Status(std::span<float>)>;
  // `flat` is the buffer every parameter's .grad views (same order as `params`).
  GradientBuckets(const std::vector<torch::Tensor>& params, torch::Tensor flat,
                  int64_t bucket_bytes, StartFn start);
  ~GradientBuckets();

  void Arm();
  // Starts the buckets not yet started, in descending order; the first error of any start.
  Status Finish();

  int num_buckets() const { return static_cast<int>(ranges_.size()); }
  // Buckets started from a hook during the last Arm()ed backward (the rest by Finish()).
  int started_in_backward() const { return started_in_backward_; }

 private:
  void OnAccumulated(int bucket);
  void StartReady(bool from_hook);

  StartFn start_;
  torch::Tensor flat_;
  std::vector<std::pair<int64_t, int64_t>> ranges_;  // [offset, count) of each bucket's floats
  std::vector<int> params_in_bucket_, remaining_;
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators_;  // keeps the hooks alive
  bool armed_ = false;
  int next_ = -1;  // the next bucket to start (descending)
  int started_in_backward_ = 0;
  Status status_ = Status::Ok();
};

}  // namespace tessera::pipeline
