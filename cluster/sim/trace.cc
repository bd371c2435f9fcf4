#include "cluster/sim/trace.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <string>

#include "core/file.h"

namespace tessera::cluster::sim {
namespace {

std::vector<std::string_view> SplitCsvLine(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    fields.push_back(line.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return fields;
}

template <typename T>
bool ParseNumber(std::string_view s, T& out) {
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && ptr == end;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

// "YYYY-MM-DD HH:MM:SS" -> seconds since the epoch; false if malformed.
bool ParseTimestamp(std::string_view s, double& out) {
  if (s.size() != 19 || s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' ||
      s[16] != ':') {
    return false;
  }
  int y, mo, d, h, mi, se;
  if (!ParseNumber(s.substr(0, 4), y) || !ParseNumber(s.substr(5, 2), mo) ||
      !ParseNumber(s.substr(8, 2), d) || !ParseNumber(s.substr(11, 2), h) ||
      !ParseNumber(s.substr(14, 2), mi) || !ParseNumber(s.substr(17, 2), se)) {
    return false;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) return false;
  out = static_cast<double>(DaysFromCivil(y, mo, d)) * 86400.0 + h * 3600.0 + mi * 60.0 + se;
  return true;
}

// Calls `row(fields, line_number)` for every non-empty data line after checking the header.
template <typename RowFn>
Status ForEachRow(std::string_view text, std::string_view header, RowFn row) {
  size_t pos = 0;
  int line_no = 0;
  bool saw_header = false;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (!saw_header) {
      if (line != header) {
        return InvalidArgumentError("line 1: expected header '" + std::string(header) + "'");
      }
      saw_header = true;
      continue;
    }
    TESSERA_RETURN_IF_ERROR(row(SplitCsvLine(line), line_no));
  }
  if (!saw_header) return InvalidArgumentError("empty trace");
  return Status::Ok();
}

Status BadLine(int line_no, const std::string& why) {
  return InvalidArgumentError("line " + std::to_string(line_no) + ": " + why);
}

// A finite number > 0 (durations).
bool ParsePositive(std::string_view field, double& out) {
  return ParseNumber(field, out) && std::isfinite(out) && out > 0;
}

// The jobs ordered by submission time (stable: file order among equal times); with
// `from_zero`, shifted so that the first one is submitted at 0.
std::vector<TraceJob> SortedBySubmit(std::vector<TraceJob> jobs, bool from_zero) {
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const TraceJob& a, const TraceJob& b) { return a.submit < b.submit; });
  if (from_zero && !jobs.empty()) {
    const double t0 = jobs.front().submit;
    for (TraceJob& job : jobs) job.submit -= t0;
  }
  return jobs;
}

constexpr std::string_view kPhillyHeader = "timestamp,duration,num_gpus,gpu_time,cluster";
constexpr std::string_view kPolluxHeader = "name,time,application,num_replicas,batch_size";
constexpr std::string_view kClassHeader = "id,submit_s,duration_s,workers,tenant,class";

}  // namespace

Result<std::vector<TraceJob>> ParsePhillyCsv(std::string_view text) {
  std::vector<TraceJob> jobs;
  int row_no = 0;
  Status status = ForEachRow(text, kPhillyHeader, [&](const auto& f, int line_no) -> Status {
    if (f.size() != 5) return BadLine(line_no, "want 5 fields, got " + std::to_string(f.size()));
    TraceJob job;
    job.id = "philly-" + std::to_string(++row_no);
    if (!ParseTimestamp(f[0], job.submit)) return BadLine(line_no, "bad timestamp");
    if (!ParsePositive(f[1], job.duration)) {
      return BadLine(line_no, "duration must be a positive number");
    }
    if (!ParseNumber(f[2], job.workers) || job.workers <= 0) {
      return BadLine(line_no, "num_gpus must be a positive integer");
    }
    if (f[4].empty()) return BadLine(line_no, "empty cluster");
    job.tenant = std::string(f[4]);
    jobs.push_back(std::move(job));
    return Status::Ok();
  });
  if (!status.ok()) return status.WithContext("philly trace");
  return SortedBySubmit(std::move(jobs), /*from_zero=*/true);
}

Result<double> PolluxGpuHours(std::string_view application) {
  // Pollux's sampler draws cifar10/ncf for gpu_time < 1 h (after dropping jobs under 60 s),
  // deepspeech2/bert for [1, 10) h, yolov3 for [10, 100) h, imagenet for [100, 1000) h.
  if (application == "cifar10" || application == "ncf") return 0.25;
  if (application == "deepspeech2" || application == "bert") return 3.0;
  if (application == "yolov3") return 30.0;
  if (application == "imagenet") return 300.0;
  return InvalidArgumentError("unknown Pollux application '" + std::string(application) + "'");
}

Result<std::vector<TraceJob>> ParsePolluxCsv(std::string_view text) {
  std::vector<TraceJob> jobs;
  Status status = ForEachRow(text, kPolluxHeader, [&](const auto& f, int line_no) -> Status {
    if (f.size() != 5) return BadLine(line_no, "want 5 fields, got " + std::to_string(f.size()));
    TraceJob job;
    job.id = std::string(f[0]);
    if (job.id.empty()) return BadLine(line_no, "empty name");
    if (!ParseNumber(f[1], job.submit) || job.submit < 0) {
      return BadLine(line_no, "time must be a non-negative number");
    }
    job.tenant = std::string(f[2]);
    Result<double> hours = PolluxGpuHours(job.tenant);
    if (!hours.ok()) return BadLine(line_no, hours.status().message());
    if (!ParseNumber(f[3], job.workers) || job.workers <= 0) {
      return BadLine(line_no, "num_replicas must be a positive integer");
    }
    job.duration = *hours * 3600.0 / job.workers;
    jobs.push_back(std::move(job));
    return Status::Ok();
  });
  if (!status.ok()) return status.WithContext("pollux workload");
  return SortedBySubmit(std::move(jobs), /*from_zero=*/false);
}

