// libFuzzer target: DecodeProposerTicket on arbitrary bytes (see round_trip.h).
#include "ledger/codec/messages.h"
#include "ledger/fuzz/round_trip.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::ledger;
  return fuzz::RoundTrip(data, size, DecodeProposerTicket, EncodeProposerTicket);
}
