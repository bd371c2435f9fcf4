// Signing a review in the browser: the unique ring signature of reviews/urs/urs.cc and the
// ledger payload of reviews/ledger/payload.h, byte for byte, over libsodium's ristretto255
// (libsodium-wrappers-sumo from npm, the same library the C++ side links). The review key file
// is read here and never leaves the page: what the page sends is the signed review
// (reviews/client/signed_review.h), which holds no key.
//
//   const signed = signReview(sodium, keyFileJson, {item, epoch, ring}, rating, text);
//   // signed.json: {"format": "tessera-signed-review v1", "payload": "<hex>"}
//
// `ring` is the item's ring for the epoch as the ledger holds it (hex keys in the ledger's
// sorted order, from GET /api/items/ID/ring).

const enc = new TextEncoder();

function concat(parts) {
  const n = parts.reduce((a, p) => a + p.length, 0);
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function be(value, width) {
  const out = new Uint8Array(width);
  let v = BigInt(value);
  for (let i = width - 1; i >= 0; --i) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

// AppendLengthPrefixed (reviews/common/bytes.cc): u32 big-endian length, then the bytes.
function lp(bytes) {
  return concat([be(bytes.length, 4), bytes]);
}

export function fromHex(hex) {
  if (typeof hex !== "string" || hex.length % 2 !== 0 || /[^0-9a-fA-F]/.test(hex)) {
    throw new Error("not hex");
  }
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; ++i) out[i] = parseInt(hex.substr(2 * i, 2), 16);
  return out;
}

export function toHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function compare(a, b) {
  for (let i = 0; i < a.length; ++i) {
    if (a[i] !== b[i]) return a[i] - b[i];
  }
  return 0;
}

function isZero(bytes) {
  return bytes.every((b) => b === 0);
}

// HashToPoint(domain, parts) of reviews/urs/ristretto.cc.
function hashToPoint(sodium, domain, parts) {
  const h = sodium.crypto_hash_sha512(concat([lp(enc.encode(domain)), ...parts.map(lp)]));
  return sodium.crypto_core_ristretto255_from_hash(h);
}

function reviewScope(item, epoch) {
  return concat([lp(enc.encode("tessera/reviews/scope/v1")), lp(item), be(epoch, 8)]);
}

function reviewMessage(item, epoch, rating, text) {
  return concat([lp(enc.encode("tessera/reviews/review/v1")), lp(item), be(epoch, 8),
                 be(rating, 1), lp(text)]);
}

function ringDigest(sodium, members) {
  return sodium.crypto_hash_sha512(
      concat([lp(enc.encode("tessera/reviews/urs/v1/ring")), be(members.length, 4), ...members]));
}

// J, the base point of review keys (urs::KeyBase).
export function keyBase(sodium) {
  return hashToPoint(sodium, "tessera/reviews/urs/v2/key-base", []);
}

// urs::Sign, version 2 (reviews/urs/urs.h): the per-scope tag T = x * H(scope), a commitment
// C = x*J + r*G, a link proof that C and T hold one x, and an Abe-Ohkubo-Suzuki ring proving
// C - Y_i = r*G for some member i.
export function ursSign(sodium, secret, publicKey, members, scope, message) {
  const n = members.length;
  const pi = members.findIndex((m) => compare(m, publicKey) === 0);
  if (pi < 0) throw new Error("this review key is not in the item's ring");
  const h = hashToPoint(sodium, "tessera/reviews/urs/v1/tag", [scope]);
  const j = keyBase(sodium);
  const tag = sodium.crypto_scalarmult_ristretto255(secret, h);
  const digest = ringDigest(sodium, members);
  const header = (domain, commitment) => concat([lp(enc.encode(domain)), lp(digest), lp(scope),
                                                lp(message), lp(tag), lp(commitment)]);
  const hashToScalar = (bytes) =>
      sodium.crypto_core_ristretto255_scalar_reduce(sodium.crypto_hash_sha512(bytes));
  const nonzero = () => {
    for (;;) {
      const s = sodium.crypto_core_ristretto255_scalar_random();
      if (!isZero(s)) return s;
    }
  };
  const add = (a, b) => sodium.crypto_core_ristretto255_add(a, b);
  const mul = (s, p) => sodium.crypto_scalarmult_ristretto255(s, p);
  const mulBase = (s) => sodium.crypto_scalarmult_ristretto255_base(s);
  const sub = (a, b) => sodium.crypto_core_ristretto255_sub(a, b);
  const scalarMulSub = (a, c, x) =>  // a - c*x
      sodium.crypto_core_ristretto255_scalar_sub(a, sodium.crypto_core_ristretto255_scalar_mul(c, x));
  for (;;) {
    const r = nonzero();
    const commitment = add(publicKey, mulBase(r));
    if (isZero(commitment) || members.some((m) => compare(m, commitment) === 0)) continue;
    // The link proof: C = x*J + r*G and T = x*H.
    const a = nonzero(), b = nonzero();
    const e = hashToScalar(concat([header("tessera/reviews/urs/v2/link", commitment),
                                   add(mul(a, j), mulBase(b)), mul(a, h)]));
    const zx = scalarMulSub(a, e, secret);
    const zr = scalarMulSub(b, e, r);
    if (isZero(e) || isZero(zx) || isZero(zr)) continue;
    // The ring: C - Y_pi = r*G.
    const ringHeader = header("tessera/reviews/urs/v2/challenge", commitment);
    const challenge = (i, l) => hashToScalar(concat([ringHeader, be(i, 4), l]));
    const c = new Array(n);
    const s = new Array(n);
    const alpha = nonzero();
    c[(pi + 1) % n] = challenge(pi, mulBase(alpha));
    let retry = false;
    for (let step = 1; step < n; ++step) {
      const i = (pi + step) % n;
      if (isZero(c[i])) {
        retry = true;
        break;
      }
      s[i] = nonzero();
      const l = add(mulBase(s[i]), mul(c[i], sub(commitment, members[i])));
      c[(i + 1) % n] = challenge(i, l);
    }
    if (retry || isZero(c[pi])) continue;
    s[pi] = scalarMulSub(alpha, c[pi], r);
    if (isZero(s[pi])) continue;
    // urs/codec.h: 0x02 | n (u16) | T | C | e | z_x | z_r | c_0 | s_0 .. s_{n-1}
    return {tag, bytes: concat([new Uint8Array([2]), be(n, 2), tag, commitment, e, zx, zr, c[0],
                                ...s])};
  }
}

// The signed review (signed_review.h) of one review: a Reviews payload (kind 5) holding the
// item, the epoch, the ring's size, the rating, the text and the signature.
export function signReview(sodium, keyFileText, ringView, rating, text) {
  const key = JSON.parse(keyFileText);
  if (key.format !== "tessera-review-key v3") {
    throw new Error("not a review key file (format 'tessera-review-key v3')");
  }
  if (!key.registered) throw new Error("the review key is not registered yet");
  if (key.epoch !== ringView.epoch) {
    throw new Error(`this key is for epoch ${key.epoch}; the item's window is epoch ${ringView.epoch}`);
  }
  if (!(rating >= 1 && rating <= 5)) throw new Error("rating must be 1..5");
  const secret = fromHex(key.review_secret);
  const publicKey = sodium.crypto_scalarmult_ristretto255(secret, keyBase(sodium));
  if (toHex(publicKey) !== key.review_public) throw new Error("the key file's keys do not match");
  const members = ringView.ring.map(fromHex);
  const item = fromHex(ringView.item);
  const textBytes = enc.encode(text);
  const sig = ursSign(sodium, secret, publicKey, members, reviewScope(item, ringView.epoch),
                      reviewMessage(item, ringView.epoch, rating, textBytes));
  const payload = concat([new Uint8Array([5]), item, be(ringView.epoch, 8), be(members.length, 2),
                          be(1, 2), be(rating, 1), lp(textBytes), lp(sig.bytes)]);
  return {
    tag: toHex(sig.tag),
    json: JSON.stringify({format: "tessera-signed-review v1", payload: toHex(payload)}),
  };
}
