// Singularity-style SLA-aware policy. Singularity (Microsoft, 2022) publishes its mechanisms
// (transparent preemption, migration, replica splicing) and its SLA tiers but no policy; this is
// our policy on top of those mechanisms. One Decide call runs these passes, each working on the
// slots the previous ones left:
//
//  1. Guaranteed jobs (premium, then standard; least SLA slack first) that wait get their full
//     gang: on free slots if possible; else on slots that checkpoints in flight will release
//     (reserved, no new eviction); else by evicting lower-priority work from the node where that
//     costs least (EvictionCost: the delay it inflicts on its victims, basic victims before
//     standard ones): an elastic victim is shrunk in place when that frees enough, a small one
//     is migrated to free slots elsewhere when there are some, and only otherwise preempted.
//     Premium may evict standard jobs that have plenty of slack; nobody evicts in-quota premium.
//     A job admitted on borrowed quota (JobSpec::borrowed) is evictable by any in-quota job of
//     its tier or a higher one: the owner of the quota takes it back.
//  2. Premium headroom: keep `premium_headroom_slots` free (evicting basic work in the
//     background) so that the next premium job starts without waiting for a checkpoint.
//  3. Basic jobs start in FIFO order with backfilling, shrunk (replica splicing) when their full
//     gang does not fit. The oldest basic job that waited longer than kStarvationS reserves the
//     nodes it needs, so that backfilling cannot starve large gangs forever.
//  4. Shrunk jobs grow back (guaranteed first) when slots are free and they ran long enough
//     since their last change for a checkpoint/restore to be worth it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "cluster/policy/placement.h"
#include "cluster/policy/policy.h"
#include "cluster/policy/sla.h"

namespace tessera::cluster {
namespace {

// Premium jobs may evict a standard job only if it keeps at least this much SLA slack (s), so
// that the standard job can afford the checkpoint, the wait and the restore.
constexpr double kEvictStandardSlackS = 3600;
// A basic job that waited this long reserves the nodes it needs against backfilling.
constexpr double kStarvationS = 6 * 3600;

bool IsWaiting(const JobView& job) {
  return job.state == JobState::kPending || job.state == JobState::kSuspended;
}

class Decision {
 public:
  Decision(const ClusterView& view, const SingularityOptions& options)
      : view_(view),
        options_(options),
        free_(FreeSlots(view)),
        releasing_(ReleasingSlots(view)),
        max_node_(MaxNodeSlots(view)),
        touched_(view.jobs.size(), false),
        on_node_(view.nodes.size()) {
    for (size_t n = 0; n < free_.size(); ++n) free_[n] = std::max(0, free_[n]);
    for (const NodeView& node : view.nodes) capacity_ += node.alive ? node.slots : 0;
    soon_ = free_;
    for (size_t n = 0; n < soon_.size(); ++n) soon_[n] += releasing_[n];
    for (size_t i = 0; i < view.jobs.size(); ++i) {
      const JobView& job = view.jobs[i];
      if (job.state != JobState::kRunning) continue;
      for (const Slice& s : job.placement) {
        if (s.node >= 0 && static_cast<size_t>(s.node) < on_node_.size()) {
          on_node_[s.node].push_back(static_cast<int>(i));
        }
      }
    }
  }

  std::vector<Action> Run() {
    std::vector<int> guaranteed;
    for (size_t i = 0; i < view_.jobs.size(); ++i) {
      const JobView& job = view_.jobs[i];
      if (IsWaiting(job) && job.spec.tier != Tier::kBasic) guaranteed.push_back(i);
    }
    std::sort(guaranteed.begin(), guaranteed.end(), [&](int a, int b) {
      const JobView& x = view_.jobs[a];
      const JobView& y = view_.jobs[b];
      if (x.spec.tier != y.spec.tier) return x.spec.tier < y.spec.tier;
      if (x.spec.borrowed != y.spec.borrowed) return y.spec.borrowed;  // owners first
      const double sx = SlaSlack(x, view_.now), sy = SlaSlack(y, view_.now);
      if (sx != sy) return sx < sy;
      return a < b;
    });
    for (int i : guaranteed) PlaceGuaranteed(i);
    KeepHeadroom();
    StartBasic();
    Grow();
    return std::move(actions_);
  }

 private:
  // Reserves `placement` for a job that waits for slots being released: those slots are
  // neither counted again for other guaranteed jobs nor given to basic ones.
  void Reserve(const Placement& placement) {
    for (const Slice& s : placement) {
      soon_[s.node] -= s.slots;
      free_[s.node] -= std::min(free_[s.node], s.slots);
    }
  }

