#include "pipeline/launcher.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <filesystem>
#include <sstream>
#include <thread>

#include "core/file.h"
#include "fmt/format.h"
#include "pipeline/autoconfig.h"
#include "pipeline/cpu_pin.h"
#include "spdlog/spdlog.h"

namespace tessera::pipeline {
namespace {

using Clock = std::chrono::steady_clock;

double Mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0.0 : sum / v.size();
}

// This process's environment with `vars` ("NAME=value") replacing any of the same name.
std::vector<std::string> EnvironmentWith(const std::vector<std::string>& vars) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool replaced = name == "TORCHELASTIC_USE_AGENT_STORE";  // we start no agent
    for (const std::string& v : vars) replaced |= v.substr(0, v.find('=')) == name;
    if (!replaced) env.push_back(entry);
  }
  env.insert(env.end(), vars.begin(), vars.end());
  return env;
}

// `cpu` >= 0: the child runs on that processor only (kept across exec, by every thread the
// worker starts).
pid_t Spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env,
            int cpu = -1) {
  cpu_set_t one;  // built before fork, like the arguments
  CPU_ZERO(&one);
  if (cpu >= 0) CPU_SET(cpu, &one);
  std::vector<char*> args, envp;  // built before fork: the child only execs
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const pid_t launcher = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    // The worker (or its wrapper: ip netns exec execs, ssh-like forwards) dies with this
    // launcher, even one killed with -9; kept across exec. The launcher may already be gone.
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != launcher) _exit(127);
    if (cpu >= 0 && sched_setaffinity(0, sizeof(one), &one) != 0) _exit(127);
    execvpe(args[0], args.data(), envp.data());
    _exit(127);
  }
  return pid;
}

void StopAll(std::vector<pid_t>& pids) {
  for (pid_t p : pids) {
    if (p > 0) kill(p, SIGTERM);
  }
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  for (pid_t& p : pids) {
    while (p > 0) {
      if (waitpid(p, nullptr, WNOHANG) == p) {
        p = -1;
      } else if (Clock::now() > deadline) {
        kill(p, SIGKILL);
        waitpid(p, nullptr, 0);
        p = -1;
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  }
}

}  // namespace

namespace {

// Runs `worker_binary <flag> <spec as a JSON file> <extra>` (quoted for the shell) and returns
// what it printed; NOT_FOUND when it fails (it does not know the model, or the flag).
Result<std::string> AskWorker(const std::string& worker_binary, const ModelSpec& spec,
                              const std::string& flag, const std::string& extra = "") {
  static std::atomic<int> calls{0};
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      fmt::format("pipeline-model-{}-{}.json", getpid(), calls.fetch_add(1));
  TESSERA_RETURN_IF_ERROR(WriteFileAtomically(path, ModelSpecToJson(spec).dump() + "\n"));
  // Single quotes around both paths; neither may hold one.
  if (worker_binary.find('\'') != std::string::npos) {
    return InvalidArgumentError("the worker binary's path may not contain a quote");
  }
  const std::string command =
      fmt::format("'{}' {} '{}' {} 2>&1", worker_binary, flag, path.string(), extra);
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return UnavailableError("could not run " + worker_binary);
  char buffer[256];
  while (fgets(buffer, sizeof buffer, pipe) != nullptr) {
    if (output.size() < 4096) output += buffer;
  }
  const int status = pclose(pipe);
  std::error_code ec;
  std::filesystem::remove(path, ec);
  if (status != 0) {
    return NotFoundError(fmt::format("{} {} failed for model '{}': {}", worker_binary, flag,
                                     spec.kind, output.substr(0, 300)));
  }
  return output;
}

}  // namespace

Result<int> CountUnitsWithWorker(const std::string& worker_binary, const ModelSpec& spec) {
  TESSERA_ASSIGN_OR_RETURN(std::string output, AskWorker(worker_binary, spec, "--count-units"));
  try {
    const int units = std::stoi(output);
    if (units < 1) throw std::invalid_argument(output);
    return units;
  } catch (const std::exception&) {
    return DataLossError(fmt::format("{} --count-units printed '{}'", worker_binary, output));
  }
}

Result<std::vector<ProfiledMicroBatch>> ProfileWithWorker(
    const std::string& worker_binary, const ModelSpec& spec, const std::vector<int>& sizes,
    uint64_t seed, const std::string& optimizer, int contended_workers, double profile_seconds) {
  if (sizes.empty()) return InvalidArgumentError("no micro-batch size to profile");
  if (optimizer.find('\'') != std::string::npos) return InvalidArgumentError("bad optimizer");
  const std::filesystem::path out =
      std::filesystem::temp_directory_path() / fmt::format("pipeline-profile-{}.json", getpid());
  std::string list;
  for (int m : sizes) list += fmt::format("{}{}", list.empty() ? "" : ",", m);
  TESSERA_RETURN_IF_ERROR(
      AskWorker(
          worker_binary, spec, "--profile",
          fmt::format("--profile-out '{}' --profile-micro-batches {} --profile-workers {} "
                      "--profile-optimizer '{}' --profile-seed {} --profile-seconds {}",
                      out.string(), list, contended_workers, optimizer, seed, profile_seconds))
          .status());
  auto text = ReadFile(out);
  std::error_code ec;
  std::filesystem::remove(out, ec);
  if (!text.ok()) return text.status();
  nlohmann::json json = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded())
    return DataLossError(worker_binary + " wrote a profile that is not JSON");
  return ProfilesFromJson(json);
}

