#include "core/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tessera {

namespace {
Status ErrnoError(std::string_view what, const std::filesystem::path& path) {
  return InternalError(std::string(what) + " " + path.string() + ": " + std::strerror(errno));
}
}  // namespace

Result<std::string> ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return NotFoundError("no such file: " + path.string());
    return ErrnoError("cannot open", path);
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return ErrnoError("cannot read", path);
  return buffer.str();
}

Status WriteFileAtomically(const std::filesystem::path& path, std::string_view contents,
                           unsigned mode) {
  std::filesystem::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return ErrnoError("cannot create", tmp);
  // open() applies the umask; set the exact mode before anything secret is written.
  if (::fchmod(fd, mode) != 0) {
    ::close(fd);
    return ErrnoError("cannot chmod", tmp);
  }
  const char* data = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd, data, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      Status status = ErrnoError("cannot write", tmp);
      ::close(fd);
      ::unlink(tmp.c_str());
      return status;
    }
    data += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    Status status = ErrnoError("cannot sync", tmp);
    ::unlink(tmp.c_str());
    return status;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Status status = ErrnoError("cannot rename onto", path);
    ::unlink(tmp.c_str());
    return status;
  }
  std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
  return Status::Ok();
}

}  // namespace tessera
