#include "core/stop_signal.h"

#include <csignal>
#include <mutex>

namespace tessera {

namespace {
// A process has one set of signal handlers, so this one piece of global state is inherent.
std::atomic<bool> g_stop_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free, "needed for use in a signal handler");

void OnStopSignal(int) { g_stop_requested.store(true); }
}  // namespace

const std::atomic<bool>& StopOnSignals() {
  static std::once_flag installed;
  std::call_once(installed, [] {
    struct sigaction action = {};
    action.sa_handler = OnStopSignal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
  });
  return g_stop_requested;
}

}  // namespace tessera
