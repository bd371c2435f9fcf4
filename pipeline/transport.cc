#include "pipeline/transport.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "core/socket_io.h"
#include "fmt/format.h"

namespace tessera::pipeline {
namespace {

using Clock = std::chrono::steady_clock;

// Frames above this are refused: a corrupt length must not allocate the machine away.
constexpr uint64_t kMaxPayload = uint64_t{1} << 30;

Status Errno(std::string_view what) {
  return UnavailableError(fmt::format("{}: {}", what, std::strerror(errno)));
}

void PutU64(char* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
uint64_t GetU64(const char* in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= static_cast<uint64_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  return v;
}

Result<sockaddr_in> Resolve(const Endpoint& e) {
  if (e.port <= 0 || e.port > 65535) {
    return InvalidArgumentError(fmt::format("bad port {} for {}", e.port, e.host));
  }
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = getaddrinfo(e.host.c_str(), nullptr, &hints, &res); rc != 0 || res == nullptr) {
    return InvalidArgumentError(fmt::format("cannot resolve '{}': {}", e.host, gai_strerror(rc)));
  }
  sockaddr_in addr = *reinterpret_cast<sockaddr_in*>(res->ai_addr);
  freeaddrinfo(res);
  addr.sin_port = htons(static_cast<uint16_t>(e.port));
  return addr;
}

void TuneSocket(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

class TcpTransport final : public Transport {
 public:
  explicit TcpTransport(int rank) : rank_(rank) {}
  ~TcpTransport() override { Shutdown(); }

  Status Start(const std::vector<Endpoint>& endpoints, const std::vector<int>& peers,
               Duration timeout);

  int rank() const override { return rank_; }
  Status Send(int peer, uint64_t tag, std::string payload) override;
  Result<std::string> Recv(int peer, uint64_t tag, Duration timeout) override;
  bool Has(int peer, uint64_t tag) override;
  uint64_t arrivals() override {
    std::lock_guard lock(mu_);
    return arrivals_;
  }
  void WaitForArrival(uint64_t seen, Duration timeout) override;
  Status Flush(Duration timeout) override;
  Status PeerStatus(int peer) override {
    std::lock_guard lock(mu_);
    auto it = peers_.find(peer);
    if (it == peers_.end()) return InvalidArgumentError(fmt::format("rank {} is not a peer", peer));
    return it->second.broken ? UnavailableError(it->second.error) : Status::Ok();
  }
  uint64_t bytes_sent() const override { return bytes_sent_; }
  uint64_t bytes_received() const override { return bytes_received_; }

 private:
  struct Peer {
    int fd = -1;
    std::thread reader, writer;
    std::deque<std::pair<uint64_t, std::string>> outbox;  // guarded by mu_
    bool broken = false;                                  // guarded by mu_
    bool reader_done = false;                             // guarded by mu_
    // The writer pops a message before writing it; `writing` covers the write itself and
    // `lost` records a message whose write failed. A peer that reads our last message and
    // then closes (a finished worker) must not make that already-written message look unsent.
    bool writing = false;  // guarded by mu_
    bool lost = false;     // guarded by mu_
    std::string error;     // guarded by mu_
  };

  void ReaderLoop(int peer);
  void WriterLoop(int peer);
  void MarkBroken(int peer, std::string why);
  void Shutdown();

  const int rank_;
  std::map<int, Peer> peers_;
  std::mutex mu_;
  std::condition_variable arrived_;    // a message came in or a peer broke
  std::condition_variable outbox_cv_;  // outbox changed or stopping
  std::map<std::pair<int, uint64_t>, std::deque<std::string>> inbox_;  // guarded by mu_
  uint64_t arrivals_ = 0;                                              // guarded by mu_
  bool stopping_ = false;                                              // guarded by mu_
  std::atomic<uint64_t> bytes_sent_{0}, bytes_received_{0};
};

Status TcpTransport::Start(const std::vector<Endpoint>& endpoints, const std::vector<int>& peers,
                           Duration timeout) {
  const auto deadline = Clock::now() + timeout;
  if (rank_ < 0 || rank_ >= static_cast<int>(endpoints.size())) {
    return InvalidArgumentError(fmt::format("rank {} has no endpoint", rank_));
  }
  int expected_accepts = 0;
  for (int p : peers) {
    if (p < 0 || p >= static_cast<int>(endpoints.size()) || p == rank_) {
      return InvalidArgumentError(fmt::format("bad peer rank {}", p));
    }
    if (peers_.count(p)) return InvalidArgumentError(fmt::format("peer {} listed twice", p));
    peers_[p];
    if (p > rank_) ++expected_accepts;
  }

  TESSERA_ASSIGN_OR_RETURN(sockaddr_in self, Resolve(endpoints[rank_]));
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) return Errno("socket");
  int one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(listener, reinterpret_cast<sockaddr*>(&self), sizeof(self)) != 0) {
    Status s = Errno(fmt::format("bind {}:{}", endpoints[rank_].host, endpoints[rank_].port));
    ::close(listener);
    return s;
  }
  if (::listen(listener, 64) != 0) {
    Status s = Errno("listen");
    ::close(listener);
    return s;
  }