Result<LinkMeasurement> ProbeHostLink(const std::string& worker_binary, const Host& from,
                                      const Host& to, int port, std::chrono::seconds timeout) {
  if (port < 1 || port > 65535) return InvalidArgumentError("link probe: bad port");
  const std::string endpoint = fmt::format("{}:{}", to.address, port);
  const std::string wait = std::to_string(timeout.count());
  std::vector<std::string> server = to.prefix;
  server.insert(server.end(),
                {worker_binary, "--serve-link-probe", endpoint, "--link-probe-timeout", wait});
  std::vector<std::string> client = from.prefix;
  client.insert(client.end(),
                {worker_binary, "--probe-link", endpoint, "--link-probe-timeout", wait});
  const std::vector<std::string> env = EnvironmentWith({});
  std::vector<pid_t> pids = {Spawn(server, env)};
  // The client's standard output through a pipe (its JSON line, or its error).
  int out[2];
  // Close-on-exec: probes run concurrently (ProbeHostLinks), and another probe's children must
  // not hold this pipe open. dup2 below clears the flag on the child's standard output.
  if (pipe2(out, O_CLOEXEC) != 0) {
    StopAll(pids);
    return UnavailableError("link probe: pipe failed");
  }
  std::vector<char*> args, envp;
  for (const auto& a : client) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const pid_t launcher = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != launcher) _exit(127);
    dup2(out[1], STDOUT_FILENO);
    dup2(out[1], STDERR_FILENO);
    close(out[0]);
    close(out[1]);
    execvpe(args[0], args.data(), envp.data());
    _exit(127);
  }
  close(out[1]);
  std::string output;
  char buffer[512];
  for (ssize_t n; (n = read(out[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    if (output.size() < 8192) output.append(buffer, static_cast<size_t>(n));
  }
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  StopAll(pids);  // it has exited after the client's goodbye, unless something failed
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return UnavailableError(fmt::format("link probe from {} to {} failed: {}", from.address,
                                        to.address, output.substr(0, 400)));
  }
  const size_t brace = output.rfind('{');
  nlohmann::json json =
      brace == std::string::npos
          ? nlohmann::json()
          : nlohmann::json::parse(output.substr(brace), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return DataLossError("link probe: the client printed no measurement: " + output.substr(0, 400));
  }
  return LinkMeasurementFromJson(json);
}

std::vector<int> HostSlots(const std::vector<Host>& hosts, std::vector<Host>* distinct) {
  std::vector<int> slots;
  std::vector<Host> seen;
  for (const Host& h : hosts) {
    auto it = std::find_if(seen.begin(), seen.end(),
                           [&](const Host& s) { return s.address == h.address; });
    slots.push_back(static_cast<int>(it - seen.begin()));
    if (it == seen.end()) seen.push_back(h);
  }
  if (distinct) *distinct = std::move(seen);
  return slots;
}

Result<HostLinks> ProbeHostLinks(
    const std::string& worker_binary, const std::vector<Host>& hosts, int port,
    std::chrono::seconds timeout,
    const std::function<void(const Host&, const Host&, const LinkMeasurement&)>& progress) {
  std::vector<Host> distinct;
  HostLinks result;
  result.host_of_slot = HostSlots(hosts, &distinct);
  const size_t n = distinct.size();
  result.links.assign(n, std::vector<LinkModel>(n));
  // Rounds of probes at once, in each a host either sends one probe or receives one or does
  // neither: a host that did both would queue its ACKs behind its own data, slowing the probe
  // it receives (and two probes from one host would share its device). Greedy over the ordered
  // pairs: about 2 (n - 1) rounds instead of n (n - 1) probe times.
  std::vector<std::pair<size_t, size_t>> left;
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = 0; b < n; ++b) {
      if (a != b) left.emplace_back(a, b);
    }
  }
  while (!left.empty()) {
    std::vector<std::pair<size_t, size_t>> round, later;
    std::vector<bool> busy(n, false);
    for (const auto& [a, b] : left) {
      if (busy[a] || busy[b]) {
        later.emplace_back(a, b);
        continue;
      }
      busy[a] = busy[b] = true;
      round.emplace_back(a, b);
    }
    left = std::move(later);
    std::vector<Result<LinkMeasurement>> measured(round.size(),
                                                  InternalError("link probe not run"));
    std::vector<std::thread> probes;
    for (size_t i = 0; i < round.size(); ++i) {
      probes.emplace_back([&, i] {
        measured[i] = ProbeHostLink(worker_binary, distinct[round[i].first],
                                    distinct[round[i].second], port, timeout);
      });
    }
    for (std::thread& t : probes) t.join();
    for (size_t i = 0; i < round.size(); ++i) {
      const auto [a, b] = round[i];
      if (!measured[i].ok()) return measured[i].status();
      if (progress) progress(distinct[a], distinct[b], *measured[i]);
      result.links[a][b] = measured[i]->link;
    }
  }
  return result;
}

