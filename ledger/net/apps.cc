// The application factories compiled into the ledger's binaries. An application lives in its
// own system folder; the build defines TESSERA_WITH_<APP> when that system is built too
// (ledger/net/CMakeLists.txt), so a ledger-only build still runs chains without applications.
#include "ledger/net/genesis.h"

#ifdef TESSERA_WITH_REVIEWS
#include "reviews/ledger/reviews_app.h"
#endif

namespace tessera::ledger::net {

Result<AppRegistry> LoadApps(const Genesis& genesis) {
  AppRegistry registry;
  for (AppParams params : genesis.apps) {
    // Applications that check citizen identities need the registrar; an explicit value in
    // the application's own table wins.
    params.values.emplace("registrar", ToHex(genesis.registrar));
    Result<std::shared_ptr<const Application>> app = InvalidArgumentError(
        "genesis names application '" + params.name + "', which this build does not include");
#ifdef TESSERA_WITH_REVIEWS
    if (params.name == "reviews") app = reviews::MakeReviewsApp(params);
#endif
    if (!app.ok()) return app.status();
    TESSERA_RETURN_IF_ERROR(registry.Add(std::move(*app)));
  }
  return registry;
}

}  // namespace tessera::ledger::net
