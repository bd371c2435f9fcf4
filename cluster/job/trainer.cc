#include "cluster/job/trainer.h"

#include <ATen/CPUGeneratorImpl.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

namespace tessera::cluster {

namespace {

using Clock = std::chrono::steady_clock;

uint64_t SplitMix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

at::Generator GeneratorFor(uint64_t seed, uint64_t a, uint64_t b) {
  return at::detail::createCPUGenerator(SplitMix(SplitMix(SplitMix(seed) ^ a) ^ b));
}

// Identifies the configuration a checkpoint belongs to; learning rate and momentum are part of
// the trajectory too, so they are included (bit patterns of the doubles).
struct StateHeader {
  uint64_t seed;
  int32_t world_size, batch, input_dim, hidden;
  uint64_t lr_bits, momentum_bits;
  double loss;
};

uint64_t Bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof(b));
  return b;
}

struct Model {
  // Parameters W1 [H, D], b1 [H], W2 [1, H], b2 [1], and one momentum buffer per parameter.
  std::vector<torch::Tensor> params;
  std::vector<torch::Tensor> velocity;
  torch::Tensor teacher;  // [D, 8] fixed: y = sum(sin(x @ teacher), 1)
};

Model InitialModel(const TrainConfig& c) {
  torch::NoGradGuard no_grad;
  auto gen = GeneratorFor(c.seed, 0xabcdef, 0);
  auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
  Model m;
  double s1 = 1.0 / std::sqrt(static_cast<double>(c.input_dim));
  double s2 = 1.0 / std::sqrt(static_cast<double>(c.hidden));
  m.params = {torch::randn({c.hidden, c.input_dim}, gen, f32) * s1, torch::zeros({c.hidden}, f32),
              torch::randn({1, c.hidden}, gen, f32) * s2, torch::zeros({1}, f32)};
  for (const auto& p : m.params) m.velocity.push_back(torch::zeros_like(p));
  m.teacher = torch::randn({c.input_dim, 8}, gen, f32) * s1;  // arguments of sin ~ N(0, 1)
  return m;
}

std::string SerializeState(const TrainConfig& c, const Model& m, double loss) {
  StateHeader h{c.seed,   c.world_size,          c.batch_per_replica, c.input_dim,
                c.hidden, Bits(c.learning_rate), Bits(c.momentum),    loss};
  std::string out(reinterpret_cast<const char*>(&h), sizeof(h));
  for (const auto* group : {&m.params, &m.velocity}) {
    for (const auto& t : *group) {
      auto contiguous = t.contiguous();
      out.append(reinterpret_cast<const char*>(contiguous.data_ptr<float>()),
                 contiguous.numel() * sizeof(float));
    }
  }
  return out;
}

Status RestoreState(const TrainConfig& c, std::string_view state, Model& m, double& loss) {
  if (state.size() < sizeof(StateHeader)) return DataLossError("checkpoint state too short");
  StateHeader h;
  std::memcpy(&h, state.data(), sizeof(h));
  if (h.seed != c.seed || h.world_size != c.world_size || h.batch != c.batch_per_replica ||
      h.input_dim != c.input_dim || h.hidden != c.hidden || h.lr_bits != Bits(c.learning_rate) ||
      h.momentum_bits != Bits(c.momentum)) {
    return FailedPreconditionError(
        "the checkpoint belongs to a job with another configuration (seed, world size, shapes "
        "or optimizer settings differ)");
  }
  size_t offset = sizeof(h);
  for (auto* group : {&m.params, &m.velocity}) {
    for (auto& t : *group) {
      size_t bytes = t.numel() * sizeof(float);
      if (offset + bytes > state.size()) return DataLossError("checkpoint state truncated");
      std::memcpy(t.data_ptr<float>(), state.data() + offset, bytes);
      offset += bytes;
    }
  }
  if (offset != state.size()) return DataLossError("checkpoint state has trailing bytes");
  loss = h.loss;
  return Status::Ok();
}

// One replica's loss and gradients for `step`. Reads the shared parameters, writes nothing
// shared, so replicas can run on concurrent threads.
std::pair<double, std::vector<torch::Tensor>> ReplicaGradient(const TrainConfig& c, const Model& m,
                                                              int64_t step, int rank) {
  auto gen = GeneratorFor(c.seed, static_cast<uint64_t>(step) + 1, static_cast<uint64_t>(rank));
  torch::Tensor x, y;
  {
    torch::NoGradGuard no_grad;
    x = torch::randn({c.batch_per_replica, c.input_dim}, gen, torch::kFloat32);
    y = torch::sin(torch::matmul(x, m.teacher)).sum(1, /*keepdim=*/true);
  }
  std::vector<torch::Tensor> leaves;
  for (const auto& p : m.params) leaves.push_back(p.detach().requires_grad_(true));
  auto h = torch::tanh(torch::addmm(leaves[1], x, leaves[0].t()));
  auto pred = torch::addmm(leaves[3], h, leaves[2].t());
  auto loss = torch::mse_loss(pred, y);
  auto grads = torch::autograd::grad({loss}, leaves);
  return {loss.item<double>(), std::vector<torch::Tensor>(grads.begin(), grads.end())};
}

}  // namespace

