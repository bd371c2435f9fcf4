// libFuzzer target: agreement DecodeVote on arbitrary bytes (strict and canonical).
#include "ledger/agreement/vote.h"
#include "ledger/fuzz/round_trip.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::ledger;
  return fuzz::RoundTrip(data, size, agreement::DecodeVote, agreement::EncodeVote);
}
