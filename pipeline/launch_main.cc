// pipeline-launch: trains a model with pipeline + data parallelism. Starts stages x replicas
// pipeline-worker processes (here, or on the hosts of --hosts), shows their progress, and
// reports samples/s, the measured bubble and the simulator's prediction for the same run.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/cli.h"
#include "core/file.h"
#include "fmt/format.h"
#include "pipeline/autoconfig.h"
#include "pipeline/cpu_pin.h"
#include "pipeline/cpu_speed.h"
#include "pipeline/gloo_collective.h"
#include "pipeline/launcher.h"
#include "pipeline/link_probe.h"
#include "pipeline/morph.h"
#include "pipeline/partition.h"
#include "pipeline/profile.h"

namespace {

namespace pl = tessera::pipeline;

std::string DefaultWorker(const char* argv0) {
  std::error_code ec;
  auto self = std::filesystem::canonical("/proc/self/exe", ec);
  if (ec) return "pipeline-worker";
  return (self.parent_path() / "pipeline-worker").string();
}

// "1,2,4" -> {1, 2, 4}; empty: the powers of two up to 16 that divide the global batch.
tessera::Result<std::vector<int>> MicroBatchSizes(const std::string& list, int global_batch) {
  std::vector<int> sizes;
  if (list.empty()) {
    for (int m = 1; m <= 16; m *= 2) {
      if (global_batch % m == 0) sizes.push_back(m);
    }
    return sizes;
  }
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    try {
      size_t used = 0;
      const int m = std::stoi(item, &used);
      if (used != item.size() || m < 1) throw std::invalid_argument(item);
      sizes.push_back(m);
    } catch (const std::exception&) {
      return tessera::cli::UsageError("--auto-micro-batches must be a list like 2,4,8");
    }
  }
  return sizes;
}

void PrintProfile(const pl::ProfiledMicroBatch& p) {
  fmt::print("profile (ms per micro-batch of {}):", p.micro_batch);
  for (size_t u = 0; u < p.profile.forward_s.size(); ++u) {
    fmt::print(" u{} F {:.2f} B {:.2f} out {:.0f} KB;", u, 1e3 * p.profile.forward_s[u],
               1e3 * p.profile.backward_s[u], p.profile.output_bytes[u] / 1024);
  }
  fmt::print("\n");
  if (p.profile.contended.size() > 1) {
    fmt::print("contention (ms per micro-batch of {}, forward + backward of every unit, mean):",
               p.micro_batch);
    double alone = 0;
    for (const pl::ContendedTimes& c : p.profile.contended) {
      double sum = 0;
      for (size_t u = 0; u < c.forward_s.size(); ++u) sum += c.forward_s[u] + c.backward_s[u];
      if (c.workers == 1) alone = sum;
      fmt::print(" {} worker(s) {:.2f} (x{:.2f});", c.workers, 1e3 * sum,
                 alone > 0 ? sum / alone : 0.0);
    }
    fmt::print("\n");
  }
}

// This process's resident set now (/proc/self/statm): a worker's base before its model, since
// both load the same libraries.
double ResidentBytes() {
  auto text = tessera::ReadFile("/proc/self/statm");
  if (!text.ok()) return 0;
  std::istringstream in(*text);
  double size = 0, resident = 0;
  in >> size >> resident;
  return resident * static_cast<double>(sysconf(_SC_PAGESIZE));
}

std::atomic<int> g_signal_notices{0};
void OnPreemptionSignal(int) { g_signal_notices.fetch_add(1); }
// SIGTERM or SIGINT (a scheduler's preemption, Ctrl-C): once workers are being launched, they
// stop at the next step boundary with a checkpoint (when --save-dir is set), their last step
// lines printed, and the launcher reports and writes --json before it exits. Before that
// (profiling, configuring) there is nothing to save, and a second signal means now: either way
// the signal's default action, as before.
std::atomic<bool> g_terminate{false};
std::atomic<bool> g_launching{false};
void OnTerminateSignal(int signo) {
  if (!g_launching.load() || g_terminate.exchange(true)) {
    signal(signo, SIG_DFL);
    raise(signo);
  }
}
constexpr int kExitTerminated = 143;  // 128 + SIGTERM, as a shell reports a job ended by it
// Rounds of the calibration probe (one reference kernel per processor each, about 3 ms): 8
// rounds, 16 samples on 2 processors, about 50 ms before the workers start.
constexpr int kCalibrationRounds = 8;

// The simulated step of the (stages, replicas, micro_batch) layout when `request` is ranked
// again (its cut re-balanced as the ranking would); 0 if that layout is not among the ranked.
tessera::Result<double> SimulatedStepOf(const pl::AutoConfigRequest& request, int stages,
                                        int replicas, int micro_batch) {
  TESSERA_ASSIGN_OR_RETURN(pl::AutoConfigResult ranked, pl::AutoConfigure(request));
  for (const pl::Candidate& c : ranked.ranked) {
    if (c.stages == stages && c.replicas == replicas && c.micro_batch == micro_batch) {
      return c.step_s;
    }
  }
  return 0.0;
}

}  // namespace

