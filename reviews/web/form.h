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

// A review key file is a small JSON object (reviews/tool/formats.h); anything much larger is
// not one.
inline constexpr size_t kMaxKeyFileBytes = 16 * 1024;

// The fields of a posted form by name (an uploaded file's field holds the file's contents).
using FormFields = std::map<std::string, std::string, std::less<>>;

struct ReviewForm {
  int rating = 0;
  std::string text;      // line breaks normalized to "\n"
  std::string key_file;  // the review key file's contents
};

// Reads the review form:
//   rating    "1".."5"
//   text      optional, valid UTF-8, at most `max_text_bytes` bytes after turning the
//             browser's "\r\n" line breaks into "\n"
//   key_file  the uploaded key file, or
//   key_json  the key file pasted as text: exactly one of the two must be non-blank.
// INVALID_ARGUMENT naming the field otherwise. Unknown fields are ignored (browsers add their
// own, e.g. the submit button's).
Result<ReviewForm> ParseReviewForm(const FormFields& fields, size_t max_text_bytes);

// An item id as it may appear in a URL: 1..reviews::kMaxItemLength bytes of valid UTF-8 without
// control characters. INVALID_ARGUMENT otherwise.
Status CheckItemId(std::string_view id);

// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points past
// U+10FFFF).
bool IsValidUtf8(std::string_view text);

}  // namespace tessera::reviews::web
