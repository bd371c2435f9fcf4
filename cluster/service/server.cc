#include "cluster/service/server.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <httplib.h>
#include <spdlog/spdlog.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "cluster/agent/cluster.grpc.pb.h"
#include "cluster/service/auth.h"
#include "cluster/service/dashboard.h"
#include "cluster/service/scheduler.h"
#include "core/file.h"
#include "core/metrics.h"
#include "core/socket_io.h"

namespace tessera::cluster {

double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

namespace {

grpc::Status ToGrpc(const Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), s.message());
}

// Prometheus text, rebuilt from the scheduler's state on every scrape (cheap at this scale,
// and nothing to keep consistent).
std::string RenderMetrics(const Scheduler& scheduler, double now) {
  Metrics metrics;
  for (const rpc::JobInfo& job : scheduler.ListJobs(now)) {
    metrics
        .AddGauge("cluster_jobs", "Jobs by tier and state",
                  {{"tier", job.tier()}, {"state", job.state()}})
        .Add(1);
    metrics
        .AddCounter("cluster_job_preemptions_total", "Preemptions, by tier", {{"tier", job.tier()}})
        .Increment(job.preemptions());
    metrics
        .AddCounter("cluster_job_recoveries_total",
                    "Restarts from a checkpoint after a crash or a lost node",
                    {{"tier", job.tier()}})
        .Increment(job.recoveries());
    if (job.time_to_workers() >= 0) {
      metrics
          .AddHistogram("cluster_time_to_workers_seconds", "Submission to first start",
                        {0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60}, {{"tier", job.tier()}})
          .Observe(job.time_to_workers());
    }
    if (job.state() == "finished") {
      metrics
          .AddHistogram("cluster_sla_fraction", "Achieved fraction of ideal speed of finished jobs",
                        {0.5, 0.7, 0.8, 0.9, 0.95, 0.99, 1}, {{"tier", job.tier()}})
          .Observe(job.sla_fraction());
    }
  }
  for (const rpc::NodeInfo& node : scheduler.ListNodes(now)) {
    metrics.AddGauge("cluster_slots", "Slots by node", {{"node", node.id()}}).Set(node.slots());
    metrics.AddGauge("cluster_slots_used", "Slots held by jobs, by node", {{"node", node.id()}})
        .Set(node.used());
    metrics.AddGauge("cluster_node_alive", "1 when the node heartbeats", {{"node", node.id()}})
        .Set(node.alive() ? 1 : 0);
  }
  const Scheduler::Stats& stats = scheduler.stats();
  metrics.AddCounter("cluster_policy_decisions_total", "Policy calls since start")
      .Increment(stats.decisions);
  metrics.AddCounter("cluster_policy_actions_total", "Actions carried out since start")
      .Increment(stats.actions);
  metrics.AddCounter("cluster_policy_rejected_total", "Policy answers refused by ValidateActions")
      .Increment(stats.rejected_decisions);
  metrics.AddCounter("cluster_node_losses_total", "Nodes declared dead since start")
      .Increment(stats.node_losses);
  return metrics.RenderPrometheus();
}

// The caller of a user RPC: nullopt when the scheduler has no tokens (open), else the token's
// principal; an UNAUTHENTICATED status for a missing or unknown token.
struct Caller {
  std::optional<Principal> principal;
  grpc::Status status;
};
Caller Authenticate(const std::optional<TokenTable>& tokens, const grpc::ServerContext* context) {
  if (!tokens) return {};
  std::string_view header;
  const auto& metadata = context->client_metadata();
  if (auto it = metadata.find("authorization"); it != metadata.end()) {
    header = std::string_view(it->second.data(), it->second.size());
  }
  Result<Principal> who = tokens->Authenticate(header);
  if (!who.ok()) {
    return {std::nullopt, grpc::Status(grpc::StatusCode::UNAUTHENTICATED, who.status().message())};
  }
  return {std::move(*who), grpc::Status::OK};
}

class Service final : public rpc::Scheduler::Service {
 public:
  Service(std::mutex& mu, Scheduler& scheduler, const std::optional<TokenTable>& tokens)
      : mu_(mu), scheduler_(scheduler), tokens_(tokens) {}

