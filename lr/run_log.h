// The per-step and per-evaluation CSV logs of a training run. Torch-free.
//
//   <log_csv>:                 step,lr,loss,phase
//   <log_csv minus .csv>.eval.csv: step,epoch,test_loss,test_acc
//
// A resumed run cuts both back to the checkpoint's step first (torn rows from a kill included),
// so its logs read as if it had never stopped.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>

#include "core/status.h"

namespace tessera::lr {

// Keeps the header and the complete rows of a CSV whose first field is a step < `before`.
Status TruncateCsv(const std::string& path, int64_t before);

class RunLog {
 public:
  // A disabled log (no path): every call does nothing.
  RunLog() = default;
  // Opens the logs of `log_csv` (empty: disabled). With resume_step > 0 the existing logs are
  // cut back to steps < resume_step and appended to.
  static Result<RunLog> Open(const std::string& log_csv, int64_t resume_step);
  static std::string EvalPath(const std::string& log_csv);

  void Step(int64_t step, double lr, double loss, std::string_view phase);
  void Eval(int64_t step, double epoch, double test_loss, double test_accuracy);
  // Before a checkpoint: every row up to it must be on disk before the checkpoint exists.
  void Flush();

 private:
  std::ofstream log_, eval_log_;
};

}  // namespace tessera::lr
