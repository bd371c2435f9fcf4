// Fuzz target for the decoders of untrusted pipeline input: checkpoint unit files and job
// descriptions (JSON). Neither may crash, hang or allocate unboundedly on any input.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "pipeline/checkpoint.h"
#include "pipeline/job.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto state = tessera::pipeline::DecodeUnitState(bytes);
  if (state.ok()) {
    // Whatever decodes must encode back to the same bytes.
    if (tessera::pipeline::EncodeUnitState(*state) != bytes) __builtin_trap();
  }
  auto json = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (!json.is_discarded()) (void)tessera::pipeline::JobFromJson(json);
  (void)tessera::pipeline::ParseEndpoint(std::string(bytes));
  return 0;
}
