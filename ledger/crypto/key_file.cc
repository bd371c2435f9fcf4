#include "ledger/crypto/key_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/file.h"

namespace tessera::ledger {

namespace {
constexpr std::string_view kSecretHeader = "tessera-ed25519-secret v1";
constexpr std::string_view kPublicHeader = "tessera-ed25519-public v1";

std::string Format(std::string_view header, ByteSpan key) {
  return std::string(header) + "\n" + ToHex(key) + "\n";
}

Result<std::array<uint8_t, 32>> Parse(const std::filesystem::path& path, std::string_view header,
                                      std::string_view contents) {
  std::string_view rest = contents;
  if (rest.substr(0, header.size()) != header || rest.size() < header.size() + 1 ||
      rest[header.size()] != '\n') {
    return InvalidArgumentError(path.string() + ": not a key file (expected first line '" +
                                std::string(header) + "')");
  }
  rest.remove_prefix(header.size() + 1);
  if (!rest.empty() && rest.back() == '\n') rest.remove_suffix(1);
  auto key = ArrayFromHex<32>(rest);
  if (!key.ok()) return key.status().WithContext(path.string() + ": bad key line");
  return *key;
}
}  // namespace

Status WriteSecretKeyFile(const std::filesystem::path& path, const KeyPair& keys) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    return AlreadyExistsError(path.string() + " exists; refusing to overwrite a key");
  }
  return WriteFileAtomically(path, Format(kSecretHeader, keys.seed()), 0600);
}

Result<KeyPair> ReadSecretKeyFile(const std::filesystem::path& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return NotFoundError("no such key file: " + path.string());
    return InternalError("cannot stat " + path.string() + ": " + std::strerror(errno));
  }
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return PermissionDeniedError(path.string() + " has mode " + mode +
                                 "; a secret key must not be accessible to group or others "
                                 "(chmod 600)");
  }
  TESSERA_ASSIGN_OR_RETURN(std::string contents, ReadFile(path));
  TESSERA_ASSIGN_OR_RETURN(Seed seed, Parse(path, kSecretHeader, contents));
  return KeyPair::FromSeed(seed);
}

Status WritePublicKeyFile(const std::filesystem::path& path, const PublicKey& key) {
  return WriteFileAtomically(path, Format(kPublicHeader, key), 0644);
}

Result<PublicKey> ReadPublicKeyFile(const std::filesystem::path& path) {
  TESSERA_ASSIGN_OR_RETURN(std::string contents, ReadFile(path));
  return Parse(path, kPublicHeader, contents);
}

}  // namespace tessera::ledger
