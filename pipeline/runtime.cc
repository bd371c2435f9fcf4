#include "pipeline/runtime.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>

#include "fmt/format.h"
#include "pipeline/allreduce.h"
#include "pipeline/model.h"
#include "pipeline/transport.h"
#include "spdlog/spdlog.h"

namespace tessera::pipeline {
namespace {

using Clock = std::chrono::steady_clock;
double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

enum MessageKind : uint64_t { kActivation = 1, kGradient = 2, kAllreduce = 3 };
// step in the high bits, then the kind, then the micro-batch (M < 2^20).
uint64_t Tag(int64_t step, MessageKind kind, int index) {
  return (static_cast<uint64_t>(step) << 24) | (static_cast<uint64_t>(kind) << 20) |
         static_cast<uint64_t>(index);
}

// Wire format of a float tensor: ndim (u32), dims (i64 each), values (native float32).
std::string EncodeTensor(const torch::Tensor& t) {
  torch::Tensor c = t.detach().to(torch::kFloat).contiguous();
  const uint32_t ndim = static_cast<uint32_t>(c.dim());
  std::string out(sizeof(ndim) + ndim * sizeof(int64_t) + c.numel() * sizeof(float), '\0');
  char* p = out.data();
  std::memcpy(p, &ndim, sizeof(ndim));
  p += sizeof(ndim);
  for (int64_t d : c.sizes()) {
    std::memcpy(p, &d, sizeof(d));
    p += sizeof(d);
  }
  std::memcpy(p, c.data_ptr<float>(), c.numel() * sizeof(float));
  return out;
}

Result<torch::Tensor> DecodeTensor(const std::string& bytes) {
  uint32_t ndim = 0;
  if (bytes.size() < sizeof(ndim)) return DataLossError("tensor message too short");
  std::memcpy(&ndim, bytes.data(), sizeof(ndim));
  if (ndim > 8 || bytes.size() < sizeof(ndim) + ndim * sizeof(int64_t)) {
    return DataLossError("tensor message has a bad header");
  }
  std::vector<int64_t> dims(ndim);
  std::memcpy(dims.data(), bytes.data() + sizeof(ndim), ndim * sizeof(int64_t));
  // The element count may not exceed what the message holds (which also rules out overflow).
  const int64_t capacity = static_cast<int64_t>(bytes.size() / sizeof(float));
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || (d > 0 && n > capacity / d)) {
      return DataLossError("tensor message has a bad shape");
    }
    n *= d;
  }
  const size_t offset = sizeof(ndim) + ndim * sizeof(int64_t);
  if (bytes.size() - offset != static_cast<size_t>(n) * sizeof(float)) {
    return DataLossError("tensor message size does not match its shape");
  }
  torch::Tensor t = torch::empty(dims, torch::kFloat);
  std::memcpy(t.data_ptr<float>(), bytes.data() + offset, n * sizeof(float));
  return t;
}

TensorData ToData(const torch::Tensor& t) {
  torch::Tensor c = t.detach().to(torch::kFloat).contiguous();
  TensorData d;
  d.shape.assign(c.sizes().begin(), c.sizes().end());
  d.values.assign(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  return d;
}

Status CopyInto(const TensorData& d, torch::Tensor& t) {
  if (std::vector<int64_t>(t.sizes().begin(), t.sizes().end()) != d.shape) {
    return InvalidArgumentError("checkpoint tensor shape differs from the model's");
  }
  torch::NoGradGuard no_grad;
  t.copy_(torch::from_blob(const_cast<float*>(d.values.data()), d.shape, torch::kFloat));
  return Status::Ok();
}

// SGD with momentum, the same for workers and the reference: buf = m * buf + g; p -= lr * buf.
// (A zero-initialized buffer gives torch's first step, buf = g.) Buffers are explicit so that
// checkpoints can store them per unit.
class Sgd {
 public:
  Sgd(std::vector<torch::Tensor> params, double lr, double momentum)
      : params_(std::move(params)), lr_(lr), momentum_(momentum) {
    for (auto& p : params_) buffers_.push_back(torch::zeros_like(p));
  }
  void ZeroGrad() {
    for (auto& p : params_) {
      if (p.grad().defined()) p.mutable_grad().zero_();
    }
  }
  void Step() {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < params_.size(); ++i) {
      if (!params_[i].grad().defined()) continue;
      buffers_[i].mul_(momentum_).add_(params_[i].grad());
      params_[i].add_(buffers_[i], -lr_);
    }
  }
  // Hyper-parameters come back from a checkpoint after construction.
  void SetHyper(double lr, double momentum) {
    lr_ = lr;
    momentum_ = momentum;
  }
  std::vector<torch::Tensor>& params() { return params_; }
  std::vector<torch::Tensor>& buffers() { return buffers_; }

 private:
  std::vector<torch::Tensor> params_, buffers_;
  double lr_, momentum_;
};

