// Read-only TOML configuration with typed, path-addressed getters and clear errors.
//
//   TESSERA_ASSIGN_OR_RETURN(Config config, Config::LoadFile("net.toml"));
//   TESSERA_ASSIGN_OR_RETURN(int64_t n, config.GetInt("network.politicians"));
//   TESSERA_ASSIGN_OR_RETURN(double rate, config.GetDoubleOr("load.rate", 100.0));
//
// Keys are dotted paths ("a.b.c"). A missing key is NOT_FOUND; a key of the wrong type is
// INVALID_ARGUMENT naming the key, the expected and the actual type. toml++ stays out of this
// header to keep compile times low.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tessera {

class Config {
 public:
  // Parse errors carry the file name, line and column.
  static Result<Config> LoadFile(const std::filesystem::path& path);
  static Result<Config> Parse(std::string_view toml_text, std::string_view source_name = "config");

  Config();  // empty
  ~Config();
  Config(const Config&);
  Config& operator=(const Config&);
  Config(Config&&) noexcept;
  Config& operator=(Config&&) noexcept;

  bool Has(std::string_view key) const;

  Result<std::string> GetString(std::string_view key) const;
  Result<int64_t> GetInt(std::string_view key) const;
  Result<double> GetDouble(std::string_view key) const;  // integers are accepted too
  Result<bool> GetBool(std::string_view key) const;
  Result<std::vector<std::string>> GetStringList(std::string_view key) const;
  Result<std::vector<int64_t>> GetIntList(std::string_view key) const;
  Result<std::vector<double>> GetDoubleList(std::string_view key) const;
  // The table at `key` as a Config of its own (for per-component sections).
  Result<Config> GetTable(std::string_view key) const;
  // Keys directly under the root of this Config, in file order.
  std::vector<std::string> Keys() const;

  // Like Get*, but an absent key yields `fallback`. A present key of the wrong type is still
  // an error: a typo'd value must never silently become the default.
  Result<std::string> GetStringOr(std::string_view key, std::string fallback) const;
  Result<int64_t> GetIntOr(std::string_view key, int64_t fallback) const;
  Result<double> GetDoubleOr(std::string_view key, double fallback) const;
  Result<bool> GetBoolOr(std::string_view key, bool fallback) const;

  const std::string& source_name() const;

  struct Impl;  // opaque: holds the parsed toml++ table

 private:
  explicit Config(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

}  // namespace tessera
