#include "backend/cpu_team.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <system_error>

#include "backend/float_env.h"
#include "common/error.h"

namespace layerlab::backend::cpu {
namespace {

void pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// How long a helper spins for the next task before it sleeps: a step's products and
// element-wise loops follow one another within tens of microseconds, and waking a sleeping
// thread on a VM's idle virtual CPU costs about that much again.
constexpr auto kHelperSpin = std::chrono::microseconds(500);

// Spins until ready() or `limit` has passed; whether ready() held. Between short bursts it
// yields, which costs nothing while the CPU has nothing else to run and lets another thread
// in when it has (a team larger than the free cores must not starve its own members).
template <typename Ready>
bool spin_until(Ready ready, std::chrono::microseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (true) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
      pause();
    }
    if (std::chrono::steady_clock::now() > deadline) return ready();
    std::this_thread::yield();
  }
}

}  // namespace

Team::Team(int size) {
  try {
    for (int part = 1; part < std::max(1, size); ++part)
      helpers_.emplace_back([this, part] { serve(part); });
  } catch (const std::system_error& e) {
    stop_helpers();  // the ones started (a destructor does not run for a failed constructor)
    throw failed_precondition("cannot start " + std::to_string(size) +
                              " CPU threads for a trial: " + e.what());
  }
}

Team::~Team() {
  stop_helpers();
}

void Team::stop_helpers() {
  if (helpers_.empty()) return;
  stopping_ = true;
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (auto& t : helpers_) t.join();
  helpers_.clear();
}

void Team::run(void* fn, Call call) {
  if (helpers_.empty()) return call(fn, 0);
  fn_ = fn;
  call_ = call;
  float_control_ = float_control();
  finished_.store(0, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  call(fn, 0);
  const int helpers = static_cast<int>(helpers_.size());
  auto all_done = [&] { return finished_.load(std::memory_order_acquire) == helpers; };
  // The helpers' parts take as long as the caller's: it spins (yielding) until they finish.
  while (!spin_until(all_done, kHelperSpin)) {
  }
}

void Team::serve(int part) {
  unsigned seen = 0;
  unsigned control = float_control();
  while (true) {
    auto posted = [&] { return generation_.load(std::memory_order_acquire) != seen; };
    if (!spin_until(posted, kHelperSpin))
      while (!posted()) generation_.wait(seen, std::memory_order_acquire);
    seen = generation_.load(std::memory_order_acquire);
    if (stopping_) return;
    if (control != float_control_) set_float_control(control = float_control_);
    call_(fn_, part);
    finished_.fetch_add(1, std::memory_order_release);
  }
}

Range split(int64_t n, int parts, int part, int64_t align) {
  const int64_t units = (n + align - 1) / align;
  const auto at = [&](int p) { return std::min(n, units * p / parts * align); };
  return {at(part), at(part + 1)};
}

}  // namespace layerlab::backend::cpu
