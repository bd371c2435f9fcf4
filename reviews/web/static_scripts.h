// The page scripts of the item page's "sign in this browser" form, embedded at build time from
// reviews/web/static/ (docs/reviews-web.md): review_sign.mjs (the unique ring signature and the
// ledger payload, byte for byte as the C++ side makes them) and sign_page.mjs (the form's
// controller). libsodium itself is the npm package scripts/setup installs, served from disk.
#pragma once

#include <string_view>

namespace tessera::reviews::web {

std::string_view ReviewSignScript();
std::string_view SignPageScript();

}  // namespace tessera::reviews::web