int main(int argc, char** argv) {
  tessera::cli::Program program(
      "pipeline-launch",
      "Trains a model split into pipeline stages (Varuna, GPipe or 1F1B schedule) with "
      "data-parallel replicas, one worker process per (stage, replica).");
  auto& app = program.app();
  pl::JobConfig job;
  std::string schedule = "varuna", partition = "balanced", hosts_path, run_dir, json_out;
  std::string framing = "tcp";
  std::string worker = DefaultWorker(argv[0]);
  std::vector<pl::Host> hosts;
  pl::HostLinks host_links;  // measured per host pair (--hosts --auto without --link-mbps)
  int base_port = 0, timeout_s = 600;
  double link_mbps = 0, link_latency_ms = 0, link_burst_kb = 0;
  bool no_opportunistic = false, auto_config = false, elastic = false;
  int workers = 0, cores = -1, checkpoint_every = 1;
  double memory_limit_mb = 0;
  std::string micro_batch_list, workers_file, profile_out, notice_file;
  int heartbeat_s = 0;
  int max_restarts = 20;
  double predicted_step_s = 0, predicted_memory_mb = 0;  // by --auto, before running
  double predicted_without_comm_s = 0;  // the same without the communication threads' CPU
  bool reprofile = false;  // --reprofile-before-run: a second prediction, seconds later
  double profile_seconds = pl::kDefaultProfileSeconds;  // --profile-seconds
  double probe_message_delay_s = 0;      // the loopback probe's one-way delay of a pipeline message
  double predicted_without_delay_s = 0;  // the chosen layout simulated without it
  int profile_sharing = 1;  // the copies the --auto profile ran (workers sharing this machine)
  double predicted_cpu_share = 0;  // the profile's share of a core (Candidate::cpu_share)
  double worker_base_mb = -1;
  bool speed_probe = false;  // time the reference kernel (pipeline/cpu_speed.h)
  bool pin_workers = false;  // worker r and the profile's copy r on one processor (cpu_pin.h)
  std::vector<int> pin_cpus;
  int speed_probe_interval_ms = 500;
  std::vector<pl::SpeedSample> profile_speed, run_speed;
  app.add_option("--model", job.model.kind,
                 "gpt, cnn, torchscript (with --script) or a model registered in this binary "
                 "(pipeline/model_registry.h)")
      ->capture_default_str();
  app.add_option("--script", job.model.script_path,
                 "torchscript: a torch.jit.save'd module whose top-level children are the units");
  app.add_option("--data", job.model.data_path,
                 "Training data: *.bin = uint16 tokens (nanoGPT), else a torch.save'd tuple "
                 "(inputs, targets)");
  app.add_option("--eval-samples", job.model.eval_samples,
                 "Hold out the data's last N samples for evaluation")
      ->capture_default_str();
  app.add_option("--eval-every", job.eval_every,
                 "Evaluate on the held-out samples every N steps and at the end (0: never)")
      ->capture_default_str();
  app.add_option("--optimizer", job.optimizer, "sgd, adam or adamw")->capture_default_str();
  app.add_option("--weight-decay", job.weight_decay, "adam: L2; adamw: decoupled")
      ->capture_default_str();
  app.add_option("--clip-norm", job.clip_norm, "Clip the global gradient norm (0: off)")
      ->capture_default_str();
  app.add_option("--lr-schedule", job.lr_schedule,
                 "lr/ schedule spec: knee, cosine:warmup=0.05, constant, ... (docs/lr.md)")
      ->capture_default_str();
  app.add_option("--lr-budget", job.schedule_steps,
                 "Steps the schedule spans (0: the steps of this run, from its first step)")
      ->capture_default_str();
  app.add_option("--max-restarts", max_restarts,
                 "With --elastic: give up after this many restarts (morphs of any cause)")
      ->capture_default_str();
  app.add_option("--heartbeat-timeout", heartbeat_s,
                 "A worker silent this many seconds is lost (0: off; the run dir must be shared)")
      ->capture_default_str();
  app.add_option("--notice-file", notice_file,
                 "Elastic: a preemption notice, like a cloud spot notice: when this file appears "
                 "it is removed, every worker checkpoints at the next step boundary and the job "
                 "continues with one worker fewer (SIGUSR1 does the same)");
  app.add_option("--layers", job.model.layers, "Transformer or conv blocks")->capture_default_str();
  app.add_option("--width", job.model.width, "Model width (gpt) or channels (cnn)")
      ->capture_default_str();
  app.add_option("--heads", job.model.heads, "Attention heads (gpt)")->capture_default_str();
  app.add_option("--vocab", job.model.vocab, "Vocabulary (gpt; 96 with --text)")
      ->capture_default_str();
  app.add_option("--seq-len", job.model.seq_len, "Sequence length (gpt)")->capture_default_str();
  app.add_option("--image", job.model.image, "Image side (cnn)")->capture_default_str();
  app.add_option("--classes", job.model.classes, "Classes (cnn, and models of your own)")
      ->capture_default_str();
  app.add_option("--dropout", job.model.dropout, "Dropout rate")->capture_default_str();
  app.add_option("--text", job.model.text_path, "Train the gpt on this text file");
  app.add_option("--dataset-size", job.model.dataset_size, "Synthetic samples")
      ->capture_default_str();
  app.add_option("--schedule", schedule, "varuna, gpipe or 1f1b")->capture_default_str();
  app.add_flag("--no-opportunistic", no_opportunistic, "Disable Varuna's forward pull-ahead");
  app.add_option("--stages", job.stages, "Pipeline stages (P)")->capture_default_str();
  app.add_option("--replicas", job.replicas, "Data-parallel replicas (D)")->capture_default_str();
  app.add_option("--micro-batch", job.micro_batch, "Samples per micro-batch")
      ->capture_default_str();
  app.add_option("--global-batch", job.global_batch, "Samples per step, all replicas")
      ->capture_default_str();
  app.add_option("--steps", job.steps, "Steps to train")->capture_default_str();
  app.add_option("--lr", job.lr, "Peak learning rate (of --lr-schedule)")->capture_default_str();
  app.add_option("--momentum", job.momentum, "SGD momentum")->capture_default_str();
  app.add_option("--seed", job.seed, "Seed of weights, data and dropout")->capture_default_str();
  app.add_option("--partition", partition,
                 "balanced (by estimated FLOPs), profiled (by a short profiling run of every "
                 "unit here) or uniform (Varuna)")
      ->capture_default_str();
  std::vector<int> cuts;
  app.add_option("--cuts", cuts,
                 "Stage boundaries as unit indices, e.g. 0,8,14 (overrides --partition; for a "
                 "cut chosen by hand, such as one that balances memory)")
      ->delimiter(',');
  app.add_option("--hosts", hosts_path, "Hosts file: 'address [command prefix]' per line");
  app.add_option("--base-port", base_port,
                 "Rank r listens on base-port + r, the gloo store on base-port + workers "
                 "(0: free ports)");
  app.add_option("--collective", job.collective,
                 "Gradient all-reduce: gloo (c10d ProcessGroupGloo, buckets overlap the "
                 "backward) or tcp (our ring over the transport, after the backward)")
      ->capture_default_str();
  app.add_option("--bucket-kb", job.bucket_kb, "Gradient all-reduce bucket size in KiB")
      ->capture_default_str();
  app.add_option("--run-dir", run_dir, "Job description and worker reports (default: temp)");
  app.add_option("--save-dir", job.save_dir, "Write a cut-keyed checkpoint here at the end");
  app.add_option("--resume-dir", job.resume_dir, "Resume from the newest checkpoint here");
  app.add_option("--timeout", timeout_s, "Seconds before the job is stopped")
      ->capture_default_str();
  app.add_option("--worker", worker, "pipeline-worker binary")->capture_default_str();
  app.add_option("--link-mbps", link_mbps, "Link bandwidth for the simulator (0: unlimited)");
  app.add_option("--link-latency-ms", link_latency_ms, "Link latency for the simulator");
  app.add_option("--link-burst-kb", link_burst_kb, "Link token-bucket burst for the simulator");
  app.add_option("--link-framing", framing,
                 "What the link's rate limit meters: tcp (Ethernet frames of our TCP stream, as "
                 "tc does) or payload")
      ->capture_default_str();
  app.add_option("--json", json_out, "Write the summary as JSON here");
  app.add_flag("--auto", auto_config,
               "Choose --stages, --replicas and --micro-batch for --workers by profiling the "
               "model here and simulating every candidate (Varuna's auto-config)");
  app.add_option("--workers", workers, "Workers available (with --auto or --elastic)");
  std::string auto_pick;
  app.add_option("--auto-pick", auto_pick,
                 "With --auto: rank the candidates as usual, but train this one, P,D,m (it must "
                 "be among them); its simulated step is the prediction printed against the "
                 "measured one (what the simulator says of a configuration of your choice)");
  app.add_option("--auto-micro-batches", micro_batch_list,
                 "Micro-batch sizes to profile and consider, e.g. 2,4,8 (default: powers of two "
                 "up to 16 dividing the global batch)");
  app.add_option("--memory-limit-mb", memory_limit_mb,
                 "Auto-config: estimated memory a worker may hold (0: no limit)");
  app.add_option("--worker-base-mb", worker_base_mb,
                 "Auto-config: a worker's memory before its model (libtorch, data, buffers); "
                 "default: this process's resident set after loading libtorch")
      ->capture_default_str();
  app.add_option("--cores", cores,
                 "Auto-config: processors the workers share (0: one each; default: this "
                 "machine's when every worker is local, else 0)");
  app.add_option("--profile-out", profile_out, "Auto-config: write the profile here (JSON)");
  app.add_flag("--speed-probe", speed_probe,
               "Time a fixed reference kernel on every processor while --auto profiles and "
               "again while the workers run, and report the prediction error normalized by the "
               "change of the cores' speed next to the raw one (pipeline/cpu_speed.h)");
  app.add_flag("--pin-workers", pin_workers,
               "Local workers: run worker r on processor r (round-robin over this process's "
               "allowed ones) and, with --auto, time the profile's copy r on the same one, so "
               "the profile measures the processors the workers use (pipeline/cpu_pin.h)");
  app.add_flag("--reprofile-before-run", reprofile,
               "With --auto: profile the chosen micro-batch size again just before the workers "
               "start (the same copies, pinned with --pin-workers) and print the chosen "
               "configuration's step simulated from it: a second prediction made before "
               "running, seconds closer to the run than the ranking's");
  app.add_option("--profile-seconds", profile_seconds,
                 "With --auto or --partition profiled: timed seconds of every profile, at least "
                 "(alone and under contention, per micro-batch size; at most 500 micro-batches)")
      ->capture_default_str();
  app.add_option("--speed-probe-interval-ms", speed_probe_interval_ms,
                 "With --speed-probe: milliseconds between rounds of samples")
      ->capture_default_str();
  app.add_flag("--elastic", elastic,
               "Keep training while workers come and go: restart from the newest checkpoint "
               "with a new auto-config when a worker dies or --workers-file changes");
  app.add_option("--workers-file", workers_file,
                 "Elastic: a file holding the number of workers available now");
  app.add_option("--checkpoint-every", checkpoint_every, "Elastic: checkpoint every N steps")
      ->capture_default_str();
  return program.Run(argc, argv, [&]() -> tessera::Status {
    // Bad flags are usage errors (exit 2), reported before any worker starts.
    auto usage = [](const tessera::Status& s) { return tessera::cli::UsageError(s.message()); };
    signal(SIGTERM, OnTerminateSignal);
    signal(SIGINT, OnTerminateSignal);
    auto kind = pl::ParseScheduleKind(schedule);
    if (!kind.ok()) return usage(kind.status());
    job.schedule = *kind;
    job.opportunistic = !no_opportunistic;
    bool model_in_worker = false;  // registered only in --worker: that binary profiles it
    if (auto s = pl::ResolveModel(job.model); !s.ok()) {
      if (s.code() != tessera::StatusCode::kNotFound) return usage(s);
      model_in_worker = true;
      // Not built in: perhaps registered in the --worker binary (pipeline/worker_cli.h).
      auto units = pl::CountUnitsWithWorker(worker, job.model);
      if (!units.ok()) return usage(units.status());
      job.model.units = *units;
    }
    if (auto s = pl::ValidateModelSpec(job.model); !s.ok()) return usage(s);
    // Varuna's profiler measures every cut point on the target machine; ours runs here (or,
    // for a model registered only in --worker, in that binary), before any worker starts.
    auto profile = [&](const std::vector<int>& sizes, int sharing) {
      return model_in_worker ? pl::ProfileWithWorker(worker, job.model, sizes, job.seed,
                                                     job.optimizer, sharing, profile_seconds)
                             : pl::ProfileMicroBatches(job.model, sizes, job.seed, job.optimizer,
                                                       sharing, pin_cpus, profile_seconds);
    };
    if (pin_workers) {
      if (!hosts_path.empty() || elastic) {
        return tessera::cli::UsageError("--pin-workers is for local workers, without --elastic");
      }
      if (model_in_worker) {
        return tessera::cli::UsageError(
            "--pin-workers: the model must be built into pipeline-launch");
      }
      TESSERA_ASSIGN_OR_RETURN(pin_cpus, pl::AllowedCpus());
    }
    if (heartbeat_s < 0) return tessera::cli::UsageError("--heartbeat-timeout must be >= 0");
    if (!(profile_seconds >= 0 && profile_seconds <= 600)) {
      return tessera::cli::UsageError("--profile-seconds must be in [0, 600]");
    }
    if (max_restarts < 0) return tessera::cli::UsageError("--max-restarts must be >= 0");
    const int units = pl::NumUnits(job.model);
    if (timeout_s < 1) return tessera::cli::UsageError("--timeout must be >= 1");
    if (framing != "tcp" && framing != "payload") {
      return tessera::cli::UsageError("--link-framing must be tcp or payload");
    }
    pl::LinkModel link{link_mbps * 1e6 / 8, link_latency_ms / 1e3, link_burst_kb * 1024};
    if (framing == "tcp") link = pl::WithTcpFraming(link);
    if (!hosts_path.empty()) {
      TESSERA_ASSIGN_OR_RETURN(std::string text, tessera::ReadFile(hosts_path));
      TESSERA_ASSIGN_OR_RETURN(hosts, pl::ParseHosts(text));
    }
    if (run_dir.empty()) {
      run_dir =
          (std::filesystem::temp_directory_path() / fmt::format("pipeline-run-{}", ::getpid()))
              .string();
    }
    job.timeout_ms = timeout_s * 1000;
    pl::AutoConfigRequest request;
    if (elastic) {  // checked before the profiling below
      if (speed_probe) {
        return tessera::cli::UsageError("--speed-probe is not supported with --elastic");
      }
      if (job.save_dir.empty()) return tessera::cli::UsageError("--elastic needs --save-dir");
      if (!job.resume_dir.empty()) {
        return tessera::cli::UsageError(
            "--elastic resumes from the newest checkpoint in --save-dir; drop --resume-dir");
      }
      if (checkpoint_every < 1) return tessera::cli::UsageError("--checkpoint-every must be >= 1");
    }
    if (auto_config || elastic) {
      const double base_rss = ResidentBytes();  // before profiling builds the whole model
      if (workers < 1 && workers_file.empty()) {
        return tessera::cli::UsageError("--auto and --elastic need --workers (or --workers-file)");
      }
      if (memory_limit_mb < 0) return tessera::cli::UsageError("--memory-limit-mb must be >= 0");
      TESSERA_ASSIGN_OR_RETURN(std::vector<int> sizes,
                               MicroBatchSizes(micro_batch_list, job.global_batch));
      // Workers sharing this machine slow each other (and foreign load slows them all): time
      // the units with as many concurrent copies as there may be workers, right now.
      int sharing = 1;
      if (hosts.empty() && cores != 0) {  // --cores 0: every worker has a processor of its own
        sharing = workers;
        if (!workers_file.empty()) {
          if (auto n = pl::ReadWorkerCount(workers_file); n.ok()) sharing = std::max(sharing, *n);
        }
        sharing = std::max(sharing, 1);
      }
      profile_sharing = sharing;
      pl::SpeedSampler profile_sampler(speed_probe_interval_ms);
      if (speed_probe) profile_sampler.Start();
      auto profiled = profile(sizes, sharing);
      profile_speed = profile_sampler.Stop();
      TESSERA_RETURN_IF_ERROR(profiled.status());
      request.profiles = std::move(*profiled);
      for (const auto& p : request.profiles) PrintProfile(p);
      const pl::SpeedSummary profile_kernel = pl::SummarizeSpeed(profile_speed);
      if (!profile_speed.empty()) {
        fmt::print("{}\n", pl::FormatSpeedSummary("while profiling", profile_kernel));
      }
      if (!profile_out.empty()) {
        nlohmann::json out = pl::ProfilesToJson(request.profiles);
        if (!profile_speed.empty()) {
          // Recorded with every micro-batch size's profile (the reader ignores the key).
          for (auto& entry : out) entry["reference_kernel_cpu_s"] = profile_kernel.median_cpu_s;
        }
        TESSERA_RETURN_IF_ERROR(tessera::WriteFileAtomically(profile_out, out.dump(1) + "\n"));
      }
      std::vector<pl::Host> distinct;
      pl::HostSlots(hosts, &distinct);
      if (link_mbps == 0 && distinct.size() >= 2) {
        // Workers on other hosts: measure the links the simulator is to model, every ordered
        // pair of hosts on its own (a limiter on one host's device, a slower path to one of
        // them), instead of assuming one. --link-mbps overrides.
        TESSERA_ASSIGN_OR_RETURN(std::vector<int> probe_port, pl::FreeLocalPorts(1));
        const int port = base_port > 0 ? std::max(1024, base_port - 1) : probe_port[0];
        TESSERA_ASSIGN_OR_RETURN(
            host_links,
            pl::ProbeHostLinks(
                worker, hosts, port, std::chrono::seconds(30),
                [](const pl::Host& from, const pl::Host& to, const pl::LinkMeasurement& m) {
                  fmt::print(
                      "link {} -> {} (measured): {:.2f} Mbit/s on the wire, latency {:.3f} ms, "
                      "burst {:.1f} KB (round trip {:.3f} ms; {:.0f} KB in {:.4f} s, {:.0f} KB "
                      "in {:.4f} s)\n",
                      from.address, to.address, m.link.bandwidth_bytes_per_s * 8 / 1e6,
                      1e3 * m.link.latency_s, m.link.burst_bytes / 1024, 1e3 * m.rtt_s,
                      m.small_bytes / 1024, m.small_s, m.large_bytes / 1024, m.large_s);
                  std::fflush(stdout);
                }));
        // Fitted in wire bytes, so with TCP framing whatever --link-framing says. `link` (the
        // first pair's) stands for the links only where one figure is printed.
        link = host_links.links[0][1];
        request.host_links = host_links;
      }
      request.link = link;
      if (link.bandwidth_bytes_per_s == 0 && hosts.empty()) {
        // Unlimited loopback links would make the all-reduce free in the simulation: measure
        // our ring on this machine instead, with the whole model's gradient (Varuna's
        // profiler measures all-reduce times for its auto-config too).
        double bytes = 0;
        for (double b : request.profiles[0].profile.param_bytes) bytes += b;
        // The engine the workers will use: gloo (the default) or our ring. The same probe
        // measures what the communication costs the processors the workers share: the
        // all-reduce's CPU, and our transport's for a message of the model's largest cut.
        const pl::AllreduceTimer timer =
            job.collective == "gloo" ? pl::AllreduceTimer(pl::TimeGlooAllreduce) : nullptr;
        double message = 0;  // the largest cut's activation (the last unit's goes nowhere)
        const auto& outputs = request.profiles.back().profile.output_bytes;
        for (size_t u = 0; u + 1 < outputs.size(); ++u) message = std::max(message, outputs[u]);
        TESSERA_ASSIGN_OR_RETURN(
            pl::LoopbackMeasurement probe,
            pl::MeasureLoopback(std::max(bytes, 64.0), std::min(message, 64.0 * 1024 * 1024), 2, 5,
                                timer));
        request.allreduce_link = probe.allreduce_link;
        request.comm_cpu = probe.cpu;
        // Workers on this host: every activation and gradient takes the transport's threads'
        // wake-ups from its sender's task to its receiver's (SimConfig::message_delay_s).
        request.message_delay_s = probe.message_delay_s;
        probe_message_delay_s = probe.message_delay_s;
        fmt::print(
            "all-reduce on loopback ({}, measured, 2 threads, {:.0f} KB): latency {:.4f} ms, "
            "{:.0f} Mbit/s; CPU per call {:.3f} ms + {:.3f} ms per MB; messages of {:.0f} KB: "
            "{:.3f} ms CPU per MB (both ends), delivered in {:.3f} ms (one way)\n",
            job.collective, bytes / 1024, 1e3 * request.allreduce_link->latency_s,
            request.allreduce_link->bandwidth_bytes_per_s * 8 / 1e6,
            1e3 * probe.cpu.allreduce_call_s, 1e9 * probe.cpu.allreduce_byte_s, message / 1024,
            1e9 * probe.cpu.p2p_byte_s, 1e3 * probe.message_delay_s);
      }
      request.memory_limit_bytes = memory_limit_mb * 1e6;
      request.memory.base_bytes = worker_base_mb >= 0 ? worker_base_mb * 1e6 : base_rss;
      request.memory.state_copies = job.optimizer == "sgd" ? 1 : 2;
      request.cores = cores >= 0      ? cores
                      : hosts.empty() ? static_cast<int>(std::thread::hardware_concurrency())
                                      : 0;
      request.global_batch = job.global_batch;
      request.bucket_bytes = job.collective == "gloo" ? job.bucket_kb * 1024.0 : 0;
      request.schedule = job.schedule;
      request.opportunistic = job.opportunistic;
    }
    if (elastic) {
      pl::ElasticOptions options;
      options.launch.job = job;
      options.launch.worker_binary = worker;
      options.launch.run_dir = run_dir;
      options.launch.hosts = hosts;
      options.launch.base_port = base_port;
      options.launch.timeout = std::chrono::seconds(timeout_s);
      options.launch.heartbeat_timeout = std::chrono::seconds(heartbeat_s);
      options.max_restarts = max_restarts;
      options.autoconfig = request;
      signal(SIGUSR1, OnPreemptionSignal);
      options.terminate = [] { return g_terminate.load(); };
      options.take_notices = [notice_file]() {
        int n = g_signal_notices.exchange(0);
        std::error_code ec;
        if (!notice_file.empty() && std::filesystem::remove(notice_file, ec)) ++n;
        return n;
      };
      options.workers = workers;
      options.workers_file = workers_file;
      options.checkpoint_every = checkpoint_every;
      options.progress = [](std::string_view line) {
        fmt::print("{}\n", line);
        std::fflush(stdout);
      };
      g_launching = true;
      auto result = pl::RunElastic(options);
      if (!result.ok() && result.status().code() == tessera::StatusCode::kInvalidArgument) {
        return tessera::cli::UsageError(result.status().message());
      }
      TESSERA_RETURN_IF_ERROR(result.status());
      for (const pl::Segment& seg : result->segments) {
        fmt::print("segment: {} workers, P={} D={} m={}, steps {}..{}, {}\n", seg.workers,
                   seg.config.stages, seg.config.replicas, seg.config.micro_batch, seg.first_step,
                   seg.ended == "finished" ? job.steps : seg.checkpoint, seg.ended);
      }
      double final_loss = 0;  // of the last segment that reported losses
      for (const pl::Segment& seg : result->segments) {
        if (!seg.losses.empty()) final_loss = seg.losses.back();
      }
      fmt::print(
          "result: {:.1f} samples/s in the last segment, final loss {:.4f}, {} morph(s), {} "
          "step(s) lost\n",
          result->summary.samples_per_s, final_loss,
          std::max<int>(0, static_cast<int>(result->segments.size()) - 1), result->lost_steps);
      if (!json_out.empty()) {
        TESSERA_RETURN_IF_ERROR(tessera::WriteFileAtomically(
            json_out, pl::ElasticResultToJson(*result).dump(2) + "\n"));
      }
      if (result->terminated) {
        std::fflush(stdout);
        std::exit(kExitTerminated);
      }
      return tessera::Status::Ok();
    }
    if (auto_config) {
      request.workers = workers;
      TESSERA_ASSIGN_OR_RETURN(pl::AutoConfigResult ranked, pl::AutoConfigure(request));
      fmt::print("auto-config for {} workers ({} cores shared), best first:\n{}", workers,
                 request.cores, pl::FormatCandidates(ranked, 10));
      TESSERA_ASSIGN_OR_RETURN(pl::Candidate best, pl::Best(ranked, request.memory_limit_bytes));
      if (!auto_pick.empty()) {
        int p = 0, d = 0, m = 0;
        char extra = 0;
        if (std::sscanf(auto_pick.c_str(), "%d,%d,%d%c", &p, &d, &m, &extra) != 3) {
          return tessera::cli::UsageError("--auto-pick must be P,D,m, e.g. 1,2,4");
        }
        bool found = false;
        for (const pl::Candidate& c : ranked.ranked) {
          if (c.stages == p && c.replicas == d && c.micro_batch == m) {
            best = c;
            found = true;
          }
        }
        if (!found) {
          return tessera::cli::UsageError(fmt::format(
              "--auto-pick {}: not among the candidates that fit (see the list above)", auto_pick));
        }
        fmt::print("picked by --auto-pick: P={} D={} m={}, simulated step {:.4f} s\n", p, d, m,
                   best.step_s);
      }
      job.stages = best.stages;
      job.replicas = best.replicas;
      job.micro_batch = best.micro_batch;
      job.boundaries = best.boundaries;
      partition = "auto";
      predicted_step_s = best.step_s;
      if (request.cores > 0 &&
          (request.comm_cpu.allreduce_byte_s > 0 || request.comm_cpu.p2p_byte_s > 0)) {
        // The same candidate without the communication threads' CPU: what that term adds.
        pl::AutoConfigRequest bare = request;
        bare.comm_cpu = {};
        TESSERA_ASSIGN_OR_RETURN(
            predicted_without_comm_s,
            SimulatedStepOf(bare, best.stages, best.replicas, best.micro_batch));
        fmt::print(
            "the communication threads' CPU on {} shared cores adds {:+.1f} % to the "
            "simulated step ({:.4f} s without it)\n",
            request.cores, 100 * (best.step_s / predicted_without_comm_s - 1),
            predicted_without_comm_s);
      }
      if (request.message_delay_s > 0 && best.stages > 1) {
        // The same candidate with messages delivered at once: what the delay adds.
        pl::AutoConfigRequest instant = request;
        instant.message_delay_s = 0;
        TESSERA_ASSIGN_OR_RETURN(
            predicted_without_delay_s,
            SimulatedStepOf(instant, best.stages, best.replicas, best.micro_batch));
        fmt::print(
            "the messages' delivery ({:.3f} ms each, measured on loopback) adds {:+.1f} % to the "
            "simulated step ({:.4f} s without it)\n",
            1e3 * request.message_delay_s, 100 * (best.step_s / predicted_without_delay_s - 1),
            predicted_without_delay_s);
      }
      predicted_cpu_share = best.cpu_share;
      predicted_memory_mb = best.memory_bytes / 1e6;
    }
    if (job.stages < 1 || job.stages > units) {
      return tessera::cli::UsageError(
          fmt::format("--stages must be in [1, {}] for this model", units));
    }
    if (partition == "auto") {
      // chosen above
    } else if (!cuts.empty()) {
      if (static_cast<int>(cuts.size()) != job.stages + 1) {
        return tessera::cli::UsageError(
            fmt::format("--cuts needs stages + 1 = {} boundaries", job.stages + 1));
      }
      job.boundaries = cuts;  // checked with the job below
    } else if (partition == "balanced") {
      TESSERA_ASSIGN_OR_RETURN(job.boundaries,
                               pl::BalancedPartition(pl::EstimateUnitFlops(job.model), job.stages));
    } else if (partition == "profiled") {
      // Varuna's profiler measures per-cut compute on the target machine; so do we, in this
      // process (or in --worker), before the workers start (about a second).
      TESSERA_ASSIGN_OR_RETURN(std::vector<pl::ProfiledMicroBatch> profiled,
                               profile({job.micro_batch}, 1));
      PrintProfile(profiled[0]);
      TESSERA_ASSIGN_OR_RETURN(
          job.boundaries,
          pl::BalancedPartition(pl::ProfiledUnitCosts(profiled[0].profile,
                                                      job.schedule != pl::ScheduleKind::kOneFOneB),
                                job.stages));
    } else if (partition == "uniform") {
      TESSERA_ASSIGN_OR_RETURN(job.boundaries, pl::UniformPartition(units, job.stages));
    } else {
      return tessera::cli::UsageError("--partition must be balanced, profiled or uniform");
    }
    pl::JobConfig probe = job;  // endpoints are assigned by Launch; anything else is checked now
    probe.endpoints.assign(pl::WorldSize(job), pl::Endpoint{"127.0.0.1", 1});
    if (auto s = pl::ValidateJob(probe); !s.ok()) return usage(s);
    pl::LaunchOptions options;
    options.job = job;
    options.worker_binary = worker;
    options.base_port = base_port;
    options.timeout = std::chrono::seconds(timeout_s);
    options.heartbeat_timeout = std::chrono::seconds(heartbeat_s);
    options.hosts = hosts;
    options.pin_cpus = pin_cpus;
    options.run_dir = run_dir;
    std::string cuts;
    for (size_t s = 0; s + 1 < job.boundaries.size(); ++s) {
      cuts += fmt::format("{}[{},{})", s ? " " : "", job.boundaries[s], job.boundaries[s + 1]);
    }
    fmt::print(
        "pipeline: {} model, {} units; {} schedule; P={} D={} micro-batch {} x {} per "
        "replica; global batch {}; stage units {}\n",
        job.model.kind, units, schedule, job.stages, job.replicas, job.micro_batch,
        pl::MicroBatches(job), job.global_batch, cuts);
    std::fflush(stdout);
    // The calibration probe: the reference kernel on every processor just before the workers
    // start, so the prediction re-scaled by the cores' speed now is still made before running.
    std::vector<pl::SpeedSample> calibration_speed;
    double calibrated_step_s = 0;
    if (speed_probe && predicted_step_s > 0 && !profile_speed.empty()) {
      calibration_speed = pl::SpeedSampler::ProbeNow(kCalibrationRounds);
      const pl::SpeedSummary profile_kernel = pl::SummarizeSpeed(profile_speed);
      const pl::SpeedSummary now = pl::SummarizeSpeed(calibration_speed);
      if (profile_kernel.median_cpu_s > 0 && now.median_cpu_s > 0) {
        calibrated_step_s = predicted_step_s * now.median_cpu_s / profile_kernel.median_cpu_s;
        fmt::print("{}\n", pl::FormatSpeedSummary("just before the run", now));
        fmt::print(
            "calibrated prediction (before running): step {:.4f} s = {:.4f} s x {:.3f} (the "
            "reference kernel now over while profiling)\n",
            calibrated_step_s, predicted_step_s, now.median_cpu_s / profile_kernel.median_cpu_s);
      }
    }
    // The re-profiled prediction: the chosen size profiled again now, the same candidate
    // simulated from it (its cut re-balanced on the new times, as the ranking would).
    double reprofiled_step_s = 0;
    if (reprofile && predicted_step_s > 0) {
      TESSERA_ASSIGN_OR_RETURN(std::vector<pl::ProfiledMicroBatch> fresh,
                               profile({job.micro_batch}, profile_sharing));
      pl::AutoConfigRequest again = request;
      again.profiles = std::move(fresh);
      TESSERA_ASSIGN_OR_RETURN(reprofiled_step_s,
                               SimulatedStepOf(again, job.stages, job.replicas, job.micro_batch));
      fmt::print(
          "re-profiled prediction (before running): step {:.4f} s (the ranking's {:.4f} s)\n",
          reprofiled_step_s, predicted_step_s);
    }
    std::fflush(stdout);
    g_launching = true;
    pl::SpeedSampler run_sampler(speed_probe_interval_ms);
    if (speed_probe) run_sampler.Start();
    pl::LaunchOutcome outcome =
        pl::LaunchWatched(options, nullptr, [] { return g_terminate.load(); });
    run_speed = run_sampler.Stop();
    TESSERA_RETURN_IF_ERROR(outcome.status);
    pl::LaunchResult run = std::move(*outcome.result);
    if (outcome.stopped_at >= 0) {
      fmt::print("stopped: every worker stopped at step {}{}\n", outcome.stopped_at,
                 job.save_dir.empty() ? "" : fmt::format(", checkpoint in {}", job.save_dir));
    }
    TESSERA_ASSIGN_OR_RETURN(pl::RunSummary summary, pl::Summarize(run.job, run.reports));
    const pl::SimConfig from_run =
        pl::SimConfigFromReports(run.job, run.reports, link, link, host_links);
    TESSERA_ASSIGN_OR_RETURN(pl::SimResult sim, pl::Simulate(from_run));
    // The same without the delivery delay the workers measured: what that term adds.
    pl::SimConfig instant_run = from_run;
    instant_run.message_delay_s = 0;
    TESSERA_ASSIGN_OR_RETURN(pl::SimResult sim_instant, pl::Simulate(instant_run));
    if (job.stages > 1) {
      int64_t delays = 0;
      for (const auto& r : run.reports) delays += r.message_delays;
      fmt::print(
          "message delivery measured in the run: {:.3f} ms (mean of {} waited-for messages; "
          "loopback probe before running {:.3f} ms); simulated from the run's own times "
          "{:.4f} s with it, {:.4f} s without\n",
          1e3 * from_run.message_delay_s, delays, 1e3 * probe_message_delay_s, sim.step_s,
          sim_instant.step_s);
    }
    fmt::print(
        "result: {:.1f} samples/s, step {:.4f} s (simulated {:.4f} s, {:+.1f} %), bubble "
        "stage 0 {:.1f} % (simulated {:.1f} %), mean over stages {:.1f} % (simulated "
        "{:.1f} %), {} forwards pulled ahead, final loss {:.4f}\n",
        summary.samples_per_s, summary.step_s, sim.step_s,
        summary.step_s > 0 ? 100 * (sim.step_s / summary.step_s - 1) : 0.0,
        100 * summary.bubble_stage0, 100 * sim.bubble_stage0, 100 * summary.bubble_mean,
        100 * sim.bubble_mean, summary.pulled_ahead,
        summary.losses.empty() ? 0.0 : summary.losses.back());
    std::vector<double> rss_mb;
    std::string rss_line;
    for (const auto& r : run.reports) {
      rss_mb.push_back(r.peak_rss_bytes / 1e6);
      rss_line += fmt::format(" {:.0f}", r.peak_rss_bytes / 1e6);
    }
    fmt::print("peak RSS per worker (MB, by rank):{}\n", rss_line);
    fmt::print("CPU per step, all workers: {:.4f} s ({:.2f} cores busy on average)\n",
               summary.cpu_step_s, summary.step_s > 0 ? summary.cpu_step_s / summary.step_s : 0);
    if (predicted_step_s > 0) {
      fmt::print(
          "predicted before running (auto-config, from the profile): step {:.4f} s ({:+.1f} % "
          "vs measured), largest worker {:.0f} MB ({:+.1f} % vs measured peak RSS)\n",
          predicted_step_s, 100 * (predicted_step_s / summary.step_s - 1), predicted_memory_mb,
          100 * (predicted_memory_mb / (*std::max_element(rss_mb.begin(), rss_mb.end())) - 1));
      if (predicted_cpu_share > 0 && summary.busy_cpu_share > 0) {
        // Both sides times the share of a core their tasks got: the step each would take on
        // cores of its own, so a change of the machine's load between profile and run cancels.
        const double p = predicted_step_s * predicted_cpu_share;
        const double m = summary.step_s * summary.busy_cpu_share;
        fmt::print(
            "CPU-normalized: predicted {:.4f} s (profile's tasks got {:.2f} of a core), measured "
            "{:.4f} s (run's tasks got {:.2f}), {:+.1f} %\n",
            p, predicted_cpu_share, m, summary.busy_cpu_share, 100 * (p / m - 1));
      }
    }
    const pl::SpeedSummary profile_kernel = pl::SummarizeSpeed(profile_speed);
    const pl::SpeedSummary run_kernel = pl::SummarizeSpeed(run_speed);
    std::optional<pl::SpeedComparison> speed;
    if (!run_speed.empty()) {
      fmt::print("{}\n", pl::FormatSpeedSummary("while the workers ran", run_kernel));
      if (predicted_step_s > 0 && !profile_speed.empty()) {
        TESSERA_ASSIGN_OR_RETURN(
            speed, pl::CompareWithSpeed(predicted_step_s, summary.step_s,
                                        profile_kernel.median_cpu_s, run_kernel.median_cpu_s,
                                        predicted_cpu_share, summary.busy_cpu_share));
        fmt::print("{}\n", pl::FormatSpeedComparison(*speed));
      }
    }
    if (reprofiled_step_s > 0) {
      fmt::print(
          "re-profiled prediction: {:.4f} s vs measured {:.4f} s: {:+.1f} % (raw {:+.1f} %)\n",
          reprofiled_step_s, summary.step_s, 100 * (reprofiled_step_s / summary.step_s - 1),
          100 * (predicted_step_s / summary.step_s - 1));
    }
    if (calibrated_step_s > 0) {
      fmt::print(
          "calibrated prediction: {:.4f} s vs measured {:.4f} s: {:+.1f} % (raw {:+.1f} %)\n",
          calibrated_step_s, summary.step_s, 100 * (calibrated_step_s / summary.step_s - 1),
          100 * (predicted_step_s / summary.step_s - 1));
    }
    fmt::print("stage 0 task order, first step: {}\n", run.reports[0].first_step_order);
    fmt::print("job description and worker reports: {}\n", run_dir);
    if (!json_out.empty()) {
      nlohmann::json j = {{"schedule", schedule},
                          {"stages", job.stages},
                          {"replicas", job.replicas},
                          {"micro_batch", job.micro_batch},
                          {"micro_batches", pl::MicroBatches(job)},
                          {"global_batch", job.global_batch},
                          {"samples_per_s", summary.samples_per_s},
                          {"step_s", summary.step_s},
                          {"cpu_step_s", summary.cpu_step_s},
                          {"sim_step_s", sim.step_s},
                          {"sim_step_without_delay_s", sim_instant.step_s},
                          {"run_message_delay_s", from_run.message_delay_s},
                          {"probe_message_delay_s", probe_message_delay_s},
                          {"predicted_without_delay_s", predicted_without_delay_s},
                          {"profile_seconds", profile_seconds},
                          {"bubble_stage0", summary.bubble_stage0},
                          {"sim_bubble_stage0", sim.bubble_stage0},
                          {"bubble_mean", summary.bubble_mean},
                          {"sim_bubble_mean", sim.bubble_mean},
                          {"losses", summary.losses},
                          {"pulled_ahead", summary.pulled_ahead},
                          {"sim_pipeline_s", sim.pipeline_s},
                          {"peak_rss_mb", rss_mb},
                          {"predicted_step_s", predicted_step_s},
                          {"predicted_without_comm_s", predicted_without_comm_s},
                          {"predicted_memory_mb", predicted_memory_mb},
                          {"predicted_cpu_share", predicted_cpu_share},
                          {"busy_cpu_share", summary.busy_cpu_share},
                          {"wall_s", run.wall_s}};
      if (outcome.stopped_at >= 0) j["stopped_at"] = outcome.stopped_at;
      if (reprofiled_step_s > 0) j["reprofiled_step_s"] = reprofiled_step_s;
      if (speed_probe) {
        auto kernel_json = [](const pl::SpeedSummary& s) {
          nlohmann::json per_cpu = nlohmann::json::object();
          for (size_t i = 0; i < s.cpus.size(); ++i) {
            per_cpu[std::to_string(s.cpus[i])] = s.cpu_median_s[i];
          }
          return nlohmann::json{{"samples", s.samples},
                                {"median_cpu_s", s.median_cpu_s},
                                {"median_wall_s", s.median_wall_s},
                                {"min_cpu_s", s.min_cpu_s},
                                {"max_cpu_s", s.max_cpu_s},
                                {"per_cpu_median_s", per_cpu},
                                {"flush_denormals", s.any_flush_denormals}};
        };
        nlohmann::json probe = {{"profile", kernel_json(profile_kernel)},
                                {"run", kernel_json(run_kernel)}};
        if (speed) {
          probe["factor"] = speed->factor;
          probe["speed_normalized_step_s"] = speed->normalized_predicted_s;
          probe["speed_normalized_error_pct"] = speed->normalized_error_pct;
          probe["speed_and_share_error_pct"] = speed->speed_and_share_error_pct;
        }
        if (calibrated_step_s > 0) {
          probe["calibration"] = kernel_json(pl::SummarizeSpeed(calibration_speed));
          probe["calibrated_step_s"] = calibrated_step_s;
          probe["calibrated_error_pct"] = 100 * (calibrated_step_s / summary.step_s - 1);
        }
        j["speed_probe"] = probe;
      }
      TESSERA_RETURN_IF_ERROR(tessera::WriteFileAtomically(json_out, j.dump(2) + "\n"));
    }
    if (outcome.stopped_at >= 0) {
      std::fflush(stdout);
      std::exit(kExitTerminated);
    }
    return tessera::Status::Ok();
  });
}
