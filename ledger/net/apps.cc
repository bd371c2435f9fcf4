// LoadApps over the application factories registered by the binary (app_factories.h). The
// ledger includes no application: a ledger-only build runs chains without applications, and a
// binary linking an application's registration runs chains that name it.
#include <map>
#include <mutex>

#include "ledger/net/app_factories.h"
#include "ledger/net/genesis.h"

namespace tessera::ledger::net {
namespace {

struct Factories {
  std::mutex mu;
  std::map<std::string, AppFactory, std::less<>> by_name;
};

// Function-local: registration objects of other translation units may run before any static
// of this one is constructed.
Factories& AllFactories() {
  static Factories* factories = new Factories();
  return *factories;
}

}  // namespace

bool RegisterAppFactory(std::string name, AppFactory factory) {
  Factories& f = AllFactories();
  std::lock_guard lock(f.mu);
  return f.by_name.emplace(std::move(name), std::move(factory)).second;
}

const AppFactory* FindAppFactory(std::string_view name) {
  Factories& f = AllFactories();
  std::lock_guard lock(f.mu);
  auto it = f.by_name.find(name);
  return it == f.by_name.end() ? nullptr : &it->second;  // entries are never removed
}

std::vector<std::string> RegisteredAppNames() {
  Factories& f = AllFactories();
  std::lock_guard lock(f.mu);
  std::vector<std::string> names;
  for (const auto& [name, factory] : f.by_name) names.push_back(name);
  return names;
}

Result<AppRegistry> LoadApps(const Genesis& genesis) {
  AppRegistry registry;
  for (AppParams params : genesis.apps) {
    // Applications that check citizen identities need the registrar; an explicit value in
    // the application's own table wins.
    params.values.emplace("registrar", ToHex(genesis.registrar));
    const AppFactory* factory = FindAppFactory(params.name);
    if (factory == nullptr) {
      std::string known;
      for (const std::string& name : RegisteredAppNames())
        known += (known.empty() ? "" : ", ") + name;
      return InvalidArgumentError("genesis names application '" + params.name +
                                  "', which this binary does not include (it has: " +
                                  (known.empty() ? "none" : known) + ")");
    }
    TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<const Application> app, (*factory)(params));
    TESSERA_RETURN_IF_ERROR(registry.Add(std::move(app)));
  }
  return registry;
}

}  // namespace tessera::ledger::net
