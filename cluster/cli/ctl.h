// cluster-ctl's library: a Status-returning client of the scheduler and the text tables it
// prints.
//
//   TESSERA_ASSIGN_OR_RETURN(auto client, ClusterClient::Connect("127.0.0.1:7070"));
//   TESSERA_ASSIGN_OR_RETURN(std::vector<rpc::JobInfo> jobs, client.ListJobs());
//   std::cout << FormatJobTable(jobs);
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "cluster/agent/cluster.pb.h"
#include "core/status.h"

namespace tessera::cluster {

class ClusterClient {
 public:
  // Connects lazily; the first call reports an unreachable scheduler as UNAVAILABLE.
  static Result<ClusterClient> Connect(const std::string& address,
                                       std::chrono::milliseconds timeout = std::chrono::seconds(5));
  ~ClusterClient();
  ClusterClient(ClusterClient&&) noexcept;
  ClusterClient& operator=(ClusterClient&&) noexcept;

  // Sends `token` with every call ("authorization: Bearer <token>", see
  // cluster/service/auth.h); empty: none. A refused token comes back as PERMISSION_DENIED whose
  // message starts with "unauthenticated: " (gRPC UNAUTHENTICATED).
  void SetToken(std::string token);

  Result<std::string> Submit(const rpc::SubmitRequest& request);
  Status Cancel(const std::string& job_id);
  // Operator commands (issue 15); see the Scheduler service in cluster.proto.
  Status Preempt(const std::string& job_id);
  Status Requeue(const std::string& job_id);
  Status Resize(const std::string& job_id, int workers);
  Result<std::vector<rpc::JobInfo>> ListJobs();
  Result<std::vector<rpc::NodeInfo>> ListNodes();
  Result<std::vector<rpc::Event>> ListEvents(int limit);
  Result<std::string> Metrics();

  struct Impl;

 private:
  explicit ClusterClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// True for finished, cancelled and failed.
bool IsTerminalState(const std::string& state);

// "ID  TENANT  TIER  STATE  WORKERS  STEP  SLA  ..." with one aligned row per job. The SLA
// column is the achieved fraction of ideal speed, marked "!" when it is below the tier's target.
std::string FormatJobTable(const std::vector<rpc::JobInfo>& jobs);
std::string FormatNodeTable(const std::vector<rpc::NodeInfo>& nodes);
// One line per event, times relative to the first event shown.
std::string FormatEvents(const std::vector<rpc::Event>& events);

}  // namespace tessera::cluster
