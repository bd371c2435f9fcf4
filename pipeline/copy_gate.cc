#include "pipeline/copy_gate.h"

namespace tessera::pipeline {

CopyGate::CopyGate(int copies) : started_(copies), short_of_minimum_(copies) {}

CopyGate::Copy::~Copy() {
  if (gate_ == nullptr) return;
  if (!started_) gate_->started_.count_down();
  if (!reached_) ReachedMinimum();
}

void CopyGate::Copy::Start() {
  started_ = true;
  if (gate_ != nullptr) gate_->started_.arrive_and_wait();
}

void CopyGate::Copy::ReachedMinimum() {
  reached_ = true;
  if (gate_ != nullptr && gate_->short_of_minimum_.fetch_sub(1) == 1) gate_->stop_ = true;
}

bool CopyGate::Copy::stopped() const { return gate_ == nullptr ? reached_ : gate_->stop_.load(); }

}  // namespace tessera::pipeline
