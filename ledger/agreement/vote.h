// The values and votes of the ledger's agreement protocol (Algorand's BA*, as built in
// player.h), and their canonical encodings.
//
// A vote is bound to (height, period, step): a citizen casts at most one vote per
// (height, period, step), and every quorum counts votes of one (height, period, step, value).
// The value is a block hash, or bottom ("no block in this period; move on").
//
//   Vote v{.height = 7, .period = 0, .step = Step::kSoft, .value = Value::Of(hash), .voter = pk};
//   std::string bytes = EncodeVote(v);
//   TESSERA_ASSIGN_OR_RETURN(Vote back, DecodeVote(AsBytes(bytes)));
//
// Torch-free and I/O-free; signatures and committee tickets are checked by the caller before
// a vote reaches the player (the player trusts `voter` to be who signed).
#pragma once

#include <compare>
#include <cstdint>
#include <string>

#include "core/status.h"
#include "ledger/crypto/bytes.h"
#include "ledger/crypto/ed25519.h"

namespace tessera::ledger::agreement {

// soft = Algorand's step 2 (filtering), cert = step 3 (certifying), next = step 4 (period
// completing 1, cast at the period's deadline); step 5 (period completing 2) is two steps, as
// go-algorand's "late" and "down": late_next for the value of a soft quorum once seen,
// down_next for bottom when the previous period ended on bottom and this player did not
// cert-vote. A player may cast one vote in each of the five steps of a period.
enum class Step : uint8_t { kSoft = 1, kCert = 2, kNext = 3, kLateNext = 4, kDownNext = 5 };
inline bool IsNextStep(Step s) {
  return s == Step::kNext || s == Step::kLateNext || s == Step::kDownNext;
}
const char* StepName(Step step);

struct Value {
  bool bottom = true;
  Hash256 hash{};  // all zero when bottom

  static Value Bottom() { return {}; }
  static Value Of(const Hash256& h) { return {.bottom = false, .hash = h}; }
  friend auto operator<=>(const Value&, const Value&) = default;
  friend bool operator==(const Value&, const Value&) = default;
};
std::string ValueName(const Value& v);  // "bottom" or the first hex digits of the hash

struct Vote {
  uint64_t height = 0;
  uint32_t period = 0;
  Step step = Step::kSoft;
  Value value;
  PublicKey voter{};
  friend auto operator<=>(const Vote&, const Vote&) = default;
  friend bool operator==(const Vote&, const Vote&) = default;
};
std::string VoteName(const Vote& v);  // for logs and test failures

// Canonical encoding: type byte, u64 height, u32 period, u8 step, u8 bottom flag, 32-byte
// hash, 32-byte voter. The decoder is strict: unknown step, flag other than 0/1, a bottom
// value with a non-zero hash, truncation and trailing bytes are INVALID_ARGUMENT.
std::string EncodeVote(const Vote& v);
Result<Vote> DecodeVote(ByteSpan bytes);

}  // namespace tessera::ledger::agreement