  void Emit(Action::Kind kind, int job, Placement placement) {
    touched_[job] = true;
    actions_.push_back({kind, job, view_.jobs[job].spec.id, std::move(placement)});
  }

  void Start(int job, Placement placement) {
    Take(free_, placement);
    Take(soon_, placement);
    Emit(Action::Kind::kStart, job, std::move(placement));
  }

  // May `victim` be evicted (shrunk, migrated or preempted) for a job of tier `for_tier`?
  bool Evictable(int victim, std::optional<Tier> for_tier) const {
    if (touched_[victim]) return false;
    const JobView& v = view_.jobs[victim];
    if (v.state != JobState::kRunning) return false;
    if (!for_tier) {  // background work (headroom): only basic jobs that ran a while
      return v.spec.tier == Tier::kBasic && view_.now - v.last_change >= options_.min_run_s;
    }
    if (v.spec.tier == Tier::kBasic) return true;
    // Quota owners take borrowed slots back (evictions "as standard" are for any guaranteed job,
    // "as premium" only for premium ones: see PlaceGuaranteed).
    if (v.spec.borrowed && !evictor_borrowed_ && v.spec.tier >= *for_tier) return true;
    return *for_tier == Tier::kPremium && v.spec.tier == Tier::kStandard &&
           SlaSlack(v, view_.now) >= kEvictStandardSlackS;
  }

  // What displacing job `v` from node `n` to release `need` slots there would do: shrink it in
  // place (replica splicing; basic jobs only: a guaranteed job's speed is its promise), migrate
  // it to free slots elsewhere (`keep_off`: nodes to avoid; nullptr: never migrate, as when
  // making headroom, where the slots would only move), or preempt it.
  struct Displacement {
    Action::Kind kind = Action::Kind::kPreempt;
    Placement placement;  // kResize, kMigrate
    int released_here = 0;
    // The delay the victim suffers, in seconds of its completion time: the checkpoint and
    // restore, plus (estimated with min_run_s, the shortest time before the policy reconsiders a
    // job) the progress a shrunk job loses by running slower or a preempted one by waiting.
    double delay_s = 0;
  };
  Displacement PlanDisplace(int v, int n, int need, const std::vector<bool>* keep_off,
                            const std::vector<int>& free) const {
    const JobView& job = view_.jobs[v];
    const int k = job.workers();
    const double stall = options_.checkpoint_s + options_.restore_s;
    const bool single_node = job.placement.size() == 1;
    if (options_.elastic && single_node && job.spec.tier == Tier::kBasic) {
      const int target = LargestValidWorkerCount(job.spec, k - need);
      if (target > 0 && target < k) {
        return {Action::Kind::kResize,
                {{n, target}},
                k - target,
                stall + (1.0 - double(target) / k) * options_.min_run_s};
      }
    }
    if (options_.defragment && single_node && keep_off != nullptr) {
      // The job fits one node: FindCompactPlacement's best fit (the fullest other node with room,
      // lower index on ties), without its copies: this runs for every candidate node.
      int best = -1;
      for (size_t m = 0; m < free.size(); ++m) {
        if ((*keep_off)[m] || static_cast<int>(m) == n || free[m] < k) continue;
        if (best < 0 || free[m] < free[best]) best = static_cast<int>(m);
      }
      if (best >= 0) return {Action::Kind::kMigrate, {{best, k}}, k, stall};
    }
    int here = 0;
    for (const Slice& s : job.placement) here += s.node == n ? s.slots : 0;
    return {Action::Kind::kPreempt, {}, here, stall + options_.min_run_s};
  }

  // The cost of displacing `v` as `d`: its delay, weighted by how little SLA slack a guaranteed
  // victim has left (a standard job with an hour of slack, the least premium may evict, counts
  // double; one with ten hours 1.1 times). Basic jobs have no SLA: their delay alone.
  double VictimCost(int v, const Displacement& d) const {
    const JobView& job = view_.jobs[v];
    if (job.spec.tier == Tier::kBasic) return d.delay_s;
    const double slack = std::max(1.0, SlaSlack(job, view_.now));
    return d.delay_s * (1.0 + kEvictStandardSlackS / slack);
  }

