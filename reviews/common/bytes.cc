#include "reviews/common/bytes.h"

namespace tessera::reviews {

void AppendBigEndian(Bytes& out, uint64_t value, int width) {
  for (int i = width - 1; i >= 0; --i) out.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

void AppendLengthPrefixed(Bytes& out, ByteSpan bytes) {
  AppendBigEndian(out, bytes.size(), 4);
  out.insert(out.end(), bytes.begin(), bytes.end());
}

}  // namespace tessera::reviews
