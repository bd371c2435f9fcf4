#include "core/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <string>

namespace tessera {

void InitLogging(std::string_view program_name, std::string_view level) {
  // Not registered by name, so calling this twice (tests, re-exec) never throws.
  auto logger = std::make_shared<spdlog::logger>(
      std::string(program_name), std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%L%$ %n: %v");
  spdlog::level::level_enum parsed = spdlog::level::from_str(std::string(level));
  // from_str maps unknown names to "off"; the CLI validates names, so only a real "off" is off.
  if (parsed == spdlog::level::off && level != "off") parsed = spdlog::level::info;
  logger->set_level(parsed);
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace tessera