  // Evictable jobs on node `n`, in the order they are evicted: basic before standard before
  // borrowed premium; then the cheapest displacement (VictimCost: delay and SLA slack); then the
  // least often preempted (spread the pain); then the most recently changed.
  std::vector<int> VictimOrder(int n, int need, std::optional<Tier> for_tier,
                               const std::vector<bool>* keep_off) const {
    std::vector<std::pair<int, double>> victims;  // job, cost of its displacement
    for (int v : on_node_[n]) {
      if (!Evictable(v, for_tier)) continue;
      victims.emplace_back(v, VictimCost(v, PlanDisplace(v, n, need, keep_off, free_)));
    }
    std::sort(victims.begin(), victims.end(), [&](const auto& a, const auto& b) {
      const JobView& x = view_.jobs[a.first];
      const JobView& y = view_.jobs[b.first];
      if (x.spec.tier != y.spec.tier) return x.spec.tier > y.spec.tier;
      if (a.second != b.second) return a.second < b.second;
      if (x.preemptions != y.preemptions) return x.preemptions < y.preemptions;
      if (x.last_change != y.last_change) return x.last_change > y.last_change;
      return a.first < b.first;
    });
    std::vector<int> order;
    order.reserve(victims.size());
    for (const auto& [v, delay] : victims) order.push_back(v);
    return order;
  }

  // The cost of freeing `need` slots on node `n` for a job of tier `for_tier`, as the pair (the
  // highest tier it evicts, reversed so that evicting only basic work is cheapest; the summed
  // delay of its victims); nullopt when the node cannot free that much.
  std::optional<std::pair<int, double>> EvictionCost(int n, int need, std::optional<Tier> for_tier,
                                                     const std::vector<bool>* keep_off) const {
    if (need <= 0) return std::pair<int, double>{-kNumTiers, 0.0};
    std::vector<int> free = free_;
    int worst = kNumTiers;
    double delay = 0;
    for (int v : VictimOrder(n, need, for_tier, keep_off)) {
      if (need <= 0) break;
      Displacement d = PlanDisplace(v, n, need, keep_off, free);
      if (d.kind == Action::Kind::kMigrate) Take(free, d.placement);
      need -= d.released_here;
      delay += VictimCost(v, d);
      worst = std::min(worst, static_cast<int>(view_.jobs[v].spec.tier));
    }
    if (need > 0) return std::nullopt;
    return std::pair<int, double>{-worst, delay};
  }

  // Frees at least `need` slots on node `n` by evicting evictable jobs there (VictimOrder).
  // Freed slots go to soon_ (they are released when the checkpoints are written).
  void Evict(int n, int need, std::optional<Tier> for_tier, const std::vector<bool>* keep_off) {
    for (int v : VictimOrder(n, need, for_tier, keep_off)) {
      if (need <= 0) break;
      Displacement d = PlanDisplace(v, n, need, keep_off, free_);
      const JobView& job = view_.jobs[v];
      switch (d.kind) {
        case Action::Kind::kResize:
          soon_[n] += d.released_here;
          break;
        case Action::Kind::kMigrate:
          Take(free_, d.placement);
          Take(soon_, d.placement);
          soon_[n] += d.released_here;
          break;
        default:
          for (const Slice& s : job.placement) soon_[s.node] += s.slots;
          break;
      }
      need -= d.released_here;
      Emit(d.kind, v, std::move(d.placement));
    }
  }

  // Slots on each node that evictions for a job of tier `for_tier` could release.
  std::vector<int> Reclaimable(std::optional<Tier> for_tier) const {
    std::vector<int> avail = soon_;
    for (size_t n = 0; n < avail.size(); ++n) {
      if (!view_.nodes[n].alive) continue;
      for (int v : on_node_[n]) {
        if (!Evictable(v, for_tier)) continue;
        for (const Slice& s : view_.jobs[v].placement) {
          if (s.node == static_cast<int>(n)) avail[n] += s.slots;
        }
      }
    }
    return avail;
  }

