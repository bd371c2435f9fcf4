// Defences of the web server against clients that hold connections open without finishing a
// request (slowloris, half-open floods): a cap on open connections, overall and per client
// address, and a deadline for the whole request rather than for each read.
//
// httplib gives every accepted connection a worker thread, which then waits on the socket for
// up to its read timeout per read: a few hundred stalled connections kept real requests queued
// for seconds (issue 16), and a client sending a byte every few seconds held a thread forever.
// The server (server.cc) therefore admits a connection only while the caps allow (refused ones
// get a 503 and are closed at once) and lets httplib read it only once the request's head, and
// a body announced by Content-Length, have fully arrived within the deadline (else 408, close).
//
//   ConnectionLimiter limiter({.max_connections = 256, .max_per_address = 32});
//   ConnectionLimiter::Slot slot = limiter.Acquire(PeerAddress(fd));
//   if (!slot) { RefuseConnection(fd, 503, "..."); return; }
//   if (!WaitForRequest(fd, deadline, max_bytes)) { RefuseConnection(fd, 408, "..."); return; }
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace tessera::reviews::web {

struct ConnectionLimits {
  size_t max_connections = 256;  // connections being read or answered, all clients together
  size_t max_per_address = 32;   // of them from one client address
};

class ConnectionLimiter {
 public:
  explicit ConnectionLimiter(ConnectionLimits limits) : limits_(limits) {}

  // Holds one connection's place until destroyed; false when the caps refused it.
  class Slot {
   public:
    Slot() = default;
    Slot(Slot&& other) noexcept : owner_(other.owner_), address_(std::move(other.address_)) {
      other.owner_ = nullptr;
    }
    Slot& operator=(Slot&&) = delete;
    ~Slot();
    explicit operator bool() const { return owner_ != nullptr; }

   private:
    friend class ConnectionLimiter;
    Slot(ConnectionLimiter* owner, std::string address)
        : owner_(owner), address_(std::move(address)) {}
    ConnectionLimiter* owner_ = nullptr;
    std::string address_;
  };

  Slot Acquire(const std::string& address);
  size_t open() const;

 private:
  void Release(const std::string& address);

  const ConnectionLimits limits_;
  mutable std::mutex mu_;
  size_t open_ = 0;
  std::map<std::string, size_t> per_address_;
};

// The peer's IP address as text ("" when the socket has none).
std::string PeerAddress(int fd);

// How far the bytes a connection has buffered so far (`seen`, read without consuming them)
// get toward a whole request. `complete`: the head ("\r\n\r\n") and the body its
// Content-Length announces are all there, or `seen` reached `max_bytes`, or the announced
// request cannot fit in `max_bytes` (httplib then refuses it itself). Otherwise `want` is the
// number of bytes to wait for before looking again: more than seen.size(), at most max_bytes.
// Pure, so it is fuzzed (reviews_web_guard_fuzzer) apart from the sockets.
struct RequestScan {
  bool complete = false;
  size_t want = 0;
};
RequestScan ScanRequest(std::string_view seen, size_t max_bytes);

// The Content-Length a request head announces (the first such header, name in any case,
// spaces or tabs before the digits), or nullopt when there is none or it is not a number that
// fits in size_t. `head` ends before the "\r\n\r\n" (or at its first "\r\n").
std::optional<size_t> ContentLengthOf(std::string_view head);

// Waits, without consuming anything, until the socket holds a complete request head ("\r\n\r\n")
// and the body its Content-Length announces, or `max_bytes` are buffered (httplib then refuses
// the request itself), or the peer closed. False when `deadline` passed first or `cancel` (if
// given; looked at five times a second) became true.
bool WaitForRequest(int fd, std::chrono::steady_clock::time_point deadline, size_t max_bytes,
                    const std::atomic<bool>* cancel = nullptr);

// Sends a short plain-text answer with `status` (best effort, never blocks) and closes `fd`.
void RefuseConnection(int fd, int status, std::string_view reason, std::string_view message);

}  // namespace tessera::reviews::web
