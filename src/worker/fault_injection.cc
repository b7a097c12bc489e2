#include "worker/fault_injection.h"

#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "common/error.h"

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

// A whole decimal number, or nullopt.
std::optional<int64_t> number(std::string_view s) {
  int64_t n = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return n;
}

// Whether TRIALS (N, A-B, A- or *) takes in trial_number.
bool trials_match(std::string_view which, int64_t trial_number) {
  if (which == "*") return true;
  const size_t dash = which.find('-');
  if (dash == std::string_view::npos) return number(which) == trial_number;
  const std::optional<int64_t> from = number(which.substr(0, dash));
  if (!from || trial_number < *from) return false;
  if (dash + 1 == which.size()) return true;  // A-: A and above
  const std::optional<int64_t> to = number(which.substr(dash + 1));
  return to && trial_number <= *to;
}

}  // namespace

bool crash_spec_matches(std::string_view spec, CrashPoint point, int64_t trial_number) {
  const std::string want = std::string(point_name(point)) + ":";
  while (!spec.empty()) {
    const size_t comma = spec.find(',');
    const std::string_view item = spec.substr(0, comma);
    if (item.substr(0, want.size()) == want) {
      const std::string_view which = item.substr(want.size());
      if (trials_match(which, trial_number)) return true;
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

void maybe_hold(CrashPoint point, int64_t trial_number) {
  const char* spec = std::getenv("LAYERLAB_TEST_HOLD");
  const char* file = std::getenv("LAYERLAB_TEST_HOLD_FILE");
  if (!spec || !file || !crash_spec_matches(spec, point, trial_number)) return;
  const char* seconds = std::getenv("LAYERLAB_TEST_HOLD_SECONDS");
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(seconds ? std::atoi(seconds) : 600);
  std::error_code ec;
  while (std::filesystem::exists(file, ec) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

void maybe_throw(CrashPoint point, int64_t trial_number) {
  const char* spec = std::getenv("LAYERLAB_TEST_THROW");
  if (!spec || !crash_spec_matches(spec, point, trial_number)) return;
  const char* what_env = std::getenv("LAYERLAB_TEST_THROW_WHAT");
  const std::string_view what = what_env ? what_env : "bad_alloc";
  const std::string where = "test hook LAYERLAB_TEST_THROW at " + std::string(point_name(point)) +
                            " of trial " + std::to_string(trial_number);
  if (what == "runtime_error") throw std::runtime_error(where);
  if (what == "json") throw nlohmann::json::type_error::create(302, where, nullptr);
  if (what == "error") throw internal_error(where);
  throw std::bad_alloc();
}

FaultHook& environment_faults() {
  class Environment final : public FaultHook {
   public:
    void at(CrashPoint point, int64_t trial_number) override {
      maybe_crash(point, trial_number);
      maybe_hold(point, trial_number);
      maybe_pause(point, trial_number);
      maybe_throw(point, trial_number);
    }
  };
  static Environment hook;
  return hook;
}

}  // namespace layerlab::worker
