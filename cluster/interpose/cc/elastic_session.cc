#define USE_C10D_GLOO 1  // ProcessGroupGloo.hpp declares nothing without it
#include "cluster/interpose/cc/elastic_session.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "cluster/interpose/cc/meta_exchange.h"
#include "cluster/job/control.h"
#include "cluster/job/rank_dealing.h"
#include "core/file.h"

namespace tessera::cluster::interpose {

namespace {

namespace fs = std::filesystem;

Result<int> IntVariable(const char* name, int fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  try {
    size_t used = 0;
    int parsed = std::stoi(value, &used);
    if (used == std::string(value).size()) return parsed;
  } catch (const std::exception&) {
  }
  return InvalidArgumentError(fmt::format("{}={} is not an integer", name, value));
}

std::string Variable(const char* name, std::string fallback = "") {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

}  // namespace

Result<JobEnvironment> JobEnvironment::FromEnvironment() {
  JobEnvironment env;
  TESSERA_ASSIGN_OR_RETURN(env.rank, IntVariable("RANK", 0));
  TESSERA_ASSIGN_OR_RETURN(env.world_size, IntVariable("WORLD_SIZE", 1));
  TESSERA_ASSIGN_OR_RETURN(env.master_port, IntVariable("MASTER_PORT", 29500));
  TESSERA_ASSIGN_OR_RETURN(env.workers, IntVariable("TESSERA_JOB_WORKERS", env.world_size));
  env.master_addr = Variable("MASTER_ADDR", "127.0.0.1");
  env.run_dir = Variable("TESSERA_RUN_DIR");
  env.run = Variable("TESSERA_RUN", "?");
  env.checkpoint_dir = Variable("TESSERA_CHECKPOINT_DIR");
  if (env.checkpoint_dir.empty() && !Variable("TESSERA_JOB_DIR").empty()) {
    env.checkpoint_dir = fs::path(Variable("TESSERA_JOB_DIR")) / "ckpt";
  }
  if (env.world_size < 1 || env.rank < 0 || env.rank >= env.world_size) {
    return InvalidArgumentError(
        fmt::format("RANK {} outside WORLD_SIZE {}", env.rank, env.world_size));
  }
  if (!env.run_dir.empty() && env.checkpoint_dir.empty()) {
    return InvalidArgumentError("TESSERA_RUN_DIR is set but no checkpoint directory");
  }
  env.logical = !Variable(kEnvLogicalWorldSize).empty();
  TESSERA_ASSIGN_OR_RETURN(env.logical_world_size,
                           IntVariable(kEnvLogicalWorldSize, env.world_size));
  if (env.logical_world_size < env.world_size) {
    return InvalidArgumentError(fmt::format("{}={} is below WORLD_SIZE {}", kEnvLogicalWorldSize,
                                            env.logical_world_size, env.world_size));
  }
  // This process's block: slot RANK of WORLD_SIZE slots (rank_dealing.h).
  env.first_logical_rank = FirstRankOfSlot(env.rank, env.world_size, env.logical_world_size);
  env.logical_rank_count = FirstRankOfSlot(env.rank + 1, env.world_size, env.logical_world_size) -
                           env.first_logical_rank;
  const std::string block = fmt::format("{}-{}", env.first_logical_rank,
                                        env.first_logical_rank + env.logical_rank_count - 1);
  const std::string told = Variable(kEnvLogicalRanks);
  if (!told.empty() && told != block) {
    return InvalidArgumentError(fmt::format("{}={}, but process {} of {} holds ranks {} of {}",
                                            kEnvLogicalRanks, told, env.rank, env.world_size, block,
                                            env.logical_world_size));
  }
  return env;
}

Result<std::unique_ptr<ElasticSession>> ElasticSession::Start(torch::nn::Module& model,
                                                              torch::optim::Optimizer& optimizer) {
  TESSERA_ASSIGN_OR_RETURN(JobEnvironment env, JobEnvironment::FromEnvironment());
  if (env.logical) {
    return FailedPreconditionError(fmt::format(
        "started with logical ranks ({} ranks on {} processes) but the job does not run them "
        "(ElasticSession::StartWithLogicalRanks); submit it without --logical-ranks",
        env.logical_world_size, env.world_size));
  }
  return Connect(std::move(env), model, optimizer);
}

Result<std::unique_ptr<ElasticSession>> ElasticSession::StartWithLogicalRanks(
    torch::nn::Module& model, torch::optim::Optimizer& optimizer,
    const std::function<uint64_t(int logical_rank)>& seed_of_rank) {
  TESSERA_ASSIGN_OR_RETURN(JobEnvironment env, JobEnvironment::FromEnvironment());
  // Seeded before Connect, which may restore the generators from a checkpoint.
  std::vector<torch::Tensor> rng;
  for (int i = 0; i < env.logical_rank_count; ++i) {
    rng.push_back(
        at::detail::createCPUGenerator(seed_of_rank(env.first_logical_rank + i)).get_state());
  }
  int64_t numel = 0;
  for (const torch::Tensor& p : model.parameters()) numel += p.numel();
  const int rows = (env.logical_world_size + env.world_size - 1) / env.world_size;
  return Connect(std::move(env), model, optimizer, [&](ElasticSession& session) {
    session.logical_mode_ = true;
    session.rank_rng_ = std::move(rng);
    session.rank_grads_ = torch::zeros({rows, numel});
  });
}

Result<std::unique_ptr<ElasticSession>> ElasticSession::Connect(
    JobEnvironment env, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
    const std::function<void(ElasticSession&)>& configure) {
  std::unique_ptr<ElasticSession> session(new ElasticSession(env, model, optimizer));
  if (configure) configure(*session);
  try {
    c10d::TCPStoreOptions store_options;
    store_options.port = static_cast<uint16_t>(env.master_port);
    store_options.isServer = env.rank == 0;
    store_options.numWorkers = env.world_size;
    auto store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, store_options);
    auto options = c10d::ProcessGroupGloo::Options::create();
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(env.master_addr));
    session->group_ =
        c10::make_intrusive<c10d::ProcessGroupGloo>(store, env.rank, env.world_size, options);
    if (!env.run_dir.empty() && env.world_size > 1) {
      TESSERA_ASSIGN_OR_RETURN(std::string host, LocalAddressTowards(env.master_addr));
      TESSERA_ASSIGN_OR_RETURN(
          MetaExchange meta,
          MetaExchange::Connect(
              env.rank, env.world_size, host,
              [&](const std::string& key, const std::string& value) {
                store->set(key, std::vector<uint8_t>(value.begin(), value.end()));
              },
              [&](const std::string& key) {
                std::vector<uint8_t> value = store->get(key);  // waits until it is set
                return std::string(value.begin(), value.end());
              }));
      session->meta_.emplace(std::move(meta));
    }
  } catch (const std::exception& e) {
    return UnavailableError(
        fmt::format("gloo process group at {}:{}: {}", env.master_addr, env.master_port, e.what()));
  }
  if (!env.run_dir.empty()) {
    std::error_code ec;
    fs::create_directories(env.checkpoint_dir, ec);
    TESSERA_RETURN_IF_ERROR(WriteFileAtomically(
        env.run_dir / fmt::format("rank-{}.layer", env.rank), fmt::format("{}\n", ::getpid())));
    if (session->logical_mode_) {
      session->Log(fmt::format(
          "installed: process {} of {}, logical ranks {} of world size {}, run {} on {} slot(s)",
          env.rank, env.world_size, session->LogicalRanksText(), env.logical_world_size, env.run,
          env.workers));
    } else {
      session->Log(fmt::format("installed: rank {} of world size {}, run {} on {} slot(s)",
                               env.rank, env.world_size, env.run, env.workers));
    }
    TESSERA_RETURN_IF_ERROR(session->Restore());
  }
  return session;
}

