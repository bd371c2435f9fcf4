// The scheduler's web dashboard (issue 15), served on the metrics HTTP port:
//   GET /            a self-refreshing page (plain HTML and JavaScript, no external resources):
//                    jobs by tier and by tenant with their SLA figures, nodes and their slots,
//                    the latest events; it polls /api/state every second.
//   GET /api/state   the same data as JSON (DashboardStateJson).
// With tokens (auth.h), /api/state needs "Authorization: Bearer <token>"; the page takes the
// token from its URL (/?token=...) and sends it. Any valid token sees every tenant's jobs.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/agent/cluster.pb.h"
#include "cluster/service/auth.h"

namespace httplib {
class Server;
}

namespace tessera::cluster {

class Scheduler;

// {"now", "tiers": [{tier, jobs, active, running, waiting, finished, met, below_target,
// mean_fraction, target}], "tenants": [{tenant, jobs, active, slots, premium, standard, basic,
// borrowed}], "jobs": [active ones, then the latest finished ones; at most 200], "nodes": [...],
// "events": [the latest 30], "slots": {total, used}}.
std::string DashboardStateJson(const std::vector<rpc::JobInfo>& jobs,
                               const std::vector<rpc::NodeInfo>& nodes,
                               const std::vector<rpc::Event>& events, double now);

// The page.
std::string_view DashboardHtml();

// Registers the two routes on `http`; every request takes `mu` to read `scheduler`.
void ServeDashboard(httplib::Server& http, std::mutex& mu, Scheduler& scheduler,
                    const std::optional<TokenTable>& tokens);

}  // namespace tessera::cluster
