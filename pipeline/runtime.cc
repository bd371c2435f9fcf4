#include "pipeline/runtime.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "core/file.h"
#include "fmt/format.h"
#include "lr/schedule_spec.h"
#include "pipeline/allreduce.h"
#include "pipeline/gloo_collective.h"
#include "pipeline/gradient_buckets.h"
#include "pipeline/model.h"
#include "pipeline/optimizer.h"
#include "pipeline/task_clock.h"
#include "pipeline/transport.h"
#include "spdlog/spdlog.h"

namespace tessera::pipeline {
namespace {

using Clock = std::chrono::steady_clock;
double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

enum MessageKind : uint64_t {
  kActivation = 1,
  kGradient = 2,
  kAllreduce = 3,
  kLossSum = 4,   // the last stage's replicas sum their losses
  kNormUp = 5,    // squared gradient norms summed down the pipeline...
  kNormDown = 6,  // ...and the total sent back
  kEval = 7,      // held-out activations
};
// step in the high bits, then the kind, then the micro-batch (M < 2^20).
uint64_t Tag(int64_t step, MessageKind kind, int index) {
  return (static_cast<uint64_t>(step) << 24) | (static_cast<uint64_t>(kind) << 20) |
         static_cast<uint64_t>(index);
}

// Wire format of a float tensor: ndim (u32), dims (i64 each), values (native float32). An
// activation or a gradient between stages is stamped: 8 bytes before it hold the steady clock
// (ns) when the sender queued it, so the receiver can measure the delivery delay (on one host,
// where the steady clock is the same CLOCK_MONOTONIC for every process).
constexpr size_t kStampBytes = sizeof(int64_t);
int64_t SteadyNanos(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

std::string EncodeTensor(const torch::Tensor& t, bool stamped = false) {
  torch::Tensor c = t.detach().to(torch::kFloat).contiguous();
  const uint32_t ndim = static_cast<uint32_t>(c.dim());
  const size_t head = stamped ? kStampBytes : 0;
  std::string out(head + sizeof(ndim) + ndim * sizeof(int64_t) + c.numel() * sizeof(float), '\0');
  char* p = out.data() + head;
  std::memcpy(p, &ndim, sizeof(ndim));
  p += sizeof(ndim);
  for (int64_t d : c.sizes()) {
    std::memcpy(p, &d, sizeof(d));
    p += sizeof(d);
  }
  std::memcpy(p, c.data_ptr<float>(), c.numel() * sizeof(float));
  return out;
}

// Writes the send time into a message EncodeTensor(..., true) made, just before it is queued.
void Stamp(std::string& message) {
  const int64_t now = SteadyNanos(Clock::now());
  std::memcpy(message.data(), &now, kStampBytes);
}

Result<torch::Tensor> DecodeTensor(std::string_view bytes) {
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

// A stamped message: the tensor, and its send time into `sent_ns`.
Result<torch::Tensor> DecodeStamped(const std::string& bytes, int64_t& sent_ns) {
  if (bytes.size() < kStampBytes) return DataLossError("stamped message too short");
  std::memcpy(&sent_ns, bytes.data(), kStampBytes);
  return DecodeTensor(std::string_view(bytes).substr(kStampBytes));
}

// Parameters of the owned units [begin, end) and where each unit's run starts in that list.
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

// Gives every parameter a gradient that is a view into one flat buffer: autograd accumulates
// into it in place, the all-reduce and the norm read it without a copy, and zeroing it zeroes
// every gradient. Returns the buffer.
torch::Tensor BindFlatGradients(std::vector<torch::Tensor>& params) {
  int64_t total = 0;
  for (const auto& p : params) total += p.numel();
  torch::Tensor flat = torch::zeros({std::max<int64_t>(total, 1)}, torch::kFloat);
  int64_t offset = 0;
  for (auto& p : params) {
    p.mutable_grad() = flat.narrow(0, offset, p.numel()).view(p.sizes());
    offset += p.numel();
  }
  return flat.narrow(0, 0, total);
}

Result<int64_t> LoadCheckpoint(const JobConfig& job, int begin, int end, const UnitParams& up,
                               torch::optim::Optimizer& optimizer) {
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
      torch::Tensor p = up.all[first + k];
      TESSERA_RETURN_IF_ERROR(CopyInto(state.params[k], p));
      TESSERA_RETURN_IF_ERROR(
          ImportState(job, optimizer, p, state.momentum[k], state.second_moment, k, meta.steps_done)
              .WithContext(fmt::format("checkpoint unit {}", u)));
    }
  }
  return meta.steps_done;
}

UnitState ExportUnit(const JobConfig& job, const UnitParams& up, int index,
                     torch::optim::Optimizer& optimizer) {
  UnitState state;
  for (size_t k = up.offsets[index]; k < up.offsets[index + 1]; ++k) {
    TensorData first, second;
    ExportState(job, optimizer, up.all[k], first, second);
    state.params.push_back(ToData(up.all[k]));
    state.momentum.push_back(std::move(first));
    if (!second.shape.empty() || !second.values.empty()) {
      state.second_moment.push_back(std::move(second));
    }
  }
  return state;
}

Status SaveUnits(const JobConfig& job, int64_t steps_done, int begin, int end, const UnitParams& up,
                 torch::optim::Optimizer& optimizer) {
  for (int u = begin; u < end; ++u) {
    TESSERA_RETURN_IF_ERROR(
        WriteUnitState(job.save_dir, steps_done, u, ExportUnit(job, up, u - begin, optimizer)));
  }
  return Status::Ok();
}

CheckpointMeta MetaFor(const JobConfig& job, int64_t steps_done) {
  return {.steps_done = steps_done,
          .lr = job.lr,
          .momentum = job.momentum,
          .seed = job.seed,
          .num_units = NumUnits(job.model),
          .model = JobToJson(job).at("model")};
}

Result<std::unique_ptr<lr::Schedule>> MakeJobSchedule(const JobConfig& job, int64_t first_step) {
  const int64_t budget = job.schedule_steps > 0 ? job.schedule_steps : first_step + job.steps;
  return lr::MakeSchedule(job.lr_schedule, job.lr, std::max<int64_t>(budget, 1));
}

double PeakRssBytes() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

// Per-step state of one stage.
class StageStep {
 public:
  // `buckets` (may be null) is armed before the stage's last backward of the step.
  StageStep(const JobConfig& job, int rank, CutModel& model, const Dataset& data,
            Transport& transport, int64_t step, GradientBuckets* buckets)
      : job_(job),
        buckets_(buckets),
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
    received_sent_ns_ = -1;
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
  // The sender's steady clock (ns) when it queued the message the last Run consumed (an
  // activation or a gradient from a neighbouring stage); -1 when it consumed none.
  int64_t received_sent_ns() const { return received_sent_ns_; }

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
      TESSERA_ASSIGN_OR_RETURN(x, DecodeStamped(bytes, received_sent_ns_));
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
    std::string bytes = EncodeTensor(out, /*stamped=*/true);
    activation_bytes_ = static_cast<double>(bytes.size() - kStampBytes);
    Stamp(bytes);
    return transport_.Send(next_, Tag(step_, kActivation, i), std::move(bytes));
  }

