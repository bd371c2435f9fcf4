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
// cert-vote. A player may cast one vote in each step of a period.
//
// Repeated next steps (Algorand's steps 4, 5, ... as in go-algorand): with committees drawn
// per step (Params::member), a next step whose committee drew fewer than T honest members
// cannot end the period, so a player re-casts its next vote every Params::next_repeat_ms as
// NextRound(1), NextRound(2), ... (step bytes 6 .. 5 + kMaxNextRounds), each a step of its own
// with a fresh committee. Off (next_repeat_ms = 0) when one committee votes every step.
enum class Step : uint8_t { kSoft = 1, kCert = 2, kNext = 3, kLateNext = 4, kDownNext = 5 };
inline constexpr uint32_t kMaxNextRounds = 64;
// NextRound(0) is kNext; NextRound(k), 1 <= k <= kMaxNextRounds, the k-th repetition.
inline Step NextRound(uint32_t k) {
  return k == 0 ? Step::kNext : static_cast<Step>(static_cast<uint8_t>(Step::kDownNext) + k);
}
inline bool IsNextStep(Step s) {
  return static_cast<uint8_t>(s) >= static_cast<uint8_t>(Step::kNext);
}
inline bool IsValidStep(uint8_t s) {
  return s >= static_cast<uint8_t>(Step::kSoft) &&
         s <= static_cast<uint8_t>(Step::kDownNext) + kMaxNextRounds;
}
const char* StepName(Step step);  // "next+k" for NextRound(k), k >= 1: "next+"

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
// hash, 32-byte voter. The decoder is strict: unknown step (IsValidStep), flag other than 0/1, a
// bottom value with a non-zero hash, truncation and trailing bytes are INVALID_ARGUMENT.
std::string EncodeVote(const Vote& v);
Result<Vote> DecodeVote(ByteSpan bytes);

}  // namespace tessera::ledger::agreement
