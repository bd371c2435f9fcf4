// libFuzzer target for what the web server parses and renders from a request: the review form
// (form.h), item ids and the HTML escaping of whatever text comes through (html.h). Any input
// must parse or fail with a Status, never crash or hang; what parses must respect the form's
// limits, and escaped text must hold no character that could open markup or end an attribute.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "reviews/web/form.h"
#include "reviews/web/html.h"

using namespace tessera::reviews::web;

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

// The input is up to four NUL-separated values: signed_review, signed_json, key_file, key_json.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  static constexpr const char* kNames[] = {"signed_review", "signed_json", "key_file", "key_json"};
  FormFields fields;
  size_t start = 0;
  for (const char* name : kNames) {
    if (start > input.size()) break;
    const size_t end = std::min(input.find('\0', start), input.size());
    fields[name] = std::string(input.substr(start, end - start));
    start = end + 1;
  }

  auto form = ParseReviewForm(fields);
  if (form.ok()) {
    Check(!form->signed_review.empty() && form->signed_review.size() <= kMaxSignedReviewBytes);
    Check(fields["key_file"].find_first_not_of(" \t\r\n") == std::string::npos);
  }
  if (CheckItemId(input).ok()) Check(IsValidUtf8(input) && !input.empty());

  const std::string escaped = EscapeHtml(input);
  Check(escaped.find_first_of("<>\"'") == std::string::npos);
  const std::string encoded = EncodePathSegment(input);
  Check(encoded.find_first_of("/?#<>\"' &") == std::string::npos);
  return 0;
}