ElasticSession::~ElasticSession() = default;

void ElasticSession::Log(const std::string& message) const {
  std::fprintf(stderr, "tessera-interpose: rank %d: %s\n", env_.rank, message.c_str());
  std::fflush(stderr);
}

Status ElasticSession::Restore() {
  const fs::path latest = env_.checkpoint_dir / "LATEST";
  if (!fs::exists(latest)) return Status::Ok();
  TESSERA_ASSIGN_OR_RETURN(std::string name, ReadFile(latest));
  while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
  const fs::path dir = env_.checkpoint_dir / name;
  try {
    torch::serialize::InputArchive state;
    state.load_from((dir / "state.pt").string());
    torch::Tensor step, world;
    state.read("step", step);
    state.read("world_size", world);
    if (world.item<int64_t>() != env_.logical_world_size) {
      return FailedPreconditionError(fmt::format("checkpoint {} is of world size {}, not {}",
                                                 dir.string(), world.item<int64_t>(),
                                                 env_.logical_world_size));
    }
    torch::serialize::InputArchive model, optimizer;
    state.read("model", model);
    state.read("optimizer", optimizer);
    model_.load(model);
    optimizer_.load(optimizer);
    auto read_rng = [&](int rank) {
      torch::serialize::InputArchive mine;
      mine.load_from((dir / fmt::format("rank-{}.pt", rank)).string());
      torch::Tensor rng;
      mine.read("rng", rng);
      return rng;
    };
    if (logical_mode_) {
      for (int i = 0; i < env_.logical_rank_count; ++i) {
        rank_rng_[i] = read_rng(env_.first_logical_rank + i);
      }
    } else {
      at::Generator generator = at::detail::getDefaultCPUGenerator();  // a handle: shares it
      std::lock_guard<std::mutex> lock(generator.mutex());
      generator.set_state(read_rng(env_.rank));
    }
    start_step_ = steps_done_ = step.item<int64_t>();
  } catch (const std::exception& e) {
    return DataLossError(fmt::format("restoring {}: {}", dir.string(), e.what()));
  }
  Log(fmt::format("resumed at step {} (world size {} on {} slot(s)){}", start_step_,
                  env_.logical_world_size, env_.workers,
                  logical_mode_ ? "; logical ranks " + LogicalRanksText() : ""));
  ReportProgress(true);
  return Status::Ok();
}

