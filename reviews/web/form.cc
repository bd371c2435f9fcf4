#include "reviews/web/form.h"

#include <algorithm>

#include "reviews/review/review.h"

namespace tessera::reviews::web {

namespace {

bool IsBlank(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; });
}

const std::string* Find(const FormFields& fields, std::string_view name) {
  auto it = fields.find(name);
  return it == fields.end() ? nullptr : &it->second;
}

}  // namespace

bool IsValidUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    size_t length;
    uint32_t code;
    if (lead < 0x80) {
      ++i;
      continue;
    } else if ((lead & 0xE0) == 0xC0) {
      length = 2;
      code = lead & 0x1F;
    } else if ((lead & 0xF0) == 0xE0) {
      length = 3;
      code = lead & 0x0F;
    } else if ((lead & 0xF8) == 0xF0) {
      length = 4;
      code = lead & 0x07;
    } else {
      return false;  // a continuation byte or 0xF8..0xFF where a character must start
    }
    if (i + length > text.size()) return false;
    for (size_t j = 1; j < length; ++j) {
      const auto next = static_cast<unsigned char>(text[i + j]);
      if ((next & 0xC0) != 0x80) return false;
      code = (code << 6) | (next & 0x3F);
    }
    static constexpr uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < kSmallest[length]) return false;          // overlong
    if (code >= 0xD800 && code <= 0xDFFF) return false;  // UTF-16 surrogate
    if (code > 0x10FFFF) return false;
    i += length;
  }
  return true;
}

Status CheckItemId(std::string_view id) {
  if (id.empty() || id.size() > kMaxItemLength) {
    return InvalidArgumentError("an item id has 1.." + std::to_string(kMaxItemLength) +
                                " bytes, this one has " + std::to_string(id.size()));
  }
  if (!IsValidUtf8(id)) return InvalidArgumentError("the item id is not valid UTF-8");
  for (char c : id) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7F) {
      return InvalidArgumentError("the item id contains a control character");
    }
  }
  return Status::Ok();
}

Result<ReviewForm> ParseReviewForm(const FormFields& fields) {
  for (const char* key_field : {"key_file", "key_json"}) {
    const std::string* key = Find(fields, key_field);
    if (key != nullptr && !IsBlank(*key)) {
      return InvalidArgumentError(
          "this page does not take review keys: sign the review with your own client "
          "(reviews-net sign-review) and post the signed review");
    }
  }
  const std::string* uploaded = Find(fields, "signed_review");
  const std::string* pasted = Find(fields, "signed_json");
  const bool has_upload = uploaded != nullptr && !IsBlank(*uploaded);
  const bool has_paste = pasted != nullptr && !IsBlank(*pasted);
  if (has_upload && has_paste) {
    return InvalidArgumentError(
        "signed review: either upload the file or paste it, not both (they could differ)");
  }
  if (!has_upload && !has_paste) {
    return InvalidArgumentError(
        "signed review: upload the file reviews-net sign-review wrote, or paste its contents");
  }
  const std::string& text = has_upload ? *uploaded : *pasted;
  if (text.size() > kMaxSignedReviewBytes) {
    return InvalidArgumentError("signed review: " + std::to_string(text.size()) +
                                " bytes is too large for a signed review (at most " +
                                std::to_string(kMaxSignedReviewBytes) + ")");
  }
  return ReviewForm{text};
}

}  // namespace tessera::reviews::web
