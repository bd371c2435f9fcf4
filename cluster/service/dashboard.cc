#include "cluster/service/dashboard.h"

#include <httplib.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "cluster/service/scheduler.h"
#include "cluster/service/server.h"

namespace tessera::cluster {
namespace {

bool IsActive(const rpc::JobInfo& job) {
  return job.state() != "finished" && job.state() != "cancelled" && job.state() != "failed";
}

bool IsWaitingState(const std::string& state) {
  return state == "pending" || state == "suspended" || state == "held";
}

nlohmann::json JobJson(const rpc::JobInfo& j) {
  return {{"id", j.id()},
          {"tenant", j.tenant()},
          {"tier", j.tier()},
          {"state", j.state()},
          {"workers", j.workers()},
          {"requested_workers", j.requested_workers()},
          {"min_workers", j.min_workers()},
          {"step", j.step()},
          {"total_steps", j.total_steps()},
          {"fraction", j.sla_fraction()},
          {"target", j.sla_target()},
          {"placement", j.placement()},
          {"preemptions", j.preemptions()},
          {"resizes", j.resizes()},
          {"migrations", j.migrations()},
          {"borrowed", j.borrowed()},
          {"held", j.held()}};
}

// Read-only data of the page, quietly dropped before this much: a browser tab left open must
// not grow the answer without bound.
constexpr size_t kMaxJobs = 200;
constexpr size_t kEvents = 30;

}  // namespace

std::string DashboardStateJson(const std::vector<rpc::JobInfo>& jobs,
                               const std::vector<rpc::NodeInfo>& nodes,
                               const std::vector<rpc::Event>& events, double now) {
  struct TierStats {
    int jobs = 0, active = 0, running = 0, waiting = 0, finished = 0, met = 0, below = 0;
    double fraction_sum = 0;
    double target = 0;
  };
  std::map<std::string, TierStats> tiers;
  for (const char* t : {"premium", "standard", "basic"}) tiers[t];
  struct TenantStats {
    int jobs = 0, active = 0, slots = 0, borrowed = 0;
    std::map<std::string, int> by_tier;
  };
  std::map<std::string, TenantStats> tenants;
  for (const rpc::JobInfo& j : jobs) {
    TierStats& t = tiers[j.tier()];
    t.target = j.sla_target();
    ++t.jobs;
    t.fraction_sum += j.sla_fraction();
    const bool met = j.sla_fraction() >= j.sla_target();
    if (IsActive(j)) {
      ++t.active;
      if (j.state() == "running") ++t.running;
      if (IsWaitingState(j.state())) ++t.waiting;
      if (!met) ++t.below;
    } else if (j.state() == "finished") {
      ++t.finished;
      if (met) ++t.met;
    }
    TenantStats& n = tenants[j.tenant()];
    ++n.jobs;
    ++n.by_tier[j.tier()];
    if (IsActive(j)) {
      ++n.active;
      n.slots += j.workers();
      if (j.borrowed()) ++n.borrowed;
    }
  }
  nlohmann::json out;
  out["now"] = now;
  out["tiers"] = nlohmann::json::array();
  for (const char* name : {"premium", "standard", "basic"}) {
    const TierStats& t = tiers[name];
    out["tiers"].push_back({{"tier", name},
                            {"jobs", t.jobs},
                            {"active", t.active},
                            {"running", t.running},
                            {"waiting", t.waiting},
                            {"finished", t.finished},
                            {"met", t.met},
                            {"below_target", t.below},
                            {"mean_fraction", t.jobs > 0 ? t.fraction_sum / t.jobs : 0.0},
                            {"target", t.target}});
  }
  out["tenants"] = nlohmann::json::array();
  for (const auto& [name, n] : tenants) {
    out["tenants"].push_back(
        {{"tenant", name},
         {"jobs", n.jobs},
         {"active", n.active},
         {"slots", n.slots},
         {"borrowed", n.borrowed},
         {"premium", n.by_tier.count("premium") ? n.by_tier.at("premium") : 0},
         {"standard", n.by_tier.count("standard") ? n.by_tier.at("standard") : 0},
         {"basic", n.by_tier.count("basic") ? n.by_tier.at("basic") : 0}});
  }
  // Active jobs first (newest first), then the latest finished ones.
  std::vector<const rpc::JobInfo*> shown;
  for (auto it = jobs.rbegin(); it != jobs.rend() && shown.size() < kMaxJobs; ++it) {
    if (IsActive(*it)) shown.push_back(&*it);
  }
  for (auto it = jobs.rbegin(); it != jobs.rend() && shown.size() < kMaxJobs; ++it) {
    if (!IsActive(*it)) shown.push_back(&*it);
  }
  out["jobs"] = nlohmann::json::array();
  for (const rpc::JobInfo* j : shown) out["jobs"].push_back(JobJson(*j));
  int total = 0, used = 0;
  out["nodes"] = nlohmann::json::array();
  for (const rpc::NodeInfo& n : nodes) {
    total += n.alive() ? n.slots() : 0;
    used += n.alive() ? n.used() : 0;
    out["nodes"].push_back({{"id", n.id()},
                            {"slots", n.slots()},
                            {"used", n.used()},
                            {"alive", n.alive()},
                            {"heartbeat_age_s", n.heartbeat_age_s()},
                            {"jobs", n.jobs()}});
  }
  out["slots"] = {{"total", total}, {"used", used}};
  out["events"] = nlohmann::json::array();
  const size_t first = events.size() > kEvents ? events.size() - kEvents : 0;
  for (size_t i = events.size(); i > first; --i) {
    out["events"].push_back({{"time", events[i - 1].time()}, {"text", events[i - 1].text()}});
  }
  return out.dump();
}

void ServeDashboard(httplib::Server& http, std::mutex& mu, Scheduler& scheduler,
                    const std::optional<TokenTable>& tokens) {
  http.Get("/", [](const httplib::Request&, httplib::Response& response) {
    response.set_content(std::string(DashboardHtml()), "text/html; charset=utf-8");
  });
  http.Get("/api/state", [&mu, &scheduler, &tokens](const httplib::Request& request,
                                                    httplib::Response& response) {
    if (tokens) {
      Result<Principal> who = tokens->Authenticate(request.get_header_value("Authorization"));
      if (!who.ok()) {
        response.status = 401;
        response.set_content(nlohmann::json{{"error", who.status().message()}}.dump(),
                             "application/json");
        return;
      }
    }
    std::lock_guard lock(mu);
    const double now = WallSeconds();
    response.set_header("Cache-Control", "no-store");
    response.set_content(DashboardStateJson(scheduler.ListJobs(now), scheduler.ListNodes(now),
                                            scheduler.ListEvents(static_cast<int>(kEvents)), now),
                         "application/json");
  });
}

}  // namespace tessera::cluster
