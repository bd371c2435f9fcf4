// libFuzzer target: DecodeEvidence on arbitrary bytes must return an error or a value that
// re-encodes to exactly the input (canonical), and verifying a decoded value against a genesis
// must not crash.
#include "ledger/crypto/hash.h"
#include "ledger/fuzz/round_trip.h"
#include "ledger/net/evidence.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::ledger;
  fuzz::RoundTrip(data, size, net::DecodeEvidence, net::EncodeEvidence);
  static const net::Genesis genesis = [] {
    net::Genesis g;
    for (uint32_t i = 0; i < 4; ++i) {
      g.politicians.push_back(
          {i, KeyPair::FromSeed(Sha256("evidence fuzz " + std::to_string(i))).public_key(), ""});
    }
    return g;
  }();
  auto e = net::DecodeEvidence(ByteSpan(data, size));
  if (e.ok()) (void)net::VerifyEvidence(*e, genesis);
  return 0;
}
