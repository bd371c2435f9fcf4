#include "ledger/net/identity.h"

#include "ledger/codec/canonical.h"

namespace tessera::ledger::net {
namespace {

constexpr uint8_t kIdentityType = kIdentityMessageType;

std::string SigningBytes(const Identity& id) {
  CanonicalWriter w;
  w.U8(kIdentityType).Array(id.citizen).U64(id.registered_at);
  return w.Take();
}

}  // namespace

std::string EncodeIdentity(const Identity& id) {
  CanonicalWriter w;
  w.U8(kIdentityType).Array(id.citizen).U64(id.registered_at).Array(id.signature);
  return w.Take();
}

Result<Identity> DecodeIdentity(ByteSpan bytes) {
  CanonicalReader r(bytes, "identity");
  uint8_t type = 0;
  TESSERA_RETURN_IF_ERROR(r.U8(&type, "type"));
  if (type != kIdentityType) return r.Error("not an identity (type " + std::to_string(type) + ")");
  Identity id;
  TESSERA_RETURN_IF_ERROR(r.Array(&id.citizen, "citizen"));
  TESSERA_RETURN_IF_ERROR(r.U64(&id.registered_at, "registered_at"));
  TESSERA_RETURN_IF_ERROR(r.Array(&id.signature, "signature"));
  TESSERA_RETURN_IF_ERROR(r.Finish());
  return id;
}

void SignIdentity(Identity& id, const KeyPair& registrar) {
  id.signature = Sign(registrar, "identity", AsBytes(SigningBytes(id)));
}

bool VerifyIdentity(const Identity& id, const PublicKey& registrar) {
  return Verify(registrar, "identity", AsBytes(SigningBytes(id)), id.signature);
}

bool EligibleAt(const Identity& id, uint64_t height, uint64_t registration_delay) {
  if (id.registered_at == 0) return height >= 1;
  return height >= id.registered_at + registration_delay;
}

}  // namespace tessera::ledger::net