  Status Backward(int i) {
    if (!outputs_[i].defined()) return InternalError(fmt::format("backward {} before forward", i));
    if (buckets_ != nullptr && ++backwards_ == micro_) buckets_->Arm();
    if (last_) {
      loss_ += outputs_[i].item<double>();
      outputs_[i].backward();
    } else {
      TESSERA_ASSIGN_OR_RETURN(std::string bytes,
                               transport_.Recv(next_, Tag(step_, kGradient, i), timeout()));
      TESSERA_ASSIGN_OR_RETURN(torch::Tensor g, DecodeStamped(bytes, received_sent_ns_));
      if (!g.sizes().equals(outputs_[i].sizes())) {
        return DataLossError(fmt::format("gradient of micro-batch {} has the wrong shape", i));
      }
      outputs_[i].backward(g);
    }
    if (stage_ > 0) {
      std::string bytes = EncodeTensor(inputs_[i].grad(), /*stamped=*/true);
      Stamp(bytes);
      TESSERA_RETURN_IF_ERROR(transport_.Send(prev_, Tag(step_, kGradient, i), std::move(bytes)));
    }
    inputs_[i] = torch::Tensor();
    outputs_[i] = torch::Tensor();
    return Status::Ok();
  }

  const JobConfig& job_;
  GradientBuckets* buckets_;
  int backwards_ = 0;
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
  int64_t received_sent_ns_ = -1;
};

}  // namespace

