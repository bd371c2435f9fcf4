#include "pipeline/checkpoint.h"

#include <cstdint>
#include <cstring>
#include <system_error>

#include "core/file.h"
#include "fmt/format.h"

namespace tessera::pipeline {
namespace {

constexpr char kMagic[8] = {'T', 'S', 'P', 'L', 'U', 'N', 'T', '1'};

uint64_t Fnv1a(std::string_view data) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

template <typename T>
void Put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(v));
}

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  template <typename T>
  bool Get(T& v) {
    if (in_.size() < sizeof(T)) return false;
    std::memcpy(&v, in_.data(), sizeof(T));
    in_.remove_prefix(sizeof(T));
    return true;
  }
  bool GetFloats(std::vector<float>& v, uint64_t n) {
    if (n > in_.size() / sizeof(float)) return false;
    v.resize(n);
    std::memcpy(v.data(), in_.data(), n * sizeof(float));
    in_.remove_prefix(n * sizeof(float));
    return true;
  }
  bool empty() const { return in_.empty(); }
  size_t remaining() const { return in_.size(); }

 private:
  std::string_view in_;
};

void PutTensors(std::string& out, const std::vector<TensorData>& tensors) {
  Put<uint64_t>(out, tensors.size());
  for (const TensorData& t : tensors) {
    Put<uint64_t>(out, t.shape.size());
    for (int64_t d : t.shape) Put<int64_t>(out, d);
    Put<uint64_t>(out, t.values.size());
    out.append(reinterpret_cast<const char*>(t.values.data()), t.values.size() * sizeof(float));
  }
}

bool GetTensors(Reader& r, std::vector<TensorData>& tensors) {
  uint64_t count = 0;
  // Every tensor takes at least 16 bytes (ndim and count), so a count the input cannot hold is
  // refused before anything is allocated.
  if (!r.Get(count) || count > r.remaining() / 16) return false;
  tensors.resize(count);
  for (TensorData& t : tensors) {
    uint64_t ndim = 0, n = 0;
    if (!r.Get(ndim) || ndim > 16) return false;
    t.shape.resize(ndim);
    int64_t elements = 1;
    for (int64_t& d : t.shape) {
      if (!r.Get(d) || d < 0) return false;
      if (d > 0 && elements > INT64_MAX / d) return false;  // no signed overflow
      elements *= d;
    }
    if (!r.Get(n) || static_cast<int64_t>(n) != elements || !r.GetFloats(t.values, n)) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string EncodeUnitState(const UnitState& state) {
  std::string body;
  PutTensors(body, state.params);
  PutTensors(body, state.momentum);
  if (!state.second_moment.empty()) PutTensors(body, state.second_moment);  // absent for SGD
  std::string out(kMagic, sizeof(kMagic));
  Put<uint64_t>(out, Fnv1a(body));
  return out + body;
}

Result<UnitState> DecodeUnitState(std::string_view bytes) {
  if (bytes.size() < sizeof(kMagic) + 8 || std::memcmp(bytes.data(), kMagic, 8) != 0) {
    return DataLossError("not a pipeline unit checkpoint");
  }
  uint64_t sum = 0;
  std::memcpy(&sum, bytes.data() + 8, 8);
  std::string_view body = bytes.substr(16);
  if (Fnv1a(body) != sum) return DataLossError("unit checkpoint checksum mismatch");
  UnitState state;
  Reader r(body);
  if (!GetTensors(r, state.params) || !GetTensors(r, state.momentum) ||
      state.params.size() != state.momentum.size() ||
      // A present but empty third list would not encode back to the same bytes: refused.
      (!r.empty() && (!GetTensors(r, state.second_moment) || state.second_moment.empty() ||
                      state.second_moment.size() != state.params.size())) ||
      !r.empty()) {
    return DataLossError("malformed unit checkpoint");
  }
  return state;
}

std::filesystem::path CheckpointDir(const std::filesystem::path& root, int64_t step) {
  return root / fmt::format("ckpt-{}", step);
}

Status WriteUnitState(const std::filesystem::path& root, int64_t step, int unit,
                      const UnitState& state) {
  std::error_code ec;
  std::filesystem::create_directories(CheckpointDir(root, step), ec);
  if (ec) return UnavailableError(fmt::format("creating {}: {}", root.string(), ec.message()));
  return WriteFileAtomically(CheckpointDir(root, step) / fmt::format("unit-{}.bin", unit),
                             EncodeUnitState(state));
}

Status WriteMeta(const std::filesystem::path& root, const CheckpointMeta& meta) {
  std::error_code ec;
  std::filesystem::create_directories(CheckpointDir(root, meta.steps_done), ec);
  if (ec) return UnavailableError(fmt::format("creating {}: {}", root.string(), ec.message()));
  nlohmann::json j = {{"steps_done", meta.steps_done}, {"lr", meta.lr},
                      {"momentum", meta.momentum},     {"seed", meta.seed},
                      {"num_units", meta.num_units},   {"model", meta.model}};
  return WriteFileAtomically(CheckpointDir(root, meta.steps_done) / "common.json",
                             j.dump(2) + "\n");
}

Result<UnitState> ReadUnitState(const std::filesystem::path& root, int64_t step, int unit) {
  const auto path = CheckpointDir(root, step) / fmt::format("unit-{}.bin", unit);
  TESSERA_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  auto state = DecodeUnitState(bytes);
  if (!state.ok()) return state.status().WithContext(path.string());
  return state;
}

Result<CheckpointMeta> ReadMeta(const std::filesystem::path& root, int64_t step) {
  const auto path = CheckpointDir(root, step) / "common.json";
  TESSERA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  try {
    auto j = nlohmann::json::parse(text);
    CheckpointMeta m;
    m.steps_done = j.at("steps_done").get<int64_t>();
    m.lr = j.at("lr").get<double>();
    m.momentum = j.at("momentum").get<double>();
    m.seed = j.at("seed").get<uint64_t>();
    m.num_units = j.at("num_units").get<int>();
    m.model = j.at("model");
    if (m.steps_done != step || m.num_units < 1) {
      return DataLossError(fmt::format("{} does not describe step {}", path.string(), step));
    }
    return m;
  } catch (const nlohmann::json::exception& e) {
    return DataLossError(fmt::format("{}: {}", path.string(), e.what()));
  }
}

Result<int64_t> LatestCompleteCheckpoint(const std::filesystem::path& root) {
  std::error_code ec;
  int64_t best = -1;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("ckpt-", 0) != 0) continue;
    int64_t step = 0;
    try {
      size_t used = 0;
      step = std::stoll(name.substr(5), &used);
      if (used != name.size() - 5) continue;
    } catch (const std::exception&) {
      continue;
    }
    auto meta = ReadMeta(root, step);
    if (!meta.ok()) continue;
    bool complete = true;
    for (int u = 0; u < meta->num_units && complete; ++u) {
      complete = std::filesystem::exists(entry.path() / fmt::format("unit-{}.bin", u));
    }
    if (complete) best = std::max(best, step);
  }
  if (ec)
    return NotFoundError(fmt::format("no checkpoints in {}: {}", root.string(), ec.message()));
  if (best < 0) return NotFoundError(fmt::format("no complete checkpoint in {}", root.string()));
  return best;
}

}  // namespace tessera::pipeline
