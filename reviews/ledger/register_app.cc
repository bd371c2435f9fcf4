// Registers the reviews application with the ledger's application factories
// (ledger/net/app_factories.h). Compiled as an object library that reviews/CMakeLists.txt links
// into the binaries that run reviews chains (the ledger daemons, ledger-localnet, tests), so
// that the ledger itself never includes reviews/.
#include "ledger/net/app_factories.h"
#include "reviews/ledger/reviews_app.h"

namespace tessera::reviews {
namespace {

[[maybe_unused]] const bool kRegistered = ledger::net::RegisterAppFactory(
    std::string(kReviewsAppName),
    [](const ledger::AppParams& params) { return MakeReviewsApp(params); });

}  // namespace
}  // namespace tessera::reviews
