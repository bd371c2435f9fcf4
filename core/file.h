// Small file helpers with Status errors: whole-file reads and crash-safe writes.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "core/status.h"

namespace tessera {

// Reads the whole file. NOT_FOUND if it does not exist.
Result<std::string> ReadFile(const std::filesystem::path& path);

// Writes `contents` so that a crash leaves either the old file or the new one, never a torn
// mix: write to a temporary file beside it, fsync, rename over, fsync the directory.
// `mode` is applied to the new file before it becomes visible (0600 for secret keys).
Status WriteFileAtomically(const std::filesystem::path& path, std::string_view contents,
                           unsigned mode = 0644);

}  // namespace tessera
