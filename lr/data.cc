#include "lr/data.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <limits>

#include "core/file.h"

namespace tessera::lr {

Result<std::string> Gunzip(std::string_view compressed) {
  z_stream s{};
  // 16 + MAX_WBITS: expect a gzip header and trailer (and check its CRC).
  if (inflateInit2(&s, 16 + MAX_WBITS) != Z_OK) return InternalError("inflateInit2 failed");
  std::string out;
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  s.avail_in = static_cast<uInt>(compressed.size());
  if (compressed.size() > std::numeric_limits<uInt>::max()) {
    inflateEnd(&s);
    return InvalidArgumentError("gzip input larger than 4 GiB");
  }
  char buffer[1 << 16];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    s.next_out = reinterpret_cast<Bytef*>(buffer);
    s.avail_out = sizeof(buffer);
    rc = inflate(&s, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      const std::string msg = s.msg ? s.msg : fmt::format("zlib error {}", rc);
      inflateEnd(&s);
      return DataLossError("gzip: " + (rc == Z_BUF_ERROR ? std::string("truncated input") : msg));
    }
    out.append(buffer, sizeof(buffer) - s.avail_out);
  }
  inflateEnd(&s);
  return out;
}

Result<IdxArray> ParseIdx(std::string_view bytes) {
  auto u8 = [&](size_t i) { return static_cast<uint8_t>(bytes[i]); };
  if (bytes.size() < 4 || u8(0) != 0 || u8(1) != 0) {
    return DataLossError("IDX: bad magic (want 00 00 <type> <ndims>)");
  }
  if (u8(2) != 0x08)
    return DataLossError(
        fmt::format("IDX: element type 0x{:02x}, want 0x08 (unsigned byte)", u8(2)));
  const size_t ndims = u8(3);
  if (ndims == 0) return DataLossError("IDX: zero dimensions");
  if (bytes.size() < 4 + 4 * ndims) return DataLossError("IDX: truncated header");
  IdxArray out;
  uint64_t total = 1;
  for (size_t d = 0; d < ndims; ++d) {
    const size_t p = 4 + 4 * d;
    const uint32_t dim = (uint32_t{u8(p)} << 24) | (uint32_t{u8(p + 1)} << 16) |
                         (uint32_t{u8(p + 2)} << 8) | uint32_t{u8(p + 3)};
    if (dim == 0) return DataLossError(fmt::format("IDX: dimension {} is 0", d));
    total *= dim;
    if (total > (uint64_t{1} << 34)) return DataLossError("IDX: implausibly large array");
    out.dims.push_back(dim);
  }
  const size_t header = 4 + 4 * ndims;
  if (bytes.size() - header != total) {
    return DataLossError(fmt::format("IDX: header says {} bytes of data, file has {}", total,
                                     bytes.size() - header));
  }
  out.data.assign(reinterpret_cast<const uint8_t*>(bytes.data()) + header,
                  reinterpret_cast<const uint8_t*>(bytes.data()) + bytes.size());
  return out;
}

Result<IdxArray> ReadIdxFile(const std::filesystem::path& file) {
  TESSERA_ASSIGN_OR_RETURN(std::string raw, ReadFile(file));
  if (file.extension() == ".gz") {
    TESSERA_ASSIGN_OR_RETURN(raw, Gunzip(raw));
  }
  auto parsed = ParseIdx(raw);
  if (!parsed.ok()) return parsed.status().WithContext(file.string());
  return parsed;
}

Result<ImageDataset> LoadFashionMnist(const std::filesystem::path& dir, std::string_view split,
                                      int64_t limit) {
  if (split != "train" && split != "t10k") {
    return InvalidArgumentError(fmt::format("Fashion-MNIST split '{}': want train or t10k", split));
  }
  if (limit < 0) return InvalidArgumentError("Fashion-MNIST limit must be >= 0");
  TESSERA_ASSIGN_OR_RETURN(IdxArray images,
                           ReadIdxFile(dir / fmt::format("{}-images-idx3-ubyte.gz", split)));
  TESSERA_ASSIGN_OR_RETURN(IdxArray labels,
                           ReadIdxFile(dir / fmt::format("{}-labels-idx1-ubyte.gz", split)));
  if (images.dims.size() != 3 || labels.dims.size() != 1 || images.dims[0] != labels.dims[0]) {
    return DataLossError(fmt::format("Fashion-MNIST {}: images and labels do not match", split));
  }
  ImageDataset out;
  out.count = images.dims[0];
  out.rows = images.dims[1];
  out.cols = images.dims[2];
  if (limit > 0) out.count = std::min(out.count, limit);
  const size_t pixels = static_cast<size_t>(out.count * out.rows * out.cols);
  images.data.resize(pixels);
  labels.data.resize(static_cast<size_t>(out.count));
  out.pixels = std::move(images.data);
  out.labels = std::move(labels.data);
  for (uint8_t l : out.labels) {
    if (l >= 10) return DataLossError(fmt::format("Fashion-MNIST {}: label {} >= 10", split, l));
  }
  return out;
}

Result<std::string> LoadFortunes(const std::filesystem::path& dir) {
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const auto& p = entry.path();
    if (entry.is_symlink() || !entry.is_regular_file()) continue;
    if (p.extension() == ".dat" || p.extension() == ".u8") continue;
    files.push_back(p);
  }
  if (ec)
    return NotFoundError(fmt::format("fortunes: cannot list {}: {}", dir.string(), ec.message()));
  if (files.empty())
    return NotFoundError(fmt::format("fortunes: no text files in {}", dir.string()));
  std::sort(files.begin(), files.end());
  std::string text;
  for (const auto& p : files) {
    TESSERA_ASSIGN_OR_RETURN(std::string body, ReadFile(p));
    size_t start = 0;
    while (start < body.size()) {
      size_t end = body.find('\n', start);
      if (end == std::string::npos) end = body.size();
      std::string_view line(body.data() + start, end - start);
      text.append(line == "%" ? std::string_view() : line);
      text.push_back('\n');
      start = end + 1;
    }
  }
  return text;
}

}  // namespace tessera::lr
