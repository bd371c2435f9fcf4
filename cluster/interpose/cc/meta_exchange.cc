#include "cluster/interpose/cc/meta_exchange.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <utility>

#include "core/socket_io.h"

namespace tessera::cluster::interpose {

namespace {

Status Errno(const std::string& what) {
  return UnavailableError(fmt::format("meta exchange: {}: {}", what, std::strerror(errno)));
}

// Socket errors in the barrier's own wording (the Python layer words a closed rank the same).
Status BarrierSend(int fd, const void* data, size_t size) {
  Status st = SendAll(fd, data, size);
  return st.ok() ? st : st.WithContext("meta exchange");
}

Status BarrierRecv(int fd, void* data, size_t size) {
  Status st = RecvAll(fd, data, size);
  if (st.ok()) return st;
  if (st.message() == kPeerClosedMessage) {
    return UnavailableError("meta exchange: a rank closed its barrier connection");
  }
  return st.WithContext("meta exchange");
}

Result<sockaddr_in> Resolve(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found); rc != 0 || !found) {
    return InvalidArgumentError(
        fmt::format("meta exchange: cannot resolve '{}': {}", host, ::gai_strerror(rc)));
  }
  sockaddr_in addr = *reinterpret_cast<sockaddr_in*>(found->ai_addr);
  ::freeaddrinfo(found);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return addr;
}

}  // namespace

Result<std::string> LocalAddressTowards(const std::string& remote) {
  TESSERA_ASSIGN_OR_RETURN(sockaddr_in addr, Resolve(remote, 9));
  int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) return Errno("socket");
  sockaddr_in local{};
  socklen_t len = sizeof(local);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0;
  Status error = ok ? Status::Ok() : Errno("route to " + remote);
  ::close(fd);
  if (!ok) return error;
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &local.sin_addr, text, sizeof(text));
  return std::string(text);
}

Result<MetaExchange> MetaExchange::Connect(
    int rank, int world_size, const std::string& host,
    const std::function<void(const std::string&, const std::string&)>& publish,
    const std::function<std::string(const std::string&)>& lookup) {
  MetaExchange exchange;
  std::map<int, int> peers;
  auto close_all = [&] {
    for (auto& [r, fd] : peers) ::close(fd);
  };
  TESSERA_ASSIGN_OR_RETURN(sockaddr_in bind_addr, Resolve(host, 0));
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  if (listener < 0) return Errno("socket");
  socklen_t len = sizeof(bind_addr);
  if (::bind(listener, reinterpret_cast<sockaddr*>(&bind_addr), sizeof(bind_addr)) != 0 ||
      ::listen(listener, world_size) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&bind_addr), &len) != 0) {
    Status s = Errno("listen on " + host);
    ::close(listener);
    return s;
  }
  publish(fmt::format("tessera_meta_{}", rank),
          fmt::format("{}:{}", host, ntohs(bind_addr.sin_port)));
  Status status = Status::Ok();
  // Connect to the lower ranks, accept the higher ones (each says its rank first).
  for (int peer = 0; peer < rank && status.ok(); ++peer) {
    const std::string where = lookup(fmt::format("tessera_meta_{}", peer));
    const size_t colon = where.rfind(':');
    Result<sockaddr_in> addr = Resolve(where.substr(0, colon), std::stoi(where.substr(colon + 1)));
    if (!addr.ok()) {
      status = addr.status();
      break;
    }
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&*addr), sizeof(*addr)) != 0) {
      status = Errno("connect to rank " + std::to_string(peer) + " at " + where);
      if (fd >= 0) ::close(fd);
      break;
    }
    peers[peer] = fd;
    const int32_t me = rank;
    status = BarrierSend(fd, &me, sizeof(me));
  }
  for (int i = rank + 1; i < world_size && status.ok(); ++i) {
    int fd = ::accept(listener, nullptr, nullptr);
    if (fd < 0) {
      status = Errno("accept");
      break;
    }
    int32_t peer = -1;
    status = BarrierRecv(fd, &peer, sizeof(peer));
    if (status.ok() && (peer <= rank || peer >= world_size || peers.count(peer))) {
      status = InvalidArgumentError(fmt::format("meta exchange: unexpected rank {}", peer));
    }
    if (!status.ok()) {
      ::close(fd);
      break;
    }
    peers[peer] = fd;
  }
  ::close(listener);
  if (!status.ok()) {
    close_all();
    return status;
  }
  for (auto& [r, fd] : peers) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    exchange.peers_.push_back(fd);
  }
  return exchange;
}

MetaExchange::MetaExchange(MetaExchange&& other) noexcept
    : peers_(std::exchange(other.peers_, {})), previous_(other.previous_) {}

MetaExchange& MetaExchange::operator=(MetaExchange&& other) noexcept {
  if (this != &other) {
    for (int fd : peers_) ::close(fd);
    peers_ = std::exchange(other.peers_, {});
    previous_ = other.previous_;
  }
  return *this;
}

MetaExchange::~MetaExchange() {
  for (int fd : peers_) ::close(fd);
}

Result<int> MetaExchange::Exchange(bool need) {
  const char byte = need ? 1 : 0;
  for (int fd : peers_) TESSERA_RETURN_IF_ERROR(BarrierSend(fd, &byte, 1));
  const int previous = std::exchange(previous_, byte);
  if (previous < 0) return 0;
  int total = previous;
  for (int fd : peers_) {
    char theirs = 0;
    TESSERA_RETURN_IF_ERROR(BarrierRecv(fd, &theirs, 1));
    total += theirs;
  }
  return total;
}

}  // namespace tessera::cluster::interpose
