#include "ledger/net/localnet_testing.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <streambuf>
#include <string>
#include <thread>
#include <utility>

namespace tessera::ledger::net {

namespace {

// The localnet's progress, split by line: every line to a file, and to the console only the
// lines that are not the per-second and per-block figures (those start with '['), of which the
// last kTailLines are kept to print if the run fails. A test of nine 40 s runs printed ~600
// lines, and CI's record of a failed test keeps only its first ~110: the verdicts at the end
// were lost (session 17). Lines are gathered per thread: the chain watch prints from its own.
class ProgressSplitter : public std::streambuf {
 public:
  static constexpr size_t kTailLines = 20;

  ProgressSplitter(const std::filesystem::path& file, std::ostream& console)
      : file_(file), console_(console) {}

  // The last per-second/per-block lines, oldest first.
  std::string Tail() {
    std::lock_guard<std::mutex> lock(mu_);
    std::string out;
    for (const std::string& line : tail_) out += line;
    return out;
  }

 protected:
  int overflow(int c) override {
    if (c == traits_type::eof()) return traits_type::not_eof(c);
    const char ch = static_cast<char>(c);
    xsputn(&ch, 1);
    return c;
  }

  std::streamsize xsputn(const char* s, std::streamsize n) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::string& line = pending_[std::this_thread::get_id()];
    for (std::streamsize i = 0; i < n; ++i) {
      line += s[i];
      if (s[i] == '\n') {
        Dispatch(line);
        line.clear();
      }
    }
    return n;
  }

 private:
  void Dispatch(const std::string& line) {
    file_ << line;
    file_.flush();
    if (!line.starts_with("[")) {
      console_ << line;
      return;
    }
    tail_.push_back(line);
    if (tail_.size() > kTailLines) tail_.pop_front();
  }

  std::mutex mu_;
  std::ofstream file_;
  std::ostream& console_;
  std::map<std::thread::id, std::string> pending_;
  std::deque<std::string> tail_;
};

}  // namespace

Result<LocalnetReport> RunNetwork(const std::string& name, const LocalnetConfig& config) {
  const char* bin = std::getenv("TESSERA_BIN_DIR");
  if (bin == nullptr) return FailedPreconditionError("TESSERA_BIN_DIR not set (run through ctest)");
  const auto out = std::filesystem::temp_directory_path() /
                   ("ledger_localnet_" + name + "_" + std::to_string(::getpid()));
  std::error_code ec;
  std::filesystem::create_directories(kProgressDir, ec);
  const std::filesystem::path progress_file =
      std::filesystem::absolute(std::filesystem::path(kProgressDir) / (name + ".log"), ec);
  ProgressSplitter splitter(progress_file, std::cerr);
  std::ostream progress(&splitter);
  std::cerr << "run " << name << ": progress in " << progress_file.string() << "\n";
  // TESSERA_LOG_LEVEL (e.g. info) overrides the processes' log level, for diagnosis with
  // TESSERA_KEEP_LOGS.
  LocalnetConfig run_config = config;
  if (const char* level = std::getenv("TESSERA_LOG_LEVEL"); level != nullptr && *level != 0) {
    run_config.log_level = level;
  }
  auto report = RunLocalnet(run_config, bin, out, progress);
  // TESSERA_KEEP_LOGS=1 keeps a passing run's directory (every process's log) for diagnosis: the
  // margin of a run over its bar cannot be read from the report alone.
  const char* keep = std::getenv("TESSERA_KEEP_LOGS");
  const bool keep_logs = keep != nullptr && std::string(keep) == "1";
  if (report.ok()) {
    if (keep_logs) {
      std::cerr << "logs of " << name << " kept in " << out << "\n";
    } else {
      std::filesystem::remove_all(out);
    }
    std::cerr << "RESULT " << name << ": " << report->blocks << " blocks, " << report->committed_txs
              << " txs, " << report->tx_per_s << " tx/s\n";
  } else {
    std::cerr << "RESULT " << name << ": failed (" << report.status() << "), logs kept in " << out
              << "; its last progress lines:\n"
              << splitter.Tail();
  }
  return report;
}

void ExpectSafe(const LocalnetReport& r) {
  EXPECT_EQ(r.forks, 0u);
  EXPECT_EQ(r.invalid_blocks, 0u);
  EXPECT_TRUE(r.politicians_agree);
  EXPECT_TRUE(r.citizens_agree);
  EXPECT_TRUE(r.balances_conserved);
  EXPECT_EQ(r.double_spends_committed, 0u);
  EXPECT_TRUE(r.proofs_ok);
}

bool Safe(const LocalnetReport& r) {
  return r.forks == 0 && r.invalid_blocks == 0 && r.politicians_agree && r.citizens_agree &&
         r.balances_conserved && r.double_spends_committed == 0 && r.proofs_ok;
}

double CommittedPerSecond(const LocalnetReport& report, const LocalnetConfig& config) {
  return static_cast<double>(report.committed_txs) / config.duration_s;
}

Result<HonestBaseline> RunHonestBaseline(const std::string& name, const LocalnetConfig& config) {
  auto r = RunNetwork(name, config);
  if (!r.ok()) return r.status();
  ExpectSafe(*r);
  const double tx_per_s = CommittedPerSecond(*r, config);
  HonestBaseline baseline{.report = *std::move(r), .tx_per_s = tx_per_s};
  if (!(baseline.tx_per_s > 0)) {
    return UnavailableError("honest baseline " + name + " committed nothing (" +
                            std::to_string(baseline.report.blocks) + " blocks)");
  }
  return baseline;
}

double ExpectThroughputVsHonest(const std::string& name, const LocalnetReport& report,
                                const LocalnetConfig& config, double honest_tx_per_s,
                                double fraction) {
  const double tx_per_s = CommittedPerSecond(report, config);
  std::cerr << name << ": " << tx_per_s << " tx/s vs honest " << honest_tx_per_s << " ("
            << (honest_tx_per_s > 0 ? 100 * tx_per_s / honest_tx_per_s : 0.0) << "%)\n";
  EXPECT_GE(tx_per_s, fraction * honest_tx_per_s)
      << name << "; honest " << honest_tx_per_s << ", bar " << fraction
      << " of it; the honest citizens' last warnings and rounds:\n"
      << report.log_digest;
  return tx_per_s;
}

LocalnetConfig FivePoliticianNetwork() {
  LocalnetConfig c;
  c.politicians = 5;
  c.citizens = 8;
  c.citizens_per_process = 8;
  c.proposers = 4;
  c.accounts = 120;
  c.rate = 40;
  c.duration_s = 20;
  c.double_spend_fraction = 0.1;
  return c;
}

}  // namespace tessera::ledger::net