Status ValidateTrainConfig(const TrainConfig& c) {
  if (c.total_steps <= 0) return InvalidArgumentError("steps must be positive");
  if (c.world_size <= 0 || c.world_size > 1024) {
    return InvalidArgumentError("world size must be in [1, 1024]");
  }
  if (c.batch_per_replica <= 0) return InvalidArgumentError("batch per replica must be positive");
  if (c.input_dim <= 0 || c.hidden <= 0) return InvalidArgumentError("dimensions must be positive");
  if (!(c.learning_rate > 0)) return InvalidArgumentError("learning rate must be positive");
  if (!(c.momentum >= 0 && c.momentum < 1))
    return InvalidArgumentError("momentum must be in [0, 1)");
  if (c.checkpoint_every < 0) return InvalidArgumentError("checkpoint interval must be >= 0");
  if (c.replica_ms < 0) return InvalidArgumentError("replica time must be >= 0");
  return Status::Ok();
}

Result<TrainOutcome> RunTrainingJob(const TrainConfig& c, JobControl& control) {
  TESSERA_RETURN_IF_ERROR(ValidateTrainConfig(c));
  // One intra-op thread per worker thread: the box is shared and oversubscription collapses
  // throughput (environment.md §1.3).
  torch::set_num_threads(1);
  const int workers = std::min(control.workers(), c.world_size);

  std::error_code ec;
  std::filesystem::create_directories(control.dir(), ec);
  if (ec) return InternalError("creating " + control.dir().string() + ": " + ec.message());

  Model model = InitialModel(c);
  double loss = 0;
  int64_t step = 0;
  TESSERA_ASSIGN_OR_RETURN(std::optional<Checkpoint> latest, control.checkpoints().LoadLatest());
  if (latest) {
    if (latest->world_size != c.world_size) {
      return FailedPreconditionError("checkpoint world size " + std::to_string(latest->world_size) +
                                     " != job world size " + std::to_string(c.world_size));
    }
    TESSERA_RETURN_IF_ERROR(RestoreState(c, latest->state, model, loss));
    step = latest->step;
  }
  TrainOutcome outcome;
  outcome.resumed_from = step;
  spdlog::info("job {}: {} at step {}/{} with {} worker(s) for world size {}", control.job_id(),
               latest ? "resuming" : "starting", step, c.total_steps, workers, c.world_size);

  auto checkpoint = [&]() -> Status {
    std::string state = SerializeState(c, model, loss);
    outcome.state_fingerprint = Fingerprint(state);
    return control.checkpoints().Save(
        {.step = step, .world_size = c.world_size, .state = std::move(state)});
  };
  auto report = [&]() {
    return control.ReportProgress({.step = step,
                                   .total_steps = c.total_steps,
                                   .world_size = c.world_size,
                                   .workers = workers,
                                   .loss = loss});
  };
  TESSERA_RETURN_IF_ERROR(report());
  auto last_report = Clock::now();

  std::vector<double> losses(c.world_size);
  std::vector<std::vector<torch::Tensor>> grads(c.world_size);
  while (step < c.total_steps) {
    if (control.PollOrder() == Order::kCheckpointAndExit) {
      TESSERA_RETURN_IF_ERROR(checkpoint());
      TESSERA_RETURN_IF_ERROR(report());
      TESSERA_RETURN_IF_ERROR(
          control.ReportExit({.kind = ExitReport::Kind::kCheckpointed, .step = step}));
      outcome.kind = ExitReport::Kind::kCheckpointed;
      outcome.step = step;
      outcome.loss = loss;
      spdlog::info("job {}: checkpointed at step {} on order", control.job_id(), step);
      return outcome;
    }
    // Worker w time-slices replicas w, w + P, w + 2P, ...
    auto run_worker = [&](int w) {
      for (int rank = w; rank < c.world_size; rank += workers) {
        auto start = Clock::now();
        std::tie(losses[rank], grads[rank]) = ReplicaGradient(c, model, step, rank);
        std::this_thread::sleep_until(start + std::chrono::milliseconds(c.replica_ms));
      }
    };
    std::vector<std::thread> threads;
    for (int w = 1; w < workers; ++w) threads.emplace_back(run_worker, w);
    run_worker(0);
    for (auto& t : threads) t.join();

    // The allreduce: a sum in rank order, so the result does not depend on the worker count.
    torch::NoGradGuard no_grad;
    double loss_sum = 0;
    for (int rank = 0; rank < c.world_size; ++rank) loss_sum += losses[rank];
    for (size_t i = 0; i < model.params.size(); ++i) {
      torch::Tensor g = grads[0][i].clone();
      for (int rank = 1; rank < c.world_size; ++rank) g.add_(grads[rank][i]);
      g.div_(c.world_size);
      model.velocity[i].mul_(c.momentum).add_(g);
      model.params[i].sub_(model.velocity[i] * c.learning_rate);
    }
    loss = loss_sum / c.world_size;
    ++step;

    if (c.checkpoint_every > 0 && step % c.checkpoint_every == 0 && step < c.total_steps) {
      TESSERA_RETURN_IF_ERROR(checkpoint());
    }
    if (Clock::now() - last_report >= std::chrono::milliseconds(100)) {
      TESSERA_RETURN_IF_ERROR(report());
      last_report = Clock::now();
    }
  }
  TESSERA_RETURN_IF_ERROR(checkpoint());
  TESSERA_RETURN_IF_ERROR(report());
  TESSERA_RETURN_IF_ERROR(control.ReportExit({.kind = ExitReport::Kind::kFinished, .step = step}));
  outcome.kind = ExitReport::Kind::kFinished;
  outcome.step = step;
  outcome.loss = loss;
  spdlog::info("job {}: finished {} steps, loss {:.6f}", control.job_id(), step, loss);
  return outcome;
}

}  // namespace tessera::cluster
