// Torch-free readers for the experiment data, all from Debian packages (nothing is downloaded):
//   * Fashion-MNIST, package dataset-fashion-mnist: gzip-compressed IDX files in
//     /usr/share/datasets/fashion-mnist (decompressed here with zlib);
//   * a text corpus for character-level language models, package fortunes: the plain-text
//     cookie files in /usr/share/games/fortunes.
// The trainer turns these into tensors; the readers themselves are tested without libtorch.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tessera::lr {

inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";
inline constexpr const char* kFortunesDir = "/usr/share/games/fortunes";

// Decompresses a gzip stream (RFC 1952) with zlib. DATA_LOSS on corrupt or truncated input.
Result<std::string> Gunzip(std::string_view compressed);

// An IDX array (the MNIST file format): unsigned bytes with big-endian dimensions.
struct IdxArray {
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;  // row-major, product(dims) bytes
};

// Parses an uncompressed IDX file of unsigned bytes (type code 0x08). Rejects a bad magic,
// another element type, a zero dimension or a size that does not match the header.
Result<IdxArray> ParseIdx(std::string_view bytes);

// Reads FILE (gzip-compressed if it ends in .gz) and parses it as IDX.
Result<IdxArray> ReadIdxFile(const std::filesystem::path& file);

// Images as N x rows x cols bytes and labels 0..9, checked against each other.
struct ImageDataset {
  int64_t count = 0;
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<uint8_t> pixels;  // count * rows * cols
  std::vector<uint8_t> labels;  // count, each < 10
};

// Loads the "train" (60,000) or "t10k" (10,000) split from DIR. With limit > 0 only the first
// `limit` examples are kept (the files' classes are well mixed: the first 20,000 training
// images hold 1,935-2,068 of each class, so a prefix is a fair subset).
Result<ImageDataset> LoadFashionMnist(const std::filesystem::path& dir, std::string_view split,
                                      int64_t limit = 0);

// Concatenates the plain-text fortune files of DIR in name order (skipping the .dat indexes,
// the .u8 duplicates, links and subdirectories) with the "%" separator lines turned into blank
// lines. NOT_FOUND if DIR has no such file.
Result<std::string> LoadFortunes(const std::filesystem::path& dir);

}  // namespace tessera::lr