  grpc::Status RegisterNode(grpc::ServerContext*, const rpc::RegisterNodeRequest* request,
                            rpc::RegisterNodeReply* reply) override {
    std::lock_guard lock(mu_);
    reply->set_heartbeat_timeout_s(scheduler_.options().heartbeat_timeout_s);
    return ToGrpc(scheduler_.RegisterNode(request->node_id(), request->slots(), WallSeconds(),
                                          request->address()));
  }
  grpc::Status Heartbeat(grpc::ServerContext*, const rpc::HeartbeatRequest* request,
                         rpc::HeartbeatReply* reply) override {
    std::lock_guard lock(mu_);
    Result<rpc::HeartbeatReply> r = scheduler_.Heartbeat(*request, WallSeconds());
    if (!r.ok()) return ToGrpc(r.status());
    *reply = std::move(*r);
    return grpc::Status::OK;
  }
  grpc::Status Submit(grpc::ServerContext* context, const rpc::SubmitRequest* request,
                      rpc::SubmitReply* reply) override {
    Caller caller = Authenticate(tokens_, context);
    if (!caller.status.ok()) return caller.status;
    rpc::SubmitRequest checked = *request;
    if (caller.principal) {
      if (Status s = AuthorizeSubmit(*caller.principal, checked); !s.ok()) return ToGrpc(s);
    }
    std::lock_guard lock(mu_);
    Result<std::string> id = scheduler_.Submit(checked, WallSeconds());
    if (!id.ok()) return ToGrpc(id.status());
    reply->set_job_id(*id);
    return grpc::Status::OK;
  }
  grpc::Status Cancel(grpc::ServerContext* context, const rpc::CancelRequest* request,
                      rpc::CancelReply*) override {
    return OnJob(context, request->job_id(),
                 [&](double now) { return scheduler_.Cancel(request->job_id(), now); });
  }
  grpc::Status Preempt(grpc::ServerContext* context, const rpc::JobCommandRequest* request,
                       rpc::JobCommandReply*) override {
    return OnJob(context, request->job_id(),
                 [&](double now) { return scheduler_.Preempt(request->job_id(), now); });
  }
  grpc::Status Requeue(grpc::ServerContext* context, const rpc::JobCommandRequest* request,
                       rpc::JobCommandReply*) override {
    return OnJob(context, request->job_id(),
                 [&](double now) { return scheduler_.Requeue(request->job_id(), now); });
  }
  grpc::Status Resize(grpc::ServerContext* context, const rpc::ResizeRequest* request,
                      rpc::JobCommandReply*) override {
    return OnJob(context, request->job_id(), [&](double now) {
      return scheduler_.Resize(request->job_id(), request->workers(), now);
    });
  }
  grpc::Status ListJobs(grpc::ServerContext* context, const rpc::ListJobsRequest*,
                        rpc::ListJobsReply* reply) override {
    if (Caller c = Authenticate(tokens_, context); !c.status.ok()) return c.status;
    std::lock_guard lock(mu_);
    for (auto& job : scheduler_.ListJobs(WallSeconds())) *reply->add_jobs() = std::move(job);
    return grpc::Status::OK;
  }
  grpc::Status ListNodes(grpc::ServerContext* context, const rpc::ListNodesRequest*,
                         rpc::ListNodesReply* reply) override {
    if (Caller c = Authenticate(tokens_, context); !c.status.ok()) return c.status;
    std::lock_guard lock(mu_);
    for (auto& node : scheduler_.ListNodes(WallSeconds())) *reply->add_nodes() = std::move(node);
    return grpc::Status::OK;
  }
  grpc::Status ListEvents(grpc::ServerContext* context, const rpc::ListEventsRequest* request,
                          rpc::ListEventsReply* reply) override {
    if (Caller c = Authenticate(tokens_, context); !c.status.ok()) return c.status;
    std::lock_guard lock(mu_);
    for (auto& e : scheduler_.ListEvents(request->limit())) *reply->add_events() = std::move(e);
    return grpc::Status::OK;
  }
  grpc::Status GetMetrics(grpc::ServerContext* context, const rpc::GetMetricsRequest*,
                          rpc::GetMetricsReply* reply) override {
    if (Caller c = Authenticate(tokens_, context); !c.status.ok()) return c.status;
    std::lock_guard lock(mu_);
    reply->set_prometheus_text(RenderMetrics(scheduler_, WallSeconds()));
    return grpc::Status::OK;
  }

 private:
  // Authenticates the caller, checks that it may act on `job_id`, then runs `command(now)`.
  template <typename Command>
  grpc::Status OnJob(grpc::ServerContext* context, const std::string& job_id, Command command) {
    Caller caller = Authenticate(tokens_, context);
    if (!caller.status.ok()) return caller.status;
    std::lock_guard lock(mu_);
    if (caller.principal) {
      Result<std::string> tenant = scheduler_.JobTenant(job_id);
      if (!tenant.ok()) return ToGrpc(tenant.status());
      if (Status s = AuthorizeJobCommand(*caller.principal, job_id, *tenant); !s.ok()) {
        return ToGrpc(s);
      }
    }
    return ToGrpc(command(WallSeconds()));
  }

  std::mutex& mu_;
  Scheduler& scheduler_;
  const std::optional<TokenTable>& tokens_;
};

}  // namespace

struct SchedulerServer::Impl {
  std::mutex mu;
  std::optional<TokenTable> tokens;
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<Service> service;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
  std::thread ticker;
  std::condition_variable stop_cv;
  bool stopping = false;
  std::chrono::milliseconds tick{250};
  std::unique_ptr<httplib::Server> http;
  std::thread http_thread;
  int metrics_port = 0;
};