nlohmann::json ReportToJson(const WorkerReport& r) {
  nlohmann::json steps = nlohmann::json::array();
  for (const StepStats& s : r.steps) {
    steps.push_back({{"step", s.step},
                     {"loss", s.loss},
                     {"wall_s", s.wall_s},
                     {"cpu_s", s.cpu_s},
                     {"pipeline_s", s.pipeline_s},
                     {"busy_s", s.busy_s},
                     {"busy_cpu_s", s.busy_cpu_s},
                     {"allreduce_s", s.allreduce_s},
                     {"optimizer_s", s.optimizer_s},
                     {"lr", s.lr},
                     {"eval_loss", std::isnan(s.eval_loss) ? nlohmann::json(nullptr)
                                                           : nlohmann::json(s.eval_loss)},
                     {"pulled_ahead", s.pulled_ahead},
                     {"buckets_overlapped", s.buckets_overlapped}});
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
          {"peak_rss_bytes", r.peak_rss_bytes},
          {"parameter_bytes", r.parameter_bytes},
          {"stopped_at", r.stopped_at},
          {"first_step_order", r.first_step_order},
          {"message_delay_s", r.message_delay_s},
          {"message_delays", r.message_delays}};
}

Result<WorkerReport> ReportFromJson(const nlohmann::json& j) {
  try {
    WorkerReport r;
    r.rank = j.at("rank").get<int>();
    r.stage = j.at("stage").get<int>();
    r.replica = j.at("replica").get<int>();
    for (const auto& s : j.at("steps")) {
      StepStats x;
      x.step = s.at("step").get<int64_t>();
      x.loss = s.at("loss").get<double>();
      x.wall_s = s.at("wall_s").get<double>();
      x.cpu_s = s.value("cpu_s", 0.0);
      x.pipeline_s = s.at("pipeline_s").get<double>();
      x.busy_s = s.at("busy_s").get<double>();
      x.busy_cpu_s = s.value("busy_cpu_s", 0.0);
      x.allreduce_s = s.at("allreduce_s").get<double>();
      x.optimizer_s = s.value("optimizer_s", 0.0);
      x.lr = s.value("lr", 0.0);
      if (s.contains("eval_loss") && s.at("eval_loss").is_number()) {
        x.eval_loss = s.at("eval_loss").get<double>();
      }
      x.pulled_ahead = s.at("pulled_ahead").get<int>();
      x.buckets_overlapped = s.value("buckets_overlapped", 0);
      r.steps.push_back(x);
    }
    r.forward_s = j.at("forward_s").get<double>();
    r.recompute_s = j.at("recompute_s").get<double>();
    r.backward_s = j.at("backward_s").get<double>();
    r.activation_bytes = j.at("activation_bytes").get<double>();
    r.gradient_bytes = j.at("gradient_bytes").get<double>();
    r.bytes_sent = j.at("bytes_sent").get<uint64_t>();
    r.bytes_received = j.at("bytes_received").get<uint64_t>();
    r.first_step_order = j.at("first_step_order").get<std::string>();
    r.peak_rss_bytes = j.value("peak_rss_bytes", 0.0);
    r.parameter_bytes = j.value("parameter_bytes", 0.0);
    r.stopped_at = j.value("stopped_at", int64_t{-1});
    r.message_delay_s = j.value("message_delay_s", 0.0);
    r.message_delays = j.value("message_delays", int64_t{0});
    return r;
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError(fmt::format("bad worker report: {}", e.what()));
  }
}

