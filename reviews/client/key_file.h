// The two files of one review key: the review key file, which the user's own client signs
// reviews with and which names no identity, and the identity's request file, which links the key
// to the identity that asked for it and is needed only to finish issuance (client.h:
// request -> issue -> finalize -> register).
//
// Review key file (JSON, mode 0600; the secret signs reviews):
//   { "format": "tessera-review-key v3", "epoch": 5,
//     "review_secret": "<64 hex>", "review_public": "<64 hex>",
//     "input_msg": "<hex>",    msg_prefix || CredentialMessage(review_public, epoch)
//     "signature": "<hex>",    the finalized credential ("" until issued)
//     "registered": false }
// Nothing in it names the identity: the credential is the unblinded signature, which the issuer
// never saw. v1 files (which also held the identity and the blinding values) are refused, and so
// are v2 files (their keys are on G; the version 2 ring signature, urs.h, needs keys on J).
//
// Request file, beside it at RequestFilePath(key file) (JSON, mode 0600):
//   { "format": "tessera-review-key-request v1", "epoch": 5, "citizen": "<64 hex>",
//     "review_public": "<64 hex>", "blinded_msg": "<hex>", "inv": "<hex>",
//     "salt": "<64 hex>" }     opens the request's commitment (the front-run proof)
// `inv` unblinds the issuer's answer, and with blinded_msg (public in the KeyRequest) links the
// credential to the identity: it stays with the identity's client and is never uploaded.
#pragma once

#include <filesystem>
#include <string>

#include "core/status.h"
#include "ledger/crypto/ed25519.h"
#include "reviews/common/bytes.h"
#include "reviews/urs/ristretto.h"

namespace tessera::reviews::client {

struct ReviewKeyFile {
  uint64_t epoch = 0;
  urs::KeyPair review{};
  Bytes input_msg;
  Bytes signature;  // empty until the issuer answered and Finalize verified it
  bool registered = false;

  bool issued() const { return !signature.empty(); }
};

struct KeyRequestFile {
  uint64_t epoch = 0;
  ledger::PublicKey citizen{};  // the identity that requested the key
  urs::Point review_public{};   // which review key file it belongs to
  Bytes blinded_msg;
  Bytes inv;
  std::array<uint8_t, 32> salt{};  // of the request's commitment to the encoded message
};

std::string EncodeKeyFile(const ReviewKeyFile& key);
// INVALID_ARGUMENT naming the field for malformed contents (e.g. a public key that is not
// secret * G).
Result<ReviewKeyFile> DecodeKeyFile(std::string_view json);
Status WriteKeyFile(const std::filesystem::path& path, const ReviewKeyFile& key);
// PERMISSION_DENIED when group or others can access the file.
Result<ReviewKeyFile> ReadKeyFile(const std::filesystem::path& path);

// "<key file>.request".
std::filesystem::path RequestFilePath(const std::filesystem::path& key_file);
std::string EncodeRequestFile(const KeyRequestFile& request);
Result<KeyRequestFile> DecodeRequestFile(std::string_view json);
Status WriteRequestFile(const std::filesystem::path& path, const KeyRequestFile& request);
Result<KeyRequestFile> ReadRequestFile(const std::filesystem::path& path);

}  // namespace tessera::reviews::client
