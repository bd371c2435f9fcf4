// A review key file: one identity's anonymous review key for one epoch, and how far the
// ledger flow that certifies it has come (client.h: request -> issue -> finalize -> register).
//
// JSON, written atomically with mode 0600 and refused when group or others may read it (the
// secret signs reviews; the blinding inverse would link the key to the identity that asked):
//   { "format": "tessera-review-key v1", "epoch": 5, "citizen": "<64 hex>",
//     "review_secret": "<64 hex>", "review_public": "<64 hex>",
//     "input_msg": "<hex>",    msg_prefix || CredentialMessage(review_public, epoch)
//     "blinded_msg": "<hex>", "inv": "<hex>",                 RFC 9474 Blind output
//     "signature": "<hex>",    the finalized credential ("" until issued)
//     "registered": false }
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
  ledger::PublicKey citizen{};  // the identity that requested it (never leaves this file)
  urs::KeyPair review{};
  Bytes input_msg;
  Bytes blinded_msg;
  Bytes inv;
  Bytes signature;  // empty until the issuer answered and Finalize verified it
  bool registered = false;

  bool issued() const { return !signature.empty(); }
};

std::string EncodeKeyFile(const ReviewKeyFile& key);
// INVALID_ARGUMENT naming the field for malformed contents (e.g. a public key that is not
// secret * G).
Result<ReviewKeyFile> DecodeKeyFile(std::string_view json);

Status WriteKeyFile(const std::filesystem::path& path, const ReviewKeyFile& key);
// PERMISSION_DENIED when group or others can access the file.
Result<ReviewKeyFile> ReadKeyFile(const std::filesystem::path& path);

}  // namespace tessera::reviews::client
