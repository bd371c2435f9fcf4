// cluster-ctl: submit, list, cancel, preempt, requeue, resize, nodes, events, metrics, wait
// (see ctl.h).
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "cluster/cli/ctl.h"
#include "cluster/job/job_type.h"
#include "core/cli.h"

int main(int argc, char** argv) {
  using namespace tessera;
  using namespace tessera::cluster;
  cli::Program program("cluster-ctl", "Talks to the cluster scheduler.");
  auto& app = program.app();
  std::string address;
  app.add_option("--scheduler", address, "Scheduler address, host:port (required)");
  std::string token;
  if (const char* env = std::getenv("TESSERA_CLUSTER_TOKEN")) token = env;
  app.add_option("--token", token,
                 "The tenant's token, when the scheduler has tokens (default: "
                 "$TESSERA_CLUSTER_TOKEN)");

  rpc::SubmitRequest submit;
  std::string tier = "basic", tenant;
  int workers = 1, min_workers = 0;
  std::vector<std::string> job_args;
  std::string job_type = kDefaultJobType;
  std::vector<std::string> type_names;
  std::string type_help = "Job type, i.e. the program the agent runs:";
  for (const JobType& t : JobTypes()) {
    type_names.emplace_back(t.name);
    type_help += (type_names.size() == 1 ? " " : "; ") + std::string(t.name) + " (" +
                 std::string(t.program) + ", " + std::string(t.description) + ")";
  }
  auto* submit_cmd = app.add_subcommand("submit", "Submit a training job; prints its id");
  submit_cmd->add_option("--tier", tier, "premium, standard or basic")
      ->capture_default_str()
      ->check(CLI::IsMember({"premium", "standard", "basic"}));
  submit_cmd->add_option("--tenant", tenant,
                         "Tenant (team) the job belongs to (with a token: the token's tenant)");
  submit_cmd->add_option("--workers", workers, "Requested workers = world size")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  submit_cmd->add_option("--min-workers", min_workers,
                         "Fewest workers it may be shrunk to (default: --workers)");
  submit_cmd->add_option("--type", job_type, type_help)
      ->capture_default_str()
      ->check(CLI::IsMember(type_names));
  bool logical_ranks = false;
  submit_cmd->add_flag("--logical-ranks", logical_ranks,
                       "Command jobs: one process per slot, each running its slot's block of "
                       "the --workers ranks as logical ranks (PyTorch DDP scripts under the "
                       "interposition layer, or programs on the C++ library's logical-rank mode)");
  submit_cmd->add_option("job_args", job_args,
                         "After --: a program and its args (any program: one process per rank "
                         "with torchrun's environment), or the flags of --type's program");

  auto* list_cmd = app.add_subcommand("list", "Jobs as a table");
  std::string cancel_id;
  auto* cancel_cmd = app.add_subcommand("cancel", "Cancel a job");
  cancel_cmd->add_option("job", cancel_id, "Job id")->required();
  std::string preempt_id, requeue_id, resize_id;
  int resize_workers = 0;
  auto* preempt_cmd =
      app.add_subcommand("preempt", "Checkpoint a job and hold it (not restarted until requeue)");
  preempt_cmd->add_option("job", preempt_id, "Job id")->required();
  auto* requeue_cmd = app.add_subcommand(
      "requeue", "Release a held job, or checkpoint a running one back into the queue");
  requeue_cmd->add_option("job", requeue_id, "Job id")->required();
  auto* resize_cmd =
      app.add_subcommand("resize", "Checkpoint a running job and restart it on WORKERS slots now");
  resize_cmd->add_option("job", resize_id, "Job id")->required();
  resize_cmd->add_option("workers", resize_workers, "Worker count (divides the world size)")
      ->required()
      ->check(CLI::Range(1, 1024));
  auto* nodes_cmd = app.add_subcommand("nodes", "Nodes as a table");
  int limit = 0;
  auto* events_cmd = app.add_subcommand("events", "The scheduler's event log");
  events_cmd->add_option("--limit", limit, "Only the last N events (0 = all)");
  auto* metrics_cmd = app.add_subcommand("metrics", "Prometheus metrics");
  std::vector<std::string> wait_ids;
  double wait_timeout = 120;
  auto* wait_cmd = app.add_subcommand("wait", "Wait until jobs finish (or are cancelled/fail)");
  wait_cmd->add_option("jobs", wait_ids, "Job ids")->required();
  wait_cmd->add_option("--timeout", wait_timeout, "Seconds")->capture_default_str();

  return program.Run(argc, argv, [&]() -> Status {
    // Checked here rather than with CLI11's required(), which would report a missing flag
    // before an unknown one.
    if (address.empty()) return cli::UsageError("--scheduler is required");
    if (app.get_subcommands().empty()) {
      return cli::UsageError(
          "a command is required: submit, list, cancel, preempt, requeue, resize, nodes, "
          "events, metrics or wait");
    }
    TESSERA_ASSIGN_OR_RETURN(ClusterClient client, ClusterClient::Connect(address));
    client.SetToken(token);
    if (submit_cmd->parsed()) {
      submit.set_tier(tier);
      submit.set_tenant(tenant.empty() && token.empty() ? "default" : tenant);
      submit.set_requested_workers(workers);
      submit.set_min_workers(min_workers);
      // `submit -- COMMAND ARGS`: a first arg that is not a flag names a program to run.
      if (submit_cmd->count("--type") == 0 && !job_args.empty() && !job_args[0].starts_with("-")) {
        job_type = kCommandJobType;
      }
      const std::vector<std::string> args =
          JoinJobType({.type = job_type, .args = job_args, .logical_ranks = logical_ranks});
      if (Result<JobCommand> check = SplitJobType(args); !check.ok()) {
        return cli::UsageError(check.status().message());
      }
      for (const auto& a : args) submit.add_args(a);
      TESSERA_ASSIGN_OR_RETURN(std::string id, client.Submit(submit));
      std::printf("%s\n", id.c_str());
    } else if (list_cmd->parsed()) {
      TESSERA_ASSIGN_OR_RETURN(auto jobs, client.ListJobs());
      std::printf("%s", FormatJobTable(jobs).c_str());
    } else if (cancel_cmd->parsed()) {
      TESSERA_RETURN_IF_ERROR(client.Cancel(cancel_id));
      std::printf("cancel of %s requested\n", cancel_id.c_str());
    } else if (preempt_cmd->parsed()) {
      TESSERA_RETURN_IF_ERROR(client.Preempt(preempt_id));
      std::printf("%s preempted: held until requeue\n", preempt_id.c_str());
    } else if (requeue_cmd->parsed()) {
      TESSERA_RETURN_IF_ERROR(client.Requeue(requeue_id));
      std::printf("%s requeued\n", requeue_id.c_str());
    } else if (resize_cmd->parsed()) {
      TESSERA_RETURN_IF_ERROR(client.Resize(resize_id, resize_workers));
      std::printf("%s resize to %d worker(s) ordered\n", resize_id.c_str(), resize_workers);
    } else if (nodes_cmd->parsed()) {
      TESSERA_ASSIGN_OR_RETURN(auto nodes, client.ListNodes());
      std::printf("%s", FormatNodeTable(nodes).c_str());
    } else if (events_cmd->parsed()) {
      TESSERA_ASSIGN_OR_RETURN(auto events, client.ListEvents(limit));
      std::printf("%s", FormatEvents(events).c_str());
    } else if (metrics_cmd->parsed()) {
      TESSERA_ASSIGN_OR_RETURN(std::string text, client.Metrics());
      std::printf("%s", text.c_str());
    } else if (wait_cmd->parsed()) {
      auto deadline = std::chrono::steady_clock::now() +
                      std::chrono::milliseconds(static_cast<int64_t>(wait_timeout * 1000));
      while (true) {
        TESSERA_ASSIGN_OR_RETURN(auto jobs, client.ListJobs());
        size_t done = 0;
        for (const auto& id : wait_ids) {
          auto it = std::find_if(jobs.begin(), jobs.end(), [&](auto& j) { return j.id() == id; });
          if (it == jobs.end()) return NotFoundError("no job " + id);
          if (IsTerminalState(it->state())) ++done;
        }
        if (done == wait_ids.size()) break;
        if (std::chrono::steady_clock::now() > deadline) {
          return DeadlineExceededError("jobs not done after the timeout");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
    }
    return Status::Ok();
  });
}
