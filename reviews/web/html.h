// The server-rendered HTML pages of the reviews web server: plain HTML5 with one shared
// stylesheet (kStyleSheet, served at /style.css), no scripts, nothing fetched from elsewhere.
//
// Everything taken from a Backend record or a request is passed through EscapeHtml (text) or
// EncodePathSegment (URLs): item names and review texts are attacker-controlled.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "reviews/web/backend.h"

namespace tessera::reviews::web {

extern const std::string_view kStyleSheet;

// Replaces & < > " ' with character references, so the result is safe as element text and
// inside a quoted attribute value.
std::string EscapeHtml(std::string_view text);

// Percent-encodes every byte outside RFC 3986's unreserved set, so an item id (which may hold
// '/', '?', '#', spaces or any UTF-8) is one path segment of a link.
std::string EncodePathSegment(std::string_view segment);

// "4.3" for a mean rating, "-" when there are no reviews.
std::string FormatRating(const ItemSummary& item);

// A short sentence on the item's hijack resistance:
// "12 identities to shift the rating by 0.5 (3 without DRAC)".
std::string DescribeHijack(const HijackView& hijack);

// Links to the previous and next page of a paginated list at `path` ("?page=N", 1-based), and
// "page P of Q"; empty when there is one page.
std::string RenderPager(std::string_view path, size_t page, size_t pages);

// GET /: the table of items (one page of them), then `pager`.
std::string RenderItemsPage(const std::vector<ItemSummary>& items, std::string_view pager = {});

// GET /item/<id>: the item's numbers, its reviews (one page of them), `pager` and, while its
// window is open, the form that posts a signed review and, with `browser_signing`, the form
// whose page script (static/sign_page.mjs) signs one in the browser.
std::string RenderItemPage(const ItemDetail& item, std::string_view pager = {},
                           bool browser_signing = false);

// The answer to a successful POST /item/<id>/review: the backend's message and a way back.
std::string RenderPostedPage(std::string_view item_id, std::string_view message);

// An error page: "<status> <reason>", the detail, and links back (to the item when known).
std::string RenderErrorPage(int http_status, std::string_view detail,
                            std::string_view item_id = {});

}  // namespace tessera::reviews::web
