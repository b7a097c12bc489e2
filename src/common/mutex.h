// A mutex and its scoped lock that clang's thread-safety analysis understands
// (common/thread_annotations.h): std::mutex underneath, so they cost nothing more.
#pragma once

#include <condition_variable>
#include <mutex>

#include "common/thread_annotations.h"

namespace layerlab {

class CAPABILITY("mutex") Mutex {
 public:
  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return mu_.try_lock(); }

 private:
  friend class MutexLock;
  std::mutex mu_;
};

// Holds `mu` from construction to destruction, or between unlock() and lock() calls.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : lock_(mu.mu_) {}
  ~MutexLock() RELEASE() {}
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void unlock() RELEASE() { lock_.unlock(); }
  void lock() ACQUIRE() { lock_.lock(); }
  bool owns_lock() const { return lock_.owns_lock(); }

  // What std::condition_variable waits on. A wait releases and retakes the mutex; the
  // analysis sees it held throughout, which is what the code after the wait may assume.
  // A wait's predicate reads guarded state: mark the lambda REQUIRES(mu).
  std::unique_lock<std::mutex>& native() { return lock_; }

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace layerlab