// Parameters of units [begin, end) and where each unit's run starts in that list.
struct UnitParams {
  std::vector<torch::Tensor> all;
  std::vector<size_t> offsets;  // offsets[u - begin] .. offsets[u - begin + 1]
};
UnitParams CollectParams(const CutModel& model, int begin, int end) {
  UnitParams out;
  out.offsets.push_back(0);
  for (int u = begin; u < end; ++u) {
    for (auto& p : model.UnitParameters(u)) out.all.push_back(p);
    out.offsets.push_back(out.all.size());
  }
  return out;
}

Result<int64_t> LoadCheckpoint(const JobConfig& job, int begin, int end, const UnitParams& up,
                               Sgd& sgd, double& lr, double& momentum) {
  TESSERA_ASSIGN_OR_RETURN(int64_t step, LatestCompleteCheckpoint(job.resume_dir));
  TESSERA_ASSIGN_OR_RETURN(CheckpointMeta meta, ReadMeta(job.resume_dir, step));
  if (meta.num_units != NumUnits(job.model) || meta.model != JobToJson(job).at("model")) {
    return FailedPreconditionError(fmt::format("checkpoint {} was written for a different model",
                                               CheckpointDir(job.resume_dir, step).string()));
  }
  for (int u = begin; u < end; ++u) {
    TESSERA_ASSIGN_OR_RETURN(UnitState state, ReadUnitState(job.resume_dir, step, u));
    const size_t first = up.offsets[u - begin], count = up.offsets[u - begin + 1] - first;
    if (state.params.size() != count) {
      return FailedPreconditionError(
          fmt::format("checkpoint unit {} has {} tensors, want {}", u, state.params.size(), count));
    }
    for (size_t k = 0; k < count; ++k) {
      TESSERA_RETURN_IF_ERROR(CopyInto(state.params[k], sgd.params()[first + k]));
      TESSERA_RETURN_IF_ERROR(CopyInto(state.momentum[k], sgd.buffers()[first + k]));
    }
  }
  lr = meta.lr;
  momentum = meta.momentum;
  return meta.steps_done;
}

Status SaveUnits(const JobConfig& job, int64_t steps_done, int begin, int end, const UnitParams& up,
                 Sgd& sgd) {
  for (int u = begin; u < end; ++u) {
    UnitState state;
    for (size_t k = up.offsets[u - begin]; k < up.offsets[u - begin + 1]; ++k) {
      state.params.push_back(ToData(sgd.params()[k]));
      state.momentum.push_back(ToData(sgd.buffers()[k]));
    }
    TESSERA_RETURN_IF_ERROR(WriteUnitState(job.save_dir, steps_done, u, state));
  }
  return Status::Ok();
}

CheckpointMeta MetaFor(const JobConfig& job, int64_t steps_done, double lr, double momentum) {
  return {.steps_done = steps_done,
          .lr = lr,
          .momentum = momentum,
          .seed = job.seed,
          .num_units = NumUnits(job.model),
          .model = JobToJson(job).at("model")};
}

// Flattens the gradients into one buffer (missing gradients count as zeros).
std::vector<float> FlattenGrads(const std::vector<torch::Tensor>& params) {
  std::vector<float> flat;
  for (const auto& p : params) {
    torch::Tensor g = p.grad().defined() ? p.grad().contiguous() : torch::zeros_like(p);
    flat.insert(flat.end(), g.data_ptr<float>(), g.data_ptr<float>() + g.numel());
  }
  return flat;
}

void UnflattenGrads(const std::vector<float>& flat, std::vector<torch::Tensor>& params) {
  size_t offset = 0;
  torch::NoGradGuard no_grad;
  for (auto& p : params) {
    auto src = torch::from_blob(const_cast<float*>(flat.data() + offset), p.sizes(), torch::kFloat);
    if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
    p.mutable_grad().copy_(src);
    offset += p.numel();
  }
}

