#include "core/config.h"

#include <toml++/toml.h>

#include <sstream>

#include "core/file.h"

namespace tessera {

struct Config::Impl {
  std::string source_name;
  toml::table table;
};

namespace {

std::string TypeName(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table:
      return "table";
    case toml::node_type::array:
      return "array";
    case toml::node_type::string:
      return "string";
    case toml::node_type::integer:
      return "integer";
    case toml::node_type::floating_point:
      return "float";
    case toml::node_type::boolean:
      return "boolean";
    case toml::node_type::date:
      return "date";
    case toml::node_type::time:
      return "time";
    case toml::node_type::date_time:
      return "date-time";
    default:
      return "none";
  }
}

Status WrongType(const std::string& source, std::string_view key, std::string_view want,
                 const toml::node& node) {
  return InvalidArgumentError(source + ": key '" + std::string(key) + "' must be " +
                              std::string(want) + ", not " + TypeName(node));
}

Status Missing(const std::string& source, std::string_view key) {
  return NotFoundError(source + ": missing key '" + std::string(key) + "'");
}

// Element-wise list conversion shared by the Get*List accessors.
template <typename T>
Result<std::vector<T>> GetList(const Config::Impl& impl, std::string_view key,
                               std::string_view want) {
  toml::node_view<const toml::node> view = impl.table.at_path(key);
  if (!view) return Missing(impl.source_name, key);
  const toml::array* array = view.as_array();
  if (array == nullptr)
    return WrongType(impl.source_name, key, std::string("a list of ") + std::string(want),
                     *view.node());
  std::vector<T> out;
  out.reserve(array->size());
  for (size_t i = 0; i < array->size(); ++i) {
    const toml::node& element = *array->get(i);
    std::optional<T> value = element.value<T>();
    if constexpr (std::is_same_v<T, double>) {
      if (!element.is_number()) value.reset();
    } else if constexpr (std::is_same_v<T, int64_t>) {
      if (!element.is_integer()) value.reset();
    } else {
      if (!element.is_string()) value.reset();
    }
    if (!value) {
      return WrongType(impl.source_name, std::string(key) + "[" + std::to_string(i) + "]", want,
                       element);
    }
    out.push_back(*value);
  }
  return out;
}

}  // namespace

Config::Config() : impl_(std::make_shared<Impl>()) {}
Config::Config(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
Config::~Config() = default;
Config::Config(const Config&) = default;
Config& Config::operator=(const Config&) = default;
Config::Config(Config&&) noexcept = default;
Config& Config::operator=(Config&&) noexcept = default;

Result<Config> Config::LoadFile(const std::filesystem::path& path) {
  TESSERA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return Parse(text, path.string());
}

Result<Config> Config::Parse(std::string_view toml_text, std::string_view source_name) {
  // Debian's toml++ is built with exceptions: contain them here, at the library boundary.
  auto impl = std::make_shared<Impl>();
  impl->source_name = std::string(source_name);
  try {
    impl->table = toml::parse(toml_text, source_name);
  } catch (const toml::parse_error& error) {
    std::ostringstream message;
    message << source_name << ":" << error.source().begin.line << ":" << error.source().begin.column
            << ": " << error.description();
    return InvalidArgumentError(message.str());
  }
  return Config(std::move(impl));
}

bool Config::Has(std::string_view key) const {
  return static_cast<bool>(impl_->table.at_path(key));
}

Result<std::string> Config::GetString(std::string_view key) const {
  auto view = impl_->table.at_path(key);
  if (!view) return Missing(impl_->source_name, key);
  if (!view.is_string()) return WrongType(impl_->source_name, key, "a string", *view.node());
  return *view.value<std::string>();
}

Result<int64_t> Config::GetInt(std::string_view key) const {
  auto view = impl_->table.at_path(key);
  if (!view) return Missing(impl_->source_name, key);
  if (!view.is_integer()) return WrongType(impl_->source_name, key, "an integer", *view.node());
  return *view.value<int64_t>();
}

Result<double> Config::GetDouble(std::string_view key) const {
  auto view = impl_->table.at_path(key);
  if (!view) return Missing(impl_->source_name, key);
  if (!view.is_number()) return WrongType(impl_->source_name, key, "a number", *view.node());
  return *view.value<double>();
}

Result<bool> Config::GetBool(std::string_view key) const {
  auto view = impl_->table.at_path(key);
  if (!view) return Missing(impl_->source_name, key);
  if (!view.is_boolean()) return WrongType(impl_->source_name, key, "a boolean", *view.node());
  return *view.value<bool>();
}

Result<std::vector<std::string>> Config::GetStringList(std::string_view key) const {
  return GetList<std::string>(*impl_, key, "a string");
}
Result<std::vector<int64_t>> Config::GetIntList(std::string_view key) const {
  return GetList<int64_t>(*impl_, key, "an integer");
}
Result<std::vector<double>> Config::GetDoubleList(std::string_view key) const {
  return GetList<double>(*impl_, key, "a number");
}

Result<Config> Config::GetTable(std::string_view key) const {
  auto view = impl_->table.at_path(key);
  if (!view) return Missing(impl_->source_name, key);
  const toml::table* table = view.as_table();
  if (table == nullptr) return WrongType(impl_->source_name, key, "a table", *view.node());
  auto impl = std::make_shared<Impl>();
  impl->source_name = impl_->source_name + "[" + std::string(key) + "]";
  impl->table = *table;
  return Config(std::move(impl));
}

std::vector<std::string> Config::Keys() const {
  std::vector<std::string> keys;
  for (const auto& [key, node] : impl_->table) keys.emplace_back(key.str());
  return keys;
}

namespace {
// Absent → fallback; present → the strict getter's answer (value or type error).
template <typename T, typename Getter>
Result<T> OrFallback(const Config& config, std::string_view key, T fallback, Getter get) {
  if (!config.Has(key)) return fallback;
  return get(key);
}
}  // namespace

Result<std::string> Config::GetStringOr(std::string_view key, std::string fallback) const {
  return OrFallback<std::string>(*this, key, std::move(fallback),
                                 [this](std::string_view k) { return GetString(k); });
}
Result<int64_t> Config::GetIntOr(std::string_view key, int64_t fallback) const {
  return OrFallback<int64_t>(*this, key, fallback,
                             [this](std::string_view k) { return GetInt(k); });
}
Result<double> Config::GetDoubleOr(std::string_view key, double fallback) const {
  return OrFallback<double>(*this, key, fallback,
                            [this](std::string_view k) { return GetDouble(k); });
}
Result<bool> Config::GetBoolOr(std::string_view key, bool fallback) const {
  return OrFallback<bool>(*this, key, fallback, [this](std::string_view k) { return GetBool(k); });
}

const std::string& Config::source_name() const { return impl_->source_name; }

}  // namespace tessera
