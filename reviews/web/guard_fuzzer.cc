// libFuzzer target for the connection guard's scan of a request's first bytes (ScanRequest,
// ContentLengthOf in connection_guard.h): the one place the server reads client bytes before
// httplib does. Any input must give an answer within bounds: either the request is complete
// (or can never fit) or the guard waits for more than it has and at most max_bytes, so a
// client can neither make it read past its buffer nor stall it without cost. Content-Length is
// checked against an independent parser written differently (lower-case copy, find, digits
// with an overflow check).
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "reviews/web/connection_guard.h"

using namespace tessera::reviews::web;

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

std::optional<size_t> ReferenceContentLength(std::string_view head) {
  std::string lower(head);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const size_t at = lower.find("\r\ncontent-length:");
  if (at == std::string::npos) return std::nullopt;
  size_t i = at + 17;
  while (i < lower.size() && (lower[i] == ' ' || lower[i] == '\t')) ++i;
  if (i == lower.size() || lower[i] < '0' || lower[i] > '9') return std::nullopt;
  size_t value = 0;
  for (; i < lower.size() && lower[i] >= '0' && lower[i] <= '9'; ++i) {
    if (__builtin_mul_overflow(value, size_t{10}, &value) ||
        __builtin_add_overflow(value, static_cast<size_t>(lower[i] - '0'), &value)) {
      return std::nullopt;
    }
  }
  return value;
}

}  // namespace

// The input: two bytes of max_bytes (1..65536), then the bytes the connection has buffered.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t max_bytes = (size_t{data[0]} << 8 | data[1]) + 1;
  const std::string_view seen(reinterpret_cast<const char*>(data) + 2, size - 2);

  const size_t head_end = seen.find("\r\n\r\n");
  if (head_end != std::string_view::npos) {
    const std::string_view head = seen.substr(0, head_end + 2);
    Check(ContentLengthOf(head) == ReferenceContentLength(head));
  }
  Check(ContentLengthOf(seen) == ReferenceContentLength(seen));

  const RequestScan scan = ScanRequest(seen, max_bytes);
  if (!scan.complete) {
    Check(scan.want > seen.size() && scan.want <= max_bytes);
    return 0;
  }
  if (seen.size() >= max_bytes) return 0;
  Check(head_end != std::string_view::npos);  // complete below max_bytes needs a whole head
  const size_t body = ReferenceContentLength(seen.substr(0, head_end + 2)).value_or(0);
  const size_t head = head_end + 4;
  Check(body > max_bytes - head || head + body <= seen.size());
  return 0;
}