Result<std::vector<TraceJob>> ParseClassCsv(std::string_view text) {
  std::vector<TraceJob> jobs;
  std::set<std::string, std::less<>> ids;
  Status status = ForEachRow(text, kClassHeader, [&](const auto& f, int line_no) -> Status {
    if (f.size() != 6) return BadLine(line_no, "want 6 fields, got " + std::to_string(f.size()));
    TraceJob job;
    job.id = std::string(f[0]);
    if (job.id.empty()) return BadLine(line_no, "empty id");
    if (!ids.insert(job.id).second) return BadLine(line_no, "duplicate id '" + job.id + "'");
    if (!ParseNumber(f[1], job.submit) || !std::isfinite(job.submit) || job.submit < 0) {
      return BadLine(line_no, "submit_s must be a non-negative number");
    }
    if (!ParsePositive(f[2], job.duration)) {
      return BadLine(line_no, "duration_s must be a positive number");
    }
    if (!ParseNumber(f[3], job.workers) || job.workers <= 0) {
      return BadLine(line_no, "workers must be a positive integer");
    }
    if (f[4].empty()) return BadLine(line_no, "empty tenant");
    if (f[5].empty()) return BadLine(line_no, "empty class");
    job.tenant = std::string(f[4]);
    job.job_class = std::string(f[5]);
    jobs.push_back(std::move(job));
    return Status::Ok();
  });
  if (!status.ok()) return status.WithContext("class trace");
  return SortedBySubmit(std::move(jobs), /*from_zero=*/true);
}

Result<ClassMap> ParseClassMap(std::string_view spec) {
  ClassMap map;
  if (spec.empty()) return InvalidArgumentError("empty class map (want CLASS=TIER,...)");
  for (std::string_view entry : SplitCsvLine(spec)) {
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return InvalidArgumentError("class map entry '" + std::string(entry) + "' is not CLASS=TIER");
    }
    Result<Tier> tier = ParseTier(entry.substr(eq + 1));
    if (!tier.ok()) {
      return InvalidArgumentError("class map entry '" + std::string(entry) +
                                  "': unknown tier (want premium, standard or basic)");
    }
    const std::string_view name = entry.substr(0, eq);
    if (name == "*") {
      if (map.otherwise) return InvalidArgumentError("class map names '*' twice");
      map.otherwise = *tier;
    } else if (!map.classes.emplace(std::string(name), *tier).second) {
      return InvalidArgumentError("class map names class '" + std::string(name) + "' twice");
    }
  }
  return map;
}

Status ApplyClassMap(const ClassMap& map, std::vector<TraceJob>& trace) {
  for (TraceJob& job : trace) {
    if (job.job_class.empty()) {
      return InvalidArgumentError("job '" + job.id +
                                  "' has no class: only class CSV traces carry one");
    }
    auto it = map.classes.find(job.job_class);
    if (it != map.classes.end()) {
      job.tier = it->second;
    } else if (map.otherwise) {
      job.tier = *map.otherwise;
    } else {
      return InvalidArgumentError("job '" + job.id + "': class '" + job.job_class +
                                  "' is not in the class map (add it, or '*=TIER')");
    }
  }
  return Status::Ok();
}

Result<std::vector<TraceJob>> LoadTrace(const std::string& path) {
  TESSERA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  const std::string_view first = std::string_view(text).substr(0, text.find('\n'));
  Result<std::vector<TraceJob>> jobs = first.starts_with("name,") ? ParsePolluxCsv(text)
                                       : first.starts_with("id,") ? ParseClassCsv(text)
                                                                  : ParsePhillyCsv(text);
  if (!jobs.ok()) return jobs.status().WithContext(path);
  return jobs;
}

uint64_t Fnv1a64(std::string_view text) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a 64 offset basis
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

Tier AssignTier(std::string_view job_id, const TierRule& rule) {
  const int bucket = static_cast<int>(Fnv1a64(job_id) % 100);
  if (bucket < rule.premium_pct) return Tier::kPremium;
  if (bucket < rule.premium_pct + rule.standard_pct) return Tier::kStandard;
  return Tier::kBasic;
}

int MinWorkers(int workers) {
  for (int d = 1; d <= workers; ++d) {
    if (workers % d == 0 && 4 * d >= workers) return d;
  }
  return workers;
}

JobSpec ToJobSpec(const TraceJob& job, const TierRule& rule) {
  JobSpec spec;
  spec.id = job.id;
  spec.tenant = job.tenant;
  spec.tier = job.tier ? *job.tier : AssignTier(job.id, rule);
  spec.requested_workers = job.workers;
  spec.min_workers = MinWorkers(job.workers);
  spec.submit_time = job.submit;
  return spec;
}

std::vector<SimJob> ToSimJobs(const std::vector<TraceJob>& trace, const TierRule& rule,
                              int64_t limit) {
  const size_t n = limit > 0 ? std::min<size_t>(trace.size(), limit) : trace.size();
  std::vector<SimJob> jobs;
  jobs.reserve(n);
  for (size_t i = 0; i < n; ++i) jobs.push_back({ToJobSpec(trace[i], rule), trace[i].duration});
  return jobs;
}

}  // namespace tessera::cluster::sim
