// cluster-ddp-example: a data-parallel libtorch job over c10d/gloo, written against the
// interposition library (elastic_session.h): an MLP with dropout on a synthetic regression
// task, SGD with momentum, the batch of step s drawn from a generator seeded by (seed, s,
// rank). Run it with torchrun's environment (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT),
// alone or as a cluster command job. With --logical-ranks it runs the library's logical ranks
// (a process may hold several ranks; submit it with `cluster-ctl submit --logical-ranks`). At
// the end rank 0 writes "params <FNV-1a of every
// parameter's bytes>" to --out, and with --times every step's wall and CPU seconds
// (bench/cluster/interpose_overhead.py --job cc). --gate takes turns with another job in blocks
// of steps (bench/cluster/interleaved_overhead.py --job cc; ddp_step_bench.py's protocol).
#include <fcntl.h>
#include <fmt/format.h>
#include <time.h>
#include <torch/torch.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "cluster/interpose/cc/elastic_session.h"
#include "cluster/job/checkpoint.h"
#include "core/cli.h"
#include "core/file.h"

namespace {

// The bench's turn FIFOs (ddp_step_bench.py's Gate): before each block of timed steps the
// process writes a byte to <dir>/arrived-<rank> and waits for one on <dir>/go-<rank>. Opened
// in that order, as the controller expects.
class TurnGate {
 public:
  TurnGate(const std::string& dir, int rank)
      : arrived_(::open(fmt::format("{}/arrived-{}", dir, rank).c_str(), O_WRONLY)),
        go_(::open(fmt::format("{}/go-{}", dir, rank).c_str(), O_RDONLY)) {}
  ~TurnGate() {
    if (arrived_ >= 0) ::close(arrived_);
    if (go_ >= 0) ::close(go_);
  }
  tessera::Status WaitTurn() {
    char byte = 'a';
    if (arrived_ < 0 || go_ < 0 || ::write(arrived_, &byte, 1) != 1 || ::read(go_, &byte, 1) != 1 ||
        byte != 'g') {
      return tessera::UnavailableError("the bench's turn gate went away");
    }
    return tessera::Status::Ok();
  }

 private:
  int arrived_, go_;
};

}  // namespace

