#include "core/cli.h"

#include <cstdio>
#include <exception>
#include <optional>
#include <set>
#include <string>

#include "core/log.h"
#include "core/version.h"

namespace tessera::cli {

namespace {
constexpr std::string_view kUsagePrefix = "usage: ";

// Collects every long and short flag name known to `app` and its subcommands.
void CollectFlagNames(const CLI::App& app, std::set<std::string>& names) {
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames()) names.insert("--" + name);
    for (const std::string& name : option->get_snames()) names.insert("-" + name);
  }
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    CollectFlagNames(*sub, names);
  }
}

// CLI11 checks required options before it reports unknown ones, so `tool --typo` on a tool
// with a required option would complain about the required option. A wrong flag is the more
// useful message: find the first token that names no flag anywhere in the command tree.
std::optional<std::string> FirstUnknownFlag(const CLI::App& app, int argc,
                                            const char* const* argv) {
  std::set<std::string> names;
  CollectFlagNames(app, names);
  for (int i = 1; i < argc; ++i) {
    std::string_view token = argv[i];
    if (token == "--") break;  // everything after is positional
    if (token.size() < 2 || token[0] != '-') continue;
    if (token[1] >= '0' && token[1] <= '9') continue;  // a negative number
    std::string name(token.substr(0, token.find('=')));
    if (token[1] != '-') name = name.substr(0, 2);  // -xVALUE or a cluster of short flags
    if (!names.contains(name)) return name;
  }
  return std::nullopt;
}
}  // namespace

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
    std::optional<std::string> unknown = FirstUnknownFlag(app_, argc, argv);
    std::string message = unknown ? "unknown flag " + *unknown : std::string(e.what());
    std::fprintf(stderr, "%s: %s\nRun '%s --help' for usage.\n", name_.c_str(), message.c_str(),
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