// Per-step state of one stage.
class StageStep {
 public:
  StageStep(const JobConfig& job, int rank, CutModel& model, const Dataset& data,
            Transport& transport, int64_t step)
      : job_(job),
        model_(model),
        data_(data),
        transport_(transport),
        step_(step),
        stage_(StageOf(job, rank)),
        replica_(ReplicaOf(job, rank)),
        last_(stage_ == job.stages - 1),
        recomputes_(StageRecomputes(job.schedule, job.stages, stage_)),
        begin_(job.boundaries[stage_]),
        end_(job.boundaries[stage_ + 1]),
        micro_(MicroBatches(job)),
        prev_(stage_ > 0 ? rank - 1 : -1),
        next_(last_ ? -1 : rank + 1),
        inputs_(micro_),
        outputs_(micro_) {}

  bool Ready(const Task& t) {
    if (t.kind == TaskKind::kForward) {
      return stage_ == 0 || transport_.Has(prev_, Tag(step_, kActivation, t.micro));
    }
    if (t.kind == TaskKind::kBackward) {
      return last_ || transport_.Has(next_, Tag(step_, kGradient, t.micro));
    }
    return true;
  }

  Status Run(const Task& t) {
    switch (t.kind) {
      case TaskKind::kForward:
        return Forward(t.micro);
      case TaskKind::kRecompute:
        return ForwardWithGrad(t.micro, inputs_[t.micro]);
      case TaskKind::kBackward:
        return Backward(t.micro);
    }
    return InternalError("unknown task");
  }

  double loss() const { return loss_; }
  double activation_bytes() const { return activation_bytes_; }

 private:
  const Transport::Duration timeout() const { return Transport::Duration(job_.timeout_ms); }
  RngKey Key(int micro) const {
    return {job_.seed, step_, static_cast<int64_t>(replica_) * micro_ + micro};
  }
  Batch Rows(int micro) const {
    const int per_replica = job_.global_batch / job_.replicas;
    return data_.Rows(step_, job_.global_batch, replica_ * per_replica + micro * job_.micro_batch,
                      job_.micro_batch);
  }

  Status Forward(int i) {
    torch::Tensor x;
    if (stage_ == 0) {
      x = Rows(i).input;
    } else {
      TESSERA_ASSIGN_OR_RETURN(std::string bytes,
                               transport_.Recv(prev_, Tag(step_, kActivation, i), timeout()));
      TESSERA_ASSIGN_OR_RETURN(x, DecodeTensor(bytes));
    }
    if (!recomputes_) return ForwardWithGrad(i, x);
    torch::Tensor out;
    {
      torch::NoGradGuard no_grad;
      out = model_.ForwardRange(begin_, end_, x, Key(i));
    }
    inputs_[i] = x;  // the stash: only the stage input (plus the RNG key, implicit in i)
    if (!last_) return SendActivation(i, out);
    return Status::Ok();  // GPipe's last stage: the loss comes from the recompute
  }

  Status ForwardWithGrad(int i, torch::Tensor x) {
    if (stage_ > 0) x = x.detach().requires_grad_(true);
    torch::Tensor out = model_.ForwardRange(begin_, end_, x, Key(i));
    inputs_[i] = x;
    if (last_) {
      out = model_.Loss(out, Rows(i).target) *
            (static_cast<double>(job_.micro_batch) / job_.global_batch);
      outputs_[i] = out;
      return Status::Ok();
    }
    outputs_[i] = out;
    // A recompute's output was already sent by the forward without autograd.
    if (!recomputes_) return SendActivation(i, out);
    return Status::Ok();
  }

  Status SendActivation(int i, const torch::Tensor& out) {
    std::string bytes = EncodeTensor(out);
    activation_bytes_ = static_cast<double>(bytes.size());
    return transport_.Send(next_, Tag(step_, kActivation, i), std::move(bytes));
  }