std::string ElasticSession::LogicalRanksText() const {
  const int first = env_.first_logical_rank, last = first + env_.logical_rank_count - 1;
  return first == last ? std::to_string(first) : fmt::format("{}-{}", first, last);
}

void ElasticSession::ForEachLogicalRank(const std::function<void(int logical_rank)>& fn) {
  if (!logical_mode_) return fn(env_.rank);
  const std::vector<torch::Tensor> params = model_.parameters();
  at::Generator generator = at::detail::getDefaultCPUGenerator();  // a handle: shares it
  for (int i = 0; i < env_.logical_rank_count; ++i) {
    // Every rank's backward starts from no gradient, as in a process of its own.
    for (const torch::Tensor& p : params) p.mutable_grad() = torch::Tensor();
    {
      std::lock_guard<std::mutex> lock(generator.mutex());
      generator.set_state(rank_rng_[i]);
    }
    fn(env_.first_logical_rank + i);
    {
      std::lock_guard<std::mutex> lock(generator.mutex());
      rank_rng_[i] = generator.get_state();
    }
    torch::NoGradGuard no_grad;
    int64_t offset = 0;
    torch::Tensor row = rank_grads_[i];
    for (const torch::Tensor& p : params) {
      torch::Tensor slot = row.narrow(0, offset, p.numel());
      if (p.grad().defined()) {
        slot.copy_(p.grad().reshape({-1}));
      } else {
        slot.zero_();  // backward did not reach it: a zero gradient, as DDP reduces it
      }
      offset += p.numel();
    }
  }
}

void ElasticSession::AverageLogicalRankGradients() {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> gathered;  // per process, [rows, numel]
  if (env_.world_size > 1) {
    std::vector<std::vector<torch::Tensor>> outputs(1);
    for (int p = 0; p < env_.world_size; ++p) outputs[0].push_back(torch::empty_like(rank_grads_));
    std::vector<torch::Tensor> inputs = {rank_grads_};
    group_->allgather(outputs, inputs)->wait();
    gathered = std::move(outputs[0]);
  } else {
    gathered = {rank_grads_};
  }
  // Ranks 0, 1, ..., W - 1 in order, whichever process computed them: the same additions on
  // the same operands however the ranks are spliced.
  torch::Tensor sum;
  for (int process = 0; process < env_.world_size; ++process) {
    const int count = FirstRankOfSlot(process + 1, env_.world_size, env_.logical_world_size) -
                      FirstRankOfSlot(process, env_.world_size, env_.logical_world_size);
    for (int i = 0; i < count; ++i) {
      if (!sum.defined()) {
        sum = gathered[process][i].clone();
      } else {
        sum.add_(gathered[process][i]);
      }
    }
  }
  sum.div_(env_.logical_world_size);
  int64_t offset = 0;
  for (const torch::Tensor& p : model_.parameters()) {
    p.mutable_grad() = sum.narrow(0, offset, p.numel()).view_as(p).clone();
    offset += p.numel();
  }
}

