// Key files: a secret key on disk that only its owner can read, and its public half.
//
// Secret key file (mode 0600, written atomically):   tessera-ed25519-secret v1\n<64 hex>\n
// Public key file (mode 0644):                       tessera-ed25519-public v1\n<64 hex>\n
//
// Loading a secret key refuses a file that group or others may read or write, the way ssh
// refuses an unprotected identity file: a leaked citizen key lets anyone vote in its name.
#pragma once

#include <filesystem>

#include "core/status.h"
#include "ledger/crypto/ed25519.h"

namespace tessera::ledger {

// Writes the secret key (mode 0600). ALREADY_EXISTS if the file exists, so a key is never
// overwritten by accident.
Status WriteSecretKeyFile(const std::filesystem::path& path, const KeyPair& keys);
// PERMISSION_DENIED if the file is accessible to group or others; INVALID_ARGUMENT if the
// contents are malformed.
Result<KeyPair> ReadSecretKeyFile(const std::filesystem::path& path);

Status WritePublicKeyFile(const std::filesystem::path& path, const PublicKey& key);
Result<PublicKey> ReadPublicKeyFile(const std::filesystem::path& path);

}  // namespace tessera::ledger
