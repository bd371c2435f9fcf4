// Application factories: how a ledger binary learns which applications it can run.
//
// The ledger never includes an application (ledger/ is the lower layer). A system that runs on
// the ledger registers a factory under its genesis name from code linked into the binaries
// that run it, typically with a static registration object in a library of its own:
//
//   // reviews/ledger/register_app.cc, linked into ledger-politician, ledger-citizen, ...
//   static const bool kRegistered = tessera::ledger::net::RegisterAppFactory(
//       "reviews", [](const AppParams& p) { return reviews::MakeReviewsApp(p); });
//
// LoadApps (genesis.h) then builds each [apps.<name>] of the genesis file with the factory of
// that name, and refuses a genesis naming an application this binary was not linked with.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "ledger/state/application.h"

namespace tessera::ledger::net {

using AppFactory =
    std::function<Result<std::shared_ptr<const Application>>(const AppParams& params)>;

// Registers `factory` under `name`. Returns true, so it can initialize a static; a second
// registration of one name keeps the first (and returns false).
bool RegisterAppFactory(std::string name, AppFactory factory);

// The factory registered under `name`, or nullptr.
const AppFactory* FindAppFactory(std::string_view name);

// The names with a factory, sorted (for error messages and tests).
std::vector<std::string> RegisteredAppNames();

}  // namespace tessera::ledger::net