  // Dial the lower ranks (in a thread) while accepting the higher ones.
  Status dial_status;
  std::thread dialer([&] {
    for (auto& [p, peer] : peers_) {
      if (p > rank_) continue;
      auto addr = Resolve(endpoints[p]);
      if (!addr.ok()) {
        dial_status = addr.status();
        return;
      }
      while (true) {
        int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&*addr), sizeof(*addr)) == 0) {
          char hello[8];
          PutU64(hello, static_cast<uint64_t>(rank_));
          if (SendAll(fd, hello, sizeof(hello)).ok()) {
            TuneSocket(fd);
            peer.fd = fd;
            break;
          }
        }
        if (fd >= 0) ::close(fd);
        if (Clock::now() > deadline) {
          dial_status =
              DeadlineExceededError(fmt::format("rank {} could not reach rank {} at {}:{}", rank_,
                                                p, endpoints[p].host, endpoints[p].port));
          return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  });
  Status accept_status;
  while (expected_accepts > 0) {
    const auto left = std::chrono::duration_cast<Duration>(deadline - Clock::now()).count();
    pollfd pfd{listener, POLLIN, 0};
    if (left <= 0 || ::poll(&pfd, 1, static_cast<int>(left)) <= 0) {
      accept_status = DeadlineExceededError(fmt::format(
          "rank {}: {} higher rank(s) did not connect in time", rank_, expected_accepts));
      break;
    }
    int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    char hello[8];
    // A stray connection that sends no valid hello is dropped rather than trusted.
    pollfd hp{fd, POLLIN, 0};
    if (::poll(&hp, 1, 2000) <= 0 || !RecvAll(fd, hello, sizeof(hello)).ok()) {
      ::close(fd);
      continue;
    }
    const uint64_t who = GetU64(hello);
    auto it = peers_.find(static_cast<int>(who));
    if (who > static_cast<uint64_t>(INT32_MAX) || it == peers_.end() || it->first < rank_ ||
        it->second.fd >= 0) {
      ::close(fd);
      continue;
    }
    TuneSocket(fd);
    it->second.fd = fd;
    --expected_accepts;
  }
  dialer.join();
  ::close(listener);
  if (!accept_status.ok()) return accept_status;
  if (!dial_status.ok()) return dial_status;
  for (auto& [p, peer] : peers_) {
    const int id = p;
    peer.reader = std::thread([this, id] { ReaderLoop(id); });
    peer.writer = std::thread([this, id] { WriterLoop(id); });
  }
  return Status::Ok();
}

void TcpTransport::MarkBroken(int peer, std::string why) {
  std::lock_guard lock(mu_);
  Peer& p = peers_.at(peer);
  p.reader_done = true;
  if (!p.broken && !stopping_) {
    p.broken = true;
    p.error = std::move(why);
  }
  arrived_.notify_all();
  outbox_cv_.notify_all();
}

void TcpTransport::ReaderLoop(int peer) {
  const int fd = peers_.at(peer).fd;
  while (true) {
    char header[16];
    if (!RecvAll(fd, header, sizeof(header)).ok()) {
      MarkBroken(peer, fmt::format("rank {} closed the connection", peer));
      return;
    }
    const uint64_t tag = GetU64(header);
    const uint64_t len = GetU64(header + 8);
    if (len > kMaxPayload) {
      MarkBroken(peer, fmt::format("rank {} sent a {}-byte frame", peer, len));
      return;
    }
    std::string payload(len, '\0');
    if (!RecvAll(fd, payload.data(), len).ok()) {
      MarkBroken(peer, fmt::format("rank {} closed the connection mid-message", peer));
      return;
    }
    bytes_received_ += len;
    std::lock_guard lock(mu_);
    inbox_[{peer, tag}].push_back(std::move(payload));
    ++arrivals_;
    arrived_.notify_all();
  }
}

void TcpTransport::WriterLoop(int peer) {
  Peer& p = peers_.at(peer);
  while (true) {
    std::pair<uint64_t, std::string> msg;
    {
      std::unique_lock lock(mu_);
      outbox_cv_.wait(lock, [&] { return stopping_ || p.broken || !p.outbox.empty(); });
      if (p.outbox.empty() || p.broken) return;
      msg = std::move(p.outbox.front());
      p.outbox.pop_front();
      p.writing = true;  // Flush waits for this write to end, whatever happens to the peer
    }
    char header[16];
    PutU64(header, msg.first);
    PutU64(header + 8, msg.second.size());
    const bool written = SendAll(p.fd, header, sizeof(header)).ok() &&
                         SendAll(p.fd, msg.second.data(), msg.second.size()).ok();
    if (written) bytes_sent_ += msg.second.size();
    {
      std::lock_guard lock(mu_);
      p.writing = false;
      if (!written) p.lost = true;
      outbox_cv_.notify_all();
    }
    if (!written) {
      MarkBroken(peer, fmt::format("sending to rank {} failed", peer));
      return;
    }
  }
}

Status TcpTransport::Send(int peer, uint64_t tag, std::string payload) {
  std::lock_guard lock(mu_);
  auto it = peers_.find(peer);
  if (it == peers_.end()) return InvalidArgumentError(fmt::format("rank {} is not a peer", peer));
  if (it->second.broken) return UnavailableError(it->second.error);
  it->second.outbox.emplace_back(tag, std::move(payload));
  outbox_cv_.notify_all();
  return Status::Ok();
}

Result<std::string> TcpTransport::Recv(int peer, uint64_t tag, Duration timeout) {
  std::unique_lock lock(mu_);
  auto pit = peers_.find(peer);
  if (pit == peers_.end()) return InvalidArgumentError(fmt::format("rank {} is not a peer", peer));
  const auto key = std::make_pair(peer, tag);
  const bool got = arrived_.wait_for(lock, timeout, [&] {
    auto it = inbox_.find(key);
    return (it != inbox_.end() && !it->second.empty()) || pit->second.broken;
  });
  auto it = inbox_.find(key);
  if (it != inbox_.end() && !it->second.empty()) {
    std::string out = std::move(it->second.front());
    it->second.pop_front();
    if (it->second.empty()) inbox_.erase(it);
    return out;
  }
  if (pit->second.broken) return UnavailableError(pit->second.error);
  (void)got;
  return DeadlineExceededError(fmt::format("rank {}: no message {:#x} from rank {} within {} ms",
                                           rank_, tag, peer, timeout.count()));
}

bool TcpTransport::Has(int peer, uint64_t tag) {
  std::lock_guard lock(mu_);
  auto it = inbox_.find({peer, tag});
  return it != inbox_.end() && !it->second.empty();
}

void TcpTransport::WaitForArrival(uint64_t seen, Duration timeout) {
  std::unique_lock lock(mu_);
  arrived_.wait_for(lock, timeout, [&] {
    if (arrivals_ > seen) return true;
    for (const auto& [id, p] : peers_) {
      if (p.broken) return true;
    }
    return false;
  });
}

Status TcpTransport::Flush(Duration timeout) {
  std::unique_lock lock(mu_);
  Status result;
  const bool done = outbox_cv_.wait_for(lock, timeout, [&] {
    for (const auto& [id, p] : peers_) {
      if (p.writing) return false;
      if (!p.outbox.empty() && !p.broken) return false;
    }
    return true;
  });
  for (const auto& [id, p] : peers_) {
    if (p.broken && (p.lost || !p.outbox.empty())) return UnavailableError(p.error);
  }
  if (!done) return DeadlineExceededError(fmt::format("rank {}: sends not flushed", rank_));
  return result;
}

void TcpTransport::Shutdown() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
  }
  // Let queued messages go out first (a finishing worker's last gradients), then stop.
  (void)Flush(std::chrono::seconds(30));
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    outbox_cv_.notify_all();
  }
  // Graceful close: send FIN, then wait briefly for each peer's FIN, so that closing does not
  // reset a connection the peer is still draining. A worker that finishes expects no more
  // messages, so after the bound we close anyway (peers that finish later see EOF, not data).
  for (auto& [id, p] : peers_) {
    if (p.writer.joinable()) p.writer.join();
    if (p.fd >= 0) ::shutdown(p.fd, SHUT_WR);
  }
  {
    std::unique_lock lock(mu_);
    arrived_.wait_for(lock, std::chrono::seconds(1), [&] {
      for (const auto& [id, p] : peers_) {
        if (p.reader.joinable() && !p.reader_done) return false;
      }
      return true;
    });
  }
  for (auto& [id, p] : peers_) {
    if (p.fd >= 0) ::shutdown(p.fd, SHUT_RDWR);
    if (p.reader.joinable()) p.reader.join();
    if (p.fd >= 0) ::close(p.fd);
    p.fd = -1;
  }
}

}  // namespace