  void PlaceGuaranteed(int i) {
    const JobView& job = view_.jobs[i];
    const int k = job.spec.requested_workers;
    evictor_borrowed_ = job.spec.borrowed;
    if (std::optional<Placement> p = FindCompactPlacement(free_, k, max_node_)) {
      Start(i, std::move(*p));
      return;
    }
    if (std::optional<Placement> p = FindCompactPlacement(soon_, k, max_node_)) {
      Reserve(*p);  // checkpoints in flight will make room: wait for them
      return;
    }
    // Evict basic work if that is enough (evictions "for a standard job" touch basic jobs
    // only); premium jobs then may also evict standard jobs with slack.
    std::vector<Tier> passes = {Tier::kStandard};
    if (job.spec.tier == Tier::kPremium) passes.push_back(Tier::kPremium);
    for (Tier as : passes) {
      // Evictions only shrink what is reclaimable. When no node can host a gang of k, none can
      // host a larger single-node gang either: skip the O(cluster) search for those (long
      // backlogs). Multi-node gangs are always searched.
      int& no_room = no_room_[static_cast<int>(as)];
      if (k >= no_room && k <= max_node_) continue;
      const std::vector<int> reclaimable = Reclaimable(as);
      std::optional<Placement> target = FindCompactPlacement(reclaimable, k, max_node_);
      if (!target) {
        if (k <= max_node_) no_room = k;
        continue;
      }
      if (k <= max_node_ && options_.evict_by_cost) {
        // A gang of one node: the node where making room costs its victims least, not the best
        // fit (which may preempt a rigid job where an elastic one elsewhere could shrink).
        std::optional<std::pair<int, double>> best;
        for (size_t n = 0; n < reclaimable.size(); ++n) {
          if (reclaimable[n] < k || !view_.nodes[n].alive) continue;
          std::vector<bool> keep_off(view_.nodes.size(), false);
          keep_off[n] = true;
          std::optional<std::pair<int, double>> cost =
              EvictionCost(static_cast<int>(n), k - soon_[n], as, &keep_off);
          if (cost && (!best || *cost < *best)) {
            best = cost;
            target = Placement{{static_cast<int>(n), k}};
          }
        }
      }
      std::vector<bool> keep_off(view_.nodes.size(), false);
      for (const Slice& s : *target) keep_off[s.node] = true;
      for (const Slice& s : *target) {
        const int need = s.slots - soon_[s.node];
        if (need > 0) Evict(s.node, need, as, &keep_off);
      }
      Reserve(*target);
      return;
    }
    // Not even eviction makes room: wait.
  }