namespace {

std::string EncodeDouble(double v) { return std::string(reinterpret_cast<const char*>(&v), 8); }
Result<double> DecodeDouble(const std::string& bytes) {
  if (bytes.size() != 8) return DataLossError("expected an 8-byte number");
  double v;
  std::memcpy(&v, bytes.data(), 8);
  return v;
}

// Sums `value` over the stages of this worker's replica through its pipeline neighbours:
// partial sums travel from stage 0 to the last stage, and the total back, so every stage ends
// with the same bits.
Result<double> SumOverStages(Transport& t, const JobConfig& job, int rank, int64_t step,
                             double value) {
  const int stage = StageOf(job, rank);
  const auto timeout = Transport::Duration(job.timeout_ms);
  double sum = value;
  if (stage > 0) {
    TESSERA_ASSIGN_OR_RETURN(std::string b, t.Recv(rank - 1, Tag(step, kNormUp, 0), timeout));
    TESSERA_ASSIGN_OR_RETURN(double v, DecodeDouble(b));
    sum = v + value;
  }
  if (stage + 1 < job.stages) {
    TESSERA_RETURN_IF_ERROR(t.Send(rank + 1, Tag(step, kNormUp, 0), EncodeDouble(sum)));
    TESSERA_ASSIGN_OR_RETURN(std::string b, t.Recv(rank + 1, Tag(step, kNormDown, 0), timeout));
    TESSERA_ASSIGN_OR_RETURN(sum, DecodeDouble(b));
  }
  if (stage > 0)
    TESSERA_RETURN_IF_ERROR(t.Send(rank - 1, Tag(step, kNormDown, 0), EncodeDouble(sum)));
  return sum;
}

// Mean loss over the held-out samples, through the pipeline of replica 0 without autograd and
// without dropout. Returns NaN on stages other than the last.
Result<double> Evaluate(const JobConfig& job, int rank, CutModel& model, const Dataset& data,
                        Transport& t, int64_t step) {
  const int stage = StageOf(job, rank);
  const bool last = stage == job.stages - 1;
  const int begin = job.boundaries[stage], end = job.boundaries[stage + 1];
  const int m = job.micro_batch;
  const int64_t total = data.eval_size();
  const auto timeout = Transport::Duration(job.timeout_ms);
  model.SetTraining(false);
  torch::NoGradGuard no_grad;
  double sum = 0;
  for (int i = 0; static_cast<int64_t>(i) * m < total; ++i) {
    Batch b = data.EvalRows(i * m, m);
    torch::Tensor x = b.input;
    if (stage > 0) {
      TESSERA_ASSIGN_OR_RETURN(std::string bytes, t.Recv(rank - 1, Tag(step, kEval, i), timeout));
      TESSERA_ASSIGN_OR_RETURN(x, DecodeTensor(bytes));
    }
    torch::Tensor out = model.ForwardRange(begin, end, x, {job.seed, step, i});
    if (last) {
      sum += model.Loss(out, b.target).item<double>() * b.input.size(0);
    } else {
      TESSERA_RETURN_IF_ERROR(t.Send(rank + 1, Tag(step, kEval, i), EncodeTensor(out)));
    }
  }
  model.SetTraining(true);
  return last ? sum / static_cast<double>(total) : std::nan("");
}

// Refreshes <run_dir>/heartbeat-<rank> (holding the step in progress) every 500 ms and whenever
// the step changes, so the launcher can tell a stopped or cut-off worker from a slow one.
class Heartbeat {
 public:
  Heartbeat(const std::string& run_dir, int rank) {
    if (run_dir.empty()) return;
    path_ = fmt::format("{}/heartbeat-{}", run_dir, rank);
    thread_ = std::thread([this] { Loop(); });
  }
  ~Heartbeat() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  void SetStep(int64_t step) { step_ = step; }

