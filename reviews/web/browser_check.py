#!/usr/bin/env python3
"""Drives headless Chromium through the reviews web page as a user would, against a running
reviews-web, and fails (exit 1) on the first thing that is not as it should be.

    browser_check.py --url http://127.0.0.1:8080 --item ITEM_ID --name "Item name" \
        --signed-review review.json --text "the review's text" --screenshots DIR

The review was written and signed by the user's own client (reviews-net sign-review); the
page only relays it. Steps:
  1. The items page lists the item (by name, linking to /item/<id>) with its numbers.
  2. The item page shows the form and the command that signs a review. The script attaches
     the signed review file (whose text is an HTML/script injection attempt plus a unique
     marker) through the file input and clicks "Post review": the answer must be
     "Review submitted".
  3. The item page (reloaded until the review is committed, at most --commit-wait seconds)
     shows the review, its text as literal text: the <script> and <b> of the text are
     characters on the page, not elements, and the script did not run.
  4. Posting the same signed review again, pasted into the text box this time, is refused with
     409 Conflict (one review per key and item); pasting the review KEY file is refused with
     400 and a warning never to hand it out; a box holding no signed review gets 400.
  5. The items page now counts the review. Screenshots of the items page and the item page
     are written to DIR as reviews-web.png and reviews-web-item.png.
  0. (First, so that it commits within the review epoch.) With --browser-key/--browser-item/
     --browser-text: a review signed IN THE BROWSER. On that
     item's page the "sign in this browser" form's module script has loaded; its key file input
     has no name and sits outside the posting form. The script attaches the review key file to
     it, writes the text, and clicks "Sign here and post": the page script (libsodium from npm)
     fetches the item's ring, signs, and posts only the signed review, which the server's C++
     client library verifies before relaying it ("Review submitted"), and the ledger's
     politicians and citizens verify again: the review must then appear on the item page.
     (What the server received is checked by browser_test.sh from the proxy's recording.)
"""

import argparse
import os
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "testing"))
import browser_checks  # noqa: E402
from browser_checks import CheckFailed, check  # noqa: E402

# The text browser_test.sh signs: a marker, then this injection attempt.
INJECTION = "<script>window.pwned = 1; document.title = 'pwned'</script><b>not bold</b> & \"quoted\""


def page_text(page):
    return page.evaluate("document.body.innerText")


def review_count_on_page(page):
    return page.evaluate("document.querySelectorAll('#reviews .review').length")


def sign_in_browser(page, args):
    url = args.url + "/item/" + urllib.parse.quote(args.browser_item, safe="")
    marker = args.browser_text.split(" ")[0]
    browser_checks.wait_for(page, "document.querySelector('#browser-sign') && "
                            "document.querySelector('#browser-sign').dataset.ready === '1'",
                            "the browser-signing form's script to load", 30, reload_url=url,
                            interval=1)
    check(page.evaluate("(() => { const k = document.querySelector('#browser-key');"
                        " return !k.name && !k.closest('form[method=post]'); })()"),
          "the key file input has no name and is outside the posting form")
    page.set_file("#browser-key", args.browser_key)
    page.set_value("#browser-text", args.browser_text)
    page.set_value("#browser-rating", "2")
    page.evaluate("document.querySelector('#browser-sign button[type=submit]').click()")
    # The script signs, then submits the posting form: wait for that page, or for the error
    # the script reports on the form.
    deadline = time.monotonic() + 60
    while True:
        try:
            title, error = page.evaluate(
                "[document.title, document.body.dataset.browserSignError || '']")
        except browser_checks.CdpError:  # the document is being replaced
            title, error = "", ""
        if error:
            raise CheckFailed(f"signing in the browser failed: {error}")
        if title == "Review submitted" or title[:1] in ("4", "5"):
            break
        if time.monotonic() > deadline:
            raise CheckFailed("signing in the browser posted nothing within 60 s")
        time.sleep(0.2)
    if title != "Review submitted":
        raise CheckFailed(f"posting the browser-signed review: '{title}': {page_text(page)}")
    check(True, "a review signed in the browser was verified by the server and relayed: " +
          page.evaluate("document.querySelector('#message').innerText"))
    shown = browser_checks.wait_for(
        page, f"[...document.querySelectorAll('#reviews .review p')].map(p => p.innerText)"
        f".filter(t => t.includes({marker!r}))",
        "the browser-signed review to be committed", args.commit_wait, reload_url=url, interval=1)
    check(shown == [args.browser_text], "the ledger committed the browser-signed review")


