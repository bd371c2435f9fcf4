// Cross-check of the page's signer (static/review_sign.mjs) against the C++ verifier, in node:
// signs reviews over rings of 1, 3 and 50 keys made by reviews-tool, writes them in
// reviews-tool's file formats, and leaves the verification to `reviews-tool verify` (run by
// sign_js_test.sh). Also signs one review tampered after signing, which must fail there.
//
//   node sign_js_check.mjs SODIUM_MODULE OUT_DIR KEY_FILE...
import fs from "fs";
import path from "path";
import {pathToFileURL} from "url";

const [sodiumModule, out, ...keyFiles] = process.argv.slice(2);
const sodium = (await import(pathToFileURL(sodiumModule).href)).default;
const {ursSign, fromHex, toHex} = await import("./static/review_sign.mjs");
await sodium.ready;

const enc = new TextEncoder();
const be = (v, w) => {
  const o = new Uint8Array(w);
  let x = BigInt(v);
  for (let i = w - 1; i >= 0; --i, x >>= 8n) o[i] = Number(x & 0xffn);
  return o;
};
const lp = (b) => new Uint8Array([...be(b.length, 4), ...b]);
const cat = (ps) => new Uint8Array(ps.flatMap((p) => [...p]));
const compare = (a, b) => {
  for (let i = 0; i < a.length; ++i) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
};

const keys = keyFiles.map((f) => JSON.parse(fs.readFileSync(f)));
const epoch = keys[0].epoch;
for (const n of [1, 3, 50]) {
  const members = keys.slice(0, n).map((k) => fromHex(k.public)).sort(compare);
  const signer = keys[n - 1];
  const item = `item ${n}`, rating = 1 + (n % 5), text = `signed in JS over ${n} keys: ü`;
  const scope = cat([lp(enc.encode("tessera/reviews/scope/v1")), lp(enc.encode(item)),
                     be(epoch, 8)]);
  const message = cat([lp(enc.encode("tessera/reviews/review/v1")), lp(enc.encode(item)),
                       be(epoch, 8), be(rating, 1), lp(enc.encode(text))]);
  const sig = ursSign(sodium, fromHex(signer.secret), fromHex(signer.public), members, scope,
                      message);
  fs.writeFileSync(path.join(out, `ring${n}.json`), JSON.stringify(
      {item, epoch, seed: "00".repeat(32), k: n, registered: n, members: members.map(toHex)}));
  const review = {item, epoch, rating, text, tag: toHex(sig.tag), signature: toHex(sig.bytes)};
  fs.writeFileSync(path.join(out, `review${n}.json`), JSON.stringify(review));
  fs.writeFileSync(path.join(out, `tampered${n}.json`),
                   JSON.stringify({...review, rating: 1 + (rating % 5)}));
}
