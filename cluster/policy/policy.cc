// Names, worker-count rules, action validation and the policy registry.
#include "cluster/policy/policy.h"

#include <algorithm>
#include <string>
#include <vector>

#include "cluster/policy/placement.h"

namespace tessera::cluster {

std::string_view TierName(Tier tier) {
  switch (tier) {
    case Tier::kPremium:
      return "premium";
    case Tier::kStandard:
      return "standard";
    case Tier::kBasic:
      return "basic";
  }
  return "unknown";
}

Result<Tier> ParseTier(std::string_view name) {
  for (Tier t : {Tier::kPremium, Tier::kStandard, Tier::kBasic}) {
    if (name == TierName(t)) return t;
  }
  return InvalidArgumentError("unknown tier '" + std::string(name) +
                              "' (want premium, standard or basic)");
}

double TierTarget(Tier tier) {
  switch (tier) {
    case Tier::kPremium:
      return 0.95;
    case Tier::kStandard:
      return 0.70;
    case Tier::kBasic:
      return 0.0;
  }
  return 0.0;
}

bool IsValidWorkerCount(const JobSpec& spec, int k) {
  return k >= 1 && k >= spec.min_workers && k <= spec.requested_workers &&
         spec.requested_workers % k == 0;
}

int LargestValidWorkerCount(const JobSpec& spec, int limit) {
  for (int k = std::min(limit, spec.requested_workers); k >= std::max(1, spec.min_workers); --k) {
    if (spec.requested_workers % k == 0) return k;
  }
  return 0;
}

std::string_view JobStateName(JobState state) {
  switch (state) {
    case JobState::kPending:
      return "pending";
    case JobState::kRunning:
      return "running";
    case JobState::kCheckpointing:
      return "checkpointing";
    case JobState::kSuspended:
      return "suspended";
    case JobState::kFinished:
      return "finished";
  }
  return "unknown";
}

int TotalSlots(const Placement& placement) {
  int total = 0;
  for (const Slice& s : placement) total += s.slots;
  return total;
}

std::string_view ActionKindName(Action::Kind kind) {
  switch (kind) {
    case Action::Kind::kStart:
      return "start";
    case Action::Kind::kPreempt:
      return "preempt";
    case Action::Kind::kResize:
      return "resize";
    case Action::Kind::kMigrate:
      return "migrate";
  }
  return "unknown";
}

std::string DescribeAction(const ClusterView& view, const Action& action) {
  std::string out(ActionKindName(action.kind));
  out += " " + action.job_id;
  if (!action.placement.empty()) {
    out += " on ";
    for (size_t i = 0; i < action.placement.size(); ++i) {
      const Slice& s = action.placement[i];
      if (i > 0) out += ",";
      const bool known = s.node >= 0 && static_cast<size_t>(s.node) < view.nodes.size();
      out += (known ? view.nodes[s.node].id : "#" + std::to_string(s.node)) + ":" +
             std::to_string(s.slots);
    }
  }
  return out;
}

bool IsCompactPlacement(const ClusterView& view, const Placement& placement) {
  if (placement.empty()) return false;
  std::vector<bool> used(view.nodes.size(), false);
  for (const Slice& s : placement) {
    if (s.node < 0 || static_cast<size_t>(s.node) >= view.nodes.size()) return false;
    if (s.slots <= 0 || used[s.node] || !view.nodes[s.node].alive) return false;
    used[s.node] = true;
  }
  const int needed = NodesNeeded(TotalSlots(placement), MaxNodeSlots(view));
  return static_cast<int>(placement.size()) == needed;
}

namespace {

bool SameSlices(Placement a, Placement b) {
  auto by_node = [](const Slice& x, const Slice& y) { return x.node < y.node; };
  std::sort(a.begin(), a.end(), by_node);
  std::sort(b.begin(), b.end(), by_node);
  return a == b;
}

}  // namespace

Status ValidateActions(const ClusterView& view, const std::vector<Action>& actions) {
  std::vector<int> free = FreeSlots(view);
  for (size_t n = 0; n < free.size(); ++n) {
    if (free[n] < 0 && view.nodes[n].alive) {
      return InvalidArgumentError("view is over-allocated on node " + view.nodes[n].id);
    }
  }
  std::vector<bool> seen(view.jobs.size(), false);
  for (size_t i = 0; i < actions.size(); ++i) {
    const Action& a = actions[i];
    auto bad = [&](const std::string& why) {
      return InvalidArgumentError("action " + std::to_string(i) + " (" + DescribeAction(view, a) +
                                  "): " + why);
    };
    if (a.job < 0 || static_cast<size_t>(a.job) >= view.jobs.size()) {
      return bad("job index out of range");
    }
    const JobView& job = view.jobs[a.job];
    if (job.spec.id != a.job_id) return bad("job_id does not match the job at that index");
    if (seen[a.job]) return bad("second action for the same job");
    seen[a.job] = true;
    const std::string state(JobStateName(job.state));
    // `own`: the job's current placement, usable by its own Resize/Migrate. Slots it gives up
    // are draining afterwards, so they stay unusable for the rest of the actions.
    auto check_fit = [&](const Placement& own) -> Status {
      const int k = TotalSlots(a.placement);
      if (!IsValidWorkerCount(job.spec, k)) {
        return bad(std::to_string(k) + " workers is not a valid count for this job");
      }
      if (!IsCompactPlacement(view, a.placement)) return bad("placement is not compact");
      auto own_on = [&](int node) {
        int n = 0;
        for (const Slice& o : own) n += o.node == node ? o.slots : 0;
        return n;
      };
      for (const Slice& s : a.placement) {
        const int usable = free[s.node] + own_on(s.node);
        if (usable < s.slots) {
          return bad("node " + view.nodes[s.node].id + " has only " + std::to_string(usable) +
                     " usable slots");
        }
      }
      for (const Slice& s : a.placement) free[s.node] -= std::max(0, s.slots - own_on(s.node));
      return Status::Ok();
    };
    switch (a.kind) {
      case Action::Kind::kStart:
        if (job.state != JobState::kPending && job.state != JobState::kSuspended) {
          return bad("cannot start a " + state + " job");
        }
        TESSERA_RETURN_IF_ERROR(check_fit({}));
        break;
      case Action::Kind::kPreempt:
        if (job.state != JobState::kRunning) return bad("cannot preempt a " + state + " job");
        if (!a.placement.empty()) return bad("preempt takes no placement");
        break;
      case Action::Kind::kResize:
      case Action::Kind::kMigrate: {
        if (job.state != JobState::kRunning) return bad("cannot move a " + state + " job");
        const bool same_count = TotalSlots(a.placement) == job.workers();
        if (a.kind == Action::Kind::kResize && same_count) {
          return bad("resize must change the worker count");
        }
        if (a.kind == Action::Kind::kMigrate) {
          if (!same_count) return bad("migrate must keep the worker count");
          if (SameSlices(a.placement, job.placement)) return bad("migrate to the same placement");
        }
        TESSERA_RETURN_IF_ERROR(check_fit(job.placement));
        break;
      }
    }
  }
  return Status::Ok();
}

}  // namespace tessera::cluster
