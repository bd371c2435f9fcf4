// libFuzzer target: ECVRF verification of arbitrary (public key, proof, alpha) triples must
// return an error or an output, never crash; an accepted proof's output must equal
// proof-to-hash of the same proof.
#include <algorithm>
#include <cstdlib>

#include "ledger/crypto/vrf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::ledger;
  if (size < 32 + 80) return 0;
  PublicKey key;
  VrfProof proof;
  std::copy_n(data, 32, key.begin());
  std::copy_n(data + 32, 80, proof.begin());
  ByteSpan alpha(data + 112, size - 112);
  auto beta = VrfVerify(key, alpha, proof);
  if (beta.ok()) {
    auto again = VrfProofToHash(proof);
    if (!again.ok() || *again != *beta) std::abort();
  }
  (void)VrfProofToHash(proof);
  return 0;
}
