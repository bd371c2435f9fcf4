#include "cluster/job/checkpoint.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <system_error>

#include "core/file.h"

namespace tessera::cluster {

namespace {

constexpr char kMagic[4] = {'T', 'S', 'C', 'K'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderSize = 4 + 4 + 8 + 4 + 8 + 8;
constexpr std::string_view kPrefix = "ckpt-";
constexpr std::string_view kSuffix = ".bin";

template <typename T>
void Put(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));  // x86-64 only: little-endian on every target we build
  out.append(bytes, sizeof(T));
}

template <typename T>
T Get(std::string_view bytes, size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

}  // namespace

uint64_t Fingerprint(std::string_view bytes) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

std::string EncodeCheckpoint(const Checkpoint& checkpoint) {
  std::string out;
  out.reserve(kHeaderSize + checkpoint.state.size());
  out.append(kMagic, 4);
  Put<uint32_t>(out, kVersion);
  Put<int64_t>(out, checkpoint.step);
  Put<int32_t>(out, checkpoint.world_size);
  Put<uint64_t>(out, checkpoint.state.size());
  Put<uint64_t>(out, Fingerprint(checkpoint.state));
  out.append(checkpoint.state);
  return out;
}

Result<Checkpoint> DecodeCheckpoint(std::string_view bytes) {
  if (bytes.size() < kHeaderSize || std::memcmp(bytes.data(), kMagic, 4) != 0) {
    return DataLossError("not a checkpoint (bad magic or shorter than its header)");
  }
  if (uint32_t version = Get<uint32_t>(bytes, 4); version != kVersion) {
    return DataLossError("unsupported checkpoint version " + std::to_string(version));
  }
  Checkpoint checkpoint;
  checkpoint.step = Get<int64_t>(bytes, 8);
  checkpoint.world_size = Get<int32_t>(bytes, 16);
  uint64_t length = Get<uint64_t>(bytes, 20);
  uint64_t hash = Get<uint64_t>(bytes, 28);
  if (length != bytes.size() - kHeaderSize) {
    return DataLossError("checkpoint state is " + std::to_string(bytes.size() - kHeaderSize) +
                         " bytes, header says " + std::to_string(length));
  }
  if (checkpoint.step < 0 || checkpoint.world_size <= 0) {
    return DataLossError("checkpoint header has a negative step or a non-positive world size");
  }
  checkpoint.state.assign(bytes.substr(kHeaderSize));
  if (Fingerprint(checkpoint.state) != hash) {
    return DataLossError("checkpoint state does not match its hash");
  }
  return checkpoint;
}

CheckpointStore::CheckpointStore(std::filesystem::path dir, int keep)
    : dir_(std::move(dir)), keep_(std::max(keep, 1)) {}

std::filesystem::path CheckpointStore::PathFor(int64_t step) const {
  // Zero-padded so a directory listing sorts by step.
  char name[64];
  std::snprintf(name, sizeof(name), "ckpt-%012lld.bin", static_cast<long long>(step));
  return dir_ / name;
}

Result<std::vector<int64_t>> CheckpointStore::ListSteps() const {
  std::vector<int64_t> steps;
  std::error_code ec;
  if (!std::filesystem::exists(dir_, ec)) return steps;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    std::string name = entry.path().filename().string();
    if (!name.starts_with(kPrefix) || !name.ends_with(kSuffix)) continue;
    std::string digits = name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
    if (digits.empty() || !std::all_of(digits.begin(), digits.end(), ::isdigit)) continue;
    steps.push_back(std::stoll(digits));
  }
  if (ec) return InternalError("listing " + dir_.string() + ": " + ec.message());
  std::sort(steps.begin(), steps.end());
  return steps;
}

Status CheckpointStore::Save(const Checkpoint& checkpoint) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return InternalError("creating " + dir_.string() + ": " + ec.message());
  TESSERA_ASSIGN_OR_RETURN(std::vector<int64_t> steps, ListSteps());
  if (!steps.empty() && checkpoint.step < steps.back()) {
    return FailedPreconditionError("checkpoint step " + std::to_string(checkpoint.step) +
                                   " is older than the stored step " +
                                   std::to_string(steps.back()));
  }
  TESSERA_RETURN_IF_ERROR(
      WriteFileAtomically(PathFor(checkpoint.step), EncodeCheckpoint(checkpoint)));
  steps.push_back(checkpoint.step);
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  for (size_t i = 0; i + keep_ < steps.size(); ++i) {
    std::filesystem::remove(PathFor(steps[i]), ec);  // best effort: a leftover costs only disk
  }
  return Status::Ok();
}

Result<std::optional<Checkpoint>> CheckpointStore::LoadLatest() const {
  TESSERA_ASSIGN_OR_RETURN(std::vector<int64_t> steps, ListSteps());
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    Result<std::string> bytes = ReadFile(PathFor(*it));
    if (!bytes.ok()) {
      spdlog::warn("skipping checkpoint {}: {}", PathFor(*it).string(), bytes.status().ToString());
      continue;
    }
    Result<Checkpoint> checkpoint = DecodeCheckpoint(*bytes);
    if (!checkpoint.ok()) {
      spdlog::warn("skipping checkpoint {}: {}", PathFor(*it).string(),
                   checkpoint.status().ToString());
      continue;
    }
    if (checkpoint->step != *it) {
      spdlog::warn("skipping checkpoint {}: it holds step {}", PathFor(*it).string(),
                   checkpoint->step);
      continue;
    }
    return std::optional<Checkpoint>(std::move(*checkpoint));
  }
  return std::optional<Checkpoint>();
}

}  // namespace tessera::cluster
