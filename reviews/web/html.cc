#include "reviews/web/html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "reviews/review/review.h"
#include "reviews/web/http_status.h"

namespace tessera::reviews::web {

const std::string_view kStyleSheet = R"css(
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 70em; padding: 0 1em;
       color: #222; background: #fafafa; }
header a { color: inherit; text-decoration: none; }
h1 { margin-bottom: 0.2em; }
.sub { color: #666; margin-top: 0; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { text-align: left; padding: 0.5em 0.8em; border-bottom: 1px solid #ddd;
         vertical-align: top; }
th { background: #eee; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.stars { color: #c80; letter-spacing: 0.1em; }
.ok { color: #171; }
.bad { color: #b11; }
.muted { color: #777; font-size: 0.9em; }
.box { background: #fff; border: 1px solid #ddd; padding: 0.8em 1em; margin: 1em 0; }
.review { background: #fff; border: 1px solid #ddd; padding: 0.6em 1em; margin: 0.6em 0; }
.review p { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0.4em 0; }
code { overflow-wrap: anywhere; }
form label { display: block; margin: 0.6em 0 0.2em; font-weight: 600; }
textarea { width: 100%; box-sizing: border-box; font: inherit; }
textarea.key { font-family: monospace; font-size: 0.85em; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; font-size: 0.85em; }
button { margin-top: 0.8em; padding: 0.4em 1.2em; font: inherit; }
.error { border-color: #b11; }
table.histogram { width: auto; background: none; }
table.histogram td { border: none; padding: 0.05em 0.5em 0.05em 0; }
meter { width: 12em; }
)css";

namespace {

// The page skeleton: `title` is escaped here, `body` is HTML the caller built from escaped
// pieces.
std::string Page(std::string_view title, std::string_view body) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>{}</title>\n<link rel=\"stylesheet\" href=\"/style.css\">\n</head>\n<body>\n"
      "<header><h1><a href=\"/\">Tessera reviews</a></h1>\n"
      "<p class=\"sub\">Anonymous, hijack-resistant reviews on the Blockene ledger</p>"
      "</header>\n<main>\n{}</main>\n</body>\n</html>\n",
      EscapeHtml(title), body);
}

std::string ItemLink(std::string_view id) { return "/item/" + EncodePathSegment(id); }

// Long ids (the ledger's are 64 hex digits) are cut in the table, where they would squeeze
// every other column; the item's page shows the whole id. Cut at a character boundary.
std::string ShortId(std::string_view id) {
  constexpr size_t kShown = 16;
  if (id.size() <= kShown + 4) return std::string(id);
  size_t cut = kShown;
  while (cut > 0 && (static_cast<unsigned char>(id[cut]) & 0xC0) == 0x80) --cut;
  return std::string(id.substr(0, cut)) + "\u2026";
}

// How many reviews gave each rating, 5 down to 1, as bars (<meter>: no inline style, which the
// Content-Security-Policy forbids).
std::string Histogram(const ItemSummary& item) {
  std::string rows;
  for (int r = kMaxRating; r >= kMinRating; --r) {
    const uint64_t n = item.histogram[r - 1];
    rows += fmt::format(
        "<tr><td>{} \u2605</td><td><meter min=\"0\" max=\"{}\" value=\"{}\"></meter></td>"
        "<td class=\"num\">{}</td></tr>",
        r, std::max<uint64_t>(item.review_count, 1), n, n);
  }
  return "<table class=\"histogram\">" + rows + "</table>\n";
}

// Five stars, the mean rounded to the nearest whole star.
std::string Stars(double mean) {
  const long full = std::lround(std::clamp(mean, 0.0, 5.0));
  std::string out;
  for (long i = 0; i < 5; ++i) out += i < full ? "\u2605" : "\u2606";
  return out;
}

std::string VerifiedCell(const ItemSummary& item) {
  if (item.verified) {
    if (item.height == 0) return "<span class=\"ok\">\u2713 verified</span>";
    return fmt::format(
        "<span class=\"ok\">\u2713 verified</span> <span class=\"muted\">at height {}</span>",
        item.height);
  }
  return fmt::format(
      "<span class=\"bad\">\u2717 not verified</span><br><span class=\"muted\">{}"
      "</span>",
      EscapeHtml(item.verification));
}

std::string WindowText(const ItemSummary& item) {
  return fmt::format("epoch {}, {}", item.epoch, WindowName(item.window));
}

std::string ReviewFormHtml(const ItemSummary& item) {
  switch (item.window) {
    case Window::kUpcoming:
      return fmt::format("<p class=\"box\">Reviews open in epoch {}.</p>\n", item.epoch);
    case Window::kClosed:
      return fmt::format("<p class=\"box\">The review window of epoch {} is closed.</p>\n",
                         item.epoch);
    case Window::kOpen:
      break;
  }
  return fmt::format(
      "<h2>Post a review</h2>\n"
      "<form class=\"box\" method=\"post\" action=\"{}/review\" enctype=\"multipart/form-data\">\n"
      "<p>Write and sign the review with your own client; your review key never leaves it:</p>\n"
      "<pre id=\"sign-command\">reviews-net --genesis GENESIS sign-review --key YOUR.key.json "
      "--item-id {} --rating 1..5 --text \"...\" --out review.json</pre>\n"
      "<label for=\"signed_review\">Signed review file</label>\n"
      "<input id=\"signed_review\" name=\"signed_review\" type=\"file\" "
      "accept=\".json,application/json\">\n"
      "<label for=\"signed_json\">or paste the signed review</label>\n"
      "<textarea id=\"signed_json\" name=\"signed_json\" class=\"key\" rows=\"4\" "
      "placeholder=\"the contents of review.json\"></textarea>\n"
      "<p class=\"muted\">This server receives only the signed review: the item, the rating, the "
      "text and a ring signature by one of the item's eligible keys. It checks the signature "
      "and relays the review to the ledger. Never upload your review key file; a second review "
      "of this item by the same key is rejected.</p>\n"
      "<button type=\"submit\">Post review</button>\n</form>\n",
      EscapeHtml(ItemLink(item.id)), EscapeHtml(item.id));
}

// The second way to sign: in this page, by a module script over libsodium from npm. The key
// file input has no name and is outside the posting form, so no submission carries it; the
// script reads it, signs, and posts only the signed review through the form above.
std::string BrowserSignFormHtml(const ItemSummary& item) {
  if (item.window != Window::kOpen) return "";
  return fmt::format(
      "<h2>Or sign in this browser</h2>\n"
      "<form class=\"box\" id=\"browser-sign\" data-ring-url=\"/api/item/{}/ring\">\n"
      "<p>This page reads your review key file and signs here; the key never leaves the "
      "browser, only the signed review is posted.</p>\n"
      "<label for=\"browser-key\">Review key file (read here, not uploaded)</label>\n"
      "<input id=\"browser-key\" type=\"file\" accept=\".json,application/json\">\n"
      "<label for=\"browser-rating\">Rating</label>\n<select id=\"browser-rating\">"
      "<option>5</option><option>4</option><option selected>3</option><option>2</option>"
      "<option>1</option></select>\n"
      "<label for=\"browser-text\">Review</label>\n"
      "<textarea id=\"browser-text\" rows=\"3\" maxlength=\"1000\"></textarea>\n"
      "<button type=\"submit\">Sign here and post</button>\n"
      "<p id=\"browser-sign-status\" class=\"muted\"></p>\n</form>\n"
      "<script type=\"module\" src=\"/static/sign_page.mjs\"></script>\n",
      EscapeHtml(EncodePathSegment(item.id)));
}

}  // namespace

std::string_view WindowName(Window window) {
  switch (window) {
    case Window::kUpcoming:
      return "upcoming";
    case Window::kOpen:
      return "open";
    case Window::kClosed:
      return "closed";
  }
  return "unknown";
}

std::string EscapeHtml(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

std::string EncodePathSegment(std::string_view segment) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : segment) {
    const auto byte = static_cast<unsigned char>(c);
    const bool unreserved = (byte >= 'a' && byte <= 'z') || (byte >= 'A' && byte <= 'Z') ||
                            (byte >= '0' && byte <= '9') || byte == '-' || byte == '.' ||
                            byte == '_' || byte == '~';
    if (unreserved) {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 0x0F]);
    }
  }
  return out;
}

std::string FormatRating(const ItemSummary& item) {
  if (item.review_count == 0) return "-";
  return fmt::format("{:.1f}", item.mean_rating);
}

std::string DescribeHijack(const HijackView& hijack) {
  if (!hijack.known) return "not known yet";
  if (!hijack.feasible) {
    return fmt::format(
        "no attack: more identities than exist would be needed to shift the rating "
        "by {:g}",
        hijack.delta);
  }
  return fmt::format("{} {} to shift the rating by {:g} ({} without DRAC)",
                     hijack.identities_with_drac,
                     hijack.identities_with_drac == 1 ? "identity" : "identities", hijack.delta,
                     hijack.identities_without_drac);
}

std::string RenderPager(std::string_view path, size_t page, size_t pages) {
  if (pages <= 1) return {};
  std::string out = "<p class=\"pager\">";
  if (page > 1) {
    out += fmt::format("<a rel=\"prev\" href=\"{}?page={}\">previous</a> ", EscapeHtml(path),
                       page - 1);
  }
  out += fmt::format("page {} of {}", page, pages);
  if (page < pages) {
    out += fmt::format(" <a rel=\"next\" href=\"{}?page={}\">next</a>", EscapeHtml(path), page + 1);
  }
  return out + "</p>\n";
}

std::string RenderItemsPage(const std::vector<ItemSummary>& items, std::string_view pager) {
  std::string body;
  if (items.empty()) {
    body = "<p class=\"box\">No items yet.</p>\n";
    body += pager;
    return Page("Tessera reviews", body);
  }
  body =
      "<table id=\"items\">\n<thead><tr><th>Item</th><th class=\"num\">Rating</th><th "
      "class=\"num\">Reviews</th>"
      "<th>Hijack resistance</th><th>Review window</th><th>Tally</th></tr></thead>\n<tbody>\n";
  for (const ItemSummary& item : items) {
    body += fmt::format(
        "<tr><td><a href=\"{}\">{}</a><br><span class=\"muted\">{}</span></td>"
        "<td class=\"num\">{} <span class=\"stars\">{}</span></td><td class=\"num\">{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td></tr>\n",
        EscapeHtml(ItemLink(item.id)), EscapeHtml(item.name), EscapeHtml(ShortId(item.id)),
        FormatRating(item), item.review_count == 0 ? "" : Stars(item.mean_rating),
        item.review_count, EscapeHtml(DescribeHijack(item.hijack)), WindowText(item),
        VerifiedCell(item));
  }
  body += "</tbody>\n</table>\n";
  body += pager;
  return Page("Tessera reviews", body);
}

std::string RenderItemPage(const ItemDetail& detail, std::string_view pager, bool browser_signing) {
  const ItemSummary& item = detail.summary;
  std::string body = fmt::format(
      "<h2>{}</h2>\n<div class=\"box\" id=\"summary\">\n"
      "<p><span class=\"stars\">{}</span> <strong>{}</strong> from {} review{}</p>\n{}"
      "<p>Hijack resistance: {}</p>\n<p>Review window: {}</p>\n<p>Tally: {}</p>\n"
      "<p class=\"muted\">Item id: <code>{}</code></p>\n</div>\n",
      EscapeHtml(item.name), item.review_count == 0 ? "" : Stars(item.mean_rating),
      FormatRating(item), item.review_count, item.review_count == 1 ? "" : "s",
      item.review_count == 0 ? "" : Histogram(item), EscapeHtml(DescribeHijack(item.hijack)),
      WindowText(item), VerifiedCell(item), EscapeHtml(item.id));
  body += "<h2>Reviews</h2>\n<div id=\"reviews\">\n";
  if (detail.reviews.empty()) body += "<p class=\"muted\">No reviews yet.</p>\n";
  for (const ReviewView& review : detail.reviews) {
    body += fmt::format(
        "<div class=\"review\"><span class=\"stars\">{}</span> <strong>{}/5</strong>"
        "<p>{}</p><span class=\"muted\">height {} &middot; tag <code>{}</code></span></div>\n",
        Stars(review.rating), review.rating, EscapeHtml(review.text), review.height,
        EscapeHtml(review.tag_hex));
  }
  body += "</div>\n";
  body += pager;
  body += ReviewFormHtml(item);
  if (browser_signing) body += BrowserSignFormHtml(item);
  return Page(item.name, body);
}

std::string RenderPostedPage(std::string_view item_id, std::string_view message) {
  const std::string body = fmt::format(
      "<h2>Review submitted</h2>\n<p class=\"box\" id=\"message\">{}</p>\n"
      "<p><a href=\"{}\">Back to the item</a> &middot; <a href=\"/\">All items</a></p>\n",
      EscapeHtml(message), EscapeHtml(ItemLink(item_id)));
  return Page("Review submitted", body);
}

std::string RenderErrorPage(int http_status, std::string_view detail, std::string_view item_id) {
  const std::string title = fmt::format("{} {}", http_status, ReasonPhrase(http_status));
  std::string links = "<a href=\"/\">All items</a>";
  if (!item_id.empty()) {
    links = fmt::format("<a href=\"{}\">Back to the item</a> &middot; ",
                        EscapeHtml(ItemLink(item_id))) +
            links;
  }
  const std::string body =
      fmt::format("<h2>{}</h2>\n<p class=\"box error\" id=\"error\">{}</p>\n<p>{}</p>\n",
                  EscapeHtml(title), EscapeHtml(detail), links);
  return Page(title, body);
}

}  // namespace tessera::reviews::web
