// Checkpoints keyed by cut unit, not by stage (Varuna's layout, research note §9): a run saved
// with one number of stages and replicas resumes with any other, because each worker simply
// reads the files of the units it now owns.
//
//   <root>/ckpt-<step>/unit-<u>.bin   parameters and optimizer state of unit u (SGD's momentum
//                                     buffers; Adam's first and second moments), written by
//                                     replica 0 of the stage that owns u
//   <root>/ckpt-<step>/common.json    steps completed, hyper-parameters, model description
//                                     (Varuna's opt-common-state; libtorch's optimizer load
//                                     drops the LR, so we keep it here ourselves)
//
// A checkpoint is complete when common.json and every unit file exist; every file is written
// atomically (core/file.h), so a crash leaves an older checkpoint usable. Unit files are a small
// binary format with a checksum, so the layer is torch-free and corruption is DATA_LOSS.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "nlohmann/json.hpp"

namespace tessera::pipeline {

struct TensorData {
  std::vector<int64_t> shape;
  std::vector<float> values;
  friend bool operator==(const TensorData&, const TensorData&) = default;
};

struct UnitState {
  std::vector<TensorData> params;
  std::vector<TensorData> momentum;       // one per parameter (SGD: momentum buffer; Adam: exp_avg)
  std::vector<TensorData> second_moment;  // Adam's exp_avg_sq, one per parameter; SGD: none
};

struct CheckpointMeta {
  int64_t steps_done = 0;  // the next step to train has this global index
  double lr = 0;
  double momentum = 0;
  uint64_t seed = 0;
  int num_units = 0;
  nlohmann::json model;  // the model description, checked on resume
};

std::string EncodeUnitState(const UnitState& state);
// DATA_LOSS for a truncated, corrupt or foreign file.
Result<UnitState> DecodeUnitState(std::string_view bytes);

std::filesystem::path CheckpointDir(const std::filesystem::path& root, int64_t step);
Status WriteUnitState(const std::filesystem::path& root, int64_t step, int unit,
                      const UnitState& state);
Status WriteMeta(const std::filesystem::path& root, const CheckpointMeta& meta);
Result<UnitState> ReadUnitState(const std::filesystem::path& root, int64_t step, int unit);
Result<CheckpointMeta> ReadMeta(const std::filesystem::path& root, int64_t step);

// The largest step with a complete checkpoint under `root`; NOT_FOUND if there is none.
Result<int64_t> LatestCompleteCheckpoint(const std::filesystem::path& root);

}  // namespace tessera::pipeline
