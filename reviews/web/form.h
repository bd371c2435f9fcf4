// The inputs a browser sends: the review form posted to /item/<id>/review and item ids taken
// from URLs. Both are attacker-controlled; these parsers reject what the backend should never
// see, with messages meant for the person filling in the form.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "core/status.h"

namespace tessera::reviews::web {

// A signed review (reviews/client/signed_review.h: the hex of one review's ledger payload, ring
// and signature included) is at most this large; anything larger is not one.
// (reviews/client/signed_review.h's bound: over a ring of 4096 members.)
inline constexpr size_t kMaxSignedReviewBytes = 320 * 1024;

// The fields of a posted form by name (an uploaded file's field holds the file's contents).
using FormFields = std::map<std::string, std::string, std::less<>>;

struct ReviewForm {
  std::string signed_review;  // the signed review file's contents
};

// Reads the review form. The review is written and signed by the user's own client
// (reviews-net sign-review), so the page receives no key, only:
//   signed_review  the uploaded signed review file, or
//   signed_json    its contents pasted as text: exactly one of the two must be non-blank.
// INVALID_ARGUMENT naming the field otherwise, and for a field named like a key
// (key_file, key_json): this server never takes a key. Unknown fields are ignored (browsers
// add their own, e.g. the submit button's).
Result<ReviewForm> ParseReviewForm(const FormFields& fields);

// An item id as it may appear in a URL: 1..reviews::kMaxItemLength bytes of valid UTF-8 without
// control characters. INVALID_ARGUMENT otherwise.
Status CheckItemId(std::string_view id);

// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points past
// U+10FFFF).
bool IsValidUtf8(std::string_view text);

}  // namespace tessera::reviews::web
