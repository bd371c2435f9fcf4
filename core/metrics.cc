#include "core/metrics.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace tessera {

namespace {

bool ValidName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

// Renders {a="x",b="y"}; empty string for no labels.
std::string RenderLabels(const MetricLabels& labels) {
  if (labels.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (!ValidName(labels[i].first)) {
      std::fprintf(stderr, "metrics: invalid label name '%s'\n", labels[i].first.c_str());
      std::abort();
    }
    if (i > 0) out += ",";
    out += labels[i].first + "=\"" + EscapeLabelValue(labels[i].second) + "\"";
  }
  return out + "}";
}

// Adds one more label to an already rendered label set.
std::string WithLabel(const std::string& rendered, const std::string& extra) {
  if (rendered.empty()) return "{" + extra + "}";
  return rendered.substr(0, rendered.size() - 1) + "," + extra + "}";
}

std::string FormatNumber(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.17g", v);
  return buffer;
}

void AtomicAdd(std::atomic<double>& target, double delta) {
  double current = target.load(std::memory_order_relaxed);
  while (!target.compare_exchange_weak(current, current + delta, std::memory_order_relaxed)) {
  }
}

const char* KindName(int kind) {
  static const char* const kNames[] = {"counter", "gauge", "histogram"};
  return kNames[kind];
}

}  // namespace

void Gauge::Add(double delta) { AtomicAdd(value_, delta); }

Histogram::Histogram(std::vector<double> upper_bounds)
    : upper_bounds_(std::move(upper_bounds)),
      buckets_(new std::atomic<uint64_t>[upper_bounds_.size() + 1]) {
  for (size_t i = 0; i + 1 < upper_bounds_.size(); ++i) {
    if (!(upper_bounds_[i] < upper_bounds_[i + 1])) {
      std::fprintf(stderr, "metrics: histogram bounds must increase strictly\n");
      std::abort();
    }
  }
  for (size_t i = 0; i <= upper_bounds_.size(); ++i) buckets_[i].store(0);
}

void Histogram::Observe(double value) {
  size_t bucket = 0;
  while (bucket < upper_bounds_.size() && value > upper_bounds_[bucket]) ++bucket;
  buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  AtomicAdd(sum_, value);
}

std::vector<uint64_t> Histogram::CumulativeCounts() const {
  std::vector<uint64_t> out(upper_bounds_.size() + 1);
  uint64_t running = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    out[i] = running;
  }
  return out;
}

Metrics::Family& Metrics::FamilyFor(std::string_view name, std::string_view help, Kind kind) {
  if (!ValidName(name)) {
    std::fprintf(stderr, "metrics: invalid metric name '%.*s'\n", static_cast<int>(name.size()),
                 name.data());
    std::abort();
  }
  auto it = families_.find(name);
  if (it == families_.end()) {
    it = families_.emplace(std::string(name), Family{kind, std::string(help), {}, {}, {}}).first;
  } else if (it->second.kind != kind) {
    std::fprintf(stderr, "metrics: '%.*s' registered as two kinds\n", static_cast<int>(name.size()),
                 name.data());
    std::abort();
  }
  return it->second;
}

Counter& Metrics::AddCounter(std::string_view name, std::string_view help, MetricLabels labels) {
  std::lock_guard lock(mu_);
  auto& slot = FamilyFor(name, help, Kind::kCounter).counters[RenderLabels(labels)];
  if (!slot) slot = std::make_unique<Counter>();
  return *slot;
}

Gauge& Metrics::AddGauge(std::string_view name, std::string_view help, MetricLabels labels) {
  std::lock_guard lock(mu_);
  auto& slot = FamilyFor(name, help, Kind::kGauge).gauges[RenderLabels(labels)];
  if (!slot) slot = std::make_unique<Gauge>();
  return *slot;
}

Histogram& Metrics::AddHistogram(std::string_view name, std::string_view help,
                                 std::vector<double> upper_bounds, MetricLabels labels) {
  std::lock_guard lock(mu_);
  auto& slot = FamilyFor(name, help, Kind::kHistogram).histograms[RenderLabels(labels)];
  if (!slot) slot = std::make_unique<Histogram>(std::move(upper_bounds));
  return *slot;
}

std::string Metrics::RenderPrometheus() const {
  std::lock_guard lock(mu_);
  std::ostringstream out;
  for (const auto& [name, family] : families_) {
    out << "# HELP " << name << " " << family.help << "\n";
    out << "# TYPE " << name << " " << KindName(static_cast<int>(family.kind)) << "\n";
    for (const auto& [labels, counter] : family.counters) {
      out << name << labels << " " << counter->value() << "\n";
    }
    for (const auto& [labels, gauge] : family.gauges) {
      out << name << labels << " " << FormatNumber(gauge->value()) << "\n";
    }
    for (const auto& [labels, histogram] : family.histograms) {
      std::vector<uint64_t> cumulative = histogram->CumulativeCounts();
      const auto& bounds = histogram->upper_bounds();
      for (size_t i = 0; i < cumulative.size(); ++i) {
        double le = i < bounds.size() ? bounds[i] : INFINITY;
        out << name << "_bucket" << WithLabel(labels, "le=\"" + FormatNumber(le) + "\"") << " "
            << cumulative[i] << "\n";
      }
      out << name << "_sum" << labels << " " << FormatNumber(histogram->sum()) << "\n";
      out << name << "_count" << labels << " " << histogram->count() << "\n";
    }
  }
  return out.str();
}

}  // namespace tessera
