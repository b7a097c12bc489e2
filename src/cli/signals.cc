#include "cli/signals.h"

#include <csignal>

namespace layerlab::cli {
namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_signal(int) {
  g_stop.store(true);
}

}  // namespace

const std::atomic<bool>& stop_requested() {
  static const bool installed = [] {
    struct sigaction sa = {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    return true;
  }();
  (void)installed;
  return g_stop;
}

}  // namespace layerlab::cli
