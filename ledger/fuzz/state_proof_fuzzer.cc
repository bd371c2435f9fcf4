// libFuzzer target: StateProof::Decode on arbitrary bytes, then Verify and RootAfter on the
// decoded partial tree with keys taken from the input; none may crash, and a decoded proof
// must re-encode to exactly the input.
#include <algorithm>

#include "ledger/fuzz/round_trip.h"
#include "ledger/state/state_proof.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::ledger;
  tessera::ledger::fuzz::RoundTrip(
      data, size, [](ByteSpan b) { return StateProof::Decode(b); },
      [](const StateProof& p) { return p.Encode(); });
  auto proof = StateProof::Decode(ByteSpan(data, size));
  if (!proof.ok()) return 0;
  Hash256 key{};
  std::copy_n(data, std::min<size_t>(size, 32), key.begin());
  Hash256 other = key;
  other[0] ^= 0x80;
  std::vector<Hash256> keys = {key, other};
  (void)proof->Verify(proof->root_hash(), keys);
  std::vector<LeafUpdate> updates = {{key, LeafValue{1}}, {other, LeafValue{2}}};
  (void)proof->RootAfter(proof->root_hash(), updates);
  return 0;
}
