// The item page's "sign in this browser" form (html.cc): reads the review key file in the page
// (FileReader; the file input has no name, so no form ever sends it), fetches the item's ring
// from /api/item/ID/ring, signs with review_sign.mjs over libsodium from npm, and posts only the
// signed review, through the page's ordinary signed-review form.
import sodium from "/static/libsodium-wrappers.mjs";
import {signReview} from "/static/review_sign.mjs";

const form = document.getElementById("browser-sign");
const status = document.getElementById("browser-sign-status");

function say(text) {
  status.textContent = text;
}

async function readFile(input) {
  if (!input.files || input.files.length !== 1) throw new Error("choose your review key file");
  return await input.files[0].text();
}

async function sign(event) {
  event.preventDefault();
  try {
    say("signing in this browser...");
    const keyText = await readFile(document.getElementById("browser-key"));
    const rating = Number(document.getElementById("browser-rating").value);
    const text = document.getElementById("browser-text").value;
    const answer = await fetch(form.dataset.ringUrl, {headers: {Accept: "application/json"}});
    const ring = await answer.json();
    if (!answer.ok) throw new Error(ring.error ? ring.error.message : `ring: HTTP ${answer.status}`);
    await sodium.ready;
    const signed = signReview(sodium, keyText, ring, rating, text);
    document.getElementById("signed_json").value = signed.json;
    document.body.dataset.browserSigned = signed.tag;
    say("signed; posting the signed review");
    document.getElementById("signed_json").form.submit();
  } catch (e) {
    say("not signed: " + e.message);
    document.body.dataset.browserSignError = e.message;
  }
}

if (form) {
  form.addEventListener("submit", sign);
  form.dataset.ready = "1";
}