  Status Backward(int i) {
    if (!outputs_[i].defined()) return InternalError(fmt::format("backward {} before forward", i));
    if (last_) {
      loss_ += outputs_[i].item<double>();
      outputs_[i].backward();
    } else {
      TESSERA_ASSIGN_OR_RETURN(std::string bytes,
                               transport_.Recv(next_, Tag(step_, kGradient, i), timeout()));
      TESSERA_ASSIGN_OR_RETURN(torch::Tensor g, DecodeTensor(bytes));
      if (!g.sizes().equals(outputs_[i].sizes())) {
        return DataLossError(fmt::format("gradient of micro-batch {} has the wrong shape", i));
      }
      outputs_[i].backward(g);
    }
    if (stage_ > 0) {
      TESSERA_RETURN_IF_ERROR(
          transport_.Send(prev_, Tag(step_, kGradient, i), EncodeTensor(inputs_[i].grad())));
    }
    inputs_[i] = torch::Tensor();
    outputs_[i] = torch::Tensor();
    return Status::Ok();
  }

  const JobConfig& job_;
  CutModel& model_;
  const Dataset& data_;
  Transport& transport_;
  const int64_t step_;
  const int stage_, replica_;
  const bool last_, recomputes_;
  const int begin_, end_, micro_, prev_, next_;
  std::vector<torch::Tensor> inputs_, outputs_;
  double loss_ = 0;
  double activation_bytes_ = 0;
};

}  // namespace

nlohmann::json ReportToJson(const WorkerReport& r) {
  nlohmann::json steps = nlohmann::json::array();
  for (const StepStats& s : r.steps) {
    steps.push_back({{"step", s.step},
                     {"loss", s.loss},
                     {"wall_s", s.wall_s},
                     {"pipeline_s", s.pipeline_s},
                     {"busy_s", s.busy_s},
                     {"allreduce_s", s.allreduce_s},
                     {"pulled_ahead", s.pulled_ahead}});
  }
  return {{"rank", r.rank},
          {"stage", r.stage},
          {"replica", r.replica},
          {"steps", steps},
          {"forward_s", r.forward_s},
          {"recompute_s", r.recompute_s},
          {"backward_s", r.backward_s},
          {"activation_bytes", r.activation_bytes},
          {"gradient_bytes", r.gradient_bytes},
          {"bytes_sent", r.bytes_sent},
          {"bytes_received", r.bytes_received},
          {"first_step_order", r.first_step_order}};
}

Result<WorkerReport> ReportFromJson(const nlohmann::json& j) {
  try {
    WorkerReport r;
    r.rank = j.at("rank").get<int>();
    r.stage = j.at("stage").get<int>();
    r.replica = j.at("replica").get<int>();
    for (const auto& s : j.at("steps")) {
      r.steps.push_back({s.at("step").get<int64_t>(), s.at("loss").get<double>(),
                         s.at("wall_s").get<double>(), s.at("pipeline_s").get<double>(),
                         s.at("busy_s").get<double>(), s.at("allreduce_s").get<double>(),
                         s.at("pulled_ahead").get<int>()});
    }
    r.forward_s = j.at("forward_s").get<double>();
    r.recompute_s = j.at("recompute_s").get<double>();
    r.backward_s = j.at("backward_s").get<double>();
    r.activation_bytes = j.at("activation_bytes").get<double>();
    r.gradient_bytes = j.at("gradient_bytes").get<double>();
    r.bytes_sent = j.at("bytes_sent").get<uint64_t>();
    r.bytes_received = j.at("bytes_received").get<uint64_t>();
    r.first_step_order = j.at("first_step_order").get<std::string>();
    return r;
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError(fmt::format("bad worker report: {}", e.what()));
  }
}

