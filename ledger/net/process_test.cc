#include "ledger/net/process.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace tessera::ledger::net {
namespace {

namespace fs = std::filesystem;

// A socket of this process listening on 127.0.0.1:<port()>, closed on destruction.
class Listener {
 public:
  Listener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    ok_ = fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
          ::listen(fd_, 4) == 0 &&
          ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
    port_ = ntohs(addr.sin_port);
  }
  ~Listener() { Close(); }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  bool ok() const { return ok_; }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  bool ok_ = false;
  int port_ = 0;
};

TEST(PidsListeningOnTest, NamesTheProcessThatListensAndNobodyOnceItCloses) {
  Listener listener;
  ASSERT_TRUE(listener.ok());
  const std::vector<pid_t> pids = PidsListeningOn(listener.port());
  EXPECT_EQ(pids, std::vector<pid_t>{::getpid()});
  listener.Close();
  EXPECT_TRUE(PidsListeningOn(listener.port()).empty());
}

TEST(PidsListeningOnTest, AConnectedClientIsNotAListener) {
  Listener listener;
  ASSERT_TRUE(listener.ok());
  int client = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(client, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(listener.port()));
  ASSERT_EQ(::connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  sockaddr_in local{};
  socklen_t len = sizeof local;
  ASSERT_EQ(::getsockname(client, reinterpret_cast<sockaddr*>(&local), &len), 0);
  // The client's own port is in use, but nobody listens on it.
  EXPECT_TRUE(PidsListeningOn(ntohs(local.sin_port)).empty());
  ::close(client);
}

// Children that ignore SIGTERM, so that only StopAll's SIGKILL ends them; returned once each
// has set its trap (a SIGTERM before that would end it the polite way).
std::vector<std::unique_ptr<ChildProcess>> StartStubbornChildren(int n, const fs::path& dir) {
  std::vector<std::unique_ptr<ChildProcess>> children;
  for (int i = 0; i < n; ++i) {
    const fs::path ready = dir / ("ready-" + std::to_string(i));
    auto child = std::make_unique<ChildProcess>();
    const std::string script =
        "trap '' TERM; : > '" + ready.string() + "'; while :; do sleep 1; done";
    if (!child->Start("/bin/sh", {"-c", script}, dir / "log").ok()) break;
    while (!fs::exists(ready) && child->running()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    children.push_back(std::move(child));
  }
  return children;
}

TEST(StopAllTest, EndsEveryProcessIncludingThoseThatIgnoreSigterm) {
  const fs::path dir = fs::temp_directory_path() / ("process_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto stubborn = StartStubbornChildren(3, dir);
  ASSERT_EQ(stubborn.size(), 3u);
  ChildProcess polite;
  ASSERT_TRUE(polite.Start("/bin/sleep", {"30"}, dir / "log").ok());
  std::vector<ChildProcess*> all = {&polite};
  for (auto& c : stubborn) all.push_back(c.get());
  for (ChildProcess* c : all) ASSERT_TRUE(c->running());
  StopAll(all, /*grace_ms=*/300);
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_FALSE(all[i]->running()) << i;
    EXPECT_EQ(all[i]->pid(), -1) << i;  // killed and reaped
  }
  StopAll(all, 300);  // stopping stopped processes is a no-op
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tessera::ledger::net
