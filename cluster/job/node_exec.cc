#include "cluster/job/node_exec.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "core/socket_io.h"
#include "fmt/format.h"

extern char** environ;

namespace tessera::cluster {

namespace {

constexpr uint8_t kOutputFrame = 1;
constexpr uint8_t kExitFrame = 2;
constexpr uint32_t kMaxRequestBytes = 1 << 20;

void PutU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

bool RecvU32(int fd, uint32_t* v) {
  std::array<unsigned char, 4> b{};
  if (!RecvAll(fd, b.data(), b.size()).ok()) return false;
  *v = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
  return true;
}

bool SendFrame(int fd, uint8_t kind, std::string_view payload) {
  std::string head(1, static_cast<char>(kind));
  PutU32(head, static_cast<uint32_t>(payload.size()));
  return SendAll(fd, head.data(), head.size()).ok() &&
         SendAll(fd, payload.data(), payload.size()).ok();
}

// Reads a list of strings (u32 count, then u32 length + bytes each); false when the peer went
// away or the request is larger than kMaxRequestBytes in all.
bool RecvStrings(int fd, std::vector<std::string>* out, uint32_t* budget) {
  uint32_t count = 0;
  if (!RecvU32(fd, &count) || count > *budget) return false;
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t size = 0;
    if (!RecvU32(fd, &size) || size > *budget) return false;
    *budget -= size;
    std::string s(size, '\0');
    if (!RecvAll(fd, s.data(), size).ok()) return false;
    out->push_back(std::move(s));
  }
  return true;
}

// One connection: start its program, relay output and signals, send the exit code.
void Serve(int conn, std::atomic<int>* started, std::atomic<int>* active) {
  struct Done {
    int fd;
    std::atomic<int>* active;
    ~Done() {
      ::close(fd);
      active->fetch_sub(1);
    }
  } done{conn, active};
  timeval timeout{.tv_sec = 10, .tv_usec = 0};  // for the request only
  ::setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  uint32_t budget = kMaxRequestBytes;
  std::vector<std::string> argv, env;
  if (!RecvStrings(conn, &argv, &budget) || !RecvStrings(conn, &env, &budget) || argv.empty()) {
    return;
  }
  timeout.tv_sec = 0;
  ::setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);

