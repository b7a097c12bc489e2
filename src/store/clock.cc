#include "store/clock.h"

namespace layerlab::store {
namespace {

class SystemClock final : public Clock {
 public:
  Time now() const override {
    return std::chrono::time_point_cast<std::chrono::milliseconds>(
        std::chrono::system_clock::now());
  }
};

}  // namespace

Clock& system_clock() {
  static SystemClock* clock = new SystemClock;  // never destroyed: usable during exit
  return *clock;
}

}  // namespace layerlab::store