Result<Endpoint> ParseEndpoint(const std::string& text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    return InvalidArgumentError(fmt::format("endpoint '{}' is not host:port", text));
  }
  Endpoint e;
  e.host = text.substr(0, colon);
  try {
    size_t used = 0;
    e.port = std::stoi(text.substr(colon + 1), &used);
    if (used != text.size() - colon - 1) throw std::invalid_argument("trailing");
  } catch (const std::exception&) {
    return InvalidArgumentError(fmt::format("endpoint '{}' has a bad port", text));
  }
  if (e.port <= 0 || e.port > 65535) {
    return InvalidArgumentError(fmt::format("endpoint '{}' has a bad port", text));
  }
  return e;
}

Result<std::vector<int>> FreeLocalPorts(int count) {
  std::vector<int> fds, ports;
  Status status;
  for (int i = 0; i < count && status.ok(); ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      status = Errno("socket");
      break;
    }
    fds.push_back(fd);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      status = Errno("bind");
      break;
    }
    ports.push_back(ntohs(addr.sin_port));
  }
  for (int fd : fds) ::close(fd);  // held together so the ports are distinct
  if (!status.ok()) return status;
  return ports;
}

Result<std::unique_ptr<Transport>> Transport::Connect(int rank,
                                                      const std::vector<Endpoint>& endpoints,
                                                      const std::vector<int>& peers,
                                                      Duration timeout) {
  auto t = std::make_unique<TcpTransport>(rank);
  TESSERA_RETURN_IF_ERROR(t->Start(endpoints, peers, timeout));
  return std::unique_ptr<Transport>(std::move(t));
}

}  // namespace tessera::pipeline
