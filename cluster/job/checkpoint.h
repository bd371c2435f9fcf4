// Application-level checkpoints of a training job, and the directory that keeps them.
//
// CRIU cannot dump processes on this kernel (shared/research/environment.md §5), so a job
// checkpoints itself at a step boundary: the step it has completed, its logical world size
// (the number of data-parallel replicas, which never changes across resizes) and an opaque
// state blob (parameters, optimizer buffers, ...). A restarted job loads the latest one and
// continues from exactly that step.
//
//   CheckpointStore store("/shared/jobs/j7/ckpt");
//   TESSERA_RETURN_IF_ERROR(store.Save({.step = 120, .world_size = 4, .state = bytes}));
//   TESSERA_ASSIGN_OR_RETURN(std::optional<Checkpoint> latest, store.LoadLatest());
//
// File format (little-endian): "TSCK" magic, u32 version, u64 step, u32 world size,
// u64 state length, u64 FNV-1a hash of the state, then the state bytes. Files are written
// atomically (core/file.h), so a crash leaves the previous checkpoint intact; the hash catches
// a file damaged afterwards.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tessera::cluster {

struct Checkpoint {
  int64_t step = 0;        // steps completed; the job resumes with step `step`
  int32_t world_size = 0;  // logical data-parallel replicas
  std::string state;       // opaque to this library

  friend bool operator==(const Checkpoint&, const Checkpoint&) = default;
};

// FNV-1a, 64 bit: a cheap integrity check and a short fingerprint of a state in logs.
uint64_t Fingerprint(std::string_view bytes);

std::string EncodeCheckpoint(const Checkpoint& checkpoint);
// DATA_LOSS for a truncated, corrupt or foreign file.
Result<Checkpoint> DecodeCheckpoint(std::string_view bytes);

class CheckpointStore {
 public:
  // `keep` >= 1 checkpoints are retained; older ones are removed after a successful save.
  explicit CheckpointStore(std::filesystem::path dir, int keep = 2);

  const std::filesystem::path& dir() const { return dir_; }

  // Creates the directory when needed. A step must not go backwards.
  Status Save(const Checkpoint& checkpoint);

  // The newest checkpoint that decodes, or nullopt if there is none. A damaged newest file is
  // skipped (logged) in favour of the previous one: losing a few steps beats losing the job.
  Result<std::optional<Checkpoint>> LoadLatest() const;

  // Steps of the checkpoint files present, ascending.
  Result<std::vector<int64_t>> ListSteps() const;

 private:
  std::filesystem::path PathFor(int64_t step) const;

  std::filesystem::path dir_;
  int keep_;
};

}  // namespace tessera::cluster
