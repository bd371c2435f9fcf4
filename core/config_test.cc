#include "core/config.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/file.h"

namespace tessera {
namespace {

constexpr char kToml[] = R"(
name = "net"
[network]
politicians = 5
rate = 2.5
whole = 3
honest = true
peers = ["a", "b"]
weights = [1, 2.5]
)";

TEST(ConfigTest, TypedGetters) {
  Result<Config> config = Config::Parse(kToml, "net.toml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(*config->GetString("name"), "net");
  EXPECT_EQ(*config->GetInt("network.politicians"), 5);
  EXPECT_DOUBLE_EQ(*config->GetDouble("network.rate"), 2.5);
  EXPECT_DOUBLE_EQ(*config->GetDouble("network.whole"), 3.0);
  EXPECT_TRUE(*config->GetBool("network.honest"));
  EXPECT_EQ(*config->GetStringList("network.peers"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(*config->GetDoubleList("network.weights"), (std::vector<double>{1, 2.5}));
  EXPECT_EQ(config->Keys(), (std::vector<std::string>{"name", "network"}));
  Result<Config> section = config->GetTable("network");
  ASSERT_TRUE(section.ok());
  EXPECT_EQ(*section->GetInt("politicians"), 5);
}

TEST(ConfigTest, ClearErrors) {
  Config config = *Config::Parse(kToml, "net.toml");
  Status missing = config.GetInt("network.citizens").status();
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_NE(missing.message().find("network.citizens"), std::string::npos);
  Status wrong = config.GetInt("network.rate").status();
  EXPECT_EQ(wrong.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(wrong.message(), "net.toml: key 'network.rate' must be an integer, not float");
  EXPECT_EQ(config.GetIntList("network.peers").status().message(),
            "net.toml: key 'network.peers[0]' must be an integer, not string");
}

TEST(ConfigTest, FallbacksOnlyForAbsentKeys) {
  Config config = *Config::Parse(kToml);
  EXPECT_EQ(*config.GetIntOr("network.citizens", 64), 64);
  EXPECT_EQ(*config.GetIntOr("network.politicians", 64), 5);
  EXPECT_FALSE(config.GetIntOr("name", 1).ok());  // present but a string
}

TEST(ConfigTest, ParseErrorNamesLine) {
  Result<Config> bad = Config::Parse("a = 1\nb = [1,\n", "bad.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message().rfind("bad.toml:", 0), 0u) << bad.status();
}

TEST(ConfigTest, LoadFile) {
  auto path = std::filesystem::temp_directory_path() / "tessera_config_test.toml";
  ASSERT_TRUE(WriteFileAtomically(path, kToml).ok());
  Result<Config> config = Config::LoadFile(path);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(*config->GetInt("network.politicians"), 5);
  std::filesystem::remove(path);
  EXPECT_EQ(Config::LoadFile(path).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace tessera
