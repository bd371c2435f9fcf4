#include "cluster/agent/agent.h"

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include <thread>

#include "cluster/agent/cluster.grpc.pb.h"
#include "cluster/job/job_type.h"

namespace tessera::cluster {

namespace {

using Clock = std::chrono::steady_clock;

std::unique_ptr<grpc::ClientContext> Context(std::chrono::milliseconds timeout) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + timeout);
  return context;
}

}  // namespace

Agent::Agent(AgentOptions options) : options_(std::move(options)) {}

Status Agent::Run(const std::atomic<bool>& stop) {
  if (options_.node_id.empty()) return InvalidArgumentError("node id is empty");
  if (options_.slots < 1) return InvalidArgumentError("slots must be positive");
  if (options_.scheduler.empty()) return InvalidArgumentError("no scheduler address");
  std::error_code ec;
  if (!std::filesystem::exists(options_.job_binary, ec)) {
    // Command jobs need no program of ours; runs of the default type fail (exit code 127).
    spdlog::warn("job binary {} does not exist: {} jobs will fail on this node",
                 options_.job_binary.string(), kDefaultJobType);
  }
  std::filesystem::create_directories(options_.log_dir, ec);
  if (ec) return InternalError("creating " + options_.log_dir.string() + ": " + ec.message());

  // gRPC backs off reconnecting for up to 2 minutes by default; a restarted scheduler must hear
  // from its agents well within its heartbeat timeout, so retry every few hundred ms.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 500);
  auto channel =
      grpc::CreateCustomChannel(options_.scheduler, grpc::InsecureChannelCredentials(), args);
  auto stub = rpc::Scheduler::NewStub(channel);
  RunManager runs({.job_binary = options_.job_binary,
                   .job_programs = options_.job_programs,
                   .log_dir = options_.log_dir,
                   .stop_timeout = options_.stop_timeout,
                   .term_grace = options_.term_grace,
                   .python_path = options_.python_path});
  bool registered = false;
  auto last_heartbeat = Clock::time_point();
  auto last_complaint = Clock::time_point();
  bool urgent = false;

  while (!stop.load()) {
    if (!registered) {
      rpc::RegisterNodeRequest request;
      request.set_node_id(options_.node_id);
      request.set_slots(options_.slots);
      request.set_address(options_.address);
      rpc::RegisterNodeReply reply;
      grpc::Status s = stub->RegisterNode(Context(std::chrono::seconds(2)).get(), request, &reply);
      if (s.ok()) {
        registered = true;
        urgent = true;
        spdlog::info("node {} registered {} slot(s) with {} (heartbeat timeout {:.1f} s)",
                     options_.node_id, options_.slots, options_.scheduler,
                     reply.heartbeat_timeout_s());
      } else if (s.error_code() == grpc::StatusCode::INVALID_ARGUMENT) {
        return InvalidArgumentError("scheduler refused registration: " + s.error_message());
      } else if (Clock::now() - last_complaint > std::chrono::seconds(5)) {
        spdlog::warn("cannot register with {}: {} (retrying)", options_.scheduler,
                     s.error_message());
        last_complaint = Clock::now();
      }
    }
    bool changed = false;
    std::vector<rpc::RunReport> reports = runs.Collect(&changed);
    urgent = urgent || changed;
    if (registered && (urgent || Clock::now() - last_heartbeat >= options_.heartbeat_interval)) {
      rpc::HeartbeatRequest request;
      request.set_node_id(options_.node_id);
      for (auto& r : reports) *request.add_runs() = std::move(r);
      rpc::HeartbeatReply reply;
      last_heartbeat = Clock::now();
      grpc::Status s = stub->Heartbeat(Context(std::chrono::seconds(2)).get(), request, &reply);
      if (!s.ok()) {
        // The scheduler may be restarting: the runs carry on, the heartbeat is retried.
        if (Clock::now() - last_complaint > std::chrono::seconds(5)) {
          spdlog::warn("heartbeat to {} failed: {} (runs continue; retrying)", options_.scheduler,
                       s.error_message());
          last_complaint = Clock::now();
        }
      } else if (reply.unknown_node()) {
        spdlog::warn("scheduler does not know node {}: registering again", options_.node_id);
        registered = false;
        runs.Reconcile(std::vector<rpc::Assignment>());  // whatever ran here was given up
      } else {
        urgent = runs.Reconcile(reply.assignments());
      }
    }
    std::this_thread::sleep_for(urgent ? std::chrono::milliseconds(1) : options_.poll_interval);
  }
  spdlog::info("node {} shutting down: asking {} run(s) to checkpoint", options_.node_id,
               runs.live_runs());
  runs.StopAll(options_.shutdown_grace);
  return Status::Ok();
}

}  // namespace tessera::cluster
