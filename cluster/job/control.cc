#include "cluster/job/control.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <map>
#include <system_error>

#include "core/file.h"

namespace tessera::cluster {

namespace {

constexpr char kOrderFile[] = "order";
constexpr char kProgressFile[] = "progress";
constexpr char kExitFile[] = "exit";

// Parses "k1=v1 k2=v2 ..." (whitespace separated). Unknown keys are kept and ignored by callers
// so the format can grow.
Result<std::map<std::string, std::string, std::less<>>> ParseFields(std::string_view text) {
  std::map<std::string, std::string, std::less<>> fields;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (start == i) break;
    std::string_view token = text.substr(start, i - start);
    size_t eq = token.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return InvalidArgumentError(fmt::format("expected key=value, got '{}'", token));
    }
    fields.emplace(std::string(token.substr(0, eq)), std::string(token.substr(eq + 1)));
  }
  return fields;
}

template <typename T>
Result<T> Field(const std::map<std::string, std::string, std::less<>>& fields,
                std::string_view key) {
  auto it = fields.find(key);
  if (it == fields.end()) return InvalidArgumentError(fmt::format("missing field '{}'", key));
  T value{};
  const std::string& s = it->second;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) {
    return InvalidArgumentError(fmt::format("field '{}' has a bad value '{}'", key, s));
  }
  return value;
}

Result<std::optional<std::string>> ReadIfExists(const std::filesystem::path& path) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) return std::optional<std::string>();
    return text.status();
  }
  return std::optional<std::string>(std::move(*text));
}

}  // namespace

std::string FormatProgress(const Progress& p) {
  return fmt::format("step={} total={} world={} workers={} loss={:.9g}\n", p.step, p.total_steps,
                     p.world_size, p.workers, p.loss);
}

Result<Progress> ParseProgress(std::string_view text) {
  TESSERA_ASSIGN_OR_RETURN(auto fields, ParseFields(text));
  Progress p;
  TESSERA_ASSIGN_OR_RETURN(p.step, Field<int64_t>(fields, "step"));
  TESSERA_ASSIGN_OR_RETURN(p.total_steps, Field<int64_t>(fields, "total"));
  TESSERA_ASSIGN_OR_RETURN(p.world_size, Field<int32_t>(fields, "world"));
  TESSERA_ASSIGN_OR_RETURN(p.workers, Field<int32_t>(fields, "workers"));
  TESSERA_ASSIGN_OR_RETURN(p.loss, Field<double>(fields, "loss"));
  return p;
}

std::string FormatExitReport(const ExitReport& r) {
  return fmt::format("{} step={}\n",
                     r.kind == ExitReport::Kind::kFinished ? "finished" : "checkpointed", r.step);
}

Result<ExitReport> ParseExitReport(std::string_view text) {
  size_t space = text.find(' ');
  std::string_view kind = text.substr(0, space);
  ExitReport r;
  if (kind == "finished") {
    r.kind = ExitReport::Kind::kFinished;
  } else if (kind == "checkpointed") {
    r.kind = ExitReport::Kind::kCheckpointed;
  } else {
    return InvalidArgumentError(fmt::format("unknown exit kind '{}'", kind));
  }
  if (space == std::string_view::npos) return InvalidArgumentError("exit report has no step");
  TESSERA_ASSIGN_OR_RETURN(auto fields, ParseFields(text.substr(space + 1)));
  TESSERA_ASSIGN_OR_RETURN(r.step, Field<int64_t>(fields, "step"));
  return r;
}

Result<JobControl> JobControl::FromEnvironment() {
  const char* id = std::getenv(kEnvJobId);
  const char* dir = std::getenv(kEnvJobDir);
  const char* workers = std::getenv(kEnvJobWorkers);
  if (id == nullptr || *id == '\0')
    return InvalidArgumentError(fmt::format("{} is not set", kEnvJobId));
  if (dir == nullptr || *dir == '\0') {
    return InvalidArgumentError(fmt::format("{} is not set", kEnvJobDir));
  }
  int n = 0;
  std::string_view w = workers == nullptr ? "" : workers;
  auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), n);
  if (w.empty() || ec != std::errc() || end != w.data() + w.size() || n <= 0) {
    return InvalidArgumentError(
        fmt::format("{} must be a positive integer, got '{}'", kEnvJobWorkers, w));
  }
  return JobControl(id, dir, n);
}

JobControl::JobControl(std::string job_id, std::filesystem::path dir, int workers)
    : job_id_(std::move(job_id)),
      dir_(std::move(dir)),
      workers_(workers),
      checkpoints_(dir_ / "ckpt") {}

Order JobControl::PollOrder() const {
  std::error_code ec;
  return std::filesystem::exists(dir_ / kOrderFile, ec) ? Order::kCheckpointAndExit
                                                        : Order::kContinue;
}

Status JobControl::ReportProgress(const Progress& progress) {
  return WriteFileAtomically(dir_ / kProgressFile, FormatProgress(progress));
}

Status JobControl::ReportExit(const ExitReport& report) {
  return WriteFileAtomically(dir_ / kExitFile, FormatExitReport(report));
}

JobDir::JobDir(std::filesystem::path dir) : dir_(std::move(dir)) {}

Status JobDir::Prepare() {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return InternalError(fmt::format("creating {}: {}", dir_.string(), ec.message()));
  for (const char* name : {kOrderFile, kProgressFile, kExitFile}) {
    std::filesystem::remove(dir_ / name, ec);
    if (ec)
      return InternalError(fmt::format("removing {}: {}", (dir_ / name).string(), ec.message()));
  }
  return Status::Ok();
}

Status JobDir::OrderCheckpointAndExit(std::string_view reason) {
  return WriteFileAtomically(dir_ / kOrderFile, fmt::format("checkpoint-exit {}\n", reason));
}

bool JobDir::HasPendingOrder() const {
  std::error_code ec;
  return std::filesystem::exists(dir_ / kOrderFile, ec);
}

Result<std::optional<Progress>> JobDir::ReadProgress() const {
  TESSERA_ASSIGN_OR_RETURN(std::optional<std::string> text, ReadIfExists(dir_ / kProgressFile));
  if (!text) return std::optional<Progress>();
  Result<Progress> progress = ParseProgress(*text);
  if (!progress.ok()) return progress.status().WithContext((dir_ / kProgressFile).string());
  return std::optional<Progress>(*progress);
}

Result<std::optional<ExitReport>> JobDir::ReadExit() const {
  TESSERA_ASSIGN_OR_RETURN(std::optional<std::string> text, ReadIfExists(dir_ / kExitFile));
  if (!text) return std::optional<ExitReport>();
  Result<ExitReport> report = ParseExitReport(*text);
  if (!report.ok()) return report.status().WithContext((dir_ / kExitFile).string());
  return std::optional<ExitReport>(*report);
}

}  // namespace tessera::cluster
