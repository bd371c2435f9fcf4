#include "pipeline/link_rate.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "fmt/format.h"

namespace tessera::pipeline {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kPing = 'P', kBulk = 'B', kQuit = 'Q';

// A socket closed when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

Status Errno(const std::string& what) {
  return UnavailableError(fmt::format("link probe: {}: {}", what, std::strerror(errno)));
}

// Every exchange has the probe's deadline; a read or write that passes it fails.
Status SetTimeouts(int fd, std::chrono::milliseconds timeout) {
  timeval tv{.tv_sec = static_cast<time_t>(timeout.count() / 1000),
             .tv_usec = static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
  const int one = 1;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0 ||
      setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0 ||
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) {
    return Errno("setsockopt");
  }
  return Status::Ok();
}

Status WriteAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    const ssize_t k = ::send(fd, data, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return DeadlineExceededError("link probe: the peer stopped reading");
    }
    if (k <= 0) return Errno("send");
    data += k;
    n -= static_cast<size_t>(k);
  }
  return Status::Ok();
}

Status ReadAll(int fd, char* data, size_t n) {
  while (n > 0) {
    const ssize_t k = ::recv(fd, data, n, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return DeadlineExceededError("link probe: the peer stopped talking");
    }
    if (k == 0) return UnavailableError("link probe: the peer closed the connection");
    if (k < 0) return Errno("recv");
    data += k;
    n -= static_cast<size_t>(k);
  }
  return Status::Ok();
}

// Reads and drops `n` bytes.
Status Drain(int fd, uint64_t n) {
  std::vector<char> buffer(std::min<uint64_t>(n, 1 << 20) + 1);
  while (n > 0) {
    const size_t take = static_cast<size_t>(std::min<uint64_t>(n, buffer.size()));
    TESSERA_RETURN_IF_ERROR(ReadAll(fd, buffer.data(), take));
    n -= take;
  }
  return Status::Ok();
}

Status SendHeader(int fd, char op, uint64_t n) {
  char header[9];
  header[0] = op;
  std::memcpy(header + 1, &n, 8);  // little-endian hosts only, like the transport's frames
  return WriteAll(fd, header, sizeof header);
}

Result<sockaddr_in> Resolve(const Endpoint& e) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(e.port));
  if (inet_pton(AF_INET, e.host.c_str(), &a.sin_addr) == 1) return a;
  addrinfo hints{}, *found = nullptr;
  hints.ai_family = AF_INET;
  if (getaddrinfo(e.host.c_str(), nullptr, &hints, &found) != 0 || found == nullptr) {
    return InvalidArgumentError("link probe: cannot resolve " + e.host);
  }
  a.sin_addr = reinterpret_cast<sockaddr_in*>(found->ai_addr)->sin_addr;
  freeaddrinfo(found);
  return a;
}

// Seconds from the bulk header to the server's answer for `n` payload bytes.
Result<double> TimeBulk(int fd, uint64_t n, const std::vector<char>& chunk) {
  const auto t0 = Clock::now();
  TESSERA_RETURN_IF_ERROR(SendHeader(fd, kBulk, n));
  for (uint64_t left = n; left > 0;) {
    const size_t take = static_cast<size_t>(std::min<uint64_t>(left, chunk.size()));
    TESSERA_RETURN_IF_ERROR(WriteAll(fd, chunk.data(), take));
    left -= take;
  }
  char answer;
  TESSERA_RETURN_IF_ERROR(ReadAll(fd, &answer, 1));
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double WireBytes(double payload) { return WithTcpFraming(LinkModel{}).WireBytes(payload); }

}  // namespace

