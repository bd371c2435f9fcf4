// Logging set-up: spdlog to stderr with the program name, time and level on each line.
// Libraries log through spdlog's default logger (spdlog::info(...)); only main() calls
// InitLogging.
#pragma once

#include <string_view>

namespace tessera {

// `level` is one of trace, debug, info, warn, error, off (unknown names mean info).
void InitLogging(std::string_view program_name, std::string_view level);

}  // namespace tessera
