#include "ledger/net/hedged_fetch.h"

namespace tessera::ledger::net {

struct PoliticianCalls::Worker {
  std::mutex mu;
  std::condition_variable cv;
  Job job;  // set while busy
  bool stopping = false;
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
      job = nullptr;  // idle before the caller hears the answer
      lock.unlock();
      deliver();
      lock.lock();
    }
  }
};

PoliticianCalls::PoliticianCalls(
    const std::vector<std::shared_ptr<PoliticianClient>>& politicians) {
  for (const auto& p : politicians) {
    auto w = std::make_unique<Worker>();
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

bool PoliticianCalls::Start(PoliticianClient* p, Job job) {
  auto it = workers_.find(p);
  if (it == workers_.end()) return false;
  Worker& w = *it->second;
  std::lock_guard<std::mutex> lock(w.mu);
  if (w.job || w.stopping) return false;
  w.job = std::move(job);
  w.cv.notify_all();
  return true;
}

}  // namespace tessera::ledger::net