int main(int argc, char** argv) {
  using namespace tessera;
  cli::Program program("cluster-ddp-example",
                       "Data-parallel libtorch training over gloo with transparent preemption "
                       "(the cluster's C++ interposition library).");
  int64_t steps = 300, seed = 1, hidden = 64, batch = 16, block = 0, warmup = 30;
  std::string gate_dir;
  double step_sleep_ms = 0;
  std::string out, times_path;
  bool logical_ranks = false;
  auto& app = program.app();
  app.add_option("--steps", steps, "Training steps")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  app.add_option("--seed", seed, "Seed of data and initialisation")->capture_default_str();
  app.add_option("--hidden", hidden, "Hidden units")
      ->capture_default_str()
      ->check(CLI::Range(1, 65536));
  app.add_option("--batch", batch, "Samples per rank and step")
      ->capture_default_str()
      ->check(CLI::Range(1, 65536));
  app.add_option("--step-sleep-ms", step_sleep_ms,
                 "Sleep per rank and step (stands in for a bigger model's compute)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--logical-ranks", logical_ranks,
               "Run logical ranks (ElasticSession::StartWithLogicalRanks): gradients summed in "
               "rank order, bit-identical however many processes hold the ranks");
  app.add_option("--out", out, "Where rank 0 writes the parameters' fingerprint");
  app.add_option("--times", times_path,
                 "Where rank 0 writes each step's wall and CPU seconds (\"wall cpu\" lines; "
                 "the process's CPU, all threads)");
  app.add_option("--gate", gate_dir,
                 "Directory of the bench's turn FIFOs: timed steps in blocks of --block after "
                 "--warmup, each when the bench says (interleaved_overhead.py --job cc)");
  app.add_option("--block", block, "Steps per turn with --gate")->check(CLI::Range(1, 1000000));
  app.add_option("--warmup", warmup, "Steps before the first turn with --gate")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  return program.Run(argc, argv, [&]() -> Status {
    torch::set_num_threads(1);
    TESSERA_ASSIGN_OR_RETURN(auto env, cluster::interpose::JobEnvironment::FromEnvironment());
    torch::manual_seed(seed);
    torch::nn::Sequential model(torch::nn::Linear(32, hidden), torch::nn::Tanh(),
                                torch::nn::Dropout(0.1), torch::nn::Linear(hidden, 1));
    torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
    const torch::Tensor teacher =
        torch::randn({32, 1}, at::detail::createCPUGenerator(static_cast<uint64_t>(seed) + 7));
    // Dropout masks differ per rank: each rank's CPU generator has a seed of its own.
    auto rank_seed = [&](int rank) { return static_cast<uint64_t>(seed * 1000 + 100 + rank); };
    std::unique_ptr<cluster::interpose::ElasticSession> session;
    if (logical_ranks) {
      TESSERA_ASSIGN_OR_RETURN(session, cluster::interpose::ElasticSession::StartWithLogicalRanks(
                                            *model, optimizer, rank_seed));
    } else {
      torch::manual_seed(rank_seed(env.rank));
      // Connects the group; under the scheduler, restores model, optimizer, RNG and step.
      TESSERA_ASSIGN_OR_RETURN(session,
                               cluster::interpose::ElasticSession::Start(*model, optimizer));
    }
    auto cpu_seconds = [] {
      timespec t{};
      ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
      return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
    };
    std::unique_ptr<TurnGate> gate;
    if (!gate_dir.empty()) {
      if (block <= 0) return InvalidArgumentError("--gate needs --block");
      gate = std::make_unique<TurnGate>(gate_dir, session->rank());
    }
    std::string times;
    auto wall_start = std::chrono::steady_clock::now();
    double cpu_start = cpu_seconds();
    const int64_t first = session->start_step();
    for (int64_t step = first; step < steps; ++step) {
      if (gate != nullptr && step - first >= warmup && (step - first - warmup) % block == 0) {
        TESSERA_RETURN_IF_ERROR(gate->WaitTurn());  // outside the timed steps
        wall_start = std::chrono::steady_clock::now();
        cpu_start = cpu_seconds();
      }
      optimizer.zero_grad();
      double rank0_loss = 0;
      session->ForEachLogicalRank([&](int rank) {
        auto gen = at::detail::createCPUGenerator(
            static_cast<uint64_t>((seed * 1000003 + step) * session->logical_world_size() + rank));
        torch::Tensor x = torch::randn({batch, 32}, gen);
        torch::Tensor y = torch::tanh(x.matmul(teacher));
        torch::Tensor loss = torch::mse_loss(model->forward(x), y);
        loss.backward();
        if (rank == 0 && (step + 1) % 50 == 0) rank0_loss = loss.item<double>();
        if (step_sleep_ms > 0) {
          std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(step_sleep_ms));
        }
      });
      session->AverageGradients();
      optimizer.step();
      if (session->rank() == 0 && (step + 1) % 50 == 0) {
        fmt::print("step {} loss {:.6f}\n", step + 1, rank0_loss);
        std::fflush(stdout);
      }
      session->StepDone();
      if (!times_path.empty()) {
        const auto wall_now = std::chrono::steady_clock::now();
        const double cpu_now = cpu_seconds();
        times += fmt::format("{:.9f} {:.9f}\n",
                             std::chrono::duration<double>(wall_now - wall_start).count(),
                             cpu_now - cpu_start);
        wall_start = wall_now;
        cpu_start = cpu_now;
      }
    }
    if (gate != nullptr) TESSERA_RETURN_IF_ERROR(gate->WaitTurn());  // released: all blocks done
    if (session->rank() == 0 && !times_path.empty()) {
      TESSERA_RETURN_IF_ERROR(WriteFileAtomically(times_path, times));
    }
    if (session->rank() == 0 && !out.empty()) {
      std::string bytes;
      for (const auto& p : model->parameters()) {
        torch::Tensor c = p.detach().contiguous();
        bytes.append(static_cast<const char*>(c.data_ptr()), c.numel() * c.element_size());
      }
      TESSERA_RETURN_IF_ERROR(WriteFileAtomically(
          out, fmt::format("params {:016x} step {}\n", cluster::Fingerprint(bytes), steps)));
    }
    std::fflush(stdout);
    std::_Exit(0);  // skip gloo's and libtorch's teardown (see cluster-train-job)
  });
}
