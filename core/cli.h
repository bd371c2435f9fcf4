// Command-line conventions shared by every binary in the project.
//
// Every binary:
//   * answers --help and --version (exit 0);
//   * takes --log-level (trace, debug, info, warn, error, off; default info);
//   * exits 0 on success, 1 when the work itself failed, 2 on a usage error (bad flag or value),
//     printing one clear line to stderr for 1 and 2.
//
// Usage, in a thin main():
//
//   int main(int argc, char** argv) {
//     tessera::cli::Program program("ledger-politician", "Runs one politician server.");
//     std::string db;
//     program.app().add_option("--db", db, "State directory")->required();
//     return program.Run(argc, argv, [&]() -> tessera::Status { return Serve(db); });
//   }
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "core/status.h"

namespace tessera::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

class Program {
 public:
  Program(std::string name, std::string description);

  CLI::App& app() { return app_; }
  const std::string& name() const { return name_; }

  // Parses argv, sets up logging, runs `body` and maps the outcome to an exit code.
  // A usage error in `body` can be reported by returning an INVALID_ARGUMENT status whose
  // message starts with "usage:"; it then exits 2 like a parse error.
  int Run(int argc, const char* const* argv, const std::function<Status()>& body);

 private:
  std::string name_;
  CLI::App app_;
  std::string log_level_ = "info";
};

// A status meaning "the command line was wrong": Program::Run exits 2 for it.
Status UsageError(std::string message);

}  // namespace tessera::cli
