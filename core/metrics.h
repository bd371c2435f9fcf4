// A small, thread-safe metrics registry rendered as Prometheus text exposition (format 0.0.4).
//
//   Metrics metrics;
//   Counter& committed = metrics.AddCounter("ledger_tx_committed_total", "Committed transactions");
//   Histogram& latency = metrics.AddHistogram("ledger_commit_seconds", "Commit latency",
//                                             {0.1, 0.5, 1, 2, 5});
//   committed.Increment(batch.size());
//   latency.Observe(seconds);
//   std::string text = metrics.RenderPrometheus();
//
// Metric objects live as long as the registry and are never moved, so references are stable.
// Updates are lock-free (atomics); registration and rendering take a mutex.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

// Label pairs, e.g. {{"tier", "premium"}}. Rendered in the given order.
using MetricLabels = std::vector<std::pair<std::string, std::string>>;

class Counter {
 public:
  void Increment(uint64_t by = 1) { value_.fetch_add(by, std::memory_order_relaxed); }
  uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

class Gauge {
 public:
  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  void Add(double delta);
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

class Histogram {
 public:
  // `upper_bounds` must be strictly increasing; a +Inf bucket is implicit.
  explicit Histogram(std::vector<double> upper_bounds);
  void Observe(double value);

  const std::vector<double>& upper_bounds() const { return upper_bounds_; }
  // Cumulative counts per bucket (the last one is +Inf and equals count()).
  std::vector<uint64_t> CumulativeCounts() const;
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  double sum() const { return sum_.load(std::memory_order_relaxed); }

 private:
  std::vector<double> upper_bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // upper_bounds_.size() + 1
  std::atomic<uint64_t> count_{0};
  std::atomic<double> sum_{0.0};
};

class Metrics {
 public:
  Metrics() = default;
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // Registering the same name and labels again returns the existing metric. Names must match
  // [a-zA-Z_:][a-zA-Z0-9_:]*; a name reused with another kind aborts (a programming error).
  Counter& AddCounter(std::string_view name, std::string_view help, MetricLabels labels = {});
  Gauge& AddGauge(std::string_view name, std::string_view help, MetricLabels labels = {});
  Histogram& AddHistogram(std::string_view name, std::string_view help,
                          std::vector<double> upper_bounds, MetricLabels labels = {});

  std::string RenderPrometheus() const;

 private:
  enum class Kind { kCounter, kGauge, kHistogram };
  struct Family {
    Kind kind;
    std::string help;
    // Keyed by the rendered label set so output order is deterministic.
    std::map<std::string, std::unique_ptr<Counter>> counters;
    std::map<std::string, std::unique_ptr<Gauge>> gauges;
    std::map<std::string, std::unique_ptr<Histogram>> histograms;
  };
  Family& FamilyFor(std::string_view name, std::string_view help, Kind kind);

  mutable std::mutex mu_;
  std::map<std::string, Family, std::less<>> families_;
};

}  // namespace tessera