void ElasticSession::AverageGradients() {
  if (logical_mode_) return AverageLogicalRankGradients();
  std::vector<torch::Tensor> grads;
  for (const torch::Tensor& p : model_.parameters()) {
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  if (env_.world_size > 1 && !grads.empty()) {
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> flat = {torch::cat([&] {
      std::vector<torch::Tensor> views;
      for (auto& g : grads) views.push_back(g.reshape({-1}));
      return views;
    }())};
    group_->allreduce(flat)->wait();
    flat[0].div_(env_.world_size);
    int64_t offset = 0;
    for (auto& g : grads) {
      g.copy_(flat[0].narrow(0, offset, g.numel()).view_as(g));
      offset += g.numel();
    }
  }
}

void ElasticSession::StepDone() {
  ++steps_done_;
  if (env_.run_dir.empty()) return;
  ReportProgress(false);
  if (!order_seen_ && fs::exists(env_.run_dir / "order")) {
    order_seen_ = true;
    order_seen_step_ = steps_done_;
    Log(fmt::format("stop order seen after step {}", steps_done_));
  }
  // The meta-allreduce: this step's need out, every rank's need of the previous step in (it
  // has arrived: this step's gradient allreduce needed every rank past its previous StepDone).
  bool stop = order_seen_;
  if (meta_) {
    Result<int> total = meta_->Exchange(order_seen_);
    if (!total.ok()) {
      Log(total.status().ToString());  // a rank died: the gang fails and restarts
      std::fflush(stdout);
      std::_Exit(1);
    }
    stop = *total > 0;
  }
  if (stop) CheckpointAndExit();
}

void ElasticSession::ReportProgress(bool force) {
  if (env_.rank != 0) return;
  auto now = std::chrono::steady_clock::now();
  // Once a second: the Python layer's file rewritten every 100 ms cost 3.4 % of a 4.5 ms DDP
  // step's CPU on the loaded test machine (docs/cluster.md; the same create-and-rename here).
  if (!force && now - last_progress_ < std::chrono::seconds(1)) return;
  last_progress_ = now;
  // Atomic but not durable (no fsync, unlike WriteFileAtomically): it is for people and the
  // SLA, a lost update is harmless, and an fsync on the training thread of rank 0 cost every
  // rank its wait on a loaded disk.
  const fs::path path = env_.run_dir / "progress";
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << fmt::format("step={} total=0 world={} workers={} loss=0\n", steps_done_,
                       env_.logical_world_size, env_.workers);
    if (!out) return;
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
}

void ElasticSession::CheckpointAndExit() {
  const std::string name = fmt::format("step-{}", steps_done_);
  const fs::path dir = env_.checkpoint_dir / name;
  std::error_code ec;
  fs::create_directories(dir, ec);
  try {
    if (env_.rank == 0) {
      torch::serialize::OutputArchive state, model, optimizer;
      model_.save(model);
      optimizer_.save(optimizer);
      state.write("model", model);
      state.write("optimizer", optimizer);
      state.write("step", torch::tensor(steps_done_));
      state.write("world_size", torch::tensor(static_cast<int64_t>(env_.logical_world_size)));
      state.save_to((dir / "state.pt.tmp").string());
      fs::rename(dir / "state.pt.tmp", dir / "state.pt");
    }
    auto write_rank = [&](int rank, const torch::Tensor& rng) {
      torch::serialize::OutputArchive mine;
      mine.write("rng", rng);
      mine.write("step", torch::tensor(steps_done_));
      const fs::path rank_file = dir / fmt::format("rank-{}.pt", rank);
      mine.save_to(rank_file.string() + ".tmp");
      fs::rename(rank_file.string() + ".tmp", rank_file);
    };
    if (logical_mode_) {
      for (int i = 0; i < env_.logical_rank_count; ++i) {
        write_rank(env_.first_logical_rank + i, rank_rng_[i]);
      }
    } else {
      write_rank(env_.rank, at::detail::getDefaultCPUGenerator().get_state());
    }
    group_->barrier()->wait();  // every rank's file is written
    if (env_.rank == 0) {
      if (Status s = WriteFileAtomically(env_.checkpoint_dir / "LATEST", name + "\n"); !s.ok()) {
        throw std::runtime_error(s.ToString());
      }
    }
    group_->barrier()->wait();  // LATEST points at it: the exit reports are true
    if (Status s = WriteFileAtomically(env_.run_dir / fmt::format("rank-{}.exit", env_.rank),
                                       fmt::format("checkpointed step={}\n", steps_done_));
        !s.ok()) {
      throw std::runtime_error(s.ToString());
    }
  } catch (const std::exception& e) {
    Log(fmt::format("checkpoint at step {} failed: {}", steps_done_, e.what()));
    std::fflush(stdout);
    std::_Exit(1);
  }
  Log(fmt::format("barrier at step {} (order seen after step {}); checkpoint {}", steps_done_,
                  order_seen_ ? std::to_string(order_seen_step_) : "None", dir.string()));
  std::fflush(stdout);
  std::_Exit(0);  // gloo's threads and libtorch's static destructors need not run
}

}  // namespace tessera::cluster::interpose
