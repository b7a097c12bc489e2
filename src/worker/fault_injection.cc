#include "worker/fault_injection.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <string>
#include <thread>

namespace layerlab::worker {
namespace {

std::string_view point_name(CrashPoint p) {
  switch (p) {
    case CrashPoint::kBeforeTraining:
      return "before_training";
    case CrashPoint::kAfterEpoch:
      return "after_epoch";
    case CrashPoint::kAfterTraining:
      return "after_training";
    case CrashPoint::kAfterCommit:
      return "after_commit";
  }
  return "";
}

}  // namespace

bool crash_spec_matches(std::string_view spec, CrashPoint point, int64_t trial_number) {
  const std::string want = std::string(point_name(point)) + ":";
  while (!spec.empty()) {
    const size_t comma = spec.find(',');
    const std::string_view item = spec.substr(0, comma);
    if (item.substr(0, want.size()) == want) {
      const std::string_view which = item.substr(want.size());
      if (which == "*" || which == std::to_string(trial_number)) return true;
    }
    if (comma == std::string_view::npos) break;
    spec.remove_prefix(comma + 1);
  }
  return false;
}

void maybe_crash(CrashPoint point, int64_t trial_number) {
  const char* spec = std::getenv("LAYERLAB_TEST_CRASH");
  if (!spec || !crash_spec_matches(spec, point, trial_number)) return;
  if (const char* once = std::getenv("LAYERLAB_TEST_CRASH_ONCE")) {
    const int fd = ::open(once, O_CREAT | O_EXCL | O_WRONLY, 0644);
    if (fd < 0) return;  // another process crashed here already
    ::close(fd);
  }
  std::raise(SIGKILL);
}

void maybe_pause(CrashPoint point, int64_t trial_number) {
  const char* spec = std::getenv("LAYERLAB_TEST_PAUSE");
  if (!spec || !crash_spec_matches(spec, point, trial_number)) return;
  if (const char* file = std::getenv("LAYERLAB_TEST_PAUSE_FILE")) {
    const int fd = ::open(file, O_CREAT | O_WRONLY, 0644);
    if (fd >= 0) ::close(fd);
  }
  const char* seconds = std::getenv("LAYERLAB_TEST_PAUSE_SECONDS");
  std::this_thread::sleep_for(std::chrono::seconds(seconds ? std::atoi(seconds) : 5));
}

}  // namespace layerlab::worker
