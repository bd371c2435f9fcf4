// libFuzzer target for the reviews application's payload decoder (reviews/ledger/payload.h),
// which reads transactions straight from the network (politicians decode every submitted
// AppTransaction): any input must decode or fail with a Status, never crash, hang or read out
// of bounds; whatever decodes must re-encode to the same bytes (one encoding per value), and
// coalescing it with itself must keep every payload decodable.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "reviews/ledger/payload.h"

using namespace tessera::reviews;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tessera::ByteSpan input(data, size);
  auto payload = onchain::DecodePayload(input);
  if (!payload.ok()) return 0;
  std::string again = onchain::EncodePayload(*payload);
  if (again != std::string(reinterpret_cast<const char*>(data), size)) std::abort();
  (void)onchain::KindName(*payload);
  if (const auto* batch = std::get_if<onchain::ReviewBatch>(&*payload)) {
    for (const onchain::ReviewEntry& r : batch->reviews) {
      if (r.signature.s.size() != batch->ring_size) std::abort();
      (void)onchain::ReviewRecordHash(batch->item, batch->epoch, r);
    }
  }
  if (const auto* open = std::get_if<onchain::RingOpen>(&*payload)) {
    if (open->members > open->keys.size()) std::abort();
    for (size_t i = 1; i < open->keys.size(); ++i) {
      if (!(open->keys[i - 1] < open->keys[i])) std::abort();
    }
  }
  return 0;
}
