#include "lr/run_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "core/file.h"

namespace tessera::lr {

Status TruncateCsv(const std::string& path, int64_t before) {
  if (!std::filesystem::exists(path)) return Status::Ok();
  TESSERA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  std::istringstream in(text);
  std::string line, kept;
  bool header = true;
  std::ptrdiff_t header_commas = 0;
  while (std::getline(in, line)) {
    if (header) {
      kept += line + "\n";
      header_commas = std::count(line.begin(), line.end(), ',');
      header = false;
      continue;
    }
    // A run killed mid-write can leave a torn last line: keep only complete rows (ended by a
    // newline, with every field of the header).
    if (in.eof()) break;
    if (std::count(line.begin(), line.end(), ',') != header_commas) continue;
    char* end = nullptr;
    const int64_t step = std::strtoll(line.c_str(), &end, 10);
    if (end == line.c_str() || *end != ',') continue;
    if (step < before) kept += line + "\n";
  }
  return WriteFileAtomically(path, kept);
}

std::string RunLog::EvalPath(const std::string& log_csv) {
  std::string base = log_csv;
  if (base.size() > 4 && base.ends_with(".csv")) base.resize(base.size() - 4);
  return base + ".eval.csv";
}

Result<RunLog> RunLog::Open(const std::string& log_csv, int64_t resume_step) {
  RunLog log;
  if (log_csv.empty()) return log;
  const std::string eval_csv = EvalPath(log_csv);
  const auto parent = std::filesystem::path(log_csv).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (resume_step > 0) {
    TESSERA_RETURN_IF_ERROR(TruncateCsv(log_csv, resume_step));
    TESSERA_RETURN_IF_ERROR(TruncateCsv(eval_csv, resume_step));
  }
  const bool fresh = resume_step == 0 || !std::filesystem::exists(log_csv);
  log.log_.open(log_csv, fresh ? std::ios::trunc : std::ios::app);
  log.eval_log_.open(eval_csv, fresh ? std::ios::trunc : std::ios::app);
  if (!log.log_ || !log.eval_log_) return InternalError(fmt::format("cannot write {}", log_csv));
  if (fresh) {
    log.log_ << "step,lr,loss,phase\n";
    log.eval_log_ << "step,epoch,test_loss,test_acc\n";
  }
  return log;
}

void RunLog::Step(int64_t step, double lr, double loss, std::string_view phase) {
  if (log_.is_open()) log_ << fmt::format("{},{:.9g},{:.9g},{}\n", step, lr, loss, phase);
}

void RunLog::Eval(int64_t step, double epoch, double test_loss, double test_accuracy) {
  if (eval_log_.is_open()) {
    eval_log_ << fmt::format("{},{:.4f},{:.6f},{:.6f}\n", step, epoch, test_loss, test_accuracy);
  }
}

void RunLog::Flush() {
  if (log_.is_open()) log_.flush();
  if (eval_log_.is_open()) eval_log_.flush();
}

}  // namespace tessera::lr
