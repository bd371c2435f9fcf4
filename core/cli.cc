#include "core/cli.h"

#include <cstdio>
#include <exception>

#include "core/log.h"
#include "core/version.h"

namespace tessera::cli {

namespace {
constexpr std::string_view kUsagePrefix = "usage: ";
}

Status UsageError(std::string message) {
  return InvalidArgumentError(std::string(kUsagePrefix) + message);
}

Program::Program(std::string name, std::string description)
    : name_(std::move(name)), app_(std::move(description), name_) {
  app_.set_version_flag("--version", std::string(name_) + " " + std::string(kVersion));
  app_.add_option("--log-level", log_level_, "trace, debug, info, warn, error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
      ->capture_default_str();
}

int Program::Run(int argc, const char* const* argv, const std::function<Status()>& body) {
  try {
    app_.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app_.exit(e);  // prints help, exit 0
  } catch (const CLI::CallForAllHelp& e) {
    return app_.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app_.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "%s: %s\nRun '%s --help' for usage.\n", name_.c_str(), e.what(),
                 name_.c_str());
    return kExitUsage;
  }
  InitLogging(name_, log_level_);
  try {
    Status status = body();
    if (status.ok()) return kExitOk;
    if (status.code() == StatusCode::kInvalidArgument &&
        status.message().starts_with(kUsagePrefix)) {
      std::fprintf(stderr, "%s: %s\nRun '%s --help' for usage.\n", name_.c_str(),
                   status.message().c_str() + kUsagePrefix.size(), name_.c_str());
      return kExitUsage;
    }
    std::fprintf(stderr, "%s: error: %s\n", name_.c_str(), status.ToString().c_str());
    return kExitFailure;
  } catch (const std::exception& e) {
    // The edge of the program: nothing may escape as an uncaught exception.
    std::fprintf(stderr, "%s: fatal: %s\n", name_.c_str(), e.what());
    return kExitFailure;
  }
}

}  // namespace tessera::cli
