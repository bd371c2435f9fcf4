#include "pipeline/job.h"

#include <algorithm>

#include "fmt/format.h"
#include "pipeline/partition.h"

namespace tessera::pipeline {

int NumUnits(const ModelSpec& spec) {
  if (spec.kind == "gpt") return spec.layers + 2;
  if (spec.kind == "cnn") return spec.layers + 1;
  return spec.units;
}

std::vector<double> EstimateUnitFlops(const ModelSpec& spec) {
  std::vector<double> out;
  if (spec.kind == "gpt") {
    const double d = spec.width, t = spec.seq_len, v = spec.vocab;
    out.push_back(2 * t * d);  // embedding lookup + position add
    for (int i = 0; i < spec.layers; ++i) {
      // QKV + output projections (4 d^2), MLP (8 d^2), scores and mixing (2 t d), per token.
      out.push_back(2 * t * (12 * d * d + 2 * t * d));
    }
    out.push_back(2 * t * d * v);  // LM head
  } else if (spec.kind != "cnn") {
    out.assign(std::max(spec.units, 0), 1.0);  // unknown: partition by profile instead
  } else {
    double side = spec.image, in = 1;
    for (int i = 0; i < spec.layers; ++i) {
      out.push_back(2 * 9 * in * spec.width * side * side);
      in = spec.width;
      side /= 2;
    }
    out.push_back(2 * in * side * side * spec.classes);
  }
  return out;
}

Status ValidateModelSpec(const ModelSpec& s) {
  if (s.eval_samples < 0) return InvalidArgumentError("--eval-samples must be >= 0");
  if (s.kind == "torchscript" && s.script_path.empty()) {
    return InvalidArgumentError("--model torchscript needs --script");
  }
  if (s.kind != "gpt" && s.kind != "cnn") {
    // A torchscript or registered model: its units were counted by the launcher
    // (pipeline/model_registry.h), and it trains on a data file.
    if (s.units < 1) {
      return InvalidArgumentError(fmt::format(
          "model '{}' is not resolved (unknown, or its units were not counted)", s.kind));
    }
    if (s.data_path.empty()) {
      return InvalidArgumentError(fmt::format("model '{}' needs --data", s.kind));
    }
    return Status::Ok();
  }
  if (s.layers < 1 || s.layers > 64) return InvalidArgumentError("model layers must be in [1, 64]");
  if (s.width < 1 || s.width > 4096) return InvalidArgumentError("model width out of range");
  if (s.dropout < 0 || s.dropout >= 1) return InvalidArgumentError("dropout must be in [0, 1)");
  if (s.dataset_size < 1) return InvalidArgumentError("dataset size must be >= 1");
  if (s.kind == "gpt") {
    if (s.heads < 1 || s.width % s.heads != 0) {
      return InvalidArgumentError("gpt width must be a multiple of heads");
    }
    if (s.vocab < 2 || s.seq_len < 1 || s.seq_len > 4096) {
      return InvalidArgumentError("gpt vocab or sequence length out of range");
    }
  } else {
    if (s.classes < 2) return InvalidArgumentError("cnn needs >= 2 classes");
    if (s.image < 1 || (s.image >> s.layers) < 1) {
      return InvalidArgumentError(
          fmt::format("cnn image side {} is too small for {} pooling layers", s.image, s.layers));
    }
  }
  return Status::Ok();
}

int WorldSize(const JobConfig& job) { return job.stages * job.replicas; }

int MicroBatches(const JobConfig& job) { return job.global_batch / job.replicas / job.micro_batch; }

std::vector<int> PeersOf(const JobConfig& job, int rank) {
  const int s = StageOf(job, rank), r = ReplicaOf(job, rank);
  std::vector<int> peers;
  if (s > 0) peers.push_back(RankOf(job, s - 1, r));
  if (s + 1 < job.stages) peers.push_back(RankOf(job, s + 1, r));
  for (int other = 0; other < job.replicas; ++other) {
    if (other != r) peers.push_back(RankOf(job, s, other));
  }
  return peers;
}

std::vector<int> ReplicaGroup(const JobConfig& job, int stage) {
  std::vector<int> group;
  for (int r = 0; r < job.replicas; ++r) group.push_back(RankOf(job, stage, r));
  return group;
}

Status ValidateJob(const JobConfig& job) {
  TESSERA_RETURN_IF_ERROR(ValidateModelSpec(job.model));
  if (job.stages < 1) return InvalidArgumentError("--stages must be >= 1");
  if (job.replicas < 1) return InvalidArgumentError("--replicas must be >= 1");
  if (job.micro_batch < 1) return InvalidArgumentError("--micro-batch must be >= 1");
  if (job.global_batch < 1) return InvalidArgumentError("--global-batch must be >= 1");
  if (job.global_batch % job.replicas != 0) {
    return InvalidArgumentError(fmt::format("--global-batch {} is not divisible by --replicas {}",
                                            job.global_batch, job.replicas));
  }
  if ((job.global_batch / job.replicas) % job.micro_batch != 0) {
    return InvalidArgumentError(
        fmt::format("the per-replica batch {} is not divisible by --micro-batch {}",
                    job.global_batch / job.replicas, job.micro_batch));
  }
  if (job.steps < 0 || job.first_step < 0) return InvalidArgumentError("--steps must be >= 0");
  if (!(job.lr > 0) || job.momentum < 0 || job.momentum >= 1) {
    return InvalidArgumentError("--lr must be > 0 and --momentum in [0, 1)");
  }
  if (job.optimizer != "sgd" && job.optimizer != "adam" && job.optimizer != "adamw") {
    return InvalidArgumentError("--optimizer must be sgd, adam or adamw");
  }
  if (!(job.weight_decay >= 0) || !(job.clip_norm >= 0)) {
    return InvalidArgumentError("--weight-decay and --clip-norm must be >= 0");
  }
  if (job.schedule_steps < 0 || job.eval_every < 0) {
    return InvalidArgumentError("--lr-budget and --eval-every must be >= 0");
  }
  if (job.eval_every > 0 && job.model.eval_samples < 1) {
    return InvalidArgumentError("--eval-every needs --eval-samples");
  }
  if (job.stages > NumUnits(job.model)) {
    return InvalidArgumentError(fmt::format("--stages {} exceeds the model's {} cut units",
                                            job.stages, NumUnits(job.model)));
  }
  if (static_cast<int>(job.boundaries.size()) != job.stages + 1) {
    return InvalidArgumentError("partition must have stages + 1 boundaries");
  }
  TESSERA_RETURN_IF_ERROR(ValidatePartition(job.boundaries, NumUnits(job.model)));
  if (static_cast<int>(job.endpoints.size()) != WorldSize(job)) {
    return InvalidArgumentError(
        fmt::format("{} endpoints for {} workers", job.endpoints.size(), WorldSize(job)));
  }
  if (job.timeout_ms < 1) return InvalidArgumentError("timeout must be >= 1 ms");
  if (job.checkpoint_every < 0) return InvalidArgumentError("--checkpoint-every must be >= 0");
  if (job.collective != "gloo" && job.collective != "tcp") {
    return InvalidArgumentError("--collective must be gloo or tcp");
  }
  if (job.bucket_kb < 1) return InvalidArgumentError("--bucket-kb must be >= 1");
  return Status::Ok();
}

nlohmann::json ModelSpecToJson(const ModelSpec& m) {
  return {{"kind", m.kind},
          {"layers", m.layers},
          {"width", m.width},
          {"heads", m.heads},
          {"vocab", m.vocab},
          {"seq_len", m.seq_len},
          {"image", m.image},
          {"classes", m.classes},
          {"dropout", m.dropout},
          {"text_path", m.text_path},
          {"dataset_size", m.dataset_size},
          {"script_path", m.script_path},
          {"data_path", m.data_path},
          {"eval_samples", m.eval_samples},
          {"units", m.units}};
}

Result<ModelSpec> ModelSpecFromJson(const nlohmann::json& m) {
  ModelSpec spec;
  try {
    spec.kind = m.at("kind").get<std::string>();
    spec.layers = m.at("layers").get<int>();
    spec.width = m.at("width").get<int>();
    spec.heads = m.at("heads").get<int>();
    spec.vocab = m.at("vocab").get<int>();
    spec.seq_len = m.at("seq_len").get<int>();
    spec.image = m.at("image").get<int>();
    spec.classes = m.at("classes").get<int>();
    spec.dropout = m.at("dropout").get<double>();
    spec.text_path = m.at("text_path").get<std::string>();
    spec.dataset_size = m.at("dataset_size").get<int>();
    spec.script_path = m.value("script_path", "");
    spec.data_path = m.value("data_path", "");
    spec.eval_samples = m.value("eval_samples", 0);
    spec.units = m.value("units", 0);
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError(fmt::format("bad model description: {}", e.what()));
  }
  return spec;
}

nlohmann::json JobToJson(const JobConfig& job) {
  nlohmann::json model = ModelSpecToJson(job.model);
  nlohmann::json endpoints = nlohmann::json::array();
  for (const Endpoint& e : job.endpoints) endpoints.push_back(fmt::format("{}:{}", e.host, e.port));
  return {{"model", model},
          {"schedule", std::string(ScheduleName(job.schedule))},
          {"opportunistic", job.opportunistic},
          {"stages", job.stages},
          {"replicas", job.replicas},
          {"micro_batch", job.micro_batch},
          {"global_batch", job.global_batch},
          {"steps", job.steps},
          {"first_step", job.first_step},
          {"lr", job.lr},
          {"momentum", job.momentum},
          {"optimizer", job.optimizer},
          {"weight_decay", job.weight_decay},
          {"clip_norm", job.clip_norm},
          {"lr_schedule", job.lr_schedule},
          {"schedule_steps", job.schedule_steps},
          {"eval_every", job.eval_every},
          {"run_dir", job.run_dir},
          {"seed", job.seed},
          {"boundaries", job.boundaries},
          {"endpoints", endpoints},
          {"save_dir", job.save_dir},
          {"resume_dir", job.resume_dir},
          {"checkpoint_every", job.checkpoint_every},
          {"timeout_ms", job.timeout_ms},
          {"collective", job.collective},
          {"store", fmt::format("{}:{}", job.store.host, job.store.port)},
          {"bucket_kb", job.bucket_kb}};
}

Result<JobConfig> JobFromJson(const nlohmann::json& j) {
  JobConfig job;
  try {
    TESSERA_ASSIGN_OR_RETURN(job.model, ModelSpecFromJson(j.at("model")));
    TESSERA_ASSIGN_OR_RETURN(job.schedule, ParseScheduleKind(j.at("schedule").get<std::string>()));
    job.opportunistic = j.at("opportunistic").get<bool>();
    job.stages = j.at("stages").get<int>();
    job.replicas = j.at("replicas").get<int>();
    job.micro_batch = j.at("micro_batch").get<int>();
    job.global_batch = j.at("global_batch").get<int>();
    job.steps = j.at("steps").get<int>();
    job.first_step = j.at("first_step").get<int>();
    job.lr = j.at("lr").get<double>();
    job.momentum = j.at("momentum").get<double>();
    job.optimizer = j.value("optimizer", "sgd");
    job.weight_decay = j.value("weight_decay", 0.0);
    job.clip_norm = j.value("clip_norm", 0.0);
    job.lr_schedule = j.value("lr_schedule", "constant");  // older descriptions: constant
    job.schedule_steps = j.value("schedule_steps", 0);
    job.eval_every = j.value("eval_every", 0);
    job.run_dir = j.value("run_dir", "");
    job.seed = j.at("seed").get<uint64_t>();
    job.boundaries = j.at("boundaries").get<std::vector<int>>();
    for (const auto& e : j.at("endpoints")) {
      TESSERA_ASSIGN_OR_RETURN(Endpoint ep, ParseEndpoint(e.get<std::string>()));
      job.endpoints.push_back(ep);
    }
    job.save_dir = j.at("save_dir").get<std::string>();
    job.resume_dir = j.at("resume_dir").get<std::string>();
    job.checkpoint_every = j.value("checkpoint_every", 0);  // absent in older descriptions
    job.timeout_ms = j.at("timeout_ms").get<int>();
    job.collective = j.value("collective", "tcp");  // older descriptions: our ring
    if (const std::string store = j.value("store", ":0"); store != ":0") {
      TESSERA_ASSIGN_OR_RETURN(job.store, ParseEndpoint(store));
    }
    job.bucket_kb = j.value("bucket_kb", 16384);
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError(fmt::format("bad job description: {}", e.what()));
  }
  TESSERA_RETURN_IF_ERROR(ValidateJob(job));
  return job;
}

}  // namespace tessera::pipeline
