// libFuzzer target for the review file format (reviews/tool/formats.h), the form in which a
// client submits a review: any input must parse or fail with a Status, never crash or hang.
// Whatever parses must survive a JSON round trip unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "reviews/tool/formats.h"

using namespace tessera::reviews;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  tool::json j = tool::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  auto review = tool::ReviewFromJson(j, "input");
  if (!review.ok()) return 0;
  auto again = tool::ReviewFromJson(tool::ReviewToJson(*review), "again");
  if (!again.ok() || again->item != review->item || again->rating != review->rating ||
      again->text != review->text || again->signature.s != review->signature.s) {
    std::abort();
  }
  return 0;
}