Result<std::unique_ptr<SchedulerServer>> SchedulerServer::Start(const ServerOptions& options) {
  if (options.state_dir.empty()) return InvalidArgumentError("no state directory");
  if (options.tick.count() <= 0) return InvalidArgumentError("tick must be positive");
  std::unique_ptr<Policy> policy;
  if (options.policy == "singularity") {
    policy = NewSingularityPolicy(options.singularity);
  } else {
    TESSERA_ASSIGN_OR_RETURN(policy, NewPolicyByName(options.policy));
  }
  auto impl = std::make_unique<Impl>();
  std::optional<QuotaConfig> quota;
  if (!options.quota_file.empty()) {
    TESSERA_ASSIGN_OR_RETURN(std::string text, ReadFile(options.quota_file));
    Result<QuotaConfig> parsed = ParseQuotaConfig(text);
    if (!parsed.ok()) return parsed.status().WithContext(options.quota_file.string());
    quota = std::move(*parsed);
  }
  if (!options.tokens_file.empty()) {
    TESSERA_ASSIGN_OR_RETURN(std::string text, ReadFile(options.tokens_file));
    Result<TokenTable> tokens = TokenTable::Parse(text);
    if (!tokens.ok()) return tokens.status().WithContext(options.tokens_file.string());
    impl->tokens = std::move(*tokens);
  }
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<StateStore> store, StateStore::Open(options.state_dir));
  impl->tick = options.tick;
  TESSERA_ASSIGN_OR_RETURN(impl->scheduler,
                           Scheduler::Create({.heartbeat_timeout_s = options.heartbeat_timeout_s,
                                              .restart_grace_s = options.restart_grace_s,
                                              .max_crashes = options.max_crashes,
                                              .job_root = options.job_root,
                                              .master_port_base = options.master_port_base,
                                              .quota = std::move(quota)},
                                             std::move(policy), std::move(store), WallSeconds()));
  impl->service = std::make_unique<Service>(impl->mu, *impl->scheduler, impl->tokens);
  grpc::ServerBuilder builder;
  // Not shared: with gRPC's default SO_REUSEPORT a second master on this port would start and
  // take part of the agents' connections.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddListeningPort(options.listen, grpc::InsecureServerCredentials(), &impl->port);
  builder.RegisterService(impl->service.get());
  impl->server = builder.BuildAndStart();
  if (!impl->server || impl->port == 0) {
    return UnavailableError("cannot listen on " + options.listen);
  }
  Impl* raw = impl.get();
  if (!options.metrics_listen.empty()) {
    size_t colon = options.metrics_listen.rfind(':');
    int port = -1;
    if (colon != std::string::npos) {
      try {
        port = std::stoi(options.metrics_listen.substr(colon + 1));
      } catch (const std::exception&) {
        port = -1;
      }
    }
    if (port < 0 || port > 65535) {
      return InvalidArgumentError("metrics address must be host:port, got '" +
                                  options.metrics_listen + "'");
    }
    std::string host = options.metrics_listen.substr(0, colon);
    impl->http = std::make_unique<httplib::Server>();
    // Not shared either: a second scheduler's metrics on this port would answer part of the
    // scrapes.
    impl->http->set_socket_options(ReuseAddressOnly);
    impl->http->Get("/metrics", [raw](const httplib::Request&, httplib::Response& response) {
      std::lock_guard lock(raw->mu);
      response.set_content(RenderMetrics(*raw->scheduler, WallSeconds()),
                           "text/plain; version=0.0.4");
    });
    ServeDashboard(*impl->http, raw->mu, *raw->scheduler, raw->tokens);
    impl->metrics_port = port == 0 ? impl->http->bind_to_any_port(host)
                                   : (impl->http->bind_to_port(host, port) ? port : -1);
    if (impl->metrics_port <= 0) {
      impl->server->Shutdown();
      return UnavailableError("cannot serve metrics on " + options.metrics_listen);
    }
    impl->http_thread = std::thread([raw] { raw->http->listen_after_bind(); });
  }
  impl->ticker = std::thread([raw] {
    std::unique_lock lock(raw->mu);
    while (!raw->stopping) {
      raw->stop_cv.wait_for(lock, raw->tick);
      if (raw->stopping) break;
      if (Status s = raw->scheduler->Tick(WallSeconds()); !s.ok()) {
        spdlog::error("tick: {}", s.ToString());
      }
    }
  });
  spdlog::info("scheduler listening on port {} with policy {}", impl->port,
               impl->scheduler->policy().name());
  return std::unique_ptr<SchedulerServer>(new SchedulerServer(std::move(impl)));
}

SchedulerServer::SchedulerServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

SchedulerServer::~SchedulerServer() { Shutdown(); }

int SchedulerServer::port() const { return impl_->port; }
int SchedulerServer::metrics_port() const { return impl_->metrics_port; }

void SchedulerServer::Shutdown() {
  if (!impl_ || !impl_->server) return;
  {
    std::lock_guard lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->stop_cv.notify_all();
  if (impl_->ticker.joinable()) impl_->ticker.join();
  if (impl_->http) {
    impl_->http->stop();
    if (impl_->http_thread.joinable()) impl_->http_thread.join();
  }
  impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  impl_->server.reset();
}

}  // namespace tessera::cluster