Result<WorkerReport> RunWorker(const JobConfig& job, int rank) {
  TESSERA_RETURN_IF_ERROR(ValidateJob(job));
  if (rank < 0 || rank >= WorldSize(job)) {
    return InvalidArgumentError(fmt::format("rank {} outside [0, {})", rank, WorldSize(job)));
  }
  torch::set_num_threads(1);
  const int stage = StageOf(job, rank), replica = ReplicaOf(job, rank);
  const int begin = job.boundaries[stage], end = job.boundaries[stage + 1];
  const int M = MicroBatches(job);
  const bool last = stage == job.stages - 1;
  TESSERA_ASSIGN_OR_RETURN(auto model, CutModel::Build(job.model, job.seed));
  TESSERA_ASSIGN_OR_RETURN(auto data, Dataset::Create(job.model, job.seed));
  UnitParams up = CollectParams(*model, begin, end);
  double lr = job.lr, momentum = job.momentum;
  Sgd sgd(up.all, lr, momentum);
  int64_t first_step = job.first_step;
  if (!job.resume_dir.empty()) {
    TESSERA_ASSIGN_OR_RETURN(first_step, LoadCheckpoint(job, begin, end, up, sgd, lr, momentum));
    sgd.SetHyper(lr, momentum);
  }
  TESSERA_ASSIGN_OR_RETURN(std::vector<Task> tasks, StageTasks(job.schedule, job.stages, M, stage));
  TESSERA_ASSIGN_OR_RETURN(auto transport,
                           Transport::Connect(rank, job.endpoints, PeersOf(job, rank),
                                              Transport::Duration(job.timeout_ms)));
  const std::vector<int> group = ReplicaGroup(job, stage);
  const bool opportunistic = job.opportunistic && job.schedule == ScheduleKind::kVaruna;

  WorkerReport report;
  report.rank = rank;
  report.stage = stage;
  report.replica = replica;
  std::vector<double> task_s[3];  // durations per task kind, warm-up step excluded
  double activation_bytes = 0;
  for (int64_t step = first_step; step < first_step + job.steps; ++step) {
    const auto start = Clock::now();
    sgd.ZeroGrad();
    StageStep work(job, rank, *model, *data, *transport, step);
    TaskCursor cursor(tasks, opportunistic);
    StepStats stats{.step = step};
    const auto deadline = start + std::chrono::milliseconds(job.timeout_ms);
    std::vector<Task> order;
    while (!cursor.finished()) {
      const uint64_t seen = transport->arrivals();
      std::optional<Task> next = cursor.Next([&](const Task& t) { return work.Ready(t); });
      if (!next) {
        if (Clock::now() > deadline) {
          return DeadlineExceededError(fmt::format("rank {} step {}: waited {} ms for a message",
                                                   rank, step, job.timeout_ms));
        }
        // Blocked on a neighbour whose connection is gone: fail now rather than at the
        // deadline. (A neighbour that finished normally cannot be what we wait for: it
        // finishes only after all our messages to it and all its messages to us.)
        for (int peer : {stage > 0 ? rank - 1 : -1, last ? -1 : rank + 1}) {
          if (peer >= 0) TESSERA_RETURN_IF_ERROR(transport->PeerStatus(peer));
        }
        transport->WaitForArrival(seen, std::chrono::milliseconds(50));
        continue;
      }
      const auto t0 = Clock::now();
      TESSERA_RETURN_IF_ERROR(work.Run(*next).WithContext(
          fmt::format("rank {} step {} task {}", rank, step, FormatTasks({*next}))));
      const double d = Seconds(t0, Clock::now());
      stats.busy_s += d;
      if (step > first_step || job.steps == 1) {
        task_s[static_cast<int>(next->kind)].push_back(d);
      }
      cursor.MarkDone(*next);
      if (step == first_step) order.push_back(*next);
    }
    if (step == first_step) report.first_step_order = FormatTasks(order);
    stats.pipeline_s = Seconds(start, Clock::now());
    stats.pulled_ahead = cursor.pulled_ahead();
    activation_bytes = std::max(activation_bytes, work.activation_bytes());

    // Gradient all-reduce; the last stage appends its loss so every replica learns the global
    // loss (Varuna all-reduces the loss over a small group in the same way).
    const auto ar_start = Clock::now();
    std::vector<float> flat = FlattenGrads(sgd.params());
    report.gradient_bytes = static_cast<double>(flat.size() * sizeof(float));
    if (last) flat.push_back(static_cast<float>(work.loss()));
    TESSERA_RETURN_IF_ERROR(RingAllreduce(*transport, group, Tag(step, kAllreduce, 0), flat,
                                          Transport::Duration(job.timeout_ms)));
    stats.allreduce_s = Seconds(ar_start, Clock::now());
    const double global_loss = last ? flat.back() : 0.0;
    if (last) flat.pop_back();
    UnflattenGrads(flat, sgd.params());
    sgd.Step();
    stats.loss = work.loss();
    stats.wall_s = Seconds(start, Clock::now());
    report.steps.push_back(stats);
    if (last && replica == 0) {
      fmt::print("step {}/{} loss {:.4f} ({:.3f} s)\n", step + 1, first_step + job.steps,
                 global_loss, stats.wall_s);
      std::fflush(stdout);
    }
    // Periodic checkpoints (the final one follows the loop). A job stopped between them
    // resumes from the newest complete one and repeats the steps since.
    const int64_t done = step + 1;
    if (!job.save_dir.empty() && replica == 0 && job.checkpoint_every > 0 &&
        done % job.checkpoint_every == 0 && done < first_step + job.steps) {
      TESSERA_RETURN_IF_ERROR(SaveUnits(job, done, begin, end, up, sgd));
      if (rank == 0)
        TESSERA_RETURN_IF_ERROR(WriteMeta(job.save_dir, MetaFor(job, done, lr, momentum)));
    }
  }
  // Means, not medians: a step is a sum of tasks, so the mean task time (stalls behind other
  // processes included) is what predicts the mean step time the launcher reports.
  auto mean = [&](int k) {
    const std::vector<double>& v = task_s[k];
    double sum = 0;
    for (double d : v) sum += d;
    return v.empty() ? 0.0 : sum / v.size();
  };
  report.forward_s = mean(0);
  report.recompute_s = mean(1);
  report.backward_s = mean(2);
  report.activation_bytes = activation_bytes;
  if (!job.save_dir.empty() && replica == 0) {
    const int64_t done = first_step + job.steps;
    TESSERA_RETURN_IF_ERROR(SaveUnits(job, done, begin, end, up, sgd));
    if (rank == 0)
      TESSERA_RETURN_IF_ERROR(WriteMeta(job.save_dir, MetaFor(job, done, lr, momentum)));
  }
  TESSERA_RETURN_IF_ERROR(transport->Flush(Transport::Duration(job.timeout_ms)));
  report.bytes_sent = transport->bytes_sent();
  report.bytes_received = transport->bytes_received();
  return report;
}

