#include "ledger/state/account.h"

#include "ledger/crypto/hash.h"

namespace tessera::ledger {

namespace {
void PutU64(uint64_t v, uint8_t* out) {
  for (int i = 7; i >= 0; --i, v >>= 8) out[i] = static_cast<uint8_t>(v);
}
uint64_t GetU64(const uint8_t* in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = v << 8 | in[i];
  return v;
}
}  // namespace

Hash256 AccountKey(const PublicKey& key) { return Sha256(ByteSpan(key)); }

LeafValue EncodeAccount(const Account& account) {
  LeafValue value{};
  PutU64(account.balance, value.data());
  PutU64(account.nonce, value.data() + 8);
  return value;
}

Result<Account> DecodeAccount(const LeafValue& value) {
  for (size_t i = 16; i < value.size(); ++i) {
    if (value[i] != 0) return InvalidArgumentError("leaf value is not an account (reserved bytes)");
  }
  return Account{GetU64(value.data()), GetU64(value.data() + 8)};
}

}  // namespace tessera::ledger
