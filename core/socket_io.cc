#include "core/socket_io.h"

#include <sys/socket.h>
#include <sys/types.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace tessera {

Status SendAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return UnavailableError(std::string("send: ") + std::strerror(errno));
    p += n;
    size -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

void ReuseAddressOnly(int fd) {
  int yes = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
}

Status RecvAll(int fd, void* data, size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = ::recv(fd, p, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return UnavailableError(std::string("recv: ") + std::strerror(errno));
    if (n == 0) return UnavailableError(std::string(kPeerClosedMessage));
    p += n;
    size -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace tessera