  // Everything the child needs, built before fork (only async-signal-safe calls after it).
  std::vector<char*> child_argv;
  for (std::string& a : argv) child_argv.push_back(a.data());
  child_argv.push_back(nullptr);
  std::vector<std::string> merged;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('='));
    bool overridden = false;
    for (const std::string& v : env)
      overridden = overridden || v.starts_with(std::string(name) + "=");
    if (!overridden) merged.emplace_back(entry);
  }
  merged.insert(merged.end(), env.begin(), env.end());
  std::vector<char*> child_env;
  for (std::string& e : merged) child_env.push_back(e.data());
  child_env.push_back(nullptr);
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return;
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Dies with the thread that started it, i.e. with this server (PR_SET_PDEATHSIG watches
    // the parent thread, which lives until the child has exited).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(out[1], STDERR_FILENO);
    ::signal(SIGPIPE, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGINT, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execvpe(child_argv[0], child_argv.data(), child_env.data());
    const char message[] = "node-exec: cannot execute the program\n";
    [[maybe_unused]] ssize_t ignored = ::write(STDERR_FILENO, message, sizeof message - 1);
    ::_exit(127);
  }
  ::close(out[1]);
  if (pid < 0) {
    ::close(out[0]);
    return;
  }
  started->fetch_add(1);
  bool peer = true;
  std::array<char, 16384> buffer{};
  for (;;) {
    pollfd fds[2] = {{out[0], POLLIN, 0}, {conn, POLLIN, 0}};
    if (::poll(fds, peer ? 2 : 1, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (peer && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      unsigned char sig = 0;
      ssize_t n = ::recv(conn, &sig, 1, 0);
      if (n == 1) {
        if (sig > 0 && sig < NSIG) ::kill(pid, sig);
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        peer = false;  // the client is gone: so is its program (a dropped ssh session)
        ::kill(pid, SIGKILL);
      }
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n = ::read(out[0], buffer.data(), buffer.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // the program closed its output: it has exited (or is about to)
      if (peer && !SendFrame(conn, kOutputFrame, std::string_view(buffer.data(), n))) {
        peer = false;
        ::kill(pid, SIGKILL);
      }
    }
  }
  ::close(out[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const int32_t code = WIFEXITED(status) ? WEXITSTATUS(status) : 255;
  if (peer) {
    std::string payload;
    PutU32(payload, static_cast<uint32_t>(code));
    SendFrame(conn, kExitFrame, payload);
  }
}

int ConnectTo(const std::string& endpoint) {
  const size_t colon = endpoint.rfind(':');
  if (colon == std::string::npos) return -1;
  const std::string host = endpoint.substr(0, colon);
  const std::string port = endpoint.substr(colon + 1);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  return fd;
}

int signal_pipe_write = -1;

void ForwardSignal(int sig) {
  const unsigned char byte = static_cast<unsigned char>(sig);
  [[maybe_unused]] ssize_t ignored = ::write(signal_pipe_write, &byte, 1);
}

}  // namespace

Result<NodeExecServer> NodeExecServer::Listen(const std::string& address) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return UnavailableError(fmt::format("socket: {}", std::strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (::inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1) {
    ::close(fd);
    return InvalidArgumentError(fmt::format("node address '{}' is not an IPv4 address", address));
  }
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 64) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    return UnavailableError(fmt::format("listening on {}: {}", address, why));
  }
  return NodeExecServer(fd, fmt::format("{}:{}", address, ntohs(addr.sin_port)));
}

NodeExecServer::NodeExecServer(int fd, std::string endpoint)
    : fd_(fd), endpoint_(std::move(endpoint)) {}

NodeExecServer::NodeExecServer(NodeExecServer&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      endpoint_(std::move(other.endpoint_)),
      started_(std::move(other.started_)),
      active_(std::move(other.active_)) {}

NodeExecServer::~NodeExecServer() {
  if (fd_ >= 0) ::close(fd_);
  // Connection threads hold the counters: they are detached and end with their programs,
  // which die with this process; the counters are leaked on purpose if any is still running.
  if (active_ && active_->load() > 0) {
    started_.release();
    active_.release();
  }
}

std::string NodeExecServer::endpoint() const { return endpoint_; }

void NodeExecServer::AcceptFor(int wait_ms) {
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, wait_ms) <= 0) return;
  const int conn = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (conn < 0) return;
  const int one = 1;
  ::setsockopt(conn, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  active_->fetch_add(1);
  std::thread(Serve, conn, started_.get(), active_.get()).detach();
}

void NodeExecServer::WaitIdle() const {
  while (active_->load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

std::vector<std::string> ForwardedEnvironment() {
  std::vector<std::string> env;
  for (const char* name : {"MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK"}) {
    if (const char* value = std::getenv(name)) env.push_back(fmt::format("{}={}", name, value));
  }
  return env;
}

int RunNodeExec(const std::string& endpoint, const std::vector<std::string>& argv,
                const std::vector<std::string>& env) {
  const int fd = ConnectTo(endpoint);
  if (fd < 0) {
    fmt::print(stderr, "node-exec: cannot connect to {}\n", endpoint);
    return 255;
  }
  std::string request;
  for (const auto* list : {&argv, &env}) {
    PutU32(request, static_cast<uint32_t>(list->size()));
    for (const std::string& s : *list) {
      PutU32(request, static_cast<uint32_t>(s.size()));
      request += s;
    }
  }
  if (!SendAll(fd, request.data(), request.size()).ok()) return 255;
  int signals[2];
  if (::pipe2(signals, O_CLOEXEC | O_NONBLOCK) != 0) return 255;
  signal_pipe_write = signals[1];
  struct sigaction action {};
  action.sa_handler = ForwardSignal;
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGINT, &action, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  std::string payload;
  for (;;) {
    pollfd fds[2] = {{fd, POLLIN, 0}, {signals[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return 255;
    }
    if (fds[1].revents & POLLIN) {
      unsigned char sig = 0;
      while (::read(signals[0], &sig, 1) == 1) {
        if (!SendAll(fd, &sig, 1).ok()) return 255;
      }
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      unsigned char kind = 0;
      uint32_t size = 0;
      if (!RecvAll(fd, &kind, 1).ok() || !RecvU32(fd, &size) || size > kMaxRequestBytes) return 255;
      payload.resize(size);
      if (!RecvAll(fd, payload.data(), size).ok()) return 255;
      if (kind == kOutputFrame) {
        for (size_t at = 0; at < payload.size();) {
          ssize_t n = ::write(STDOUT_FILENO, payload.data() + at, payload.size() - at);
          if (n < 0 && errno == EINTR) continue;
          if (n <= 0) break;
          at += static_cast<size_t>(n);
        }
      } else if (kind == kExitFrame && size == 4) {
        const auto* b = reinterpret_cast<const unsigned char*>(payload.data());
        return static_cast<int>(b[0] | (b[1] << 8) | (b[2] << 16) |
                                (static_cast<uint32_t>(b[3]) << 24));
      } else {
        return 255;
      }
    }
  }
}

}  // namespace tessera::cluster
