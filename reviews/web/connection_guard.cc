#include "reviews/web/connection_guard.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <vector>

namespace tessera::reviews::web {

ConnectionLimiter::Slot::~Slot() {
  if (owner_ != nullptr) owner_->Release(address_);
}

ConnectionLimiter::Slot ConnectionLimiter::Acquire(const std::string& address) {
  std::lock_guard lock(mu_);
  size_t& mine = per_address_[address];
  if (open_ >= limits_.max_connections || mine >= limits_.max_per_address) {
    if (mine == 0) per_address_.erase(address);
    return Slot();
  }
  ++open_;
  ++mine;
  return Slot(this, address);
}

void ConnectionLimiter::Release(const std::string& address) {
  std::lock_guard lock(mu_);
  --open_;
  auto it = per_address_.find(address);
  if (it != per_address_.end() && --it->second == 0) per_address_.erase(it);
}

size_t ConnectionLimiter::open() const {
  std::lock_guard lock(mu_);
  return open_;
}

std::string PeerAddress(int fd) {
  sockaddr_storage peer{};
  socklen_t length = sizeof(peer);
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &length) != 0) return "";
  char text[INET6_ADDRSTRLEN] = {};
  if (peer.ss_family == AF_INET) {
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&peer)->sin_addr, text, sizeof(text));
  } else if (peer.ss_family == AF_INET6) {
    ::inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&peer)->sin6_addr, text, sizeof(text));
  }
  return text;
}

std::optional<size_t> ContentLengthOf(std::string_view head) {
  constexpr std::string_view kName = "\r\ncontent-length:";
  for (size_t pos = head.find("\r\n"); pos != std::string_view::npos;
       pos = head.find("\r\n", pos + 2)) {
    if (head.size() - pos < kName.size()) break;
    bool match = true;
    for (size_t i = 0; i < kName.size() && match; ++i) {
      match = std::tolower(static_cast<unsigned char>(head[pos + i])) == kName[i];
    }
    if (!match) continue;
    size_t at = pos + kName.size();
    while (at < head.size() && (head[at] == ' ' || head[at] == '\t')) ++at;
    size_t value = 0;
    const auto [end, error] = std::from_chars(head.data() + at, head.data() + head.size(), value);
    if (error != std::errc()) return std::nullopt;
    return value;
  }
  return std::nullopt;
}

RequestScan ScanRequest(std::string_view seen, size_t max_bytes) {
  if (seen.size() >= max_bytes) return {.complete = true};
  const size_t head_end = seen.find("\r\n\r\n");
  if (head_end == std::string_view::npos) return {.want = seen.size() + 1};
  // No (or an unreadable) Content-Length counts as no body: httplib judges the head then.
  const size_t body = ContentLengthOf(seen.substr(0, head_end + 2)).value_or(0);
  const size_t head = head_end + 4;
  if (body > max_bytes - head) return {.complete = true};  // cannot fit: httplib refuses it
  const size_t total = head + body;
  if (total <= seen.size()) return {.complete = true};
  return {.want = total};
}

namespace {

void SetLowWater(int fd, size_t bytes) {
  const int value = static_cast<int>(std::min<size_t>(bytes, 1 << 30));
  ::setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &value, sizeof(value));
}

}  // namespace

bool WaitForRequest(int fd, std::chrono::steady_clock::time_point deadline, size_t max_bytes,
                    const std::atomic<bool>* cancel) {
  std::vector<char> buffer(max_bytes);
  size_t want = 1;  // bytes that must be buffered before looking again
  bool ready = false;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || (cancel != nullptr && cancel->load())) break;
    // SO_RCVLOWAT makes poll wait for more bytes than were seen last time, so a client that
    // stalls costs no busy loop.
    SetLowWater(fd, want);
    pollfd p{fd, POLLIN | POLLRDHUP, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 200)));
    if (n < 0 && errno != EINTR) {
      ready = true;  // let httplib meet the error
      break;
    }
    if (n <= 0) continue;
    if ((p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) {
      ready = true;  // the peer finished sending (or failed): httplib reads what there is
      break;
    }
    const ssize_t got = ::recv(fd, buffer.data(), buffer.size(), MSG_PEEK | MSG_DONTWAIT);
    if (got <= 0) {
      ready = got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);  // closed or failed
      if (ready) break;
      continue;
    }
    const RequestScan scan =
        ScanRequest(std::string_view(buffer.data(), static_cast<size_t>(got)), max_bytes);
    if (scan.complete) {
      ready = true;
      break;
    }
    want = scan.want;
  }
  SetLowWater(fd, 1);
  return ready;
}

void RefuseConnection(int fd, int status, std::string_view reason, std::string_view message) {
  const std::string body = std::string(message) + "\n";
  const std::string answer = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) +
                             "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
                             std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
  (void)::send(fd, answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

}  // namespace tessera::reviews::web