Result<std::vector<Host>> ParseHosts(const std::string& text) {
  std::vector<Host> hosts;
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    Host h;
    if (!(words >> h.address)) continue;
    for (std::string w; words >> w;) h.prefix.push_back(w);
    if (h.address.find(':') != std::string::npos) {
      return InvalidArgumentError(
          fmt::format("hosts line {}: give an address without a port", number));
    }
    hosts.push_back(std::move(h));
  }
  if (hosts.empty()) return InvalidArgumentError("the hosts file lists no host");
  return hosts;
}

namespace {

// The step in rank's heartbeat file and the file's age; nullopt before the first heartbeat.
std::optional<std::pair<int64_t, double>> ReadHeartbeat(const std::string& run_dir, int rank) {
  const std::filesystem::path path = fmt::format("{}/heartbeat-{}", run_dir, rank);
  std::error_code ec;
  const auto mtime = std::filesystem::last_write_time(path, ec);
  if (ec) return std::nullopt;
  const double age =
      std::chrono::duration<double>(std::filesystem::file_time_type::clock::now() - mtime).count();
  auto text = ReadFile(path.string());
  int64_t step = -1;
  if (text.ok()) {
    try {
      step = std::stoll(*text);
    } catch (const std::exception&) {
    }
  }
  return std::make_pair(step, age);
}

Result<LaunchResult> LaunchImpl(const LaunchOptions& options,
                                const std::function<bool()>& interrupt,
                                const std::function<bool()>& notice, LaunchOutcome& outcome) {
  LaunchResult result;
  result.job = options.job;
  JobConfig& job = result.job;
  const int world = WorldSize(job);
  job.endpoints.clear();
  std::vector<int> ports;
  if (options.base_port == 0) {
    for (const Host& h : options.hosts) {
      if (h.address.rfind("127.", 0) != 0) {
        return InvalidArgumentError("--base-port is required with hosts beyond loopback");
      }
    }
    TESSERA_ASSIGN_OR_RETURN(ports, FreeLocalPorts(world + 1));
  } else {
    for (int r = 0; r <= world; ++r) ports.push_back(options.base_port + r);
  }
  for (int r = 0; r < world; ++r) {
    const std::string host =
        options.hosts.empty() ? "127.0.0.1" : options.hosts[r % options.hosts.size()].address;
    job.endpoints.push_back({host, ports[r]});
  }
  // The c10d store of the gloo rendezvous: served by rank 0, one port past the workers'.
  job.store = {job.endpoints[0].host, ports[world]};
  TESSERA_RETURN_IF_ERROR(ValidateJob(job));
  std::error_code ec;
  std::filesystem::create_directories(options.run_dir, ec);
  if (ec) return UnavailableError(fmt::format("creating {}: {}", options.run_dir, ec.message()));
  job.run_dir = options.run_dir;
  for (const std::string name : {"stop", "stop-at"}) {
    std::filesystem::remove(options.run_dir + "/" + name, ec);
  }
  for (int r = 0; r < world; ++r) {
    std::filesystem::remove(fmt::format("{}/heartbeat-{}", options.run_dir, r), ec);
  }
  const std::string job_path = options.run_dir + "/job.json";
  TESSERA_RETURN_IF_ERROR(WriteFileAtomically(job_path, JobToJson(job).dump(2) + "\n"));
  if (access(options.worker_binary.c_str(), X_OK) != 0) {
    return NotFoundError(fmt::format("worker binary {} is not executable", options.worker_binary));
  }

  if (!options.pin_cpus.empty() && !options.hosts.empty()) {
    return InvalidArgumentError("pinning workers to processors needs local workers (no hosts)");
  }
  const auto start = Clock::now();
  std::vector<pid_t> pids(world, -1);
  for (int r = 0; r < world; ++r) {
    int cpu = -1;
    if (!options.pin_cpus.empty()) {
      Result<int> c = CpuForWorker(r, options.pin_cpus);
      if (!c.ok()) {
        StopAll(pids);
        return c.status();
      }
      cpu = *c;
    }
    std::vector<std::string> argv;
    if (!options.hosts.empty()) {
      const Host& h = options.hosts[r % options.hosts.size()];
      argv = h.prefix;
    }
    for (std::string a : {options.worker_binary, std::string("--job"), job_path,
                          std::string("--rank"), std::to_string(r), std::string("--report"),
                          fmt::format("{}/report-{}.json", options.run_dir, r),
                          std::string("--log-level"), std::string("warn")}) {
      argv.push_back(a);
    }
    // torchrun's variables, so a worker finds the gloo rendezvous as under torchrun.
    const int hosts = options.hosts.empty() ? 1 : static_cast<int>(options.hosts.size());
    pids[r] = Spawn(argv,
                    EnvironmentWith({"MASTER_ADDR=" + job.store.host,
                                     fmt::format("MASTER_PORT={}", job.store.port),
                                     fmt::format("RANK={}", r), fmt::format("WORLD_SIZE={}", world),
                                     fmt::format("LOCAL_RANK={}", r / hosts)}),
                    cpu);
    if (pids[r] < 0) {
      StopAll(pids);
      return UnavailableError(fmt::format("could not start worker {}", r));
    }
  }
  std::string pid_list;
  for (int r = 0; r < world; ++r) pid_list += fmt::format("{} {}\n", r, pids[r]);
  if (Status s = WriteFileAtomically(options.run_dir + "/pids", pid_list); !s.ok()) {
    StopAll(pids);
    return s;
  }
  int running = world;
  bool notice_sent = false;
  Status failure;
  // Reaps every worker that has exited; the first failure is the one reported, but a worker
  // killed by a signal is named in preference (its neighbours fail because it vanished).
  auto reap = [&] {
    for (int r = 0; r < world; ++r) {
      if (pids[r] <= 0) continue;
      int status = 0;
      if (waitpid(pids[r], &status, WNOHANG) != pids[r]) continue;
      pids[r] = -1;
      --running;
      if (WIFSIGNALED(status)) {
        outcome.lost_ranks.push_back(r);
        failure =
            AbortedError(fmt::format("worker {} (stage {}, replica {}) was killed by signal {}", r,
                                     StageOf(job, r), ReplicaOf(job, r), WTERMSIG(status)));
      } else if (WEXITSTATUS(status) == 255) {
        outcome.lost_ranks.push_back(r);
        failure = AbortedError(fmt::format(
            "worker {} (stage {}, replica {}) was lost (exit 255: its host or connection went "
            "away)",
            r, StageOf(job, r), ReplicaOf(job, r)));
      } else if (WEXITSTATUS(status) != 0 && outcome.lost_ranks.empty()) {
        failure =
            AbortedError(fmt::format("worker {} (stage {}, replica {}) exited with code {}", r,
                                     StageOf(job, r), ReplicaOf(job, r), WEXITSTATUS(status)));
      }
    }
  };
  while (running > 0) {
    reap();
    if (!failure.ok()) {
      // A killed worker's sockets close as it exits, so a neighbour may fail, and be reaped,
      // a moment before the killed one can be: look for it a little longer (200 ms at most,
      // only on the failure path) so that the loss, not the neighbour's error, is reported.
      const auto grace = Clock::now() + std::chrono::milliseconds(200);
      while (outcome.lost_ranks.empty() && running > 0 && Clock::now() < grace) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        reap();
      }
      break;
    }
    if (interrupt && interrupt()) {
      outcome.interrupted = true;
      failure = CancelledError("the job was interrupted");
      break;
    }
    if (notice && !notice_sent && notice()) {
      // Rank 0 turns this into the step boundary every worker stops at (pipeline/runtime.cc).
      notice_sent = true;
      if (Status s = WriteFileAtomically(options.run_dir + "/stop", "notice\n"); !s.ok()) {
        failure = s;
        break;
      }
    }
    if (options.heartbeat_timeout.count() > 0) {
      for (int r = 0; r < world && failure.ok(); ++r) {
        if (pids[r] <= 0) continue;
        auto beat = ReadHeartbeat(options.run_dir, r);
        if (beat && beat->second > static_cast<double>(options.heartbeat_timeout.count())) {
          outcome.lost_ranks.push_back(r);
          failure = AbortedError(
              fmt::format("worker {} (stage {}, replica {}) was lost: no heartbeat for {:.1f} s", r,
                          StageOf(job, r), ReplicaOf(job, r), beat->second));
        }
      }
      if (!failure.ok()) break;
    }
    if (Clock::now() - start > options.timeout) {
      failure = DeadlineExceededError(
          fmt::format("job did not finish within {} s", options.timeout.count()));
      break;
    }
    if (running > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (auto beat = ReadHeartbeat(options.run_dir, 0)) outcome.reached = beat->first;
  if (!failure.ok()) {
    StopAll(pids);
    return failure;
  }
  result.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  for (int r = 0; r < world; ++r) {
    const std::string path = fmt::format("{}/report-{}.json", options.run_dir, r);
    TESSERA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
    auto json = nlohmann::json::parse(text, nullptr, false);
    if (json.is_discarded()) return DataLossError(fmt::format("{} is not JSON", path));
    TESSERA_ASSIGN_OR_RETURN(WorkerReport report, ReportFromJson(json));
    result.reports.push_back(std::move(report));
  }
  return result;
}

}  // namespace

Result<LaunchResult> Launch(const LaunchOptions& options) {
  LaunchOutcome outcome = LaunchWatched(options, nullptr);
  if (!outcome.status.ok()) return outcome.status;
  return std::move(*outcome.result);
}

LaunchOutcome LaunchWatched(const LaunchOptions& options, const std::function<bool()>& interrupt,
                            const std::function<bool()>& notice) {
  LaunchOutcome outcome;
  outcome.status = [&]() -> Status {
    TESSERA_ASSIGN_OR_RETURN(LaunchResult r, LaunchImpl(options, interrupt, notice, outcome));
    if (!r.reports.empty()) outcome.stopped_at = r.reports[0].stopped_at;
    outcome.result = std::move(r);
    return Status::Ok();
  }();
  if (!outcome.status.ok()) outcome.result.reset();
  return outcome;
}

Result<RunSummary> Summarize(const JobConfig& job, const std::vector<WorkerReport>& reports) {
  if (static_cast<int>(reports.size()) != WorldSize(job)) {
    return InvalidArgumentError("one report per worker is needed");
  }
  RunSummary s;
  const size_t steps = reports[0].steps.size();
  for (const auto& r : reports) {
    if (r.steps.size() != steps) return InvalidArgumentError("reports differ in step count");
  }
  s.losses.assign(steps, 0.0);
  for (int rep = 0; rep < job.replicas; ++rep) {
    const WorkerReport& r = reports[RankOf(job, job.stages - 1, rep)];
    for (size_t k = 0; k < steps; ++k) s.losses[k] += r.steps[k].loss;
  }
  const size_t skip = steps > 1 ? 1 : 0;      // the first step warms caches and connections up
  auto bubble = [&](const WorkerReport& r) {  // idle share of the summed pipeline time
    double busy = 0, pipeline = 0;
    for (size_t k = skip; k < steps; ++k) {
      busy += r.steps[k].busy_s;
      pipeline += r.steps[k].pipeline_s;
    }
    return pipeline > 0 ? 1.0 - busy / pipeline : 0.0;
  };
  std::vector<double> walls;
  for (size_t k = skip; k < steps; ++k) walls.push_back(reports[0].steps[k].wall_s);
  s.step_s = Mean(walls);
  s.samples_per_s = s.step_s > 0 ? job.global_batch / s.step_s : 0;
  double cpu = 0;
  for (const auto& r : reports) {
    for (size_t k = skip; k < steps; ++k) cpu += r.steps[k].cpu_s;
  }
  s.cpu_step_s = steps > skip ? cpu / static_cast<double>(steps - skip) : 0;
  double busy_cpu = 0, busy_wall = 0;
  for (const auto& r : reports) {
    for (size_t k = skip; k < steps; ++k) {
      busy_cpu += r.steps[k].busy_cpu_s;
      busy_wall += r.steps[k].busy_s;
    }
  }
  s.busy_cpu_share = busy_wall > 0 ? busy_cpu / busy_wall : 0;
  s.bubble_stage0 = bubble(reports[0]);
  double sum = 0;
  for (int st = 0; st < job.stages; ++st) sum += bubble(reports[RankOf(job, st, 0)]);
  s.bubble_mean = sum / job.stages;
  for (const auto& r : reports) {
    for (const StepStats& x : r.steps) s.pulled_ahead += x.pulled_ahead;
  }
  return s;
}

SimConfig SimConfigFromReports(const JobConfig& job, const std::vector<WorkerReport>& reports,
                               const LinkModel& pipeline_link, const LinkModel& allreduce_link,
                               const HostLinks& host_links) {
  SimConfig c;
  c.host_links = host_links;
  c.schedule = job.schedule;
  c.micro_batches = MicroBatches(job);
  c.opportunistic = job.opportunistic;
  c.replicas = job.replicas;
  c.pipeline_link = pipeline_link;
  c.allreduce_link = allreduce_link;
  // As many steps as were run (the measured step time is the mean after the first), so link
  // state carries from step to step as it did in the run; a few suffice for a steady state.
  c.steps = std::clamp(job.steps, 1, 20);
  for (int st = 0; st < job.stages; ++st) {
    // Average the replicas of the stage; all-reduce and optimizer as measured (medians over
    // the steps after the first).
    StageCost cost;
    for (int rep = 0; rep < job.replicas; ++rep) {
      const WorkerReport& r = reports[RankOf(job, st, rep)];
      cost.forward_s += r.forward_s / job.replicas;
      cost.recompute_s += r.recompute_s / job.replicas;
      cost.backward_s += r.backward_s / job.replicas;
      cost.gradient_bytes = r.gradient_bytes;
      std::vector<double> ar, opt;
      for (size_t k = r.steps.size() > 1 ? 1 : 0; k < r.steps.size(); ++k) {
        ar.push_back(r.steps[k].allreduce_s);
        opt.push_back(r.steps[k].optimizer_s);
      }
      cost.allreduce_s += Mean(ar) / job.replicas;
      cost.optimizer_s += std::max(0.0, Mean(opt)) / job.replicas;
    }
    c.stages.push_back(cost);
    if (st + 1 < job.stages)
      c.boundary_bytes.push_back(reports[RankOf(job, st, 0)].activation_bytes);
  }
  // The delivery delay the workers measured, over all their waited-for messages.
  double delay_sum = 0;
  int64_t delays = 0;
  for (const WorkerReport& r : reports) {
    delay_sum += r.message_delay_s * static_cast<double>(r.message_delays);
    delays += r.message_delays;
  }
  c.message_delay_s = delays > 0 ? std::max(0.0, delay_sum / static_cast<double>(delays)) : 0.0;
  return c;
}

}  // namespace tessera::pipeline