Result<ReferenceRun> TrainReference(const JobConfig& job, int accumulate_micro_batch) {
  TESSERA_RETURN_IF_ERROR(ValidateModelSpec(job.model));
  const int B = job.global_batch;
  const int m = accumulate_micro_batch == 0 ? B : accumulate_micro_batch;
  if (m < 1 || B % m != 0) {
    return InvalidArgumentError("the accumulation micro-batch must divide the global batch");
  }
  torch::set_num_threads(1);
  TESSERA_ASSIGN_OR_RETURN(auto model, CutModel::Build(job.model, job.seed));
  TESSERA_ASSIGN_OR_RETURN(auto data, Dataset::Create(job.model, job.seed));
  const int units = model->num_units();
  UnitParams up = CollectParams(*model, 0, units);
  double lr = job.lr, momentum = job.momentum;
  Sgd sgd(up.all, lr, momentum);
  int64_t first_step = job.first_step;
  if (!job.resume_dir.empty()) {
    TESSERA_ASSIGN_OR_RETURN(first_step, LoadCheckpoint(job, 0, units, up, sgd, lr, momentum));
    sgd.SetHyper(lr, momentum);
  }
  ReferenceRun run;
  for (int64_t step = first_step; step < first_step + job.steps; ++step) {
    sgd.ZeroGrad();
    double loss_sum = 0;
    for (int g = 0; g < B / m; ++g) {
      Batch b = data->Rows(step, B, g * m, m);
      torch::Tensor out = model->ForwardRange(0, units, b.input, {job.seed, step, g});
      torch::Tensor loss = model->Loss(out, b.target) * (static_cast<double>(m) / B);
      loss_sum += loss.item<double>();
      loss.backward();
    }
    sgd.Step();
    run.losses.push_back(loss_sum);
  }
  for (int u = 0; u < units; ++u) {
    UnitState state;
    for (size_t k = up.offsets[u]; k < up.offsets[u + 1]; ++k) {
      state.params.push_back(ToData(sgd.params()[k]));
      state.momentum.push_back(ToData(sgd.buffers()[k]));
    }
    run.units.push_back(std::move(state));
  }
  if (!job.save_dir.empty()) {
    const int64_t done = first_step + job.steps;
    for (int u = 0; u < units; ++u) {
      TESSERA_RETURN_IF_ERROR(WriteUnitState(job.save_dir, done, u, run.units[u]));
    }
    TESSERA_RETURN_IF_ERROR(WriteMeta(job.save_dir, MetaFor(job, done, lr, momentum)));
  }
  return run;
}

}  // namespace tessera::pipeline