  // Keeps `premium_headroom_slots` slots (anywhere) free or about to be, evicting basic work
  // that ran at least min_run_s, and hides them from basic jobs. Slots on the emptiest nodes
  // are kept, so that a premium gang of a whole node finds one when possible.
  void KeepHeadroom() {
    // Never more than an eighth of the live slots: on a small cluster a fixed headroom would
    // starve basic work for good.
    const int want = std::min(options_.premium_headroom_slots, capacity_ / 8);
    if (want <= 0) return;
    auto total = [](const std::vector<int>& v) {
      int sum = 0;
      for (int x : v) sum += std::max(0, x);
      return sum;
    };
    if (total(soon_) < want) {
      // Evict from the nodes whose old basic jobs were preempted least (so that no job is
      // evicted over and over), then from those with the most such work.
      const std::vector<int> avail = Reclaimable(std::nullopt);
      std::vector<int> pain(avail.size(), 0);
      for (size_t n = 0; n < pain.size(); ++n) {
        int most = 0;
        for (int v : on_node_[n]) {
          if (Evictable(v, std::nullopt)) most = std::max(most, view_.jobs[v].preemptions);
        }
        pain[n] = most;
      }
      std::vector<int> order(avail.size());
      for (size_t n = 0; n < order.size(); ++n) order[n] = static_cast<int>(n);
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        if (pain[a] != pain[b]) return pain[a] < pain[b];
        return avail[a] - soon_[a] > avail[b] - soon_[b];
      });
      for (int n : order) {
        const int need = want - total(soon_);
        if (need <= 0) break;
        if (avail[n] <= soon_[n]) continue;
        Evict(n, std::min(need, avail[n] - soon_[n]), std::nullopt, nullptr);
      }
    }
    std::vector<int> order(soon_.size());
    for (size_t n = 0; n < order.size(); ++n) order[n] = static_cast<int>(n);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return soon_[a] > soon_[b]; });
    int left = want;
    for (int n : order) {
      if (left <= 0 || soon_[n] <= 0) break;
      const int take = std::min(left, soon_[n]);
      Reserve({{n, take}});
      left -= take;
    }
  }

  // Starts `i` on the largest valid gang that fits the free slots; true if started.
  bool StartShrunkIfNeeded(int i) {
    const JobSpec& spec = view_.jobs[i].spec;
    const int limit = options_.elastic ? spec.min_workers : spec.requested_workers;
    for (int k = spec.requested_workers; k >= std::max(1, limit); --k) {
      if (!IsValidWorkerCount(spec, k)) continue;
      if (std::optional<Placement> p = FindCompactPlacement(free_, k, max_node_)) {
        Start(i, std::move(*p));
        return true;
      }
    }
    return false;
  }

  void StartBasic() {
    int total_free = 0, max_free = 0;
    for (int f : free_) total_free += f, max_free = std::max(max_free, f);
    if (total_free == 0) return;
    bool reserved = false;
    for (int i : FifoOrder(view_)) {
      const JobView& job = view_.jobs[i];
      if (!IsWaiting(job) || job.spec.tier != Tier::kBasic) continue;
      // Cheap skip: the smallest gang that fits one node must find a node with room.
      const int smallest =
          options_.elastic ? std::max(1, job.spec.min_workers) : job.spec.requested_workers;
      if (smallest <= max_node_ && smallest > max_free) continue;
      // A gang larger than the live cluster can never start: it must not hold nodes for itself.
      if (smallest > capacity_) continue;
      if (StartShrunkIfNeeded(i)) {
        total_free = 0, max_free = 0;
        for (int f : free_) total_free += f, max_free = std::max(max_free, f);
        if (total_free == 0) return;
        continue;
      }
      if (!reserved && view_.now - job.spec.submit_time >= kStarvationS) {
        // Hold the emptiest nodes for it: nothing else starts there until it fits.
        reserved = true;
        const int nodes = NodesNeeded(smallest, max_node_);
        std::vector<int> order(free_.size());
        for (size_t n = 0; n < order.size(); ++n) order[n] = static_cast<int>(n);
        std::stable_sort(order.begin(), order.end(),
                         [&](int a, int b) { return soon_[a] > soon_[b]; });
        for (int r = 0; r < nodes && r < static_cast<int>(order.size()); ++r) {
          free_[order[r]] = 0;
        }
        max_free = *std::max_element(free_.begin(), free_.end());
        if (max_free == 0) return;
      }
    }
  }

  void Grow() {
    if (!options_.elastic) return;
    int total_free = 0;
    for (int f : free_) total_free += f;
    if (total_free == 0) return;
    std::vector<int> shrunk;
    for (size_t i = 0; i < view_.jobs.size(); ++i) {
      const JobView& job = view_.jobs[i];
      if (job.state == JobState::kRunning && !touched_[i] &&
          job.workers() < job.spec.requested_workers &&
          view_.now - job.last_change >= options_.min_run_s) {
        shrunk.push_back(static_cast<int>(i));
      }
    }
    std::stable_sort(shrunk.begin(), shrunk.end(), [&](int a, int b) {
      return view_.jobs[a].spec.tier < view_.jobs[b].spec.tier;
    });
    for (int i : shrunk) {
      const JobView& job = view_.jobs[i];
      std::vector<int> usable = free_;
      Take(usable, job.placement, +1);
      for (int k = job.spec.requested_workers; k > job.workers(); --k) {
        if (!IsValidWorkerCount(job.spec, k)) continue;
        std::optional<Placement> p = FindCompactPlacement(usable, k, max_node_);
        if (!p) continue;
        // Slots of the old placement that the new one does not reuse drain: not free.
        for (const Slice& s : *p) {
          int own = 0;
          for (const Slice& o : job.placement) own += o.node == s.node ? o.slots : 0;
          free_[s.node] -= std::max(0, s.slots - own);
          soon_[s.node] -= std::max(0, s.slots - own);
        }
        Emit(Action::Kind::kResize, i, std::move(*p));
        break;
      }
    }
  }

  const ClusterView& view_;
  const SingularityOptions& options_;
  std::vector<int> free_;       // usable now by a Start
  std::vector<int> releasing_;  // released when checkpoints in flight are written
  std::vector<int> soon_;       // free_ + releasing_ - reservations
  const int max_node_;
  int capacity_ = 0;                       // live slots
  std::vector<bool> touched_;              // jobs that already got an action
  bool evictor_borrowed_ = false;          // the guaranteed job being placed borrows quota
  std::vector<std::vector<int>> on_node_;  // running jobs per node
  std::vector<Action> actions_;
  // Per eviction tier: the smallest gang for which eviction found no room in this call.
  int no_room_[kNumTiers] = {INT32_MAX, INT32_MAX, INT32_MAX};
};

class SingularityPolicy final : public Policy {
 public:
  explicit SingularityPolicy(SingularityOptions options) : options_(options) {}
  std::vector<Action> Decide(const ClusterView& view) override {
    return Decision(view, options_).Run();
  }
  std::string_view name() const override { return "singularity"; }

 private:
  SingularityOptions options_;
};

}  // namespace

std::unique_ptr<Policy> NewSingularityPolicy(SingularityOptions options) {
  return std::make_unique<SingularityPolicy>(options);
}

}  // namespace tessera::cluster
