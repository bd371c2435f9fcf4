#include "core/socket_io.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

namespace tessera {
namespace {

struct SocketPair {
  SocketPair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0); }
  ~SocketPair() {
    for (int f : fd) {
      if (f >= 0) ::close(f);
    }
  }
  void Close(int i) {
    ::close(fd[i]);
    fd[i] = -1;
  }
  int fd[2] = {-1, -1};
};

// More than a socket buffer holds, so both sides see short reads and writes.
TEST(SocketIo, MovesAWholeBufferLargerThanTheSocketBuffer) {
  SocketPair s;
  std::vector<char> sent(4 << 20);
  for (size_t i = 0; i < sent.size(); ++i) sent[i] = static_cast<char>(i * 131 + 7);
  std::thread writer([&] { EXPECT_TRUE(SendAll(s.fd[0], sent.data(), sent.size()).ok()); });
  std::vector<char> got(sent.size());
  EXPECT_TRUE(RecvAll(s.fd[1], got.data(), got.size()).ok());
  writer.join();
  EXPECT_EQ(got, sent);
}

TEST(SocketIo, APeerClosingEarlyIsUnavailable) {
  SocketPair s;
  ASSERT_TRUE(SendAll(s.fd[0], "abc", 3).ok());
  s.Close(0);
  char buf[8];
  Status st = RecvAll(s.fd[1], buf, sizeof(buf));
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_EQ(st.message(), kPeerClosedMessage);
}

// Without MSG_NOSIGNAL this write would raise SIGPIPE and end the test process.
TEST(SocketIo, SendingToAClosedPeerIsAnErrorNotASignal) {
  SocketPair s;
  s.Close(1);
  std::string data(1 << 16, 'x');
  Status st = SendAll(s.fd[0], data.data(), data.size());
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace tessera
