#include "ledger/net/process.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

namespace tessera::ledger::net {

ChildProcess::~ChildProcess() {
  if (pid_ > 0) Kill9();
}

Status ChildProcess::Start(const std::filesystem::path& binary,
                           const std::vector<std::string>& args, const std::filesystem::path& log) {
  if (!std::filesystem::exists(binary)) return NotFoundError(binary.string() + " does not exist");
  int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return UnavailableError("cannot open " + log.string());
  std::vector<std::string> argv_storage{binary.filename().string()};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fd);
    return UnavailableError("fork failed");
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);  // the launcher died before prctl took effect
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(fd);
  ::setpgid(pid, pid);
  pid_ = pid;
  return Status::Ok();
}

bool ChildProcess::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

void ChildProcess::Stop(int grace_ms) { StopAll({this}, grace_ms); }

void ChildProcess::Terminate() {
  if (pid_ > 0) ::kill(pid_, SIGTERM);
}

void StopAll(const std::vector<ChildProcess*>& processes, int grace_ms) {
  for (ChildProcess* p : processes) p->Terminate();
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(grace_ms);
  auto any_running = [&] {
    bool any = false;
    for (ChildProcess* p : processes) any = p->running() || any;  // reaps every exited one
    return any;
  };
  while (any_running() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (ChildProcess* p : processes) p->Kill9();  // no-op for the reaped
}

void ChildProcess::Kill9() {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

double ProcessCpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Fields after the command name (which may hold spaces) start past the last ')'.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; fields >> field; ++i) {  // field 3 is the state
    if (i == 14) utime = std::stoull(field);
    if (i == 15) {
      stime = std::stoull(field);
      break;
    }
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

namespace {

// 127.0.0.1:<port>, port 0 for "any".
sockaddr_in LoopbackAddress(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return addr;
}

}  // namespace

Result<int> FreeLoopbackPort() {
  int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return UnavailableError("socket failed");
  sockaddr_in addr = LoopbackAddress(0);
  socklen_t len = sizeof addr;
  if (::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(s, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(s);
    return UnavailableError("cannot bind a loopback port");
  }
  int port = ntohs(addr.sin_port);
  ::close(s);
  return port;
}

bool LoopbackPortAccepts(int port) {
  int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return false;
  sockaddr_in addr = LoopbackAddress(port);
  const bool accepted = ::connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(s);
  return accepted;
}

namespace {

// The inodes of sockets listening on `port` in one /proc/net/tcp{,6} table. A line reads
// "sl local_address rem_address st ... inode": local_address is HEXADDR:HEXPORT and st 0A is
// LISTEN.
void ListeningInodes(const char* table, int port, std::set<std::string>& inodes) {
  std::ifstream in(table);
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string sl, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    if (!(fields >> sl >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
          timeout >> inode)) {
      continue;
    }
    const size_t colon = local.rfind(':');
    if (colon == std::string::npos || state != "0A") continue;
    if (std::strtol(local.c_str() + colon + 1, nullptr, 16) == port) inodes.insert(inode);
  }
}

}  // namespace

std::vector<pid_t> PidsListeningOn(int port) {
  std::set<std::string> inodes;
  ListeningInodes("/proc/net/tcp", port, inodes);
  ListeningInodes("/proc/net/tcp6", port, inodes);
  std::vector<pid_t> pids;
  if (inodes.empty()) return pids;
  std::error_code ec;
  for (const auto& proc : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = proc.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code fd_ec;
    for (const auto& fd : std::filesystem::directory_iterator(proc.path() / "fd", fd_ec)) {
      std::error_code link_ec;
      const std::string target = std::filesystem::read_symlink(fd.path(), link_ec).string();
      // "socket:[12345]"
      if (target.size() > 9 && target.starts_with("socket:[") &&
          inodes.contains(target.substr(8, target.size() - 9))) {
        pids.push_back(static_cast<pid_t>(std::stoi(name)));
        break;
      }
    }
  }
  return pids;
}

}  // namespace tessera::ledger::net