 private:
  void Loop() {
    int64_t written = -2;
    auto last = Clock::now() - std::chrono::seconds(1);
    while (!stop_) {
      const int64_t now_step = step_;
      if (now_step != written || Clock::now() - last > std::chrono::milliseconds(500)) {
        (void)WriteFileAtomically(path_, fmt::format("{}\n", now_step));
        written = now_step;
        last = Clock::now();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  std::string path_;
  std::atomic<int64_t> step_{-1};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The step boundary at which a preemption notice stops the job, or -1. The launcher writes
// <run_dir>/stop when a notice arrives; rank 0 turns it into <run_dir>/stop-at = s + 1 before it
// starts step s. No worker can have started step s + 1 by then (each needs rank 0's work of step
// s: the activations of stage 0 or its all-reduce), so every worker stops at the same boundary.
int64_t StopStep(const JobConfig& job, int rank, int64_t step) {
  if (job.run_dir.empty()) return -1;
  const std::string stop_at = job.run_dir + "/stop-at";
  if (rank == 0 && std::filesystem::exists(job.run_dir + "/stop") &&
      !std::filesystem::exists(stop_at)) {
    if (!WriteFileAtomically(stop_at, fmt::format("{}\n", step + 1)).ok()) return -1;
  }
  auto text = ReadFile(stop_at);
  if (!text.ok()) return -1;
  try {
    return std::stoll(*text);
  } catch (const std::exception&) {
    return -1;
  }
}

}  // namespace

Result<WorkerReport> RunWorker(const JobConfig& job, int rank) {
  TESSERA_RETURN_IF_ERROR(ValidateJob(job));
  if (rank < 0 || rank >= WorldSize(job)) {
    return InvalidArgumentError(fmt::format("rank {} outside [0, {})", rank, WorldSize(job)));
  }
  Heartbeat heartbeat(job.run_dir, rank);
  torch::set_num_threads(1);
  const int stage = StageOf(job, rank), replica = ReplicaOf(job, rank);
  const int begin = job.boundaries[stage], end = job.boundaries[stage + 1];
  const int M = MicroBatches(job);
  const bool last = stage == job.stages - 1;
  // Only this stage's units: parameters, gradients and optimizer state of the others never
  // exist in this process.
  TESSERA_ASSIGN_OR_RETURN(auto model, CutModel::Build(job.model, job.seed, begin, end));
  TESSERA_ASSIGN_OR_RETURN(auto data, Dataset::Create(job.model, job.seed));
  UnitParams up = CollectParams(*model, begin, end);
  torch::Tensor flat_grads = BindFlatGradients(up.all);
  TESSERA_ASSIGN_OR_RETURN(auto optimizer, MakeOptimizer(job, up.all));
  int64_t first_step = job.first_step;
  if (!job.resume_dir.empty()) {
    TESSERA_ASSIGN_OR_RETURN(first_step, LoadCheckpoint(job, begin, end, up, *optimizer));
  }
  TESSERA_ASSIGN_OR_RETURN(auto schedule, MakeJobSchedule(job, first_step));
  TESSERA_ASSIGN_OR_RETURN(std::vector<Task> tasks, StageTasks(job.schedule, job.stages, M, stage));
  TESSERA_ASSIGN_OR_RETURN(auto transport,
                           Transport::Connect(rank, job.endpoints, PeersOf(job, rank),
                                              Transport::Duration(job.timeout_ms)));
  const std::vector<int> group = ReplicaGroup(job, stage);
  // With gloo, the stage's replicas sum gradient buckets as the backward produces them.
  std::unique_ptr<GlooGroup> gloo;
  std::unique_ptr<GradientBuckets> buckets;
  if (job.replicas > 1 && job.collective == "gloo") {
    TESSERA_ASSIGN_OR_RETURN(TorchrunEnvironment env, ReadTorchrunEnvironment());
    const Endpoint store = env.has_store() ? Endpoint{env.master_addr, env.master_port} : job.store;
    if (store.port == 0) {
      return InvalidArgumentError(
          "the gloo all-reduce needs a store: MASTER_ADDR and MASTER_PORT, or the job's store");
    }
    TESSERA_ASSIGN_OR_RETURN(gloo, GlooGroup::Join({.store = store,
                                                    .serve_store = rank == 0 && !env.agent_store,
                                                    .prefix = fmt::format("stage-{}", stage),
                                                    .members = group,
                                                    .rank = rank,
                                                    .bind_host = job.endpoints[rank].host,
                                                    .timeout = Transport::Duration(job.timeout_ms)},
                                                   *transport));
    buckets = std::make_unique<GradientBuckets>(
        up.all, flat_grads, static_cast<int64_t>(job.bucket_kb) * 1024,
        [g = gloo.get()](std::span<float> bucket) { return g->Start(bucket); });
  }
  const bool opportunistic = job.opportunistic && job.schedule == ScheduleKind::kVaruna;
  const auto timeout = Transport::Duration(job.timeout_ms);

  WorkerReport report;
  report.rank = rank;
  report.stage = stage;
  report.replica = replica;
  report.gradient_bytes = static_cast<double>(flat_grads.numel() * sizeof(float));
  report.parameter_bytes = model->ParameterBytes();
  std::vector<double> task_s[3];  // durations per task kind, warm-up step excluded
  // Delivery delays (see below), warm-up step excluded. The send stamps are comparable with our
  // clock only where both processes share it: neighbours on this worker's host.
  std::vector<double> delays;
  bool clock_shared = true;
  for (int peer : {stage > 0 ? rank - 1 : -1, last ? -1 : rank + 1}) {
    if (peer >= 0 && job.endpoints[peer].host != job.endpoints[rank].host) clock_shared = false;
  }
  double activation_bytes = 0;
  int64_t done = first_step;
  auto checkpoint = [&](int64_t steps_done) -> Status {
    if (job.save_dir.empty() || replica != 0) return Status::Ok();
    TESSERA_RETURN_IF_ERROR(SaveUnits(job, steps_done, begin, end, up, *optimizer));
    if (rank == 0) TESSERA_RETURN_IF_ERROR(WriteMeta(job.save_dir, MetaFor(job, steps_done)));
    return Status::Ok();
  };
  for (int64_t step = first_step; step < first_step + job.steps; ++step) {
    heartbeat.SetStep(step);
    if (const int64_t stop = StopStep(job, rank, step); stop >= 0 && step >= stop) {
      report.stopped_at = step;  // a preemption notice: checkpoint here, lose nothing
      break;
    }
    const auto start = Clock::now();
    const double cpu_start = ProcessCpuSeconds();
    flat_grads.zero_();
    StageStep work(job, rank, *model, *data, *transport, step, buckets.get());
    TaskCursor cursor(tasks, opportunistic);
    StepStats stats{.step = step};
    const auto deadline = start + std::chrono::milliseconds(job.timeout_ms);
    std::vector<Task> order;
    bool waited = false;  // no task was ready since the last one ended
    while (!cursor.finished()) {
      const uint64_t seen = transport->arrivals();
      std::optional<Task> next = cursor.Next([&](const Task& t) { return work.Ready(t); });
      if (!next) {
        waited = true;
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
      // The computing thread's CPU time: a worker computes its tasks on one thread (one
      // intra-op thread; the CPU autograd engine runs a backward on the thread that calls it).
      const int64_t task_start_ns = SteadyNanos(Clock::now());
      const TaskTimer timer;
      TESSERA_RETURN_IF_ERROR(work.Run(*next).WithContext(
          fmt::format("rank {} step {} task {}", rank, step, FormatTasks({*next}))));
      const TaskTime spent = timer.Stop();
      const double d = spent.wall_s;
      stats.busy_s += d;
      stats.busy_cpu_s += spent.cpu_s;
      if (step > first_step || job.steps == 1) {
        task_s[static_cast<int>(next->kind)].push_back(d);
        // The task waited for the message it consumed: it arrived while this worker had
        // nothing to run, so from its send to this start is what delivering it took (the
        // simulator's SimConfig::message_delay_s). A message that was already there when the
        // worker got free says nothing about its delay and is not counted.
        if (waited && clock_shared && work.received_sent_ns() >= 0) {
          delays.push_back(1e-9 * static_cast<double>(task_start_ns - work.received_sent_ns()));
        }
      }
      waited = false;
      cursor.MarkDone(*next);
      if (step == first_step) order.push_back(*next);
    }
    if (step == first_step) report.first_step_order = FormatTasks(order);
    stats.pipeline_s = Seconds(start, Clock::now());
    stats.pulled_ahead = cursor.pulled_ahead();
    activation_bytes = std::max(activation_bytes, work.activation_bytes());

    // Gradient all-reduce over the replicas (none at D = 1), in buckets of the flat buffer:
    // with gloo most were started during the last backward and only the rest is waited for
    // here; with our ring (tcp) all run now.
    const auto ar_start = Clock::now();
    double global_loss = work.loss();
    if (job.replicas > 1 && gloo) {
      TESSERA_RETURN_IF_ERROR(buckets->Finish());
      stats.buckets_overlapped = buckets->started_in_backward();
      float loss = static_cast<float>(work.loss());
      if (last) TESSERA_RETURN_IF_ERROR(gloo->Start(std::span<float>(&loss, 1)));
      TESSERA_RETURN_IF_ERROR(
          gloo->Wait(timeout).WithContext(fmt::format("rank {} step {}", rank, step)));
      if (last) global_loss = loss;
    } else if (job.replicas > 1) {
      std::span<float> all(flat_grads.data_ptr<float>(), flat_grads.numel());
      const int per_bucket_tags = 2 * job.replicas;
      const int64_t bucket_floats = static_cast<int64_t>(job.bucket_kb) * 1024 / sizeof(float);
      for (int64_t b = 0, i = 0; b < static_cast<int64_t>(all.size()); b += bucket_floats, ++i) {
        const size_t n = std::min<size_t>(bucket_floats, all.size() - b);
        TESSERA_RETURN_IF_ERROR(RingAllreduce(*transport, group,
                                              Tag(step, kAllreduce, i * per_bucket_tags),
                                              all.subspan(b, n), timeout));
      }
      if (last) {  // every last-stage replica learns the global loss
        float loss = static_cast<float>(work.loss());
        TESSERA_RETURN_IF_ERROR(RingAllreduce(*transport, group, Tag(step, kLossSum, 0),
                                              std::span<float>(&loss, 1), timeout));
        global_loss = loss;
      }
    }
    stats.allreduce_s = Seconds(ar_start, Clock::now());

    // Clipping by the norm of the whole model's gradient, summed over the stages; then the
    // optimizer step at this step's scheduled learning rate.
    const auto opt_start = Clock::now();
    const double lr = schedule->LearningRate(step);
    if (job.clip_norm > 0) {
      const double local =
          flat_grads.numel() > 0 ? flat_grads.pow(2).sum(torch::kDouble).item<double>() : 0.0;
      TESSERA_ASSIGN_OR_RETURN(double total, SumOverStages(*transport, job, rank, step, local));
      const double coef = job.clip_norm / (std::sqrt(total) + 1e-6);  // torch's clip_grad_norm_
      if (coef < 1) flat_grads.mul_(coef);
    }
    SetLearningRate(*optimizer, lr);
    optimizer->step();
    stats.optimizer_s = Seconds(opt_start, Clock::now());
    stats.loss = work.loss();
    stats.lr = lr;
    stats.wall_s = Seconds(start, Clock::now());
    stats.cpu_s = ProcessCpuSeconds() - cpu_start;
    done = step + 1;
    if (job.eval_every > 0 && replica == 0 &&
        (done % job.eval_every == 0 || done == first_step + job.steps)) {
      TESSERA_ASSIGN_OR_RETURN(stats.eval_loss,
                               Evaluate(job, rank, *model, *data, *transport, step));
    }
    report.steps.push_back(stats);
    if (last && replica == 0) {
      fmt::print("step {}/{} loss {:.4f} lr {:.4g} ({:.3f} s){}\n", step + 1,
                 first_step + job.steps, global_loss, lr, stats.wall_s,
                 std::isnan(stats.eval_loss)
                     ? ""
                     : fmt::format(", held-out loss {:.4f}", stats.eval_loss));
      std::fflush(stdout);
    }
    // Periodic checkpoints (the final one follows the loop). A job stopped between them
    // resumes from the newest complete one and repeats the steps since.
    if (job.checkpoint_every > 0 && done % job.checkpoint_every == 0 &&
        done < first_step + job.steps) {
      TESSERA_RETURN_IF_ERROR(checkpoint(done));
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
  double delay_sum = 0;
  for (double x : delays) delay_sum += x;
  report.message_delays = static_cast<int64_t>(delays.size());
  report.message_delay_s = delays.empty() ? 0.0 : delay_sum / delays.size();
  report.activation_bytes = activation_bytes;
  // Also with steps = 0: a checkpoint of the initial weights.
  TESSERA_RETURN_IF_ERROR(checkpoint(done));
  TESSERA_RETURN_IF_ERROR(transport->Flush(timeout));
  report.bytes_sent = transport->bytes_sent();
  report.bytes_received = transport->bytes_received();
  report.peak_rss_bytes = PeakRssBytes();
  return report;
}

Result<ReferenceRun> TrainReference(const JobConfig& job, int accumulate_micro_batch) {
  TESSERA_RETURN_IF_ERROR(ValidateModelSpec(job.model));
  const int B = job.global_batch;
  const int m = accumulate_micro_batch == 0 ? B : accumulate_micro_batch;
  if (m < 1 || B % m != 0) {
    return InvalidArgumentError("the accumulation micro-batch must divide the global batch");
  }
  TESSERA_ASSIGN_OR_RETURN(auto model, CutModel::Build(job.model, job.seed));
  model->BindDenseGradients();
  TESSERA_ASSIGN_OR_RETURN(auto data, Dataset::Create(job.model, job.seed));
  const int units = model->num_units();
  UnitParams up = CollectParams(*model, 0, units);
  TESSERA_ASSIGN_OR_RETURN(auto optimizer, MakeOptimizer(job, up.all));
  int64_t first_step = job.first_step;
  if (!job.resume_dir.empty()) {
    TESSERA_ASSIGN_OR_RETURN(first_step, LoadCheckpoint(job, 0, units, up, *optimizer));
  }
  TESSERA_ASSIGN_OR_RETURN(auto schedule, MakeJobSchedule(job, first_step));
  ReferenceRun run;
  for (int64_t step = first_step; step < first_step + job.steps; ++step) {
    optimizer->zero_grad();
    double loss_sum = 0;
    for (int g = 0; g < B / m; ++g) {
      Batch b = data->Rows(step, B, g * m, m);
      torch::Tensor out = model->ForwardRange(0, units, b.input, {job.seed, step, g});
      torch::Tensor loss = model->Loss(out, b.target) * (static_cast<double>(m) / B);
      loss_sum += loss.item<double>();
      loss.backward();
    }
    if (job.clip_norm > 0) torch::nn::utils::clip_grad_norm_(up.all, job.clip_norm);
    SetLearningRate(*optimizer, schedule->LearningRate(step));
    optimizer->step();
    run.losses.push_back(loss_sum);
  }
  for (int u = 0; u < units; ++u) run.units.push_back(ExportUnit(job, up, u, *optimizer));
  return run;
}

}  // namespace tessera::pipeline
