#include "ledger/net/hedged_fetch.h"

#include <atomic>
#include <cmath>

namespace tessera::ledger::net {

struct PoliticianCalls::Worker {
  std::mutex mu;
  std::condition_variable cv;
  Job job;  // set while busy
  bool stopping = false;
  std::chrono::milliseconds slow_call{0};
  std::atomic<bool> slow{false};                    // the last job took longer than slow_call
  std::chrono::steady_clock::time_point job_start;  // of the job in flight (set with it, under mu)
  std::thread thread;

  void Loop() {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      cv.wait(lock, [&] { return stopping || job; });
      if (!job) return;  // stopping and idle
      Job run = job;
      lock.unlock();
      std::function<void()> deliver = run();  // bounded by the client's deadline
      lock.lock();
      slow = std::chrono::steady_clock::now() - job_start > slow_call;
      job = nullptr;  // idle before the caller hears the answer
      lock.unlock();
      deliver();
      lock.lock();
    }
  }
};

PoliticianCalls::PoliticianCalls(const std::vector<std::shared_ptr<PoliticianClient>>& politicians,
                                 std::chrono::milliseconds slow_call) {
  for (const auto& p : politicians) {
    auto w = std::make_unique<Worker>();
    w->slow_call = slow_call;
    w->thread = std::thread([raw = w.get()] { raw->Loop(); });
    workers_.emplace(p.get(), std::move(w));
  }
}

PoliticianCalls::~PoliticianCalls() {
  for (auto& [p, w] : workers_) {
    std::lock_guard<std::mutex> lock(w->mu);
    w->stopping = true;
    w->cv.notify_all();
  }
  for (auto& [p, w] : workers_) w->thread.join();
}

bool PoliticianCalls::Busy(PoliticianClient* p) const {
  auto it = workers_.find(p);
  if (it == workers_.end()) return true;
  std::lock_guard<std::mutex> lock(it->second->mu);
  return static_cast<bool>(it->second->job);
}

bool PoliticianCalls::Slow(PoliticianClient* p) const {
  auto it = workers_.find(p);
  if (it == workers_.end()) return false;
  Worker& w = *it->second;
  std::lock_guard<std::mutex> lock(w.mu);
  return w.slow.load() || (w.job && std::chrono::steady_clock::now() - w.job_start > w.slow_call);
}

bool PoliticianCalls::Start(PoliticianClient* p, Job job) {
  auto it = workers_.find(p);
  if (it == workers_.end()) return false;
  Worker& w = *it->second;
  std::lock_guard<std::mutex> lock(w.mu);
  if (w.job || w.stopping) return false;
  w.job = std::move(job);
  w.job_start = std::chrono::steady_clock::now();
  w.cv.notify_all();
  return true;
}

double LatencyRanking::CostMs(PoliticianClient* p, Clock::time_point now) const {
  auto it = costs_.find(p);
  if (it == costs_.end()) return 0;
  const double age = std::chrono::duration<double, std::milli>(now - it->second.at).count();
  const double half = static_cast<double>(half_life_.count());
  return it->second.ms * std::exp2(-std::max(0.0, age) / half);
}

void LatencyRanking::Rank(std::vector<PoliticianClient*>& order, Clock::time_point now) const {
  std::map<PoliticianClient*, double> cost;
  for (PoliticianClient* p : order) {
    cost[p] = Known(p) ? CostMs(p, now) : static_cast<double>(unknown_.count());
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](PoliticianClient* a, PoliticianClient* b) { return cost[a] < cost[b]; });
}

bool MoveFirstUnaskedToFront(std::vector<PoliticianClient*>& order, const LatencyRanking& costs,
                             const std::function<bool(PoliticianClient*)>& eligible) {
  auto it = std::find_if(order.begin(), order.end(),
                         [&](PoliticianClient* p) { return !costs.Known(p) && eligible(p); });
  if (it == order.end()) return false;
  std::rotate(order.begin(), it, it + 1);
  return true;
}

void LatencyRanking::Learn(const std::vector<PoliticianClient*>& order, PoliticianClient* winner,
                           Clock::time_point since, std::chrono::milliseconds hedge,
                           Clock::time_point now, std::optional<Clock::time_point> winner_asked) {
  const double took = std::chrono::duration<double, std::milli>(now - since).count();
  for (PoliticianClient* p : order) {
    if (p == winner) {
      const double own =
          std::chrono::duration<double, std::milli>(now - winner_asked.value_or(since)).count();
      costs_[p] = {std::max(0.0, own), now};
      break;
    }
    costs_[p] = {std::max(CostMs(p, now), took + static_cast<double>(hedge.count())), now};
  }
}

}  // namespace tessera::ledger::net
