#include "ledger/agreement/vote.h"

#include "ledger/codec/canonical.h"

namespace tessera::ledger::agreement {

namespace {
constexpr uint8_t kVoteType = 0xA1;  // distinct from every ledger/codec message type
}

const char* StepName(Step step) {
  switch (step) {
    case Step::kSoft:
      return "soft";
    case Step::kCert:
      return "cert";
    case Step::kNext:
      return "next";
    case Step::kLateNext:
      return "late-next";
    case Step::kDownNext:
      return "down-next";
  }
  return IsValidStep(static_cast<uint8_t>(step)) ? "next+" : "?";
}

std::string ValueName(const Value& v) {
  return v.bottom ? std::string("bottom") : ToHex(ByteSpan(v.hash)).substr(0, 8);
}

std::string VoteName(const Vote& v) {
  // Appends rather than operator+ chains (GCC 12 warns falsely on those, -Wrestrict).
  std::string out = "h";
  out += std::to_string(v.height);
  out += "/p";
  out += std::to_string(v.period);
  out += "/";
  out += StepName(v.step);
  if (static_cast<uint8_t>(v.step) > static_cast<uint8_t>(Step::kDownNext)) {
    out += std::to_string(static_cast<uint8_t>(v.step) - static_cast<uint8_t>(Step::kDownNext));
  }
  out += " ";
  out += ValueName(v.value);
  out += " by ";
  out += ToHex(ByteSpan(v.voter)).substr(0, 8);
  return out;
}

std::string EncodeVote(const Vote& v) {
  CanonicalWriter w;
  w.U8(kVoteType).U64(v.height).U32(v.period).U8(static_cast<uint8_t>(v.step));
  w.Bool(v.value.bottom).Array(v.value.hash).Array(v.voter);
  return w.Take();
}

Result<Vote> DecodeVote(ByteSpan bytes) {
  CanonicalReader r(bytes, "agreement vote");
  uint8_t type;
  TESSERA_RETURN_IF_ERROR(r.U8(&type, "type"));
  if (type != kVoteType)
    return r.Error("not an agreement vote (type " + std::to_string(type) + ")");
  Vote v;
  TESSERA_RETURN_IF_ERROR(r.U64(&v.height, "height"));
  TESSERA_RETURN_IF_ERROR(r.U32(&v.period, "period"));
  uint8_t step;
  TESSERA_RETURN_IF_ERROR(r.U8(&step, "step"));
  if (!IsValidStep(step)) return r.Error("unknown step " + std::to_string(step));
  v.step = static_cast<Step>(step);
  TESSERA_RETURN_IF_ERROR(r.Bool(&v.value.bottom, "bottom"));
  TESSERA_RETURN_IF_ERROR(r.Array(&v.value.hash, "value"));
  if (v.value.bottom && v.value.hash != Hash256{}) return r.Error("bottom value with a hash");
  TESSERA_RETURN_IF_ERROR(r.Array(&v.voter, "voter"));
  TESSERA_RETURN_IF_ERROR(r.Finish());
  return v;
}

}  // namespace tessera::ledger::agreement