Result<LinkModel> FitLink(double rtt_s, double small_bytes, double small_s, double large_bytes,
                          double large_s) {
  if (!(rtt_s >= 0) || !(small_bytes > 0) || !(large_bytes > small_bytes) || !(large_s > small_s) ||
      !(small_s >= 0)) {
    return InvalidArgumentError(fmt::format(
        "link probe: {:.0f} bytes in {:.6f} s and {:.0f} bytes in {:.6f} s give no rate",
        small_bytes, small_s, large_bytes, large_s));
  }
  LinkModel link = WithTcpFraming(LinkModel{});
  link.latency_s = rtt_s / 2;
  link.bandwidth_bytes_per_s =
      (WireBytes(large_bytes) - WireBytes(small_bytes)) / (large_s - small_s);
  link.burst_bytes = std::max(
      0.0, WireBytes(large_bytes) - link.bandwidth_bytes_per_s * std::max(0.0, large_s - rtt_s));
  return link;
}

Result<LinkMeasurement> ProbeLink(const Endpoint& server, const ProbeLinkOptions& o) {
  if (o.pings < 1 || o.pings > 1000 || o.repeats < 1 || o.repeats > 20 || !(o.idle_s >= 0) ||
      o.idle_s > 10 || !(o.target_s > 0) || o.target_s > 30 || !(o.max_bytes >= 1 << 20) ||
      o.max_bytes > 1e9 || o.timeout.count() < 1) {
    return InvalidArgumentError("link probe: bad options");
  }
  TESSERA_ASSIGN_OR_RETURN(sockaddr_in address, Resolve(server));
  // The server may start after us (another host): retry until the deadline.
  const auto deadline = Clock::now() + o.timeout;
  Fd fd;
  while (true) {
    fd = Fd(::socket(AF_INET, SOCK_STREAM, 0));
    if (fd.get() < 0) return Errno("socket");
    if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) break;
    if (Clock::now() > deadline) {
      return DeadlineExceededError(fmt::format("link probe: no server at {}:{} ({})", server.host,
                                               server.port, std::strerror(errno)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  TESSERA_RETURN_IF_ERROR(SetTimeouts(fd.get(), o.timeout));

  LinkMeasurement m;
  std::vector<double> rtts;
  for (int k = 0; k <= o.pings; ++k) {  // the first one is a warm-up
    const auto t0 = Clock::now();
    TESSERA_RETURN_IF_ERROR(SendHeader(fd.get(), kPing, 0));
    char answer;
    TESSERA_RETURN_IF_ERROR(ReadAll(fd.get(), &answer, 1));
    if (k > 0) rtts.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::nth_element(rtts.begin(), rtts.begin() + rtts.size() / 2, rtts.end());
  m.rtt_s = rtts[rtts.size() / 2];

  const std::vector<char> chunk(1 << 20, 'x');
  auto fastest = [&](uint64_t n) -> Result<double> {
    double best = 1e300;
    for (int k = 0; k < o.repeats; ++k) {
      std::this_thread::sleep_for(std::chrono::duration<double>(o.idle_s));
      TESSERA_ASSIGN_OR_RETURN(double t, TimeBulk(fd.get(), n, chunk));
      best = std::min(best, t);
    }
    return best;
  };
  // A first estimate sizes the two timed transfers: the larger should take about target_s.
  constexpr double kFirst = 256 * 1024;
  std::this_thread::sleep_for(std::chrono::duration<double>(o.idle_s));
  TESSERA_ASSIGN_OR_RETURN(double first, TimeBulk(fd.get(), kFirst, chunk));
  const double rate = kFirst / std::max(first - m.rtt_s, 1e-6);
  m.large_bytes = std::floor(std::clamp(rate * o.target_s, 1024.0 * 1024, o.max_bytes));
  m.small_bytes = std::floor(m.large_bytes / 4);
  // Interference (a loaded host, other traffic) only slows a transfer, but it can slow the
  // smaller one more than the larger and invert them (seen on a loaded 2-core box: 0.93 MB in
  // 7.7 ms, 3.7 MB in 1.9 ms). Both sizes are then timed again, the fastest of all tries
  // counting, a few rounds before the probe gives up.
  constexpr int kFitRounds = 4;
  m.small_s = m.large_s = 1e300;
  Status fitted;
  for (int round = 0; round < kFitRounds; ++round) {
    TESSERA_ASSIGN_OR_RETURN(double small_s, fastest(static_cast<uint64_t>(m.small_bytes)));
    TESSERA_ASSIGN_OR_RETURN(double large_s, fastest(static_cast<uint64_t>(m.large_bytes)));
    m.small_s = std::min(m.small_s, small_s);
    m.large_s = std::min(m.large_s, large_s);
    Result<LinkModel> link = FitLink(m.rtt_s, m.small_bytes, m.small_s, m.large_bytes, m.large_s);
    fitted = link.status();
    if (link.ok()) {
      m.link = *link;
      break;
    }
  }
  TESSERA_RETURN_IF_ERROR(SendHeader(fd.get(), kQuit, 0));
  TESSERA_RETURN_IF_ERROR(fitted);
  return m;
}

nlohmann::json LinkMeasurementToJson(const LinkMeasurement& m) {
  return {{"rtt_s", m.rtt_s},
          {"small_bytes", m.small_bytes},
          {"small_s", m.small_s},
          {"large_bytes", m.large_bytes},
          {"large_s", m.large_s}};
}

Result<LinkMeasurement> LinkMeasurementFromJson(const nlohmann::json& json) {
  LinkMeasurement m;
  try {
    m.rtt_s = json.at("rtt_s").get<double>();
    m.small_bytes = json.at("small_bytes").get<double>();
    m.small_s = json.at("small_s").get<double>();
    m.large_bytes = json.at("large_bytes").get<double>();
    m.large_s = json.at("large_s").get<double>();
  } catch (const std::exception& e) {
    return DataLossError(std::string("link measurement: ") + e.what());
  }
  TESSERA_ASSIGN_OR_RETURN(m.link,
                           FitLink(m.rtt_s, m.small_bytes, m.small_s, m.large_bytes, m.large_s));
  return m;
}

Status ServeLinkProbe(const Endpoint& listen, std::chrono::milliseconds timeout) {
  TESSERA_ASSIGN_OR_RETURN(sockaddr_in address, Resolve(listen));
  Fd server(::socket(AF_INET, SOCK_STREAM, 0));
  if (server.get() < 0) return Errno("socket");
  const int one = 1;
  setsockopt(server.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(server.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    return Errno(fmt::format("bind {}:{}", listen.host, listen.port));
  }
  if (::listen(server.get(), 1) != 0) return Errno("listen");
  TESSERA_RETURN_IF_ERROR(SetTimeouts(server.get(), timeout));  // accept honours SO_RCVTIMEO
  Fd client(::accept(server.get(), nullptr, nullptr));
  if (client.get() < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return DeadlineExceededError("link probe: no client came");
    }
    return Errno("accept");
  }
  TESSERA_RETURN_IF_ERROR(SetTimeouts(client.get(), timeout));
  constexpr uint64_t kMaxBulk = 1'000'000'000;  // ProbeLinkOptions::max_bytes' bound
  while (true) {
    char header[9];
    TESSERA_RETURN_IF_ERROR(ReadAll(client.get(), header, sizeof header));
    uint64_t n = 0;
    std::memcpy(&n, header + 1, 8);
    if (header[0] == kQuit) return Status::Ok();
    if (header[0] == kBulk) {
      if (n > kMaxBulk) return InvalidArgumentError("link probe: a bulk transfer above 1 GB");
      TESSERA_RETURN_IF_ERROR(Drain(client.get(), n));
    } else if (header[0] != kPing) {
      return InvalidArgumentError("link probe: an unknown request");
    }
    const char answer = 'a';
    TESSERA_RETURN_IF_ERROR(WriteAll(client.get(), &answer, 1));
  }
}

}  // namespace tessera::pipeline