def run(args):
    item_path = "/item/" + urllib.parse.quote(args.item, safe="")
    review_text = args.text
    marker = review_text.split(" ")[0]
    os.makedirs(args.screenshots, exist_ok=True)

    with browser_checks.chromium("reviews-web-chromium-", args.chromium) as browser:
        page = browser.page()
        page.set_viewport(1200, 900)

        # 0. Signed in the browser, first: its review must commit within the epoch.
        if args.browser_key:
            sign_in_browser(page, args)

        # 1. The listing.
        page.navigate(args.url + "/")
        check(page.evaluate("document.title") == "Tessera reviews", "items page loads")
        link = page.evaluate(
            f"(() => {{ const a = document.querySelector('#items a[href=\"{item_path}\"]');"
            " return a ? a.innerText : null; })()")
        check(link == args.name, f"items page lists '{args.name}' linking to {item_path}")
        row = page.evaluate(
            f"document.querySelector('#items a[href=\"{item_path}\"]').closest('tr').innerText")
        check("identit" in row or "not known" in row or "no attack" in row,
              f"the item's row shows its hijack resistance: {row!r}")

        # 2. The form.
        page.navigate(args.url + item_path)
        check(page.evaluate("document.title") == args.name, "item page loads")
        before = review_count_on_page(page)
        check(page.evaluate("!!document.querySelector('form #signed_review')"),
              "item page has the form for a signed review")
        check(page.evaluate("!document.querySelector('#key_file, #key_json, #rating')"),
              "the form asks for no key and no rating (the signed review holds them)")
        check("sign-review" in page.evaluate("document.querySelector('#sign-command').innerText"),
              "the page shows the command that signs a review")
        page.set_file("#signed_review", args.signed_review)
        check(page.evaluate("document.querySelector('#signed_review').files.length") == 1,
              "signed review attached")
        page.click_and_wait_for_load("form button[type=submit]")
        title = page.evaluate("document.title")
        if title != "Review submitted":
            raise CheckFailed(f"posting the review: got '{title}': {page_text(page)}")
        check(True, "review submitted: " +
              page.evaluate("document.querySelector('#message').innerText"))

        # 3. The review on the item page, as text.
        deadline = time.monotonic() + args.commit_wait
        while True:
            page.navigate(args.url + item_path)
            shown = page.evaluate(
                "[...document.querySelectorAll('#reviews .review p')].map(p => p.innerText)")
            if any(marker in text for text in shown):
                break
            if time.monotonic() > deadline:
                raise CheckFailed(f"the review did not appear within {args.commit_wait} s; "
                                  f"reviews shown: {shown}")
            time.sleep(1)
        mine = [text for text in shown if marker in text]
        check(mine == [review_text], "the review text is shown exactly as written")
        check(review_count_on_page(page) == before + 1, "one more review on the item page")
        check(page.evaluate("document.querySelectorAll('#reviews script, #reviews b').length")
              == 0, "the review's <script> and <b> are not elements")
        check(page.evaluate("typeof window.pwned") == "undefined"
              and page.evaluate("document.title") == args.name,
              "the review's script did not run")
        check(page.evaluate("document.querySelector('#summary').innerText").find(
            "verified") >= 0, "the tally's verification is shown")
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(os.path.join(args.screenshots, "reviews-web-item.png"))

        # 4. The same signed review again (pasted this time), the key file, then junk.
        with open(args.signed_review) as f:
            signed_json = f.read()
        page.set_value("#signed_json", signed_json)
        page.click_and_wait_for_load("form button[type=submit]")
        title = page.evaluate("document.title")
        error = page.evaluate("(document.querySelector('#error') || document.body).innerText")
        # 409 is also a closed window: the reason must be the used tag.
        check(title == "409 Conflict" and "already" in error,
              f"a second review by the same key is refused: '{title}': {error}")

        page.navigate(args.url + item_path)
        page.set_value("#signed_json", "{\"not\": \"a signed review\"}")
        page.click_and_wait_for_load("form button[type=submit]")
        title = page.evaluate("document.title")
        check(title == "400 Bad Request",
              f"a malformed signed review is refused: '{title}': "
              + page.evaluate("(document.querySelector('#error') || document.body).innerText"))

        # 5. The listing counts it.
        page.navigate(args.url + "/")
        row = page.evaluate(
            f"document.querySelector('#items a[href=\"{item_path}\"]').closest('tr').innerText")
        check(any(cell.strip() == str(before + 1) for cell in row.split("\t")),
              f"the items page counts {before + 1} review(s): {row!r}")
        page.screenshot(os.path.join(args.screenshots, "reviews-web.png"))
        page.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="base URL of a running reviews-web")
    parser.add_argument("--item", required=True, help="the id of an item open for reviews")
    parser.add_argument("--name", required=True, help="the item's display name")
    parser.add_argument("--signed-review", required=True,
                        help="a review of the item signed by reviews-net sign-review")
    parser.add_argument("--text", required=True,
                        help="the signed review's text (starting with a unique marker)")
    parser.add_argument("--screenshots", required=True, help="directory for the screenshots")
    parser.add_argument("--commit-wait", type=float, default=120,
                        help="seconds to wait for the review to be committed")
    parser.add_argument("--chromium", default="chromium", help="the browser binary")
    parser.add_argument("--browser-key", help="a registered review key file, signed with in the "
                        "browser (step 6)")
    parser.add_argument("--browser-item", help="the item the browser-signed review is for")
    parser.add_argument("--browser-text", help="its text (starting with a unique marker)")
    args = parser.parse_args()
    args.url = args.url.rstrip("/")
    return browser_checks.main(run, args, "browser check passed")


if __name__ == "__main__":
    sys.exit(main())
