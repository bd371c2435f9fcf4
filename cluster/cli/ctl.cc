#include "cluster/cli/ctl.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>

#include "cluster/agent/cluster.grpc.pb.h"

namespace tessera::cluster {

struct ClusterClient::Impl {
  std::string address;
  std::chrono::milliseconds timeout;
  std::unique_ptr<rpc::Scheduler::Stub> stub;
  std::string token;

  std::unique_ptr<grpc::ClientContext> Context() const {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + timeout);
    if (!token.empty()) context->AddMetadata("authorization", "Bearer " + token);
    return context;
  }
  Status Check(const grpc::Status& s) const {
    if (s.ok()) return Status::Ok();
    if (s.error_code() == grpc::StatusCode::UNAUTHENTICATED) {  // no such code in core/status.h
      return PermissionDeniedError("unauthenticated: " + s.error_message());
    }
    Status status(static_cast<StatusCode>(s.error_code()), s.error_message());
    if (s.error_code() == grpc::StatusCode::UNAVAILABLE ||
        s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
      return status.WithContext("scheduler at " + address);
    }
    return status;
  }
};

Result<ClusterClient> ClusterClient::Connect(const std::string& address,
                                             std::chrono::milliseconds timeout) {
  if (address.empty() || address.find(':') == std::string::npos) {
    return InvalidArgumentError("scheduler address must be host:port, got '" + address + "'");
  }
  auto impl = std::make_unique<Impl>();
  impl->address = address;
  impl->timeout = timeout;
  impl->stub =
      rpc::Scheduler::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  return ClusterClient(std::move(impl));
}

ClusterClient::ClusterClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ClusterClient::~ClusterClient() = default;
ClusterClient::ClusterClient(ClusterClient&&) noexcept = default;
ClusterClient& ClusterClient::operator=(ClusterClient&&) noexcept = default;

Result<std::string> ClusterClient::Submit(const rpc::SubmitRequest& request) {
  rpc::SubmitReply reply;
  TESSERA_RETURN_IF_ERROR(
      impl_->Check(impl_->stub->Submit(impl_->Context().get(), request, &reply)));
  return reply.job_id();
}

void ClusterClient::SetToken(std::string token) { impl_->token = std::move(token); }

Status ClusterClient::Preempt(const std::string& job_id) {
  rpc::JobCommandRequest request;
  request.set_job_id(job_id);
  rpc::JobCommandReply reply;
  return impl_->Check(impl_->stub->Preempt(impl_->Context().get(), request, &reply));
}

Status ClusterClient::Requeue(const std::string& job_id) {
  rpc::JobCommandRequest request;
  request.set_job_id(job_id);
  rpc::JobCommandReply reply;
  return impl_->Check(impl_->stub->Requeue(impl_->Context().get(), request, &reply));
}

Status ClusterClient::Resize(const std::string& job_id, int workers) {
  rpc::ResizeRequest request;
  request.set_job_id(job_id);
  request.set_workers(workers);
  rpc::JobCommandReply reply;
  return impl_->Check(impl_->stub->Resize(impl_->Context().get(), request, &reply));
}

Status ClusterClient::Cancel(const std::string& job_id) {
  rpc::CancelRequest request;
  request.set_job_id(job_id);
  rpc::CancelReply reply;
  return impl_->Check(impl_->stub->Cancel(impl_->Context().get(), request, &reply));
}

Result<std::vector<rpc::JobInfo>> ClusterClient::ListJobs() {
  rpc::ListJobsReply reply;
  TESSERA_RETURN_IF_ERROR(
      impl_->Check(impl_->stub->ListJobs(impl_->Context().get(), rpc::ListJobsRequest(), &reply)));
  return std::vector<rpc::JobInfo>(reply.jobs().begin(), reply.jobs().end());
}

Result<std::vector<rpc::NodeInfo>> ClusterClient::ListNodes() {
  rpc::ListNodesReply reply;
  TESSERA_RETURN_IF_ERROR(impl_->Check(
      impl_->stub->ListNodes(impl_->Context().get(), rpc::ListNodesRequest(), &reply)));
  return std::vector<rpc::NodeInfo>(reply.nodes().begin(), reply.nodes().end());
}

Result<std::vector<rpc::Event>> ClusterClient::ListEvents(int limit) {
  rpc::ListEventsRequest request;
  request.set_limit(limit);
  rpc::ListEventsReply reply;
  TESSERA_RETURN_IF_ERROR(
      impl_->Check(impl_->stub->ListEvents(impl_->Context().get(), request, &reply)));
  return std::vector<rpc::Event>(reply.events().begin(), reply.events().end());
}

Result<std::string> ClusterClient::Metrics() {
  rpc::GetMetricsReply reply;
  TESSERA_RETURN_IF_ERROR(impl_->Check(
      impl_->stub->GetMetrics(impl_->Context().get(), rpc::GetMetricsRequest(), &reply)));
  return reply.prometheus_text();
}

bool IsTerminalState(const std::string& state) {
  return state == "finished" || state == "cancelled" || state == "failed";
}

namespace {

// Renders rows as left-aligned columns separated by two spaces.
std::string Table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace

std::string FormatJobTable(const std::vector<rpc::JobInfo>& jobs) {
  std::vector<std::vector<std::string>> rows = {{"ID", "TENANT", "TIER", "STATE", "WORKERS", "STEP",
                                                 "SLA", "TARGET", "WAIT", "PREEMPT", "RECOVER",
                                                 "PLACEMENT", "LOST"}};
  for (const auto& j : jobs) {
    bool below = j.sla_target() > 0 && j.sla_fraction() < j.sla_target();
    rows.push_back({
        j.id(),
        j.tenant(),
        j.tier(),
        j.state(),
        fmt::format("{}/{}", j.workers(), j.requested_workers()),
        j.total_steps() > 0 ? fmt::format("{}/{}", j.step(), j.total_steps())
        : j.step() > 0      ? std::to_string(j.step())  // a command job: its total is unknown
                            : "-",
        fmt::format("{:.0f}%{}", 100 * j.sla_fraction(), below ? "!" : ""),
        j.sla_target() > 0 ? fmt::format("{:.0f}%", 100 * j.sla_target()) : "best-effort",
        j.time_to_workers() >= 0 ? fmt::format("{:.2f}s", j.time_to_workers()) : "-",
        std::to_string(j.preemptions()),
        std::to_string(j.recoveries()),
        j.placement(),
        // Steps lost by resuming from an older checkpoint; the SLA column already excludes
        // the progress they had earned.
        j.lost_steps() > 0 ? fmt::format("{} steps ({:.1f}s)", j.lost_steps(), j.lost_progress_s())
                           : "-",
    });
  }
  return Table(rows);
}

std::string FormatNodeTable(const std::vector<rpc::NodeInfo>& nodes) {
  std::vector<std::vector<std::string>> rows = {
      {"NODE", "STATE", "SLOTS", "USED", "HEARTBEAT", "JOBS"}};
  for (const auto& n : nodes) {
    rows.push_back({n.id(), n.alive() ? "alive" : "dead", std::to_string(n.slots()),
                    std::to_string(n.used()), fmt::format("{:.1f}s ago", n.heartbeat_age_s()),
                    n.jobs().empty() ? "-" : n.jobs()});
  }
  return Table(rows);
}

std::string FormatEvents(const std::vector<rpc::Event>& events) {
  std::string out;
  double t0 = events.empty() ? 0 : events.front().time();
  for (const auto& e : events) out += fmt::format("+{:8.3f}s  {}\n", e.time() - t0, e.text());
  return out;
}

}  // namespace tessera::cluster
