// Where the pipeline's integration tests find the source tree (scripts and fixtures under
// pipeline/testdata). Header-only, for tests.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace tessera::pipeline {

// The source tree: TESSERA_SOURCE_DIR, else three levels above the test binary
// (<source>/build/<preset>/tests/<binary>).
inline std::string SourceDir() {
  const char* dir = std::getenv("TESSERA_SOURCE_DIR");
  if (dir) return dir;
  return std::filesystem::canonical("/proc/self/exe")
      .parent_path()
      .parent_path()
      .parent_path()
      .parent_path()
      .string();
}

}  // namespace tessera::pipeline
