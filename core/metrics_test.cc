#include "core/metrics.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace tessera {
namespace {

TEST(MetricsTest, RendersPrometheusText) {
  Metrics metrics;
  metrics.AddCounter("jobs_total", "Jobs", {{"tier", "premium"}}).Increment(3);
  metrics.AddCounter("jobs_total", "Jobs", {{"tier", "basic"}}).Increment();
  metrics.AddGauge("utilization", "Busy fraction").Set(0.5);
  Histogram& h = metrics.AddHistogram("latency_seconds", "Latency", {0.1, 1});
  h.Observe(0.05);
  h.Observe(0.5);
  h.Observe(7);
  EXPECT_EQ(metrics.RenderPrometheus(),
            "# HELP jobs_total Jobs\n"
            "# TYPE jobs_total counter\n"
            "jobs_total{tier=\"basic\"} 1\n"
            "jobs_total{tier=\"premium\"} 3\n"
            "# HELP latency_seconds Latency\n"
            "# TYPE latency_seconds histogram\n"
            "latency_seconds_bucket{le=\"0.10000000000000001\"} 1\n"
            "latency_seconds_bucket{le=\"1\"} 2\n"
            "latency_seconds_bucket{le=\"+Inf\"} 3\n"
            "latency_seconds_sum 7.5499999999999998\n"
            "latency_seconds_count 3\n"
            "# HELP utilization Busy fraction\n"
            "# TYPE utilization gauge\n"
            "utilization 0.5\n");
}

TEST(MetricsTest, SameNameAndLabelsIsSameMetric) {
  Metrics metrics;
  Counter& a = metrics.AddCounter("x_total", "X");
  Counter& b = metrics.AddCounter("x_total", "X");
  EXPECT_EQ(&a, &b);
}

TEST(MetricsTest, ConcurrentUpdatesAreNotLost) {
  Metrics metrics;
  Counter& c = metrics.AddCounter("n_total", "N");
  Gauge& g = metrics.AddGauge("g", "G");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        c.Increment();
        g.Add(1.0);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(c.value(), 40000u);
  EXPECT_DOUBLE_EQ(g.value(), 40000.0);
}

TEST(MetricsDeathTest, InvalidNameAborts) {
  Metrics metrics;
  EXPECT_DEATH(metrics.AddCounter("bad-name", "x"), "invalid metric name");
  EXPECT_DEATH(metrics.AddGauge("v", "x", {{"bad label", "1"}}), "invalid label name");
}

}  // namespace
}  // namespace tessera
